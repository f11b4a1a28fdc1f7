// Production and the in-process local Box host (issue 32): the config's `production: true` makes
// the host refuse what NODE_ENV=production makes it refuse (Boxes without isolation), and in
// production an `allow-all` Box that would share this machine's network (no Box network) is
// refused unless `local.shareHostNetwork` accepts it. Each case is one Run in a fresh process
// (the host starts once per process) without NODE_ENV, in a private mount namespace where the
// tool whose absence is tested (bwrap, slirp4netns) is covered by /dev/null: the host's probe
// then finds it unusable, as on a machine without it. Root only (a mount namespace).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NO_BWRAP } from '../support/local-host.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const NOT_ROOT = process.getuid?.() === 0 ? false : 'needs root (a private mount namespace hides the tools)';

const SCRIPT = `
import { configureSandbox, registerSandbox, runSandbox, closeLocalBoxHost } from '@vite-hub/sandbox';
configureSandbox({ provider: 'local', ...JSON.parse(process.env.VHS_TEST_CONFIG) });
registerSandbox('prod/ran', { files: [{ path: 'package.json', content: '{"type":"module"}' }, { path: 'index.mjs', content: 'export default () => "ran"' }] });
const response = await runSandbox('prod/ran');
const body = await response.text();
await closeLocalBoxHost();
process.stdout.write(JSON.stringify({ status: response.status, body }));
`;

/** One Run with `config` in a fresh process without NODE_ENV, `hidden` tools covered: `{ status, body }`. */
function runWithout(hidden, config) {
  const { NODE_ENV: _, ...env } = process.env;
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-production-'));
  const mounts = hidden.map((tool) => `mount --bind /dev/null ${tool} && `).join('');
  const args = [
    '--mount',
    '--propagation',
    'private',
    '--',
    'sh',
    '-c',
    `${mounts}exec "$0" --input-type=module -e "$1"`,
    process.execPath,
    SCRIPT,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      'unshare',
      args,
      { cwd: root, env: { ...env, XDG_CACHE_HOME: cache, VHS_TEST_CONFIG: JSON.stringify(config) }, timeout: 60_000 },
      (error, stdout, stderr) => {
        fs.rmSync(cache, { recursive: true, force: true });
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

const refusal = ({ status, body }) => {
  assert.equal(status, 503, body);
  const { error } = JSON.parse(body);
  assert.equal(error.code, 'SANDBOX_PROVIDER_UNAVAILABLE', body);
  return error.message;
};

const skipNoIsolation = NOT_ROOT || (fs.existsSync('/usr/bin/bwrap') ? false : 'no /usr/bin/bwrap to hide');
const skipNoBoxNetwork =
  NOT_ROOT || NO_BWRAP || (fs.existsSync('/usr/bin/slirp4netns') ? false : 'no /usr/bin/slirp4netns to hide');

test('production: true in the config refuses Boxes without isolation, as NODE_ENV=production does', {
  skip: skipNoIsolation,
  timeout: 90_000,
}, async () => {
  const message = refusal(await runWithout(['/usr/bin/bwrap'], { production: true }));
  assert.match(message, /refuses to run Boxes without isolation in production.*isolation: 'none'/);
  // The explicit acceptance still runs, and without production nothing is refused.
  assert.deepEqual(await runWithout(['/usr/bin/bwrap'], { production: true, local: { isolation: 'none' } }), {
    status: 200,
    body: '"ran"',
  });
  assert.deepEqual(await runWithout(['/usr/bin/bwrap'], {}), { status: 200, body: '"ran"' });
});

test('in production an allow-all Box without a Box network is refused, naming local.shareHostNetwork', {
  skip: skipNoBoxNetwork,
  timeout: 120_000,
}, async () => {
  const message = refusal(await runWithout(['/usr/bin/slirp4netns'], { production: true }));
  assert.match(message, /allow-all Boxes in production without a Box network/);
  assert.match(message, /loopback.*abstract Unix sockets/);
  assert.match(message, /shareHostNetwork: true/);
  // Accepted explicitly; deny-all needs no Box network; outside production it runs (and the
  // start-up line says what it shares).
  assert.deepEqual(
    await runWithout(['/usr/bin/slirp4netns'], { production: true, local: { shareHostNetwork: true } }),
    { status: 200, body: '"ran"' },
  );
  assert.deepEqual(
    await runWithout(['/usr/bin/slirp4netns'], { production: true, local: { networkPolicy: 'deny-all' } }),
    { status: 200, body: '"ran"' },
  );
  assert.deepEqual(await runWithout(['/usr/bin/slirp4netns'], {}), { status: 200, body: '"ran"' });
});

/**
 * `vite-hub-sandbox host <args>` with NODE_ENV=production, slirp4netns hidden: the status of one
 * default (allow-all) create on it, then the host is stopped.
 */
async function createOnCliHost(args) {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-production-'));
  const child = spawn(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount --bind /dev/null /usr/bin/slirp4netns && exec "$0" "$@"',
      process.execPath,
      path.join(root, 'dist/cli.mjs'),
      'host',
      ...args,
    ],
    {
      cwd: root,
      env: { ...process.env, NODE_ENV: 'production', XDG_CACHE_HOME: cache },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  try {
    const line = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
      child.on('exit', (code) => reject(new Error(`the host exited ${code}`)));
    });
    const { baseUrl, token } = JSON.parse(line);
    const created = await fetch(`${baseUrl}/v3/sandboxes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const body = await created.json();
    if (created.ok)
      await fetch(`${baseUrl}/v2/sandboxes/sessions/${body.session.id}/stop`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
    return { status: created.status, body };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

test('vite-hub-sandbox host --share-host-network accepts what a production host refuses without it', {
  skip: skipNoBoxNetwork,
  timeout: 90_000,
}, async () => {
  const refused = await createOnCliHost([]);
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.match(JSON.stringify(refused.body), /shareHostNetwork/);
  const accepted = await createOnCliHost(['--share-host-network']);
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  assert.equal(accepted.body.session.executionAuthority.network, 'unrestricted');
});
