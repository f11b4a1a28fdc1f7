// Parked Node processes (parked-boxes.mjs, parked-node.mjs; issue 25): a warm Run's harness is a
// `node` started before the Run asked, in a spare Box of its own; the entry sees what it sees in
// a process started for it; each spare serves one Run; spares retire when idle, give their slots
// up, and leave nothing behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { PARKED_NODE_PATH } from '../../pkg-template/box-host/engine/parked-node.mjs';
import { BoxRegistry } from '../../pkg-template/box-host/engine/registry.mjs';
import { hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { NO_BWRAP, defineTestSandbox, hostApi, until } from '../support/local-host.mjs';

const hosts = [];
const registries = [];
const temps = [];
after(async () => {
  await Promise.all([...hosts.map((host) => host.close()), ...registries.map((registry) => registry.stopAll())]);
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/** A host of its own Box root (so its directories can be counted), with `parked` as given. */
async function hostWith(options) {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-parked-'));
  temps.push(boxRoot);
  const host = await startBoxHost({ boxRoot, ...options });
  hosts.push(host);
  return Object.assign(host, {
    boxDirs: () => fs.readdirSync(boxRoot).filter((name) => name.startsWith('vite-hub-box-')),
  });
}

/** A Box registry of its own Box root under bubblewrap, keeping `parked` spares (`options` override its slots and queue). */
async function registryWith(parked, options = {}) {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-parked-'));
  temps.push(boxRoot);
  const registry = new BoxRegistry({
    boxRoot,
    isolation: 'bubblewrap',
    maxBoxes: 4,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features: await hostFeatures(),
    spares: true,
    parked,
    ...options,
  });
  registries.push(registry);
  return registry;
}

/** The host pids of the processes parked in `registry`'s ready spares. */
function parkedPids(registry) {
  return registry.parked.ready.map(({ box }) => box.parked.command.pid);
}

async function run(host, name, payload) {
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  const response = await runSandbox(name, payload);
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

// What a process can tell about where and how it runs (pid-free): argv, cwd, env, Node options,
// ids and capabilities, the syscall filter, limits, cgroup, host name, the title ps shows (and
// how long a title it keeps), the mount points and stdin.
defineTestSandbox(
  'parked/probe',
  `
import fs from 'node:fs';
import os from 'node:os';
const status = Object.fromEntries(fs.readFileSync('/proc/self/status', 'utf8').split('\\n').map((line) => line.split(':\\t')));
const title = process.title;
process.title = 'm'.repeat(50);
export default () => ({
  uptimeMs: process.uptime() * 1000,
  titles: [title, process.title.length],
  argv: process.argv.slice(1),
  execArgv: process.execArgv,
  cwd: process.cwd(),
  env: { ...process.env },
  ids: [process.getuid(), process.getgid(), status.CapEff, status.CapBnd, status.NoNewPrivs, status.Seccomp, status.Seccomp_filters],
  limits: fs.readFileSync('/proc/self/limits', 'utf8'),
  cgroup: fs.readFileSync('/proc/self/cgroup', 'utf8'),
  hostname: os.hostname(),
  mounts: fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n').map((line) => line.split(' ')[4]).filter(Boolean),
  mark: globalThis.parkedMark = (globalThis.parkedMark ?? 0) + 1,
  leftover: fs.existsSync('/tmp/parked-mark') || (fs.writeFileSync('/tmp/parked-mark', 'x'), false),
  // What stdin is: /dev/null (a CLI reading /dev/stdin, or a child inheriting fd 0, gets nothing).
  stdin: [fs.fstatSync(0).isCharacterDevice(), (() => { try { return fs.readFileSync('/dev/stdin', 'utf8'); } catch (error) { return error.code; } })()],
});
`,
);

test('a warm Run runs in a parked process and its entry sees what it sees in a process started for it', {
  skip: NO_BWRAP,
}, async () => {
  const parked = await hostWith({});
  const plain = await hostWith({ parked: { size: 0 } });
  // Spares are made one after the other: the first is on its way (or both are ready already).
  assert.deepEqual(
    { ...parked.parked(), ready: 0, limitedBy: parked.parked().limitedBy ?? 'making' },
    { size: 2, idleMs: 300_000, ready: 0, handedOver: 0, lastError: null, limitedBy: 'making' },
  );
  assert.ok(
    await until(() => parked.parked().ready === 2),
    `the spares were not made: ${JSON.stringify(parked.parked())}`,
  );
  // Started at least this long before the Run: an entry in a process of its own is younger.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const fromParked = await run(parked, 'parked/probe');
  const fromPlain = await run(plain, 'parked/probe');
  assert.ok(fromParked.uptimeMs >= 500, `the Run's process started ${fromParked.uptimeMs} ms before its entry ran`);
  assert.ok(await until(() => parked.parked().handedOver === 1), JSON.stringify(parked.parked()));
  assert.equal(plain.parked().handedOver, 0);
  // The parked script is shown read-only at one more mount point; nothing else differs.
  assert.deepEqual(
    fromParked.mounts.filter((point) => point !== PARKED_NODE_PATH),
    fromPlain.mounts,
  );
  for (const key of [
    'argv',
    'execArgv',
    'cwd',
    'env',
    'ids',
    'limits',
    'cgroup',
    'hostname',
    'titles',
    'mark',
    'leftover',
    'stdin',
  ]) {
    assert.deepEqual(fromParked[key], fromPlain[key], key);
  }
  assert.deepEqual(fromParked.execArgv, []);
  assert.equal(fromParked.env.PWD, fromParked.cwd);
});

test('each parked process and spare Box serves one Run', { skip: NO_BWRAP }, async () => {
  const host = await hostWith({ parked: { size: 1 } });
  for (let i = 0; i < 3; i += 1) {
    assert.ok(await until(() => host.parked().ready === 1), JSON.stringify(host.parked()));
    const probe = await run(host, 'parked/probe');
    // A process of its own (no global of an earlier Run) in a Box of its own (no file of one).
    assert.equal(probe.mark, 1);
    assert.equal(probe.leftover, false);
  }
  assert.ok(await until(() => host.parked().handedOver === 3), JSON.stringify(host.parked()));
});

test('spares unused for idleMs are retired and leave no process or directory; the next Run makes them again once its Box stops', {
  skip: NO_BWRAP,
}, async () => {
  const host = await hostWith({ parked: { size: 2, idleMs: 300 } });
  assert.ok(await until(() => host.parked().ready === 2), JSON.stringify(host.parked()));
  assert.ok(
    await until(() => host.parked().ready === 0 && host.boxDirs().length === 0),
    `spares left: ${JSON.stringify(host.parked())}, ${host.boxDirs()}`,
  );
  await run(host, 'parked/probe');
  assert.ok(await until(() => host.parked().ready === 2), 'a Box stopped and no spare was made again');
});

test('a first command that is not a harness starts its own process and ends the parked one', {
  skip: NO_BWRAP,
}, async () => {
  const registry = await registryWith({ size: 1, idleMs: 60_000 });
  assert.ok(await until(() => registry.parked.readyCount === 1));
  const [pid] = parkedPids(registry);
  const box = await registry.create({});
  assert.equal(registry.parked.readyCount, 0, 'the create took the spare');
  const command = box.runCommand({ command: 'sh', args: ['-c', 'echo $0'] });
  assert.equal(await command.waitExit(), 0);
  assert.equal(command.logs.map((entry) => entry.data).join(''), 'sh\n');
  assert.ok(await until(() => !fs.existsSync(`/proc/${pid}`)), "the parked process outlived the Box's first command");
  await box.stop();
  assert.equal(box.handedOver, undefined);
});

test('creates that a spare does not fit (env, deny-all) get Boxes of their own, spares give up their slots to them, and only work of their shape makes them again', {
  skip: NO_BWRAP,
}, async () => {
  const host = await hostWith({ maxBoxes: 2, maxQueueWaitMs: 2000, parked: { size: 2, idleMs: 60_000 } });
  assert.ok(await until(() => host.parked().ready === 2));
  const sids = [];
  for (const body of [{ env: { A: '1' } }, { networkPolicy: 'deny-all' }]) {
    const created = await hostApi(host, 'POST', '/v3/sandboxes', body);
    assert.equal(created.status, 200, `${JSON.stringify(body)}: ${created.text}`);
    sids.push(JSON.parse(created.text).session.id);
  }
  // Both slots went to the creates: no spare is left, none is made while they hold them.
  assert.equal(host.parked().ready, 0);
  assert.equal(host.boxDirs().length, 2);
  for (const sid of sids) await hostApi(host, 'POST', `/v2/sandboxes/sessions/${sid}/stop`);
  // Work no spare could serve makes none again; a Box of the spares' shape does, once it stops.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(host.parked().ready, 0);
  const fitting = await hostApi(host, 'POST', '/v3/sandboxes', {});
  assert.equal(fitting.status, 200, fitting.text);
  await hostApi(host, 'POST', `/v2/sandboxes/sessions/${JSON.parse(fitting.text).session.id}/stop`);
  assert.ok(await until(() => host.parked().ready === 2), JSON.stringify(host.parked()));
});

// A host whose bounds fit one Box (here maxBoxes 1; until Boxes counted their request instead of
// their 4 GiB limit, the default memory bound of an 8 GB machine) makes its spare as it starts: the Run that comes meanwhile waited in the queue while
// the spare, once ready, kept the slot (until idleMs, past the queue's wait: 503 capacity).
test('a create that waits for a slot gets the one a spare holds, also when the spare became ready while it waited', {
  skip: NO_BWRAP,
}, async () => {
  // (A host's server holds the event loop; neither a queued create nor a parked process does.)
  const held = setInterval(() => {}, 1000);
  after(() => clearInterval(held));
  for (const body of [{ env: { A: '1' } }, {}]) {
    const registry = await registryWith(
      { size: 1, idleMs: 60_000 },
      { maxBoxes: 1, maxQueued: 8, maxQueueWaitMs: 5000 },
    );
    assert.equal(registry.parked.making.size, 1, 'the spare is being made');
    const started = Date.now();
    const box = await registry.create(body);
    assert.ok(Date.now() - started < 4000, `${JSON.stringify(body)}: the create waited ${Date.now() - started} ms`);
    assert.equal(registry.parked.readyCount, 0);
    await box.stop();
    await registry.stopAll();
  }
});

test('the first create of a new host takes the spare still being made instead of making a Box beside it', {
  skip: NO_BWRAP,
}, async () => {
  const registry = await registryWith({ size: 2, idleMs: 60_000 });
  // Spares are made one after the other: one on its way, none ready.
  assert.equal(registry.parked.making.size, 1);
  assert.equal(registry.parked.readyCount, 0);
  const box = await registry.create({});
  assert.ok(box.hasParked, 'the create made a Box of its own while a spare was on its way');
  await box.stop();
});

test('stopAll() and the exit path stop the spares and their processes', { skip: NO_BWRAP }, async () => {
  for (const end of ['stopAll', 'removeAllNow']) {
    const registry = await registryWith({ size: 2, idleMs: 60_000 });
    assert.ok(await until(() => registry.parked.readyCount === 2));
    const pids = parkedPids(registry);
    if (end === 'stopAll') await registry.stopAll();
    else registry.removeAllNow();
    assert.deepEqual(fs.readdirSync(registry.boxRoot), [], end);
    assert.ok(
      await until(() => pids.every((pid) => !fs.existsSync(`/proc/${pid}`))),
      `a parked process outlived ${end}`,
    );
  }
});

test('parked options are checked', async () => {
  for (const [parked, message] of [
    [{ size: -1 }, /parked\.size must be an integer from 0 to 16/],
    [{ size: 1.5 }, /parked\.size/],
    [{ idleMs: 0 }, /parked\.idleMs must be an integer number of ms/],
    ['2', /parked must be an object/],
    [{ szie: 0 }, /parked has no option "szie": it takes size and idleMs/],
  ]) {
    await assert.rejects(startBoxHost({ parked }), message);
  }
});
