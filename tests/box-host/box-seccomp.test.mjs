// The seccomp filter of a bubblewrap Box (crates/box-seccomp, box-host/engine/box-seccomp.mjs):
// the package ships its programs, and from inside a Box nested namespaces, the key store,
// io_uring, mounts and clone3 are refused (EPERM; clone3 ENOSYS, so glibc falls back to clone),
// a call of the i386 ABI kills the process, while Node, threads and a shell keep working.
// Skipped where bubblewrap cannot run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { bubblewrapWorks, limitsReport } from '../../pkg-template/box-host/engine/isolation.mjs';
import { loadSyscallFilter } from '../../pkg-template/box-host/engine/box-seccomp.mjs';
import { boxesStoppedAfterEach, hostApi } from '../support/local-host.mjs';

const canBwrap = await bubblewrapWorks();
/** The package's programs: dist/box-host/seccomp/ of the built package tests import. */
const seccompDir = path.join(
  path.dirname(fileURLToPath(import.meta.resolve('@vite-hub/sandbox/package.json'))),
  'box-host',
  'seccomp',
);
const KERNEL_ARCH = { x64: 'x86_64', arm64: 'aarch64' }[process.arch];
/** System call numbers of this architecture (arch/x86/entry/syscalls/syscall_64.tbl, asm-generic/unistd.h). */
const NUMBERS = {
  x64: { keyctl: 250, io_uring_setup: 425, clone3: 435, clone: 56, mount: 165, mount_setattr: 442 },
  arm64: { keyctl: 219, io_uring_setup: 425, clone3: 435, clone: 220, mount: 40, mount_setattr: 442 },
}[process.arch];
const PYTHON = '/usr/bin/python3';
const hasPython = fs.existsSync(PYTHON);
const EPERM = 1;
const ENOSYS = 38;

/**
 * Makes each call once and prints `{ name: errno }` (0: it succeeded): keyctl
 * KEYCTL_GET_KEYRING_ID of the session keyring, io_uring_setup of one entry, clone3 with no
 * arguments (EINVAL when it exists), mount of a tmpfs on a missing directory (ENOENT when mount
 * looks at its arguments), mount_setattr with no arguments (EINVAL when it exists), clone with
 * CLONE_NEWUSER | SIGCHLD (a child that exits at once).
 */
const CALLS = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
n = json.loads(sys.argv[1])
def call(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) for a in args])
    return (0 if r >= 0 else ctypes.get_errno()), r
params = ctypes.create_string_buffer(128)
out = {
    'keyctl': call(n['keyctl'], 0, -3, 0)[0],
    'io_uring_setup': call(n['io_uring_setup'], 1, ctypes.addressof(params))[0],
    'clone3': call(n['clone3'], 0, 0)[0],
    'mount': call(n['mount'], b'none', b'/no-such-dir-vhs', b'tmpfs', 0, 0)[0],
    'mount_setattr': call(n['mount_setattr'], -1, 0, 0, 0, 0)[0],
}
err, pid = call(n['clone'], 0x10000000 | 17, 0, 0, 0, 0)
if err == 0 and pid == 0:
    os._exit(0)
if err == 0:
    os.waitpid(pid, 0)
