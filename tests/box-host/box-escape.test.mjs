// Attacks from inside a Box on the local Box host under bubblewrap (issue 9, item 3): the Box
// must not read the host env or /proc/1/environ, write /proc/sys, reach the host's Box host
// port under deny-all, see its env on the host's command lines, learn the host's pid or its own
// host uid from /proc/self, fork without bound, or queue runs into failures at the Box limit.
// Skipped where bubblewrap cannot run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { packTar } from 'modern-tar';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { bubblewrapWorks, hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { boxDirPrefix } from '../../pkg-template/box-host/engine/stale-boxes.mjs';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { boxesStoppedAfterEach, defineTestSandbox, hostApi } from '../support/local-host.mjs';

const canBwrap = await bubblewrapWorks();
const boxNetwork = (await hostFeatures()).netTool !== null;
let host;

const api = (method, route, body) => hostApi(host, method, route, body);

const opened = boxesStoppedAfterEach(() => host);

async function box(extra = {}) {
  const created = await api('POST', '/v3/sandboxes', { projectId: 'p', ports: [], ...extra });
  const sid = JSON.parse(created.text).session?.id;
  assert.ok(sid, `create answered ${created.status}: ${created.text}`);
  opened.add(sid);
  return sid;
}

async function run(sid, script, env) {
  const res = await api('POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
    command: 'sh',
    args: ['-c', script],
    env,
    wait: true,
    timeout: 20_000,
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

before(async () => {
  if (!canBwrap) return;
  process.env.VITE_HUB_ESCAPE_SECRET = 'host-secret-value';
  host = await startBoxHost({ isolation: 'bubblewrap' });
});
after(async () => {
  configureSandbox({});
  await host?.close();
});

test('a Box command is not root, has no capabilities and cannot write /proc/sys', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(
    sid,
    'id -u; grep CapEff /proc/self/status; echo x > /proc/sys/kernel/core_pattern && echo WROTE',
  );
  assert.match(res.stdout, /^1000\n/);
  assert.match(res.stdout, /CapEff:\s+0000000000000000/);
  assert.doesNotMatch(res.stdout, /WROTE/);
  assert.match(res.stderr, /Read-only file system/);
});

test('on a root host a Box runs as a host uid of its own: root-only host files stay closed, its own files stay writable', {
  skip: !canBwrap || process.getuid() !== 0,
}, async () => {
  // Found by the fresh-user trial: bwrap mapped the Box's uid 1000 to the host's uid 0, so every
  // root-owned file of the read-only system directories was the Box user's own (/etc/shadow).
  assert.equal(host.boxUsers, true, 'unprivileged bwrap works here (the probe of isolation.mjs)');
  const secret = '/etc/vite-hub-escape-secret';
  fs.writeFileSync(secret, 'root-only\n', { mode: 0o600 });
  try {
    for (const networkPolicy of [{ mode: 'deny-all' }, undefined]) {
      const sid = await box(networkPolicy ? { networkPolicy } : {});
      // The host wrote input.txt (fs/write), the Box must be able to change and delete it.
      const archive = gzipSync(await packTar([{ header: { name: 'input.txt', size: 2 }, body: 'hi' }]));
      const written = await fetch(`${host.baseUrl}/v2/sandboxes/sessions/${sid}/fs/write`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${host.token}`,
          'content-type': 'application/gzip',
          'x-cwd': '/vercel/sandbox',
        },
        body: archive,
      });
      assert.equal(written.status, 200, await written.text());
      const res = await run(
        sid,
        `cat ${secret} /etc/shadow 2>&1; echo more >> input.txt && rm input.txt && echo CHANGED; echo x > made-${sid}; id -u`,
      );
      assert.doesNotMatch(res.stdout, /root-only|root:/, JSON.stringify(networkPolicy));
      assert.match(res.stdout, /Permission denied[\s\S]*Permission denied/);
      assert.match(res.stdout, /CHANGED\n1000\n$/);
      // Seen from the host, what the Box's processes made is not root's.
      const made = fs
        .readdirSync(os.tmpdir())
        .filter((name) => name.startsWith(boxDirPrefix()))
        .map((name) => path.join(os.tmpdir(), name, 'vercel', 'sandbox', `made-${sid}`))
        .filter((file) => fs.existsSync(file));
      assert.equal(made.length, 1);
      assert.ok(fs.statSync(made[0]).uid >= 0x70000000, `the host uid of the Box's file: ${fs.statSync(made[0]).uid}`);
      await api('POST', `/v2/sandboxes/sessions/${sid}/stop`);
    }
  } finally {
    fs.rmSync(secret, { force: true });
  }
});

/**
 * The host directory of Box `sid` (the Box root is the temp directory): found by a file the Box
 * makes, as the Box itself no longer learns its host path (see the /proc/self test below).
 */
async function boxDir(sid) {
  const mark = `where-${sid}`;
  const made = await run(sid, `touch /vercel/sandbox/${mark}`);
  assert.equal(made.exitCode, 0, made.stderr);
  const dirs = fs
    .readdirSync(os.tmpdir())
    .filter((name) => name.startsWith(boxDirPrefix()))
    .filter((name) => fs.existsSync(path.join(os.tmpdir(), name, 'vercel', 'sandbox', mark)));
  assert.equal(dirs.length, 1, `the Box's directory: ${dirs}`);
  return path.join(os.tmpdir(), dirs[0]);
}

test("a symlink through /proc/<pid>/root into another process's own mount namespace reads nothing bound there", {
  timeout: 60_000,
  skip: !canBwrap,
}, async (t) => {
  // Found by the security review: in a nested namespace the Box bound /etc/shadow at a path that
  // reads like one of its own files, then linked to it through /proc/<host pid>/root; the host
  // followed the link as root and its check of the fd's path passed. A Box can no longer make a
  // namespace (its seccomp filter: box-seccomp.test.mjs), so a host process holds one here, as
  // any process of the machine could: /etc/shadow bound over the host path of the Box's x.
  const sid = await box({ networkPolicy: { mode: 'deny-all' } });
  const setUp = await run(sid, 'echo dummy > /vercel/sandbox/x');
  assert.equal(setUp.exitCode, 0, setUp.stderr);
  const fake = path.join(await boxDir(sid), 'vercel', 'sandbox', 'x');
  // Root reaches the Box's 0700 directory only in the initial user namespace; a user, its own.
  const namespaces = process.getuid() === 0 ? ['--mount'] : ['--user', '--map-root-user', '--mount'];
  const holder = spawn(
    'unshare',
    [...namespaces, 'sh', '-c', 'mount --bind /etc/shadow "$0" && echo bound && exec sleep 60', fake],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.after(() => holder.kill('SIGKILL'));
  const bound = await new Promise((resolve) => {
    holder.stdout.once('data', () => resolve(true));
    holder.once('exit', () => resolve(false));
  });
  if (!bound) return t.skip('no user and mount namespace for a host process here: nothing to cross into');
  const linked = await run(sid, `ln -sf /proc/${holder.pid}/root${fake} /vercel/sandbox/L && echo linked`);
  assert.match(linked.stdout, /linked/);
  const read = await api('POST', `/v2/sandboxes/sessions/${sid}/fs/read`, { path: '/vercel/sandbox/L' });
  assert.doesNotMatch(read.text, /root:/);
  assert.equal(read.status, 400, read.text);
});

test('a Box reads neither the host pid nor its host uid in /proc/self/cgroup, mountinfo and uid_map', {
  skip: !canBwrap,
}, async (t) => {
  // The Box's cgroup is named after its directory, vite-hub-box-<pidns>-<pid>-XXXXXX: a Box
  // born outside it saw that path in its cgroup namespace. Its mounts are binds of its
  // directory, a tmpfs of its own on a root host.
  const pid = String(process.pid);
  const mentions = (text, value) => new RegExp(`(^|[^0-9])${value}([^0-9]|$)`).test(text);
  for (const networkPolicy of [{ mode: 'deny-all' }, undefined]) {
    const created = await api('POST', '/v3/sandboxes', {
      projectId: 'p',
      ports: [],
      ...(networkPolicy ? { networkPolicy } : {}),
    });
    const { session } = JSON.parse(created.text);
    opened.add(session.id);
    const res = await run(
      session.id,
      'cat /proc/self/cgroup; echo @; cat /proc/self/mountinfo; echo @; cat /proc/self/uid_map /proc/self/gid_map',
    );
    assert.equal(res.exitCode, 0, res.stderr);
    const [cgroup, mountinfo, maps] = res.stdout.split('@\n');
    for (const line of cgroup.trim().split('\n'))
      assert.match(line, /^\d+:[^:]*:\/$/, "the Box's cgroup is the root of its cgroup namespace");
    const mounts = mountinfo
      .trim()
      .split('\n')
      .map((line) => {
        const [left, right] = line.split(' - ');
        const [, , , root, point] = left.split(' ');
        const [type, source, options] = right.split(' ');
        return { line, root, point, type, source, options };
      });
    if (session.limits.diskBytes === null) {
      t.diagnostic(
        'no Box disk here (not root): the binds of the Box directory show its host path (docs/providers/local.md)',
      );
    } else {
      for (const mount of mounts) assert.ok(!mentions(`${mount.root} ${mount.point} ${mount.source}`, pid), mount.line);
    }
    if (!host.boxUsers) continue;
    const uid = String(fs.statSync(path.join(await boxDir(session.id), 'vercel', 'sandbox')).uid);
    assert.ok(!mentions(cgroup, uid) && !mentions(maps, uid), `${cgroup}${maps}`);
    // bwrap mounts its own tmpfs (the Box's /, /dev, the files it writes) inside the Box's user
    // namespace, and the kernel lists a tmpfs's owner as the initial namespace sees it
    // (uid=<host uid>): nothing the host sets changes that (docs/providers/local.md). Everything
    // else, the Box's own disk included, names it nowhere.
    const naming = mounts.filter((mount) => mentions(mount.line, uid));
    assert.deepEqual(
      naming
        .filter(
          (mount) =>
            mount.type !== 'tmpfs' || mount.source !== 'tmpfs' || mentions(`${mount.root} ${mount.point}`, uid),
        )
        .map((m) => m.line),
      [],
    );
  }
});

test('a Box is not named after the host machine', { skip: !canBwrap }, async () => {
  const res = await run(await box(), 'hostname; cat /proc/sys/kernel/hostname');
  assert.equal(res.exitCode, 0, res.stderr);
  assert.deepEqual(res.stdout.trim().split('\n'), ['box', 'box']);
  assert.notEqual(os.hostname(), 'box');
});

test('a Box sees neither the host env nor /proc/1/environ of the host', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(sid, 'env; cat /proc/1/environ 2>/dev/null | tr "\\0" "\\n"; true');
  assert.doesNotMatch(res.stdout, /host-secret-value/);
});

test('the env given to a command is not on any host command line (ps)', { skip: !canBwrap }, async () => {
  const sid = await box();
  const marker = `envmark${Date.now()}`;
  const pending = run(sid, 'sleep 1', { TOKENISH: marker });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  await pending;
  assert.doesNotMatch(ps, new RegExp(marker));
});

test('under deny-all the Box cannot reach the Box host port on 127.0.0.1', { skip: !canBwrap }, async () => {
  const sid = await box({ networkPolicy: { mode: 'deny-all' } });
  const { port } = new URL(host.baseUrl);
  const script = `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>console.log('CONNECTED')).on('error',e=>console.log(e.code))"`;
  const res = await run(sid, script);
  assert.doesNotMatch(res.stdout, /CONNECTED/);
  assert.match(res.stdout, /ECONNREFUSED|ENETUNREACH/);
});

test('under allow-all (with slirp4netns) the Box has a network of its own without the host loopback', {
  skip: !canBwrap || !boxNetwork,
}, async () => {
  const sid = await box();
  const { port } = new URL(host.baseUrl);
  const script = `ip -4 addr show tap0 | grep -c inet; node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>console.log('CONNECTED')).on('error',e=>console.log(e.code))"`;
  const res = await run(sid, script);
  assert.match(res.stdout, /^1\n/, 'no tap0 address: not the Box network');
  assert.doesNotMatch(res.stdout, /CONNECTED/);
  assert.match(res.stdout, /ECONNREFUSED/);
});

test('a fork bomb is bounded by the process limit and the host stays usable', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(
    sid,
    'i=0; while [ $i -lt 2000 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; echo started $(jobs -p | wc -l)',
  );
  // Either the shell reports fewer than 2000 background jobs or it could not fork at all.
  assert.doesNotMatch(res.stdout, /started 2000/);
  const after = await run(sid, 'echo alive');
  assert.equal(after.stdout, 'alive\n');
});

test('a file larger than the file size limit cannot be written', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(sid, 'head -c 1100M /dev/zero > big 2>/dev/null; echo rc=$?; stat -c %s big; rm -f big');
  assert.match(res.stdout, /rc=1\d\d|rc=1\n/);
  assert.ok(Number(res.stdout.trim().split('\n')[1]) <= 1024 * 1024 * 1024);
});

