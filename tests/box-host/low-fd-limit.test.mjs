// A host whose hard limit of open files is below the Box's own (4096) still runs Boxes (the
// fresh-user trial of issue 32): the Box's commands started under `prlimit --nofile=4096`, which
// a process that is not privileged cannot raise its hard limit to, so every Run answered 500
// SANDBOX_HANDLER_ERROR "prlimit: failed to set the NOFILE resource limit". The Box now takes the
// lower of the two.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openFilesWithin } from '../../pkg-template/box-host/engine/isolation.mjs';
import { NO_BWRAP } from '../support/local-host.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const NOBODY = 65534;

test('the Box takes the lower of its own open-files limit and the host process hard limit', () => {
  const limits = (soft, hard) =>
    `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                 ${hard}                 files\n`;
  assert.equal(openFilesWithin(limits(1024, 524288)), 4096);
  assert.equal(openFilesWithin(limits(256, 512)), 512);
  assert.equal(openFilesWithin(limits('unlimited', 'unlimited')), 4096);
  assert.equal(openFilesWithin(''), 4096);
});

const HOST_SCRIPT = `
import { startBoxHost } from '@vite-hub/sandbox/box-host';
const host = await startBoxHost({ isolation: process.env.LIMIT_TEST_ISOLATION, parked: { size: 0 } });
const api = async (route, body) => (await fetch(host.baseUrl + route, { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
const sid = JSON.parse(await api('/v3/sandboxes', { projectId: 'p', ports: [] })).session.id;
const out = await api('/v2/sandboxes/sessions/' + sid + '/cmd', { command: 'sh', args: ['-c', 'ulimit -n'], wait: true });
await api('/v2/sandboxes/sessions/' + sid + '/stop', {});
await host.close();
process.stdout.write(out);
`;

for (const isolation of ['bubblewrap', 'none']) {
  test(`under a hard limit of 512 open files a Box command runs, with that limit (${isolation})`, {
    timeout: 60_000,
  }, async (t) => {
    const asNobody = process.getuid() === 0;
    // The host's own temp directory (its Box root): the caller's TMPDIR may not be writable by
    // nobody (temp-hygiene runs this file under a root-owned, mode 0701 TMPDIR).
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'low-fd-'));
    if (asNobody) fs.chownSync(tmp, NOBODY, NOBODY);
    t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
    // prlimit sets the host process's hard limit; as nobody it cannot raise it back.
    const child = spawn(
      'prlimit',
      ['--nofile=512:512', '--', process.execPath, '--input-type=module', '-e', HOST_SCRIPT],
      {
        cwd: repo,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(asNobody ? { uid: NOBODY, gid: NOBODY } : {}),
        env: {
          ...process.env,
          HOME: '/tmp',
          TMPDIR: tmp,
          XDG_CACHE_HOME: '/tmp/low-fd-limit-cache',
          LIMIT_TEST_ISOLATION: isolation,
        },
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, err);
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(lines.at(-1).command.exitCode, 0, out);
    assert.equal(
      lines
        .filter((l) => l.stream === 'stdout')
        .map((l) => l.data)
        .join(''),
      '512\n',
    );
  });
}

