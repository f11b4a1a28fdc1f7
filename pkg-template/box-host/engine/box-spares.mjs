// The Box directory (made and removed here, its disk mounted: box-disk.mjs) and the Box network
// made ahead of a create (box-network.mjs, ~20 ms: a namespace and slirp4netns), so an allow-all
// create takes a ready one instead of waiting; one still being made (what the first create after
// the host's start may find) is waited for rather than a second one started. Each spare network
// is fresh and goes to exactly one Box (never reused after a Box stops), so nothing is shared
// between Boxes; a create that finds none ready or on its way starts its own, as before. One
// spare is kept. The next one is made when the Box that took one starts its first command
// (box.mjs): while that command runs, the host's event loop mostly waits, so making it does not
// slow down the create and the file writes of the Run. Directories are not made ahead: every
// directory in the Box root is a Box's (hosts and tests count them), and a mount point cannot be
// renamed into place.
import fs from 'node:fs';
import path from 'node:path';
import { mountBoxDisk, unmountBoxDisk, unmountBoxDiskNow } from './box-disk.mjs';
import { startBoxNetwork } from './box-network.mjs';
import { outOfFds } from './command.mjs';
import { boxDirPrefix } from './stale-boxes.mjs';
import { removeBoxTree, removeBoxTreeNow } from './box-tree-removal.mjs';

/**
 * A new empty Box directory `<parentDir>/vite-hub-box-<pidns>-<pid>-XXXXXX` (its real path), with a tmpfs
 * of `diskBytes` mounted on it when `mountDisk`; rejects with what failed (nothing left behind).
 * `making` (a BoxInMaking) learns the `mount` process while it runs, so a process exit meanwhile
 * kills it before the directory is swept (removeBoxInMakingNow, stale-boxes.mjs removeOwnBoxDirsNow).
 */
export async function makeBoxRoot(parentDir, { diskBytes, mountDisk, making }) {
  const dir = await fs.promises.mkdtemp(path.join(parentDir, boxDirPrefix()));
  const root = await fs.promises.realpath(dir);
  if (mountDisk) {
    try {
      await mountBoxDisk(root, diskBytes, (child) => {
        if (making) making.mounting = child;
      });
    } catch (err) {
      // A mount that landed although `mount` reported a failure is undone too.
      await removeBoxRoot(root, true).catch(() => {});
      throw new Error(`the Box disk could not be mounted: ${err.message}`, { cause: err });
    }
  }
  return root;
}

/**
 * How long the removal of a Box directory waits for open files to come back when the host is at
 * its limit (EMFILE: `umount` could not start, `rm` could not open a directory), in ms. Other
 * Boxes of the burst stop meanwhile and free theirs.
 */
const OUT_OF_FDS_WAIT_MS = 30_000;

/**
 * Runs `step` again (backing off, 20 ms to 500 ms) while it fails for want of fds or on a busy
 * mount, at most OUT_OF_FDS_WAIT_MS.
 */
