// The disk bound of a Box: its directory (work directory, /tmp and home together) is a tmpfs of
// a fixed size mounted by the host, so a Box that writes past it gets ENOSPC and the host's own
// disk never grows. Mounting needs CAP_SYS_ADMIN in the host's mount namespace (a root host);
// elsewhere `diskBound()` is false and the session reports `limits.diskBytes: null`.
// A tmpfs lives in memory: its pages count against the memory of the process that wrote them
// (the Box's memory cgroup for its commands' writes), so the host-wide worst case is
// `maxBoxes × diskBytes` of memory.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Default writable space of one Box (bytes): work directory, /tmp and home together. */
export const DEFAULT_DISK_BYTES = 1024 * 1024 * 1024;

const TOOL_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

/** Runs `file args`; resolves when it succeeded. `onChild(child)` gets the process once started. */
function tool(file, args, onChild) {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { env: TOOL_ENV, timeout: 10_000 }, (err, _stdout, stderr) => {
      // The spawn's own code (EMFILE at the fd limit) stays on the error as its cause.
      if (err) reject(new Error(`${file} ${args[0]}: ${String(stderr).trim() || err.message}`, { cause: err }));
      else resolve();
    });
    onChild?.(child);
  });
}

/**
 * Mounts a tmpfs of `bytes` on the (empty) directory `dir`; rejects with the mount error.
 * `onChild(child)` gets the `mount` process (the exit path kills one still running: box-spares.mjs).
 */
export function mountBoxDisk(dir, bytes, onChild) {
  return tool('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0700,nosuid,nodev`, 'vite-hub-box', dir], onChild);
}

/** Unmounts the Box tmpfs at `dir` (lazily when still busy). */
export async function unmountBoxDisk(dir) {
  try {
    await tool('umount', [dir]);
  } catch {
    await tool('umount', ['-l', dir]);
  }
}

/** unmountBoxDisk, synchronously (process `exit`); never throws. */
export function unmountBoxDiskNow(dir) {
  try {
    execFileSync('umount', ['-l', dir], { env: TOOL_ENV, stdio: 'ignore', timeout: 10_000 });
  } catch {
    // not mounted, or nothing more can be done while the process exits
  }
}

/** Whether `dir` is a mount point (listed in /proc/self/mountinfo). */
export function isMountPoint(dir) {
  let mountinfo;
  try {
    mountinfo = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return false;
  }
  return mountinfo
    .split('\n')
    .some(
      (line) => line.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))) === dir,
    );
}

/** True when this host can mount (and unmount) a sized tmpfs: one probe in a temp dir. */
export async function diskBound() {
  let dir;
  try {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'vite-hub-disk-probe-'));
    await mountBoxDisk(dir, 1024 * 1024);
  } catch {
    if (dir) await fs.promises.rmdir(dir).catch(() => {});
    return false;
  }
  try {
    await unmountBoxDisk(dir);
    await fs.promises.rmdir(dir);
    return true;
  } catch {
    return false;
  }
}