out['clone CLONE_NEWUSER'] = err
print(json.dumps(out))
`;

/** \`mov eax, 20 (getpid); int 0x80; ret\`, called through ctypes: one i386 system call. */
const I386_CALL = `
import ctypes, mmap
code = bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3])
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
address = ctypes.addressof(ctypes.c_char.from_buffer(page))
print('i386 getpid', ctypes.CFUNCTYPE(ctypes.c_int)(address)())
`;

let host;

const api = (method, route, body) => hostApi(host, method, route, body);

const opened = boxesStoppedAfterEach(() => host);

/** A new Box: its create answer's `session`. */
async function box() {
  const created = await api('POST', '/v3/sandboxes', {
    projectId: 'p',
    ports: [],
    networkPolicy: { mode: 'deny-all' },
  });
  const session = JSON.parse(created.text).session;
  assert.ok(session?.id, `create answered ${created.status}: ${created.text}`);
  opened.add(session.id);
  return session;
}

/** Runs `command args` in Box `sid`: `{ exitCode, stdout, stderr }`. */
async function run(sid, command, args) {
  const res = await api('POST', `/v2/sandboxes/sessions/${sid}/cmd`, { command, args, wait: true, timeout: 30_000 });
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
  if (canBwrap) host = await startBoxHost({ isolation: 'bubblewrap' });
});
after(async () => {
  await host?.close();
});

test('the package ships the filter of this architecture: whole 8-byte instructions', {
  skip: KERNEL_ARCH ? false : `no programs for ${process.arch}`,
}, () => {
  for (const answer of ['eperm', 'enosys']) {
    const bytes = fs.readFileSync(path.join(seccompDir, `${KERNEL_ARCH}-${answer}.bpf`));
    assert.ok(bytes.length > 0, answer);
    assert.equal(bytes.length % 8, 0, `${answer}: ${bytes.length} bytes`);
  }
});

test('without programs for this machine there is no filter, and the reason is named', () => {
  assert.match(loadSyscallFilter('riscv64', seccompDir).problem, /no seccomp filter for this architecture \(riscv64/);
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-seccomp-'));
  try {
    assert.match(loadSyscallFilter('x64', empty).problem, /lacks its seccomp filter .*x86_64-eperm\.bpf: ENOENT/);
    fs.writeFileSync(path.join(empty, 'x86_64-eperm.bpf'), Buffer.alloc(7));
    assert.match(loadSyscallFilter('x64', empty).problem, /x86_64-eperm\.bpf is damaged \(7 bytes/);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
  if (KERNEL_ARCH) assert.equal(loadSyscallFilter(process.arch, seccompDir).programs.length, 2);
  const loaded = { kind: 'seccomp', programs: [Buffer.alloc(8)], problem: null };
  assert.deepEqual(
    ['bubblewrap', 'seatbelt', 'none'].map(
      (isolation) => limitsReport({ syscallFilter: loaded }, { isolation }).syscallFilter,
    ),
    ['seccomp', 'none', 'none'],
  );
  assert.equal(
    limitsReport({ syscallFilter: { kind: 'none', programs: null, problem: 'x' } }, { isolation: 'bubblewrap' })
      .syscallFilter,
    'none',
  );
});

test('the host loads the filter into every bubblewrap Box and says so', { skip: !canBwrap }, async () => {
  assert.equal(host.syscallFilter, 'seccomp', host.description);
  assert.doesNotMatch(host.description, /seccomp/, 'no gap named');
  const session = await box();
  assert.equal(session.limits.syscallFilter, 'seccomp');
});

test('a Box cannot make nested user namespaces with unshare', { skip: !canBwrap }, async () => {
  const { id } = await box();
  for (const args of [
    ['-U', 'true'],
    ['-r', 'true'],
  ]) {
    const res = await run(id, 'unshare', args);
    assert.notEqual(res.exitCode, 0, `unshare ${args.join(' ')} ran: ${res.stdout}`);
    assert.match(res.stderr, /Operation not permitted/, `unshare ${args.join(' ')}`);
  }
});

test('keyctl, io_uring_setup, mount, mount_setattr and clone with CLONE_NEWUSER answer EPERM in a Box, clone3 ENOSYS', {
  skip: !canBwrap || !NUMBERS || !hasPython ? `needs bubblewrap, x64 or arm64 and ${PYTHON}` : false,
}, async (t) => {
  // The same calls on the host, unfiltered: none of them is refused there (what the Box gets is the filter's).
  const unfiltered = JSON.parse(execFileSync(PYTHON, ['-c', CALLS, JSON.stringify(NUMBERS)], { encoding: 'utf8' }));
  const { id } = await box();
  const res = await run(id, PYTHON, ['-c', CALLS, JSON.stringify(NUMBERS)]);
  assert.equal(res.exitCode, 0, res.stderr);
  const inBox = JSON.parse(res.stdout);
  const expected = {
    keyctl: EPERM,
    io_uring_setup: EPERM,
    clone3: ENOSYS,
    mount: EPERM,
    mount_setattr: EPERM,
    'clone CLONE_NEWUSER': EPERM,
  };
  for (const [call, errno] of Object.entries(expected)) {
    if (unfiltered[call] === errno) {
      // e.g. kernel.io_uring_disabled=2: the kernel itself refuses it, the filter cannot be seen.
      t.diagnostic(`${call} answers ${errno} on this host already: not a check of the filter here`);
      continue;
    }
    assert.equal(inBox[call], errno, `${call}: errno ${inBox[call]} in the Box (${unfiltered[call]} on the host)`);
  }
});

test('a call of the i386 ABI kills the process in a Box', {
  skip: !canBwrap || process.arch !== 'x64' || !hasPython ? `needs bubblewrap, x64 and ${PYTHON}` : false,
}, async (t) => {
  let unfiltered;
  try {
    unfiltered = execFileSync(PYTHON, ['-c', I386_CALL], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    return t.skip(`no i386 system calls on this host (ia32 emulation off): ${err.message}`);
  }
  assert.match(unfiltered, /^i386 getpid \d+\n$/);
  const { id } = await box();
  const res = await run(id, '/bin/sh', ['-c', `${PYTHON} -c "$0"; echo "exit=$?"`, I386_CALL]);
  assert.doesNotMatch(res.stdout, /i386 getpid/);
  // 128 + SIGSYS (31): SECCOMP_RET_KILL_PROCESS.
  assert.match(res.stdout, /exit=159\n$/);
});

test('Node, its threads, a shell and Python still run in a filtered Box', { skip: !canBwrap }, async () => {
  const { id } = await box();
  const script = [
    "const { Worker } = require('node:worker_threads');",
    "const fs = require('node:fs');",
    "const { execFileSync } = require('node:child_process');",
    "fs.writeFileSync('/tmp/f', 'data');",
    "fs.promises.readFile('/tmp/f', 'utf8').then((text) => {",
    "  const child = execFileSync('sh', ['-c', 'echo child']).toString().trim();",
    '  new Worker(\'require("node:worker_threads").parentPort.postMessage(6 * 7)\', { eval: true })',
    "    .on('message', (n) => console.log(text, child, n));",
    '});',
  ].join('\n');
  const node = await run(id, 'node', ['-e', script]);
  assert.equal(node.stdout, 'data child 42\n', node.stderr);
  const shell = await run(id, '/bin/sh', ['-c', 'echo a | cat; ls / >/dev/null && echo listed']);
  assert.equal(shell.stdout, 'a\nlisted\n', shell.stderr);
  if (hasPython) {
    const python = await run(id, PYTHON, [
      '-c',
      'import threading, subprocess; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join(); print(subprocess.run(["true"]).returncode)',
    ]);
    assert.equal(python.stdout, 'thread\n0\n', python.stderr);
  }
});