async function retried(step) {
  const until = Date.now() + OUT_OF_FDS_WAIT_MS;
  for (let delay = 20; ; delay = Math.min(delay * 2, 500)) {
    try {
      return await step();
    } catch (err) {
      if (!(outOfFds(err) || err?.code === 'EBUSY') || Date.now() >= until) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * Removes a Box directory made by makeBoxRoot (unmounting its disk first); rejects with what
 * failed. Out of fds (`umount` could not start, `rm` could not open a directory), or while the
 * removal finds the disk still mounted (EBUSY), both are tried again until fds come back
 * (OUT_OF_FDS_WAIT_MS): a mount left in place would stay for good (issue 34). A disk that never
 * came off is named as such, not as the removal's EBUSY.
 */
export async function removeBoxRoot(root, mountDisk) {
  let unmountError;
  await retried(async () => {
    if (mountDisk) {
      // Not mounted (a failed mount, one unmounted already): umount fails, the removal goes on.
      await unmountBoxDisk(root).catch((err) => {
        unmountError = err;
        if (outOfFds(err)) throw err;
      });
    }
    await removeBoxTree(root);
  }).catch((err) => {
    if (unmountError === undefined || err?.code !== 'EBUSY') throw err;
    throw new Error(`the Box disk at ${root} could not be unmounted: ${unmountError.message}`, { cause: unmountError });
  });
}

/** removeBoxRoot, synchronously (process `exit`); never throws. */
export function removeBoxRootNow(root, mountDisk) {
  if (mountDisk) unmountBoxDiskNow(root);
  try {
    removeBoxTreeNow(root);
  } catch {
    // nothing more can be done while the process exits
  }
}

/**
 * A Box being created, for the exit path: `mounting` (the `mount` process) while its disk is
 * mounted, `box` once the Box object exists (until the host lists it as live). Filled by
 * makeBoxRoot and the registry's create. Its directory needs no entry: the exit path sweeps every
 * directory of this process (stale-boxes.mjs removeOwnBoxDirsNow).
 * @typedef {{ mounting?: import('node:child_process').ChildProcess, box?: { removeNow(): void } }} BoxInMaking
 */

/**
 * Ends what a Box being created holds, synchronously (process `exit`); never throws: the Box's
 * processes and cgroups once it exists, else a `mount` still running, killed and waited for (at
 * most 1 s) so its tmpfs cannot land on the directory after the sweep unmounted it.
 * @param {BoxInMaking} making
 */
export function removeBoxInMakingNow(making) {
  if (making.box) {
    making.box.removeNow();
    return;
  }
  const mount = making.mounting;
  if (mount && mount.exitCode === null && mount.signalCode === null) {
    try {
      mount.kill('SIGKILL');
      const until = Date.now() + 1000;
      // Not reaped while the process exits: gone or a zombie (state Z) means the mount is done.
      while (Date.now() < until && !/^\d+ \(.*\) Z/.test(readProcStat(mount.pid))) Atomics.wait(PAUSE, 0, 0, 5);
    } catch {
      // already gone
    }
  }
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/** `/proc/<pid>/stat`, or a zombie's line when the process is gone. */
function readProcStat(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return `${pid} (gone) Z`;
  }
}

/** At most one item made ahead by `make`; `dispose(item)` / `disposeNow(item)` drop an unused one. */
class Spare {
  constructor(make, dispose, disposeNow) {
    this.make = make;
    this.dispose = dispose;
    this.disposeNow = disposeNow;
    this.ready = undefined;
    this.making = null;
    this.closed = false;
  }

  /** Starts making the spare unless one is ready or on its way. A failure leaves none (the next take retries). */
  fill() {
    if (this.closed || this.making || this.ready !== undefined) return;
    this.making = this.make().then(
      async (item) => {
        this.making = null;
        if (this.closed) await this.dispose(item);
        else this.ready = item;
      },
      () => {
        this.making = null;
      },
    );
  }

  /** The ready spare, or undefined; the next one is made on fill(). */
  take() {
    const item = this.ready;
    this.ready = undefined;
    return item;
  }

  /**
   * take(), but when none is ready and one is being made, waits for it (it started before the
   * caller asked, so it is ready sooner than one started now); undefined when it failed or another
   * caller took it first.
   */
  async takeOrWait() {
    if (this.ready === undefined && this.making) await this.making;
    return this.take();
  }

  /** Drops the ready spare and one still being made; resolves once both are gone. */
  async close() {
    this.closed = true;
    const item = this.ready;
    this.ready = undefined;
    await Promise.all([this.making, item === undefined ? undefined : this.dispose(item)]);
  }

  closeNow() {
    this.closed = true;
    if (this.ready !== undefined) this.disposeNow(this.ready);
    this.ready = undefined;
  }
}

/**
 * The spares of one Box host: `network()` (resolves to a started Box network: the ready one, else
 * the one being made once it is up; undefined when there is none, it failed, or this host gives none).
 */
export class BoxSpares {
  constructor({ networks }) {
    this.networks = networks
      ? new Spare(
          startBoxNetwork,
          (net) => net.stop(),
          (net) => net.stop(),
        )
      : null;
    this.networks?.fill();
  }

  async network() {
    const net = await this.networks?.takeOrWait();
    // A spare whose helpers died meanwhile is dropped: the create starts its own.
    if (net !== undefined && !net.alive()) {
      net.stop();
      return undefined;
    }
    return net;
  }

  /** Makes the spares that are missing (in the background; a failure leaves that one missing). */
  refill() {
    this.networks?.fill();
  }

  /** Drops the unused spares (host close); resolves once they are gone. */
  async close() {
    await this.networks?.close();
  }

  /** close(), synchronously (process `exit`). */
  closeNow() {
    this.networks?.closeNow();
  }
}
