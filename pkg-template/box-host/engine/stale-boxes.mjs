// Box directory names and the sweep of stale ones. A Box directory is named after the process
// that owns it, `vite-hub-box-<pidns>-<pid>-XXXXXX` (the same pid in worker threads), so a later
// Box host can tell which directories were left behind by a process that is gone: a host in a
// worker thread gets no `exit` event when the main thread calls `process.exit()`, so its Box
// directories outlive the process and are only removed by the sweep at the next host start.
// `<pidns>` is the owner's pid namespace: a pid means nothing in another one (a host in a
// container that shares the Box root with one outside sees the other's pids as gone), so a host
// judges the pids of its own pid namespace only. Another namespace's directories are left alone,
// but by a host that sees every process (root in the machine's initial pid namespace): it knows
// which pid namespaces still have a process, and sweeps those of the ones that have none.
import fs from 'node:fs';
import path from 'node:path';
import { isMountPoint, unmountBoxDisk, unmountBoxDiskNow } from './box-disk.mjs';
import { isBoxUid } from './box-user.mjs';
import { removeBoxTree, removeBoxTreeNow } from './box-tree-removal.mjs';

/** Prefix of every Box directory name. */
export const BOX_DIR_PREFIX = 'vite-hub-box-';

/**
 * This process's pid namespace: the inode of `/proc/self/ns/pid` (unique among the namespaces
 * alive on the machine), or 0 where there is none to read (macOS, which has no pid namespaces).
 */
export const PID_NAMESPACE = (() => {
  try {
    return Number(/^pid:\[(\d+)\]$/.exec(fs.readlinkSync('/proc/self/ns/pid'))[1]);
  } catch {
    return 0;
  }
})();

/** The mkdtemp prefix of this process's Box directories: `vite-hub-box-<pidns>-<pid>-`. */
export function boxDirPrefix(pid = process.pid) {
  return `${BOX_DIR_PREFIX}${PID_NAMESPACE}-${pid}-`;
}

/** `vite-hub-box-<pidns>-<pid>-` plus mkdtemp's six characters [A-Za-z0-9]; nothing else is swept. */
const OWNED_NAME = /^vite-hub-box-(0|[1-9][0-9]{0,19})-([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$/;
/** Largest pid Linux can hand out (pid_max's ceiling); larger numbers are never swept. */
const MAX_PID = 4_194_304;
/** The inode of the machine's initial pid namespace (the kernel's PROC_PID_INIT_INO). */
const INITIAL_PID_NAMESPACE = 4_026_531_836;

/** `{ pidns, pid }` of a Box directory (or cgroup) name `vite-hub-box-<pidns>-<pid>-XXXXXX`, or null. */
function nameParts(name) {
  const match = OWNED_NAME.exec(name);
  const pid = match ? Number(match[2]) : 0;
  return match && pid <= MAX_PID ? { pidns: Number(match[1]), pid } : null;
}

/**
 * The owning pid of a Box directory (or cgroup) name of THIS pid namespace, or null when the name
 * is not exactly `vite-hub-box-<pidns>-<pid>-XXXXXX` or names another pid namespace (its pid
 * cannot be judged from here).
 */
export function ownerPid(name) {
  const parts = nameParts(name);
  return parts && parts.pidns === PID_NAMESPACE ? parts.pid : null;
}

/**
 * The pid namespaces some process of the machine is in, when this process sees every process
 * (root in the initial pid namespace: every `/proc/<pid>/ns/pid` is readable), else null.
 */
export function livePidNamespaces() {
  if (PID_NAMESPACE !== INITIAL_PID_NAMESPACE || process.getuid?.() !== 0) return null;
  const live = new Set();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      live.add(Number(/^pid:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${entry}/ns/pid`))[1]));
    } catch {
      // exited meanwhile
    }
  }
  return live;
}

/**
 * Whether the Box directory (or cgroup) `name` was left by an owner known to be gone: a pid of
 * this pid namespace that is gone (not this process), or another pid namespace in which no
 * process lives (`live`: livePidNamespaces(); null when this process cannot see them all).
 */
export function leftBehind(name, live) {
  const parts = nameParts(name);
  if (!parts) return false;
  if (parts.pidns === PID_NAMESPACE) return parts.pid !== process.pid && processGone(parts.pid);
  return live !== null && !live.has(parts.pidns);
}

/**
 * Whether process `pid` is known to be gone: `kill(pid, 0)` fails with ESRCH. EPERM (another
 * user's process) and any other outcome count as alive, so nothing of a live process is removed.
 */
export function processGone(pid) {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return err?.code === 'ESRCH';
  }
}

/**
 * Whether `st` (an lstat) is a directory of this user (`uid`: process.getuid(), undefined where
 * there are no uids), or on a root host of a Box user (box-user.mjs: a Box's directory is its
 * user's): the only directories a sweep removes, whatever their names say.
 */
function ownDirectory(st, uid) {
  return st.isDirectory() && (uid === undefined || st.uid === uid || (uid === 0 && isBoxUid(st.uid)));
}

/**
 * Removes (recursively) every directory in `boxRoot` named `vite-hub-box-<pidns>-<pid>-XXXXXX`
 * left behind (leftBehind: its pid gone, or its pid namespace gone) that belongs to this user, or
 * on a root host to a Box user (box-user.mjs: a Box's directory is its user's), not a symlink.
 * Directories of live owners, of pid namespaces this process cannot judge and anything else are
 * left alone; failures (e.g. EACCES, a concurrent removal) skip that entry. Resolves to the
 * removed names, sorted; never rejects. `live`: livePidNamespaces(), read once by a host for
 * both of its sweeps.
 */
export async function sweepStaleBoxDirs(boxRoot, live = livePidNamespaces()) {
  let entries;
  try {
    entries = await fs.promises.readdir(boxRoot, { withFileTypes: true });
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const removed = [];
  await Promise.all(
    entries.map(async (entry) => {
      if (!entry.isDirectory() || !leftBehind(entry.name, live)) return;
      const dir = path.join(boxRoot, entry.name);
      try {
        const st = await fs.promises.lstat(dir);
        if (!ownDirectory(st, uid)) return;
        // A Box disk (tmpfs) its owner could not unmount: unmounted first, then removed.
        if (isMountPoint(dir)) await unmountBoxDisk(dir);
        await removeBoxTree(dir);
        removed.push(entry.name);
      } catch {
        // not ours to remove, or already gone: left for the owner or the next sweep
      }
    }),
  );
  return removed.sort();
}

/**
 * Removes every directory of this process (`boxDirPrefix()` + XXXXXX) in `boxRoot`,
 * unmounting a Box disk first, synchronously (process `exit`): the live Boxes' and those whose
 * create had not told the host their directory yet (mkdtemp done, its answer not run). Only this
 * user's directories (or a Box user's, on a root host), as the start-up sweep. Never throws.
 */
export function removeOwnBoxDirsNow(boxRoot) {
  let entries;
  try {
    entries = fs.readdirSync(boxRoot, { withFileTypes: true });
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const entry of entries) {
    if (!entry.isDirectory() || ownerPid(entry.name) !== process.pid) continue;
    const dir = path.join(boxRoot, entry.name);
    try {
      // Named as this process's, but made by someone else (a root host shares /tmp): left alone.
      if (!ownDirectory(fs.lstatSync(dir), uid)) continue;
      if (isMountPoint(dir)) unmountBoxDiskNow(dir);
      removeBoxTreeNow(dir);
    } catch {
      // nothing more can be done while the process exits; the next host's sweep tries again
    }
  }
}
