// The local Box host over raw HTTP: auth, path confinement, process trees, stop, env, bubblewrap
// isolation, counters and bounds.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { hostFeatures, toolchainBoxPath } from '../../pkg-template/box-host/engine/isolation.mjs';
import { installNetwork, installNetworkEnv } from '../../pkg-template/box-host/engine/install-network.mjs';
import { hasBwrap, NO_BWRAP } from '../support/local-host.mjs';
import { boxDirPrefix, livePidNamespaces } from '../../pkg-template/box-host/engine/stale-boxes.mjs';

/** A Box network of its own for allow-all (slirp4netns installed): no host loopback. */
const boxNetwork = (await hostFeatures()).netTool !== null;

const SECRET_NAME = 'VITE_HUB_TEST_HOST_SECRET';
process.env[SECRET_NAME] = `secret-${randomBytes(8).toString('hex')}`;

async function api(host, method, route, { body, headers = {}, token = host.token } = {}) {
  const init = { method, headers: { ...headers } };
  if (token !== null) init.headers.authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.body = Buffer.isBuffer(body) ? body : JSON.stringify(body);
    init.headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${host.baseUrl}${route}`, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  let json;
  if (type === 'application/json') json = JSON.parse(bytes.toString('utf8'));
  if (type === 'application/x-ndjson')
    json = bytes
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  return { status: res.status, type, bytes, json };
}

async function createBox(host, body = {}) {
  const res = await api(host, 'POST', '/v3/sandboxes?teamId=t', { body: { projectId: 'p', ports: [], ...body } });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json.session;
}

/** Runs a command waiting; returns { exitCode, stdout, stderr, lines }. */
async function run(host, sid, command, args = [], extra = {}) {
  const res = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
    body: { command, args, env: {}, sudo: false, wait: true, logs: true, ...extra },
  });
  assert.equal(res.status, 200, res.bytes.toString());
  assert.equal(res.type, 'application/x-ndjson');
  const lines = res.json;
  const pick = (s) =>
    lines
      .filter((l) => l.stream === s)
      .map((l) => l.data)
      .join('');
  return { exitCode: lines.at(-1).command.exitCode, stdout: pick('stdout'), stderr: pick('stderr'), lines };
}

async function stopBox(host, sid) {
  const res = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/stop`);
  assert.equal(res.status, 200);
  return res.json.session;
}

