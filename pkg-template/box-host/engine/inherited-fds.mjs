// File descriptors a Box process must not get: the ones this process holds without close-on-exec
// above stdio. libuv opens its own with O_CLOEXEC, so these are what the app's parent leaked into
// it (a shell's `exec 200<dir`, a CI runner's or supervisor's pipes, systemd's sockets, a make
// jobserver) or what a native addon opened. Neither libuv's spawn nor bubblewrap closes them, and
// a directory fd walks out of any mount namespace (`/proc/self/fd/N/..`, runc's CVE-2024-21626).
//
// A command's spawn puts /dev/null over each such fd number in the child (libuv dup2s a stdio
// entry onto its index), so no host file, pipe or socket is behind it; under bubblewrap each one
// is then named in an `--args N` of bwrap's command line: bwrap reads that fd to its end (an empty
// list of options, from /dev/null) and closes it before it builds the sandbox, so the Box's
// processes hold only their stdio. macOS needs none of this: libuv spawns there with
// POSIX_SPAWN_CLOEXEC_DEFAULT.
import fs from 'node:fs';

/** The close-on-exec bit of the `flags:` line of /proc/self/fdinfo/N (octal, as the kernel prints it). */
const O_CLOEXEC = 0o2000000;

/**
 * The fd numbers above 2 that this process holds without close-on-exec, ascending: what every
 * child would inherit. Read from /proc/self/fd at each call (an addon can open more at any time);
 * `[]` where there is no procfs.
 */
export function inheritedFds() {
  let names;
  try {
    names = fs.readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const fds = [];
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    let info;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
    } catch {
      // Closed since the listing (the listing's own directory fd, for one).
      continue;
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info);
    if (flags && (Number.parseInt(flags[1], 8) & O_CLOEXEC) === 0) fds.push(fd);
  }
  return fds.sort((a, b) => a - b);
}

let devNull;
/** One read-only /dev/null fd of this process (close-on-exec), opened once and kept. */
function devNullFd() {
  devNull ??= fs.openSync('/dev/null', 'r');
  return devNull;
}

/**
 * The spawn `stdio` array of a Box process: `stdio` (its own entries: 0–2 and bubblewrap's pipes
 * from 3), then /dev/null at the index of each fd of `fds` (inheritedFds) beyond them and
 * 'ignore' between. An fd below `stdio.length` is replaced by the process's own entry already.
 */
export function stdioCovering(stdio, fds) {
  const beyond = fds.filter((fd) => fd >= stdio.length);
  if (beyond.length === 0) return stdio;
  const covered = [...stdio];
  for (const fd of beyond) {
    while (covered.length < fd) covered.push('ignore');
    covered[fd] = devNullFd();
  }
  return covered;
}

/**
 * bwrap's options that close `fds` (inheritedFds) before it builds the sandbox: `--args N` for
 * each fd at or beyond `ownCount` (the spawn's own stdio entries, which replace the rest). Each
 * reads /dev/null there (stdioCovering): no options, and bwrap closes the fd after reading it.
 * Only on bwrap's command line: bubblewrap refuses `--args` inside an `--args` file.
 */
export function bwrapClosing(fds, ownCount) {
  return fds.filter((fd) => fd >= ownCount).flatMap((fd) => ['--args', String(fd)]);
}
