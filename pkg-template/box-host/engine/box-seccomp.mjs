// The seccomp filter of a bubblewrap Box: defence in depth behind its namespaces and dropped
// capabilities, as container runtimes apply (Docker's default profile, Flatpak's). The programs
// are classic BPF made at build time by crates/box-seccomp (seccompiler) and shipped in the
// package (box-host/seccomp/<arch>-<errno>.bpf), one per architecture and answer: the `eperm`
// one refuses io_uring, the key store, namespaces (unshare, setns, clone with a namespace flag),
// mounts, BPF, perf, userfaultfd, kernel and module loading, and the host's administrative calls;
// the `enosys` one answers clone3 with ENOSYS, so glibc falls back to clone, whose flags the
// first can read. Both kill a call of another ABI (i386 on x86_64). bwrap loads them
// (`--add-seccomp-fd`, bubblewrap 0.5.0 and later) just before it runs the command.
//
// This module finds the programs for this machine and checks once (the host probe) that bwrap
// loads them; where it cannot, Boxes run without a filter and the host says why
// (`syscallFilter: 'none'` in every session's limits, the start-up line).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SYSTEM_PATH } from './box-toolchain.mjs';

/** The kernel's name of each `process.arch` the package ships programs for. */
const KERNEL_ARCH = { x64: 'x86_64', arm64: 'aarch64' };

/** The programs' answers, in the order bwrap is given them (the kernel runs them all). */
const ANSWERS = ['eperm', 'enosys'];

/** Where the package keeps the programs (dist/box-host/seccomp/, beside engine/). */
const PROGRAM_DIR = new URL('../seccomp/', import.meta.url);

/**
 * The Box filter's programs for `arch` (a `process.arch`): `{ programs: [eperm, enosys] (Buffers
 * of 8-byte `struct sock_filter`s), problem: null }`, or `{ programs: null, problem }` saying why
 * there are none (no programs for this architecture; the package lacks the files or one is
 * damaged). `dir` is a file URL or path; default the package's.
 * @param {string} [arch]
 * @param {URL | string} [dir]
 */
export function loadSyscallFilter(arch = process.arch, dir = PROGRAM_DIR) {
  const kernelArch = KERNEL_ARCH[arch];
  if (kernelArch === undefined) {
    return {
      programs: null,
      problem: `the package has no seccomp filter for this architecture (${arch}; it ships x64 and arm64)`,
    };
  }
  const base = dir instanceof URL ? dir : pathToFileURL(dir.endsWith('/') ? dir : `${dir}/`);
  const programs = [];
  for (const answer of ANSWERS) {
    const file = fileURLToPath(new URL(`${kernelArch}-${answer}.bpf`, base));
    let bytes;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      return {
        programs: null,
        problem: `the package lacks its seccomp filter (${file}: ${err.code ?? err.message}): reinstall it, or rebuild it with node scripts/build.mjs`,
      };
    }
    if (bytes.length === 0 || bytes.length % 8 !== 0) {
      return {
        programs: null,
        problem: `the package's seccomp filter ${file} is damaged (${bytes.length} bytes, not a whole number of 8-byte instructions): reinstall it`,
      };
    }
    programs.push(bytes);
  }
  return { programs, problem: null };
}

/** The bwrap options that load the programs bwrap reads from `fds` (one each, in order). */
export function seccompArgs(fds) {
  return fds.flatMap((fd) => ['--add-seccomp-fd', String(fd)]);
}

/** How long the probe's bwrap may take (ms). */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Checks that bwrap loads the programs here: one throw-away sandbox with every namespace a Box
 * gets, as `uid`/`gid` when given (a root host's Box uid), the programs on fds 3 and 4.
 * `args` are the probe's bwrap options before the command. Resolves to `{ kind: 'seccomp' |
 * 'none', programs (null for 'none'), problem (null for 'seccomp') }`; never rejects.
 */
export async function probeSyscallFilter({ args, uid, loaded = loadSyscallFilter() }) {
  if (loaded.programs === null) return { kind: 'none', programs: null, problem: loaded.problem };
  const fds = loaded.programs.map((_, i) => 3 + i);
  const outcome = await new Promise((resolve) => {
    let stderr = '';
    let child;
    try {
      child = spawn('bwrap', [...seccompArgs(fds), ...args, 'true'], {
        cwd: '/',
        // The host's own bwrap, from the system PATH (host-probe.mjs).
        env: { PATH: SYSTEM_PATH },
        stdio: ['ignore', 'ignore', 'pipe', ...fds.map(() => 'pipe')],
        ...(uid === undefined ? {} : { uid, gid: uid }),
      });
    } catch (err) {
      resolve({ code: err.code ?? 'failed', stderr: err.message });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    for (const [i, program] of loaded.programs.entries()) {
      child.stdio[fds[i]].on('error', () => {});
      /** @type {import('node:stream').Writable} */ (child.stdio[fds[i]]).end(program);
    }
    child.on('error', (/** @type {NodeJS.ErrnoException} */ err) =>
      resolve({ code: err.code ?? 'failed', stderr: err.message }),
    );
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, stderr });
    });
  });
  if (outcome.code === 0) return { kind: 'seccomp', programs: loaded.programs, problem: null };
  const reason = outcome.stderr.trim().split('\n').filter(Boolean).pop() || `exit ${outcome.code}`;
  const hint = /unknown option|--add-seccomp-fd/i.test(reason)
    ? ': bubblewrap 0.5.0 or later loads it, upgrade bubblewrap'
    : '';
  return { kind: 'none', programs: null, problem: `bwrap could not load the seccomp filter (${reason})${hint}` };
}