/** Minimal ustar + gzip writer, so tests can send entries a real client would never send. */
function tarGz(entries) {
  const blocks = [];
  for (const { name, content = Buffer.alloc(0), mode = 0o644, type = '0', linkname = '' } of entries) {
    const h = Buffer.alloc(512);
    h.write(name, 0, 100);
    h.write(`${mode.toString(8).padStart(7, '0')}\0`, 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${content.length.toString(8).padStart(11, '0')}\0`, 124);
    h.write(
      `${Math.floor(Date.now() / 1000)
        .toString(8)
        .padStart(11, '0')}\0`,
      136,
    );
    h.write('        ', 148);
    h.write(type, 156);
    h.write(linkname, 157, 100);
    h.write('ustar\0', 257);
    h.write('00', 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

function writeTar(host, sid, entries, cwd = '/') {
  return api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/write`, {
    body: tarGz(entries),
    headers: { 'content-type': 'application/gzip', 'x-cwd': cwd },
  });
}

/** Pids of live processes whose argv is exactly `argv`. */
/**
 * Live processes whose argv is exactly `argv`. Zombies are dead and are left out: a killed
 * process that was reparented waits for this machine's pid 1 to reap it, which a container's
 * init may do late, and its cmdline can still be read meanwhile.
 */
function processesWithArgv(argv) {
  const wanted = `${argv.join('\0')}\0`;
  const found = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8') !== wanted) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

const modes = hasBwrap ? ['bubblewrap', 'none'] : ['none'];

for (const isolation of modes) {
  describe(`box host (isolation: ${isolation})`, () => {
    let host;
    let boxRoot;
    before(async () => {
      boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-test-boxes-'));
      host = await startBoxHost({ isolation, boxRoot });
    });
    after(async () => {
      await host.close();
      assert.deepEqual(fs.readdirSync(boxRoot), []);
      fs.rmSync(boxRoot, { recursive: true, force: true });
    });

    test('reports its isolation honestly', () => {
      assert.deepEqual(host.executionAuthority, {
        isolation: isolation === 'bubblewrap' ? 'process' : 'none',
        network: isolation === 'bubblewrap' && boxNetwork ? 'restricted' : 'unrestricted',
        filesystem: { access: 'read-write', scope: isolation === 'bubblewrap' ? 'sandbox' : 'host' },
        // Plain processes reach the user's own files and the app's environment (/proc).
        environment: isolation === 'bubblewrap' ? 'selected' : 'ambient',
        credentials: isolation === 'bubblewrap' ? 'none' : 'ambient',
        processes: isolation === 'bubblewrap' ? 'restricted' : 'arbitrary',
      });
      assert.match(host.baseUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    });

    test('a bearer token is required on every request', async () => {
      for (const token of [null, 'wrong-token-value', `${host.token}x`]) {
        for (const [method, route] of [
          ['POST', '/v3/sandboxes'],
          ['GET', '/_vite-hub/counters'],
          ['POST', '/v2/sandboxes/sessions/sbx_x/stop'],
        ]) {
          const res = await api(host, method, route, { token, body: method === 'POST' ? {} : undefined });
          assert.equal(res.status, 401);
          assert.equal(res.json.error.code, 'unauthorized');
          assert.ok(!res.bytes.toString().includes(host.token));
        }
      }
      const ok = await api(host, 'GET', '/api/_vite-hub/counters');
      assert.equal(ok.status, 200);
      assert.equal(typeof ok.json.total, 'number');
    });

    test('Box paths cannot escape the Box', async () => {
      const sid = (await createBox(host)).id;
      const marker = `vite-hub-escape-${randomBytes(6).toString('hex')}`;
      const outside = path.join(os.tmpdir(), marker);
      try {
        for (const p of ['../../../etc/passwd', '/../etc/hostname', '/vercel/../../x']) {
          const read = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/read`, { body: { path: p } });
          assert.equal(read.status, 400, p);
          assert.equal(read.json.error.code, 'bad_path');
        }
        const mk = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/mkdir`, {
          body: { path: '../../../../x' },
        });
        assert.equal(mk.status, 400);
        const dotdot = await writeTar(host, sid, [
          { name: `../../../../../../tmp/${marker}`, content: Buffer.from('x') },
        ]);
        assert.equal(dotdot.status, 400);
        const badCwd = await writeTar(host, sid, [{ name: marker, content: Buffer.from('x') }], '/../..');
        assert.equal(badCwd.status, 400);
        const symlinkEntry = await writeTar(host, sid, [{ name: 'vercel/sandbox/l', type: '2', linkname: '/etc' }]);
        assert.equal(symlinkEntry.status, 400);

        // Symlinks created inside the Box that point out of it are refused.
        const ln = await run(host, sid, 'sh', [
          '-c',
          `ln -s /etc/hostname leak && ln -s ${os.tmpdir()} outdir && echo ok`,
        ]);
        assert.equal(ln.stdout, 'ok\n');
        const leak = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/read`, { body: { path: 'leak' } });
        assert.equal(leak.status, 400);
        assert.equal(leak.json.error.code, 'bad_path');
        const through = await writeTar(host, sid, [
          { name: `vercel/sandbox/outdir/${marker}`, content: Buffer.from('x') },
        ]);
        assert.equal(through.status, 400);
        assert.equal(fs.existsSync(outside), false);
        const inDir = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/mkdir`, {
          body: { path: `outdir/${marker}` },
        });
        assert.equal(inDir.status, 400);
        assert.equal(fs.existsSync(outside), false);

        // A command cwd outside the Box is refused too.
        const cwdRes = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
          body: { command: 'true', cwd: '/../../root' },
        });
        assert.equal(cwdRes.status, 400);
        // A command named like an option is refused: the exec wrappers (prlimit, sh) would read it as one.
        const dashed = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
          body: { command: '-a', args: ['x', 'id'] },
        });
        assert.equal(dashed.status, 400);
        assert.match(dashed.json.error.message, /must not start with '-'/);

        // Allowed writes land in the Box.
        const fine = await writeTar(
          host,
          sid,
          [{ name: 'a/b/c.txt', content: Buffer.from('inside'), mode: 0o600 }],
          '/vercel/sandbox',
        );
        assert.equal(fine.status, 200);
        const cat = await run(host, sid, 'sh', ['-c', 'cat a/b/c.txt; stat -c %a a/b/c.txt']);
        assert.equal(cat.stdout, 'inside600\n');
      } finally {
        fs.rmSync(outside, { force: true });
        await stopBox(host, sid);
      }
    });

    // The sleeps last days: a timeout that killed nothing hangs here until the test's own timeout.
    test('timeout kills the whole process tree with exit code 137', { timeout: 120_000 }, async () => {
      const sid = (await createBox(host)).id;
      const n1 = String(randomInt(100000, 900000));
      const n2 = String(Number(n1) + 1);
      try {
        const res = await run(host, sid, 'sh', ['-c', `sleep ${n1} & sleep ${n2}; echo never`], { timeout: 700 });
        assert.equal(res.exitCode, 137);
        assert.equal(res.stdout, '');
        assert.deepEqual(processesWithArgv(['sleep', n1]), []);
        assert.deepEqual(processesWithArgv(['sleep', n2]), []);
        // A node parent with a detached child of its own is killed as a tree too.
        const n3 = String(Number(n1) + 2);
        const script = `require('child_process').spawn('sleep', ['${n3}'], { detached: true, stdio: 'ignore' }); console.log('spawned'); setInterval(() => {}, 1000)`;
        const res2 = await run(host, sid, 'node', ['-e', script], { timeout: 4000 });
        assert.equal(res2.exitCode, 137);
        assert.equal(res2.stdout, 'spawned\n');
        assert.deepEqual(processesWithArgv(['sleep', n3]), []);
      } finally {
        await stopBox(host, sid);
      }
    });

    test('stop kills running commands and removes the Box dir', async () => {
      const sid = (await createBox(host)).id;
      // The Box's directory, known by a file it made (it may be a spare made before the create).
      const marker = `marker-${randomInt(100000, 900000)}`;
      assert.equal((await run(host, sid, 'touch', [marker])).exitCode, 0);
      const created = fs
        .readdirSync(boxRoot)
        .filter((d) => fs.existsSync(path.join(boxRoot, d, 'vercel', 'sandbox', marker)));
      assert.equal(created.length, 1);
      assert.match(created[0], new RegExp(`^${boxDirPrefix()}[A-Za-z0-9]{6}$`));
      const n = String(randomInt(100000, 900000));
      const det = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
        body: { command: 'sh', args: ['-c', `sleep ${n} & sleep ${n}`], env: {}, sudo: false },
      });
      assert.equal(det.status, 200);
      assert.equal(det.json.command.exitCode, null);
      const cid = det.json.command.id;
      const deadline = Date.now() + 5000;
      while (processesWithArgv(['sleep', n]).length < 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      assert.equal(processesWithArgv(['sleep', n]).length, 2);

      const waiting = api(host, 'GET', `/v2/sandboxes/sessions/${sid}/cmd/${cid}?wait=true`);
      const session = await stopBox(host, sid);
      assert.equal(session.status, 'stopped');
      assert.equal(typeof session.stoppedAt, 'number');
      assert.deepEqual(processesWithArgv(['sleep', n]), []);
      assert.equal(fs.existsSync(path.join(boxRoot, created[0])), false);
      const waited = await waiting;
      assert.equal(waited.json.command.exitCode, 137);

      const after = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, { body: { command: 'true' } });
      assert.equal(after.status, 410);
      assert.equal(after.json.error.code, 'sandbox_stopped');
      const again = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/stop`);
      assert.equal(again.status, 410);
      const unknown = await api(host, 'POST', '/v2/sandboxes/sessions/sbx_unknown/fs/read', { body: { path: 'x' } });
      assert.equal(unknown.status, 410);
    });

    test('the host environment is not visible in the Box', async () => {
      const sid = (await createBox(host, { env: { BOX_LEVEL: 'b' } })).id;
      try {
        assert.ok(process.env[SECRET_NAME]);
        const res = await run(host, sid, 'node', ['-e', 'console.log(JSON.stringify(process.env))'], {
          env: { MINE: 'm€' },
        });
        assert.equal(res.exitCode, 0);
        const env = JSON.parse(res.stdout);
        assert.equal(env[SECRET_NAME], undefined);
        // The app's own Node comes first on the Box's PATH (box-toolchain.mjs), then the system dirs.
        const nodeDir = path.dirname(fs.realpathSync(process.execPath));
        const expected = {
          PATH: [...new Set([nodeDir, '/usr/local/bin', '/usr/bin', '/bin'])].join(':'),
          HOME: isolation === 'bubblewrap' ? '/home/box' : env.HOME,
          BOX_LEVEL: 'b',
          MINE: 'm€',
          // The app's CA and proxy variables, where this machine has some (install-network.mjs):
          // a bubblewrap Box sees each CA file at its real path (below the toolchain root when
          // its own directories would cover it).
          ...installNetworkEnv(installNetwork(process.env), (named) =>
            isolation === 'bubblewrap' ? toolchainBoxPath(fs.realpathSync(named), '/vercel/sandbox') : named,
          ),
        };
        if (isolation === 'bubblewrap') {
          expected.PWD = '/vercel/sandbox';
          // The user's npm config, without credentials, where it has one (box-toolchain.mjs).
          if (fs.existsSync(path.join(os.homedir(), '.npmrc')))
            expected.NPM_CONFIG_USERCONFIG = '/opt/vite-hub-sandbox/npmrc';
        } else {
          // Plain processes get the Box's own temp folder too, and npm the user's own config.
          assert.match(env.HOME, /vite-hub-box-[^/]+\/home\/box$/);
          expected.TMPDIR = env.HOME.replace(/home\/box$/, 'tmp');
          const userConfig = path.join(os.homedir(), '.npmrc');
          if (fs.existsSync(userConfig)) expected.NPM_CONFIG_USERCONFIG = userConfig;
        }
        assert.deepEqual(env, expected);
      } finally {
        await stopBox(host, sid);
      }
    });

    test('counters count per route and reset', async () => {
      const reset = await api(host, 'POST', '/_vite-hub/counters/reset');
      assert.deepEqual(reset.json, { requests: {}, total: 0 });
      const sid = (await createBox(host)).id;
      await writeTar(host, sid, [{ name: 'f.txt', content: Buffer.from('hi') }], '/vercel/sandbox');
      const read = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/read`, { body: { path: 'f.txt' } });
      assert.equal(read.type, 'application/octet-stream');
      assert.equal(read.bytes.toString(), 'hi');
      const missing = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/read`, { body: { path: 'nope' } });
      assert.equal(missing.status, 404);
      await run(host, sid, 'true');
      const session = await api(host, 'GET', `/v2/sandboxes/sessions/${sid}`);
      assert.equal(session.json.session.id, sid);
      const named = await api(host, 'GET', '/v2/sandboxes/no-such-name');
      assert.equal(named.status, 404);
      await stopBox(host, sid);
      assert.deepEqual(host.counters(), {
        requests: { create: 1, 'fs/write': 1, 'fs/read': 2, cmd: 1, 'session/get': 1, 'sandbox/get': 1, stop: 1 },
        total: 8,
      });
      const viaHttp = await api(host, 'GET', '/_vite-hub/counters');
      assert.deepEqual(viaHttp.json, host.counters());
      host.resetCounters();
      assert.deepEqual(host.counters(), { requests: {}, total: 0 });
    });
  });
}

describe('bubblewrap isolation', { skip: NO_BWRAP }, () => {
  let host;
  before(async () => {
    host = await startBoxHost({ isolation: 'bubblewrap' });
  });
  after(() => host?.close());

  test('host home and the repo are not visible; writes stay in the Box; /tmp is private', async () => {
    assert.ok(fs.existsSync('/root') && fs.existsSync('/work/main'), 'the host paths under test exist');
    const hostMarker = path.join('/tmp', `vite-hub-host-${randomBytes(6).toString('hex')}`);
    fs.writeFileSync(hostMarker, 'host');
    const appNode = fs.realpathSync(process.execPath);
    const sid = (await createBox(host)).id;
    try {
      const probe = `
        const fs = require('fs');
        const out = {};
        for (const p of ['/root', '/work', '/work/main', ${JSON.stringify(hostMarker)}, '/etc/npmrc', ${JSON.stringify(appNode)}]) out[p] = fs.existsSync(p);
        for (const p of ['/etc/x', '/usr/x', '/x', '/home/x', '/vercel/x', '/vercel/sandbox/x', '/tmp/x', '/home/box/x']) {
          try { fs.writeFileSync(p, 'w'); out['write ' + p] = 'ok'; } catch (e) { out['write ' + p] = e.code; }
        }
        console.log(JSON.stringify(out));`;
      const res = await run(host, sid, 'node', ['-e', probe]);
      assert.equal(res.exitCode, 0, res.stderr);
      assert.deepEqual(JSON.parse(res.stdout), {
        '/root': false,
        '/work': false,
        '/work/main': false,
        [hostMarker]: false,
        '/etc/npmrc': fs.existsSync('/etc/npmrc'),
        // The app's own Node is there at its own path (box-toolchain.mjs), wherever it lives.
        [appNode]: true,
        'write /etc/x': 'EROFS',
        'write /usr/x': 'EROFS',
        'write /x': 'EROFS',
        'write /home/x': 'EROFS',
        'write /vercel/x': 'EROFS',
        'write /vercel/sandbox/x': 'ok',
        'write /tmp/x': 'ok',
        'write /home/box/x': 'ok',
      });
      assert.equal(fs.existsSync('/tmp/x') && fs.readFileSync('/tmp/x', 'utf8') === 'w', false);
      const tmpRead = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/read`, { body: { path: '/tmp/x' } });
      assert.equal(tmpRead.bytes.toString(), 'w');
    } finally {
      fs.rmSync(hostMarker, { force: true });
      await stopBox(host, sid);
    }
  });

  test("networkPolicy 'deny-all' cuts the Box off the network (loopback target)", async () => {
    const port = new URL(host.baseUrl).port;
    const connect = `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })`;
    const denied = await createBox(host, { networkPolicy: { mode: 'deny-all' } });
    const open = await createBox(host);
    try {
      assert.equal(denied.executionAuthority.network, 'none');
      assert.deepEqual(denied.networkPolicy, { mode: 'deny-all' });
      assert.equal(open.executionAuthority.network, boxNetwork ? 'restricted' : 'unrestricted');
      const blocked = await run(host, denied.id, 'node', ['-e', connect]);
      assert.equal(blocked.stdout, 'ECONNREFUSED\n');
      // With a Box network, allow-all reaches the outside but never the host's loopback.
      const allowed = await run(host, open.id, 'node', ['-e', connect]);
      assert.equal(allowed.stdout, boxNetwork ? 'ECONNREFUSED\n' : 'connected\n');
    } finally {
      await stopBox(host, denied.id);
      await stopBox(host, open.id);
    }
  });
});

