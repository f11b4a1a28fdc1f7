// Per-Box limits of the local Box host (issue 9, item 3): the Box's writable space is a sized
// tmpfs (a write past it is ENOSPC, the host's disk is not where it lands), and the process and
// memory limits come from cgroup v2 where writable, else cgroup v1, else rlimits, as the session
// reports. The cgroup v2 file writes are exercised on a cgroup-shaped temp directory (this
// machine's v2 hierarchy has no pids/memory controllers); the v1 path on the real hierarchy.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { BoxRegistry } from '../../pkg-template/box-host/engine/registry.mjs';
import { bubblewrapWorks, hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { chooseCgroups, cgroupMounts } from '../../pkg-template/box-host/engine/box-limits.mjs';
import { isMountPoint } from '../../pkg-template/box-host/engine/box-disk.mjs';
import { defineTestSandbox } from '../support/local-host.mjs';
import { boxDirPrefix } from '../../pkg-template/box-host/engine/stale-boxes.mjs';

const features = await hostFeatures();
const canBwrap = await bubblewrapWorks();
const DISK = 16 * 1024 * 1024;
const hosts = [];
const temps = [];

after(async () => {
  configureSandbox({});
  await Promise.all(hosts.map((host) => host.close()));
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

async function api(host, method, route, body) {
  const res = await fetch(`${host.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function run(host, sid, script) {
  const res = await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
    command: 'sh',
    args: ['-c', script],
    wait: true,
    timeout: 30_000,
  });
  const lines = res.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const out = (stream) =>
    lines
      .filter((l) => l.stream === stream)
      .map((l) => l.data)
      .join('');
  return { exitCode: lines.at(-1).command.exitCode, stdout: out('stdout'), stderr: out('stderr') };
}

test('a Box writing past its disk size gets ENOSPC on a tmpfs of that size, for /tmp, home and work dir together', {
  skip: !features.diskBound && 'this host cannot mount a tmpfs (not root)',
  timeout: 60_000,
}, async () => {
  const host = await startBoxHost({ diskBytes: DISK });
  hosts.push(host);
  const created = JSON.parse((await api(host, 'POST', '/v3/sandboxes', { projectId: 'p', ports: [] })).text);
  assert.equal(created.session.limits.diskBytes, DISK);
  const sid = created.session.id;
  const kind = await run(host, sid, 'stat -f -c %T /vercel/sandbox; df -B1 --output=size /tmp | tail -1');
  assert.equal(kind.stdout.split('\n')[0], 'tmpfs', 'the work directory is not on the Box tmpfs');
  assert.equal(Number(kind.stdout.split('\n')[1]), DISK);
  const full = await run(host, sid, 'head -c 64M /dev/zero > /vercel/sandbox/big');
  assert.notEqual(full.exitCode, 0);
  assert.match(full.stderr, /No space left on device/);
  const sizes = await run(
    host,
    sid,
    'stat -c %s /vercel/sandbox/big; rm /vercel/sandbox/big; head -c 10M /dev/zero > /tmp/a && head -c 10M /dev/zero > "$HOME/b"; echo rc=$?',
  );
  assert.ok(Number(sizes.stdout.split('\n')[0]) <= DISK);
  assert.match(sizes.stdout, /rc=1\n/, '/tmp and the home dir share the Box disk');

  // Through runSandbox: the failed write explains itself in the Response.
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  defineTestSandbox(
    'limits/fill-disk',
    `import fs from 'node:fs'; export default () => { fs.writeFileSync('/tmp/fill', Buffer.alloc(${2 * DISK})); return 'wrote'; };`,
  );
  const response = await runSandbox('limits/fill-disk', {});
  assert.equal(response.status, 500);
  const { error } = await response.json();
  assert.match(JSON.stringify(error), /ENOSPC/);
});

test('a stopped Box leaves no mount and no directory behind', {
  skip: !features.diskBound && 'this host cannot mount a tmpfs (not root)',
}, async () => {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-limits-root-'));
  temps.push(boxRoot);
  const registry = new BoxRegistry({
    boxRoot,
    isolation: 'none',
    maxBoxes: 1,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features,
    diskBytes: DISK,
  });
  const box = await registry.create({});
  assert.ok(isMountPoint(box.root));
  assert.equal(fs.statfsSync(box.root).type, 0x01021994, 'not a tmpfs (TMPFS_MAGIC)');
  await box.stop();
  assert.ok(!isMountPoint(box.root));
  assert.deepEqual(fs.readdirSync(boxRoot), []);
});

test('the session reports which mechanism bounds processes and memory, and it is the one applied', {
  skip: !canBwrap,
}, async () => {
  // A Box root of its own and no spare Boxes (parked-boxes.mjs): the one directory there names the Box's cgroups.
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-limits-'));
  temps.push(boxRoot);
  const host = await startBoxHost({ isolation: 'bubblewrap', boxRoot, parked: { size: 0 } });
  hosts.push(host);
  const created = JSON.parse(
    (await api(host, 'POST', '/v3/sandboxes', { projectId: 'p', ports: [], resources: { vcpus: 1 } })).text,
  );
  const { limits } = created.session;
  const choice = chooseCgroups();
  assert.equal(limits.enforcedBy, choice.kind);
  assert.equal(limits.processes, 512);
  assert.equal(limits.memoryBytes, choice.kind === 'rlimit' ? null : 2048 * 1024 * 1024);
  if (choice.kind === 'cgroup-v1') {
    // The Box's cgroups (named after its directory), read on the host side while its command runs.
    const sid = created.session.id;
    await api(host, 'POST', `/v2/sandboxes/sessions/${sid}/cmd`, { command: 'sleep', args: ['2'] });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [boxDir] = fs.readdirSync(boxRoot);
    assert.ok(boxDir.startsWith(boxDirPrefix()), boxDir);
    const boxCgroup = (parent) => path.join(parent, boxDir);
    const pidsDir = boxCgroup(choice.pids);
    const memoryDir = boxCgroup(choice.memory);
    assert.equal(fs.readFileSync(path.join(pidsDir, 'pids.max'), 'utf8').trim(), '512');
    assert.equal(
      fs.readFileSync(path.join(memoryDir, 'memory.limit_in_bytes'), 'utf8').trim(),
      String(2048 * 1024 * 1024),
    );
    assert.ok(fs.readFileSync(path.join(pidsDir, 'cgroup.procs'), 'utf8').trim().split('\n').length >= 1);
    assert.ok(fs.readFileSync(path.join(memoryDir, 'cgroup.procs'), 'utf8').trim() !== '');
  }
});

/** A cgroup-v2-shaped directory: cgroup.controllers, cgroup.subtree_control, cgroup.procs. */
function fakeCgroupV2(controllers) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-fake-cgroup2-'));
  temps.push(dir);
  fs.writeFileSync(path.join(dir, 'cgroup.controllers'), `${controllers}\n`);
  fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), '');
  fs.writeFileSync(path.join(dir, 'cgroup.procs'), '');
  return dir;
}

function fakeV1(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vite-hub-fake-cgroup1-${name}-`));
  temps.push(dir);
  fs.writeFileSync(path.join(dir, 'cgroup.procs'), '');
  return dir;
}

const mountinfoLine = (point, type, superOptions) => `30 1 0:26 / ${point} rw,nosuid - ${type} ${type} ${superOptions}`;

test('the cgroup choice: v2 with pids and memory first, else v1, else rlimits, each saying why', async (t) => {
  const v2 = fakeCgroupV2('cpu io memory pids');
  const chosen = chooseCgroups({ mountinfo: mountinfoLine(v2, 'cgroup2', 'rw'), selfCgroup: '0::/\n' });
  assert.equal(chosen.kind, 'cgroup-v2');
  assert.equal(chosen.dir, v2);
  assert.equal(fs.readFileSync(path.join(v2, 'cgroup.subtree_control'), 'utf8'), '+pids +memory');

  const noMemory = fakeCgroupV2('cpu pids');
  const pids = fakeV1('pids');
  const memory = fakeV1('memory');
  const mountinfo = [
    mountinfoLine(noMemory, 'cgroup2', 'rw'),
    mountinfoLine(pids, 'cgroup', 'rw,pids'),
    mountinfoLine(memory, 'cgroup', 'rw,memory'),
  ].join('\n');
  const v1 = chooseCgroups({ mountinfo, selfCgroup: '0::/\n' });
  assert.deepEqual({ kind: v1.kind, pids: v1.pids, memory: v1.memory }, { kind: 'cgroup-v1', pids, memory });
  assert.match(v1.notes.join(), /lacks the memory controller/);

  // v1 Box cgroups go below the host's own cgroup of each hierarchy (never the hierarchy root,
  // which escapes the app's own limits).
  for (const mount of [pids, memory]) {
    fs.mkdirSync(path.join(mount, 'app', 'one'), { recursive: true });
    fs.writeFileSync(path.join(mount, 'app', 'one', 'cgroup.procs'), '');
  }
  const inApp = chooseCgroups({ mountinfo, selfCgroup: '8:pids:/app/one\n4:memory:/app/one\n0::/\n' });
  assert.deepEqual(
    { kind: inApp.kind, pids: inApp.pids, memory: inApp.memory },
    { kind: 'cgroup-v1', pids: path.join(pids, 'app/one'), memory: path.join(memory, 'app/one') },
  );

  // subtree_control refused (a directory here: EISDIR; EBUSY on a real non-root cgroup with
  // processes) and no v1: rlimits only.
  const busy = fakeCgroupV2('memory pids');
  fs.rmSync(path.join(busy, 'cgroup.subtree_control'));
  fs.mkdirSync(path.join(busy, 'cgroup.subtree_control'));
  const none = chooseCgroups({ mountinfo: mountinfoLine(busy, 'cgroup2', 'rw'), selfCgroup: '0::/\n' });
  assert.equal(none.kind, 'rlimit');
  assert.match(none.notes.join('; '), /cannot enable pids and memory .*EISDIR.*; no writable cgroup v1/);

  // This machine's own mounts parse into what /proc says.
  const real = cgroupMounts(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  const noV1Pids =
    !fs.existsSync('/sys/fs/cgroup/pids/cgroup.procs') &&
    'this machine has no cgroup v1 pids hierarchy at /sys/fs/cgroup/pids';
  await t.test("this machine's cgroup v1 pids mount is found", { skip: noV1Pids }, () => {
    assert.equal(real.v1.pids, '/sys/fs/cgroup/pids');
  });
});

test("under cgroup v2 a real command joins its Box's cgroup, with pids.max, memory.max and its pid", {
  skip: !canBwrap,
}, async () => {
  const v2 = fakeCgroupV2('memory pids');
  const cgroup = chooseCgroups({ mountinfo: mountinfoLine(v2, 'cgroup2', 'rw'), selfCgroup: '0::/\n' });
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-limits-root-'));
  temps.push(boxRoot);
  const registry = new BoxRegistry({
    boxRoot,
    isolation: 'bubblewrap',
    maxBoxes: 1,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features: { ...features, cgroup },
    diskBytes: DISK,
  });
  const box = await registry.create({ resources: { vcpus: 1 } });
  try {
    assert.equal(box.sessionJSON().limits.enforcedBy, 'cgroup-v2');
    const command = box.runCommand({ command: 'sh', args: ['-c', 'echo $$'] });
    assert.equal(await command.waitExit(), 0, command.logs.map((e) => e.data).join(''));
    const dir = path.join(v2, path.basename(box.root));
    assert.equal(fs.readFileSync(path.join(dir, 'pids.max'), 'utf8'), '512');
    assert.equal(fs.readFileSync(path.join(dir, 'memory.max'), 'utf8'), String(2048 * 1024 * 1024));
    assert.match(fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8'), /^[1-9][0-9]*$/);
  } finally {
    await box.stop();
  }
});

// The memory and process limits are the Box's, as a Vercel Sandbox's `memory` is per sandbox: the
// Box's commands share one cgroup (per hierarchy) named after the Box directory. Real bubblewrap,
// real processes, the real v1 hierarchies (this host's choice).
const hostCgroup = chooseCgroups();
const realV1 = hostCgroup.kind === 'cgroup-v1' && canBwrap;
const BOX_MEMORY = 2048 * 1024 * 1024; // vcpus: 1
/** A node command that fills `bytes` of memory (page by page), holds it `holdMs`, then exits 0. */
function hog(bytes, holdMs) {
  return {
    command: 'node',
    args: [
      '-e',
      `const b = Buffer.allocUnsafe(${bytes}); b.fill(1); setTimeout(() => console.log(b[${bytes - 1}]), ${holdMs});`,
    ],
  };
}

test('two commands of one Box together cannot pass the Box memory: one is killed (137); one alone fits', {
  skip: !realV1 && 'needs bubblewrap and writable cgroup v1 hierarchies',
  timeout: 120_000,
}, async () => {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-limits-root-'));
  temps.push(boxRoot);
  const registry = new BoxRegistry({
    boxRoot,
    isolation: 'bubblewrap',
    maxBoxes: 1,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features,
    diskBytes: DISK,
  });
  const box = await registry.create({ resources: { vcpus: 1 } });
  try {
    assert.equal(box.sessionJSON().memory * 1024 * 1024, BOX_MEMORY);
    const share = Math.floor(BOX_MEMORY * 0.6);
    const alone = box.runCommand(hog(share, 500));
    assert.equal(await alone.waitExit(), 0, alone.logs.map((e) => e.data).join(''));
    const both = [box.runCommand(hog(share, 4000)), box.runCommand(hog(share, 4000))];
    const codes = await Promise.all(both.map((cmd) => cmd.waitExit()));
    assert.ok(codes.includes(137), `exit codes ${codes}: both commands held ${share} bytes in a Box of ${BOX_MEMORY}`);
    for (const code of codes) assert.ok(code === 0 || code === 137, `exit codes ${codes}`);
  } finally {
    await box.stop();
  }
});

test('a Box has one cgroup per hierarchy with its memory and process limits, holding its commands, gone once it stops', {
  skip: !realV1 && 'needs bubblewrap and writable cgroup v1 hierarchies',
}, async () => {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-limits-root-'));
  temps.push(boxRoot);
  const registry = new BoxRegistry({
    boxRoot,
    isolation: 'bubblewrap',
    maxBoxes: 1,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features,
    diskBytes: DISK,
  });
  const box = await registry.create({ resources: { vcpus: 1 } });
  const name = path.basename(box.root);
  const pidsDir = path.join(hostCgroup.pids, name);
  const memoryDir = path.join(hostCgroup.memory, name);
  try {
    assert.equal(fs.readFileSync(path.join(pidsDir, 'pids.max'), 'utf8').trim(), '512');
    assert.equal(fs.readFileSync(path.join(memoryDir, 'memory.limit_in_bytes'), 'utf8').trim(), String(BOX_MEMORY));
    const commands = [
      box.runCommand({ command: 'sleep', args: ['3'] }),
      box.runCommand({ command: 'sleep', args: ['3'] }),
    ];
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Both commands' processes are in the Box's cgroups (each command: bwrap's sandbox, prlimit → sleep).
    for (const dir of [pidsDir, memoryDir]) {
      const procs = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').trim().split('\n').filter(Boolean);
      assert.ok(procs.length >= 2, `${dir}: ${procs}`);
    }
    assert.deepEqual(await Promise.all(commands.map((cmd) => cmd.waitExit())), [0, 0]);
  } finally {
    await box.stop();
  }
  assert.ok(!fs.existsSync(pidsDir), `${pidsDir} left behind`);
  assert.ok(!fs.existsSync(memoryDir), `${memoryDir} left behind`);
});

test("closing the host removes its Boxes' cgroups; the next host sweeps those of a host that is gone", {
  skip: !realV1 && 'needs bubblewrap and writable cgroup v1 hierarchies',
  timeout: 60_000,
}, async () => {
  const parents = [hostCgroup.pids, hostCgroup.memory];
  const own = () =>
    new Set(
      parents.flatMap((parent) =>
        fs
          .readdirSync(parent)
          .filter((e) => e.startsWith(boxDirPrefix()))
          .map((e) => path.join(parent, e)),
      ),
    );
  const before = own();
  const host = await startBoxHost({ isolation: 'bubblewrap' });
  hosts.push(host);
  const created = JSON.parse(
    (await api(host, 'POST', '/v3/sandboxes', { projectId: 'p', ports: [], resources: { vcpus: 1 } })).text,
  );
  await api(host, 'POST', `/v2/sandboxes/sessions/${created.session.id}/cmd`, { command: 'sleep', args: ['30'] });
  // The Box's cgroup in each hierarchy, and those of the host's spare Boxes (parked-boxes.mjs).
  const made = [...own()].filter((dir) => !before.has(dir));
  assert.ok(made.length >= 2 && made.length % 2 === 0, `${made}`);
  await host.close();
  for (const dir of made) assert.ok(!fs.existsSync(dir), `${dir} left behind by close()`);

  // A Box cgroup of a process that is gone, with a process of it still inside.
  const gone = await new Promise((resolve) => {
    const child = spawn('true');
    child.on('exit', () => resolve(child.pid));
  });
  const stale = parents.map((parent) => path.join(parent, `${boxDirPrefix(gone)}Abc123`));
  for (const dir of stale) fs.mkdirSync(dir);
  const leftover = spawn('sleep', ['30']);
  for (const dir of stale) fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(leftover.pid));
  const exited = new Promise((resolve) => leftover.on('exit', (code, signal) => resolve(signal)));
  const next = await startBoxHost({ isolation: 'bubblewrap' });
  hosts.push(next);
  await next.swept;
  for (const dir of stale) assert.ok(!fs.existsSync(dir), `${dir} not swept`);
  assert.equal(await exited, 'SIGKILL');
});