// Issue 34: under a low `ulimit -n`, a burst of Runs left Boxes behind. A Box whose create or
// stop met EMFILE kept its tmpfs (`umount` could not start, then the directory's removal failed
// with EBUSY, answered as a 500 "EBUSY"), its slot and registry entry; the next burst found the
// host full of orphans. Here a host under `--nofile=256` serves 64 concurrent Runs (create, a
// 1 s command, stop), then must hold no Box directory or mount more than before the burst, answer
// only 200 or a 503 naming the cause (never 500), and serve the following small burst.
const BURST_SCRIPT = `
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'low-fd-burst-'));
const host = await startBoxHost({ isolation: process.env.LIMIT_TEST_ISOLATION, boxRoot });
// One connection per request (no keep-alive pool), so the burst does not outlast its answers.
const post = (route, body) =>
  new Promise((resolve) => {
    const req = http.request(host.baseUrl + route, { method: 'POST', agent: false, headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json', connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text }));
      res.on('error', (err) => resolve({ status: 0, text: String(err) }));
    });
    // A connection refused at the limit (accept's EMFILE) is the client's to retry.
    req.on('error', (err) => resolve({ status: 0, text: String(err) }));
    req.end(JSON.stringify(body));
  });
const run = async () => {
  const created = await post('/v3/sandboxes', { projectId: 'p', ports: [] });
  if (created.status !== 200) return { step: 'create', ...created };
  const sid = JSON.parse(created.text).session.id;
  const ran = await post('/v2/sandboxes/sessions/' + sid + '/cmd', { command: 'sh', args: ['-c', 'sleep 1; echo ran'], wait: true });
  const stopped = await post('/v2/sandboxes/sessions/' + sid + '/stop', {});
  if (stopped.status !== 200) return { step: 'stop', ...stopped };
  return { step: 'cmd', ...ran };
};
const burst = (n) => Promise.all(Array.from({ length: n }, run));
const boxDirs = () => fs.readdirSync(boxRoot).length;
const mounts = () => fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n').filter((l) => l.split(' ')[4]?.startsWith(boxRoot + '/')).length;
const fds = () => fs.readdirSync('/proc/self/fd').length;
await burst(1);
// The spares made after the first Run (parked Boxes) are counted in the start.
await new Promise((r) => setTimeout(r, 1000));
const start = { boxDirs: boxDirs(), mounts: mounts(), fds: fds() };
const first = await burst(64);
// Every Run's stop has answered; the spares the burst used are made anew meanwhile.
let after;
for (let i = 0; i < 100; i++) {
  after = { boxDirs: boxDirs(), mounts: mounts(), fds: fds() };
  if (after.boxDirs <= start.boxDirs && after.mounts <= start.mounts) break;
  await new Promise((r) => setTimeout(r, 200));
}
const second = await burst(4);
await host.close();
const closed = { boxDirs: boxDirs(), mounts: mounts() };
// What the host left (the failure this test reports) does not stay on the machine.
for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n')) {
  const dir = line.split(' ')[4];
  if (dir?.startsWith(boxRoot + '/')) execFileSync('umount', ['-l', dir]);
}
fs.rmSync(boxRoot, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ start, first, after, second, closed }));
process.exit(0);
`;

// Still open: unix sockets of this process (peer gone, held by no ChildProcess stream) grow by
// ~100 over such a burst; at 256 fds they starve the stops' `umount`, so some Boxes stay mounted.
// Reported as todo until found (issue 34 helper `emfile`).
test('a burst of Runs under a limit of 256 open files leaves no Box behind (bubblewrap)', {
  skip: NO_BWRAP,
  todo: 'unix sockets still leak under EMFILE (issue 34)',
  timeout: 180_000,
}, async () => {
  const child = spawn(
    'prlimit',
    ['--nofile=256:256', '--', process.execPath, '--input-type=module', '-e', BURST_SCRIPT],
    {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LIMIT_TEST_ISOLATION: 'bubblewrap' },
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, err);
  const { start, first, after, second, closed } = JSON.parse(out);
  const summary = JSON.stringify({
    start,
    after,
    closed,
    first: first.map((a) => `${a.step} ${a.status} ${a.text.slice(0, 200)}`),
  });
  for (const answer of first) {
    // 0: the host refused the connection itself (out of fds to accept it).
    assert.ok([0, 200, 503].includes(answer.status), summary);
    if (answer.status === 503) assert.match(answer.text, /"code":"spawn_failed".*open files|EMFILE/, summary);
  }
  assert.ok(after.boxDirs <= start.boxDirs, summary);
  assert.ok(after.mounts <= start.mounts, summary);
  assert.deepEqual(
    second.map((a) => a.status),
    [200, 200, 200, 200],
    JSON.stringify(second),
  );
  assert.deepEqual(closed, { boxDirs: 0, mounts: 0 }, summary);
});