describe('bounds and options', () => {
  test('create answers 503 capacity past maxBoxes with no queue room; bodies are capped with 413', async () => {
    const host = await startBoxHost({ maxBoxes: 1, maxQueued: 0, isolation: 'none' });
    try {
      const sid = (await createBox(host)).id;
      const full = await api(host, 'POST', '/v3/sandboxes', { body: { projectId: 'p', ports: [] } });
      assert.equal(full.status, 503);
      assert.equal(full.json.error.code, 'capacity');
      const big = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/fs/read`, {
        body: { path: 'x'.repeat(1024 * 1024 + 10) },
      });
      assert.equal(big.status, 413);
      await stopBox(host, sid);
      const again = await api(host, 'POST', '/v2/sandboxes', {
        body: { projectId: 'p', ports: [], runtime: 'node22' },
      });
      assert.equal(again.status, 200);
      await stopBox(host, again.json.session.id);
    } finally {
      await host.close();
    }
  });

  test('timeouts past the JS timer maximum (2^31 - 1 ms) are a 400, not a Box stopped after 1 ms', async () => {
    const host = await startBoxHost({ isolation: 'none' });
    try {
      const tooLong = 2 ** 31;
      const create = await api(host, 'POST', '/v3/sandboxes', {
        body: { projectId: 'p', ports: [], timeout: tooLong },
      });
      assert.equal(create.status, 400);
      const sid = (await createBox(host, { timeout: 2 ** 31 - 1 })).id;
      const cmd = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
        body: { command: 'true', args: [], timeout: tooLong, wait: true },
      });
      assert.equal(cmd.status, 400);
      const extend = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/extend-timeout`, {
        body: { duration: tooLong },
      });
      assert.equal(extend.status, 400);
      // Extended within bounds past the timer maximum in total, the Box keeps running.
      assert.equal(
        (await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/extend-timeout`, { body: { duration: 1000 } })).status,
        200,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await run(host, sid, 'true')).exitCode, 0);
      await stopBox(host, sid);
    } finally {
      await host.close();
    }
  });

  test('only loopback hosts are accepted; a given token is used', async () => {
    await assert.rejects(startBoxHost({ host: '0.0.0.0' }), /host must be/);
    const host = await startBoxHost({ token: 'given-token-123', isolation: 'none' });
    try {
      assert.equal(host.token, 'given-token-123');
      assert.equal((await api(host, 'GET', '/_vite-hub/counters')).status, 200);
    } finally {
      await host.close();
    }
  });

  test('start sweeps Box dirs of gone pids and gone pid namespaces only; live pids, other names and non-dirs are kept', async (t) => {
    const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-test-sweep-'));
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-test-sweep-target-'));
    t.after(() => {
      fs.rmSync(boxRoot, { recursive: true, force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    });
    // A pid that is certainly gone: a child that has exited (and been reaped).
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    const dead = child.pid;
    assert.throws(() => process.kill(dead, 0), { code: 'ESRCH' });

    const stale = `${boxDirPrefix(dead)}a1B2c3`;
    fs.mkdirSync(path.join(boxRoot, stale, 'vercel', 'sandbox'), { recursive: true });
    fs.writeFileSync(path.join(boxRoot, stale, 'vercel', 'sandbox', 'index.mjs'), 'staged code');
    fs.writeFileSync(path.join(outside, 'keep.txt'), 'outside');
    const kept = [
      `${boxDirPrefix()}LiVe01`, // this (live) process
      'vite-hub-box-Old123', // old format, no pid
      `vite-hub-box-${dead}-a1B2c3`, // old format, no pid namespace
      `${boxDirPrefix(dead).slice(0, -1)}`, // no random part
      `${boxDirPrefix(dead)}toolong1`, // not mkdtemp's six characters
      `${boxDirPrefix(`0${dead}`)}abcdef`, // not a canonical pid
      `other-box-${dead}-abcdef`, // another prefix
    ];
    // Another pid namespace, which no process is in (1 is no namespace's inode): its pid means
    // nothing here, so only a host that sees every process (root in the initial pid
    // namespace) knows it is gone and sweeps it; any other host keeps it.
    const otherNamespace = `vite-hub-box-1-${dead}-a1B2c3`;
    const seesEveryProcess = livePidNamespaces() !== null;
    if (!seesEveryProcess) kept.push(otherNamespace);
    for (const name of [...kept, otherNamespace]) fs.mkdirSync(path.join(boxRoot, name, 'vercel'), { recursive: true });
    fs.writeFileSync(path.join(boxRoot, `${boxDirPrefix(dead)}File01`), 'a file, not a Box dir');
    fs.symlinkSync(outside, path.join(boxRoot, `${boxDirPrefix(dead)}Link01`));

    const host = await startBoxHost({ isolation: 'none', boxRoot });
    try {
      assert.deepEqual(await host.swept, (seesEveryProcess ? [stale, otherNamespace] : [stale]).sort());
      assert.deepEqual(
        fs.readdirSync(boxRoot).sort(),
        [...kept, `${boxDirPrefix(dead)}File01`, `${boxDirPrefix(dead)}Link01`].sort(),
      );
      assert.equal(fs.readFileSync(path.join(outside, 'keep.txt'), 'utf8'), 'outside');
      // The host's own Box dirs carry its pid, so no other host sweeps them while it lives.
      const sid = (await createBox(host)).id;
      const own = fs.readdirSync(boxRoot).filter((name) => !kept.includes(name) && !name.includes(String(dead)));
      assert.equal(own.length, 1);
      assert.match(own[0], new RegExp(`^${boxDirPrefix()}[A-Za-z0-9]{6}$`));
      const second = await startBoxHost({ isolation: 'none', boxRoot });
      assert.deepEqual(await second.swept, []);
      await second.close();
      assert.ok(fs.existsSync(path.join(boxRoot, own[0])));
      await stopBox(host, sid);
    } finally {
      await host.close();
    }
  });
});
