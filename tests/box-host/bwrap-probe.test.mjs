// The start-up probe's word on a bwrap that exists but cannot run (host-probe.mjs): the dev
// start-up line gives bwrap's own reason (a /proc it cannot mount, a seccomp filter that kills it,
// a setuid install), and names user namespaces only when bwrap says they are what failed. Each case
// runs a host in a user and mount namespace of its own where a fake `bwrap` is bound over the real
// one, so nothing of this machine changes.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-fake-bwrap-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The bwrap the probe runs (it looks on the system PATH only), or undefined. */
const realBwrap = (() => {
  try {
    return (
      execFileSync('sh', ['-c', 'command -v bwrap'], { env: { PATH: '/usr/local/bin:/usr/bin:/bin' } })
        .toString()
        .trim() || undefined
    );
  } catch {
    return undefined;
  }
})();

/** A host started where `bwrap` is the shell script `body`: its isolation and start-up line. */
async function hostWithBwrap(t, name, body) {
  const fake = path.join(dir, name);
  fs.writeFileSync(fake, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  const script = `
    const { startBoxHost } = await import('@vite-hub/sandbox/box-host');
    const host = await startBoxHost({});
    console.log(JSON.stringify({ isolation: host.isolation, description: host.description }));
    await host.close();`;
  const outcome = await new Promise((resolve) => {
    execFile(
      'unshare',
      [
        '--user',
        '--map-root-user',
        '--mount',
        'sh',
        '-c',
        'mount --bind "$0" "$1" && exec "$2" --input-type=module -e "$3"',
        fake,
        realBwrap,
        process.execPath,
        script,
      ],
      { timeout: 50_000 },
      (error, stdout, stderr) => resolve({ error, stdout, stderr }),
    );
  });
  if (outcome.error && /unshare|mount/.test(outcome.stderr) && !outcome.stdout) {
    t.skip(`this machine cannot make the namespaces the test needs: ${outcome.stderr.trim()}`);
    return undefined;
  }
  assert.equal(outcome.error, null, outcome.stderr);
  return JSON.parse(outcome.stdout.trim().split('\n').pop());
}

const skip = realBwrap === undefined ? 'no bwrap on the system PATH to stand in for' : false;

test("a bwrap that cannot mount /proc: the start-up line gives bwrap's reason, not user namespaces", {
  skip,
  timeout: 60_000,
}, async (t) => {
  const host = await hostWithBwrap(
    t,
    'no-proc',
    'echo "bwrap: Can\'t mount proc on /newroot/proc: Operation not permitted" >&2; exit 1',
  );
  if (!host) return;
  assert.equal(host.isolation, 'none');
  assert.match(
    host.description,
    /bwrap cannot create a sandbox here: bwrap: Can't mount proc on \/newroot\/proc: Operation not permitted/,
  );
  assert.doesNotMatch(host.description, /user namespaces/);
});

test('a setuid bwrap refusing the options: its own words', { skip, timeout: 60_000 }, async (t) => {
  const host = await hostWithBwrap(
    t,
    'setuid',
    'echo "bwrap: Unexpected capabilities but not setuid, old file caps config?" >&2; exit 1',
  );
  if (!host) return;
  assert.match(
    host.description,
    /bwrap cannot create a sandbox here: bwrap: Unexpected capabilities but not setuid, old file caps config\?/,
  );
  assert.doesNotMatch(host.description, /user namespaces/);
});

test('a bwrap killed by a seccomp filter (SIGSYS, no stderr) is named by its signal', {
  skip,
  timeout: 60_000,
}, async (t) => {
  const host = await hostWithBwrap(t, 'seccomp', 'kill -SYS $$');
  if (!host) return;
  assert.match(
    host.description,
    /bwrap cannot create a sandbox here: bwrap was killed by SIGSYS \(a seccomp filter refused one of its system calls/,
  );
  assert.doesNotMatch(host.description, /user namespaces/);
});

test('a bwrap that says user namespaces are refused still gets the user-namespace fix', {
  skip,
  timeout: 60_000,
}, async (t) => {
  const host = await hostWithBwrap(
    t,
    'userns',
    'echo "bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1',
  );
  if (!host) return;
  assert.match(
    host.description,
    /bwrap cannot create a sandbox here \(bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces\.\): unprivileged user namespaces are refused; as root, allow them/,
  );
});