test('128 concurrent runs at the default Box limit all answer 200 (FIFO queue, no 503)', {
  skip: !canBwrap,
  timeout: 240_000,
}, async () => {
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  defineTestSandbox('escape/trivial', 'export default (n) => n + 1;');
  const answers = await Promise.all(Array.from({ length: 128 }, (_, i) => runSandbox('escape/trivial', i)));
  const failed = await Promise.all(
    answers.filter((r) => r.status !== 200).map(async (r) => `${r.status} ${await r.text()}`),
  );
  assert.deepEqual(failed, []);
  assert.deepEqual(
    await Promise.all(answers.map((r) => r.json())),
    Array.from({ length: 128 }, (_, i) => i + 1),
  );
});

test('the host API cannot be raced into host files by swapping a directory for a symlink to /', {
  timeout: 120_000,
}, async () => {
  const raceHost = await startBoxHost({ isolation: 'none' });
  const call = async (method, route, body, raw) => {
    const res = await fetch(`${raceHost.baseUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${raceHost.token}`, 'content-type': 'application/json' },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    return { status: res.status, text: await res.text() };
  };
  const mark = `vh-race-${process.pid}-${Date.now()}`;
  try {
    const sid = JSON.parse((await call('POST', '/v3/sandboxes', { projectId: 'p', ports: [] })).text).session.id;
    // d is a real directory with etc/hostname and tmp/, or a symlink to the host's /: swapped
    // as fast as the Box can, for the whole test.
    const swap = `mkdir -p real/etc real/tmp; echo box-file > real/etc/hostname; ln -s / link;
      end=$(( $(date +%s) + 25 )); while [ $(date +%s) -lt $end ]; do
        mv -T real d 2>/dev/null; mv -T d real 2>/dev/null; mv -T link d 2>/dev/null; mv -T d link 2>/dev/null; done`;
    const swapping = call('POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
      command: 'sh',
      args: ['-c', swap],
      wait: true,
      timeout: 60_000,
    });
    const hostHostname = (await import('node:fs')).readFileSync('/etc/hostname', 'utf8');
    let reads = 0;
    for (let i = 0; i < 300; i += 1) {
      const read = await call('POST', `/v2/sandboxes/sessions/${sid}/fs/read`, { path: 'd/etc/hostname' });
      if (read.status === 200) {
        reads += 1;
        assert.equal(read.text, 'box-file\n', 'a read returned a host file');
        assert.notEqual(read.text, hostHostname);
      }
      await call('POST', `/v2/sandboxes/sessions/${sid}/fs/mkdir`, { path: `d/tmp/${mark}-dir-${i}` });
    }
    await swapping;
    const fs = await import('node:fs');
    const leaked = fs.readdirSync('/tmp').filter((name) => name.startsWith(mark));
    assert.deepEqual(leaked, [], 'mkdir landed in the host /tmp');
    assert.ok(reads > 0, 'no read succeeded at all: the race was not exercised');
  } finally {
    await raceHost.close();
  }
});
