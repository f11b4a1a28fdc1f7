// A fork of a running Box (the Vercel protocol's `POST /v2/sandboxes/{name}/fork`, protocol note
// §7.1): the new Box's work directory gets a copy of the source's work directory as it is now,
// while the source keeps running.
//
// The source's commands run during the copy and may swap any entry for a symlink at any moment
// (to a host file, or through /proc/<pid>/root into their own mount namespace). So the copy never
// follows a path the Box can change: every directory is reached through an fd pinned by
// paths.mjs openBoxDir (checked inside the Box), its children through `/proc/self/fd/N/<name>`,
// directories and files opened with O_NOFOLLOW and checked by fstat on the opened fd, and a file
// is copied from that fd (`/proc/self/fd/<fd>` names the opened inode itself). A symlink is copied
// as a symlink (its text), never followed. An entry that vanishes meanwhile is not copied; one
// that changes kind is read again. What a snapshot refuses is refused here too (422
// `fork_refused`): a device, FIFO or socket, a setuid or setgid file, more entries or bytes than
// the snapshot store keeps, or a tree deeper than MAX_FORK_DEPTH.
import fs from 'node:fs';
import path from 'node:path';
import { BoxRequestError } from './box.mjs';
import { boxOwner } from './box-user.mjs';
import { openBoxDir } from './paths.mjs';

/** Directory levels a fork copies at most (each level holds one fd while its children are copied). */
export const MAX_FORK_DEPTH = 256;
/** Files of one directory copied at once. */
const FILE_CONCURRENCY = 16;

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const SPECIAL_BITS = 0o6000;

const fdPath = (fd) => `/proc/self/fd/${fd}`;
const refused = (why) => new BoxRequestError(422, 'fork_refused', `the work directory cannot be forked: ${why}`);

/** Gone meanwhile (the source's commands removed or replaced it): not copied. */
const vanished = (err) => err?.code === 'ENOENT' || err?.code === 'ENOTDIR';

/**
 * Copies `source`'s work directory (a running Box) into `target`'s (a new Box no command ran in
 * yet), race-free against the source's commands (see above). `maxEntries`, `maxBytes`: the bounds
 * of the host's snapshot store. Resolves to `{ files, bytes }`; rejects with 422 `fork_refused`.
 * @param {{ root: string, workDir: string }} source
 * @param {{ workDirHost: string }} target
 * @param {{ maxEntries: number, maxBytes: number }} bounds
 */
export async function copyLiveWorkDir(source, target, { maxEntries, maxBytes }) {
  const owner = boxOwner(target.workDirHost);
  const own = owner === null ? () => {} : (p) => fs.lchownSync(p, owner.uid, owner.gid);
  const totals = { files: 0, bytes: 0, entries: 0 };

  /** An entry that changed kind between its lstat and its open: read once more, then refused. */
  const again = (parentFd, name, to, depth, retried) => {
    if (retried) throw refused(`${name} kept changing while it was copied`);
    return copyEntry(parentFd, name, to, depth, true);
  };

  async function copyFile(parentFd, name, to, depth, retried) {
    let fd;
    try {
      fd = fs.openSync(`${fdPath(parentFd)}/${name}`, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (err) {
      if (vanished(err)) return;
      // ELOOP: it became a symlink since it was listed; ENXIO: a socket.
      if (err.code === 'ELOOP') return again(parentFd, name, to, depth, retried);
      if (err.code === 'ENXIO') throw refused(`${name} is not a file, a directory or a symlink`);
      throw err;
    }
    try {
      const stat = fs.fstatSync(fd);
      if (stat.isDirectory()) return again(parentFd, name, to, depth, retried);
      if (!stat.isFile()) throw refused(`${name} is not a file, a directory or a symlink`);
      if ((stat.mode & SPECIAL_BITS) !== 0) throw refused(`${name} has the setuid or setgid bit`);
      if (totals.bytes + stat.size > maxBytes)
        throw refused(`it holds more than the ${maxBytes} bytes the host keeps for a snapshot`);
      totals.bytes += stat.size;
      totals.files += 1;
      // Copies what the opened inode holds now (the size it had at the open, at most).
      await fs.promises.copyFile(fdPath(fd), to, fs.constants.COPYFILE_EXCL);
      fs.chmodSync(to, stat.mode & 0o777);
      own(to);
    } finally {
      fs.closeSync(fd);
    }
  }

  async function copyEntry(parentFd, name, to, depth, retried = false) {
    let stat;
    try {
      stat = fs.lstatSync(`${fdPath(parentFd)}/${name}`);
    } catch (err) {
      if (vanished(err)) return;
      throw err;
    }
    if (stat.isSymbolicLink()) {
      let link;
      try {
        link = fs.readlinkSync(`${fdPath(parentFd)}/${name}`);
      } catch (err) {
        if (vanished(err) || err.code === 'EINVAL') return;
        throw err;
      }
      fs.symlinkSync(link, to);
      own(to);
      totals.files += 1;
      return;
    }
    if (stat.isDirectory()) return copyDir(parentFd, name, to, depth, retried);
    if (stat.isFile()) return copyFile(parentFd, name, to, depth, retried);
    throw refused(`${name} is not a file, a directory or a symlink`);
  }

  async function copyDir(parentFd, name, to, depth, retried) {
    if (depth >= MAX_FORK_DEPTH) throw refused(`it is nested deeper than ${MAX_FORK_DEPTH} directories`);
    let fd;
    try {
      fd = fs.openSync(`${fdPath(parentFd)}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (err) {
      if (err.code === 'ELOOP' || err.code === 'ENOTDIR') return again(parentFd, name, to, depth, retried);
      if (err.code === 'ENOENT') return;
      throw err;
    }
    try {
      const { mode } = fs.fstatSync(fd);
      fs.mkdirSync(to, { mode: 0o700 });
      await copyChildren(fd, to, depth + 1);
      fs.chmodSync(to, mode & 0o777);
      own(to);
    } finally {
      fs.closeSync(fd);
    }
  }

  async function copyChildren(dirFd, to, depth) {
    const names = fs.readdirSync(fdPath(dirFd));
    totals.entries += names.length;
    if (totals.entries > maxEntries) throw refused(`it holds more than ${maxEntries} files, directories and symlinks`);
    const dirs = [];
    const others = [];
    for (const name of names) {
      const stat = fs.lstatSync(`${fdPath(dirFd)}/${name}`, { throwIfNoEntry: false });
      if (stat?.isDirectory()) dirs.push(name);
      else if (stat) others.push(name);
    }
    for (let at = 0; at < others.length; at += FILE_CONCURRENCY) {
      await Promise.all(
        others.slice(at, at + FILE_CONCURRENCY).map((name) => copyEntry(dirFd, name, path.join(to, name), depth)),
      );
    }
    // Directories one at a time: the fds held stay bounded by the depth.
    for (const name of dirs) await copyEntry(dirFd, name, path.join(to, name), depth);
  }

  const rootFd = openBoxDir(source.root, source.workDir);
  try {
    await copyChildren(rootFd, target.workDirHost, 0);
  } catch (err) {
    if (err.code === 'ENOSPC' || err.code === 'EDQUOT')
      throw refused(`it does not fit the new Box's disk (${err.code})`);
    if (err.code === 'EACCES' || err.code === 'EPERM')
      throw refused(`an entry is not readable by the host (${err.code})`);
    throw err;
  } finally {
    fs.closeSync(rootFd);
  }
  return { files: totals.files, bytes: totals.bytes };
}

/** The keys of a fork body that override what the fork inherits (the rest, e.g. `ports`, `tags`, is not kept here). */
const OVERRIDES = ['name', 'timeout', 'resources', 'networkPolicy', 'env'];

/**
 * `POST /v2/sandboxes/{name}/fork`: a new Box with the running Box `name`'s lifetime setting
 * (`timeout`, extensions included), vCPUs, network policy and env, each overridden by the body's
 * `name`, `timeout`, `resources`, `networkPolicy`, `env`; its work directory a copy of the
 * source's as it is now (copyLiveWorkDir). The source keeps running. 404 `not_found` for an
 * unknown name, 410 `sandbox_stopped` for a source that is not running (or stopped during the
 * copy); the create's own errors (503 `capacity`, …); 422 `fork_refused`.
 * @param {import('./registry.mjs').BoxRegistry} registry
 * @param {string} name
 * @param {Record<string, any>} body
 * @param {{ signal?: AbortSignal }} [options]
 */
export async function forkBox(registry, name, body, { signal } = {}) {
  const source = registry.byName(name);
  if (!source) throw new BoxRequestError(404, 'not_found', `Sandbox ${name} was not found`);
  const stopped = () =>
    new BoxRequestError(410, 'sandbox_stopped', `Sandbox ${name} is stopped: only a running sandbox can be forked`);
  if (!source.running) throw stopped();
  const inherited = {
    timeout: source.timeoutMs,
    resources: { vcpus: source.vcpus },
    networkPolicy: { mode: source.networkDenied ? 'deny-all' : 'allow-all' },
    env: source.env,
  };
  const overrides = Object.fromEntries(OVERRIDES.filter((key) => body?.[key] !== undefined).map((k) => [k, body[k]]));
  const box = await registry.create({ ...inherited, ...overrides }, { signal, workDir: source.workDir });
  try {
    if (!source.running) throw stopped();
    await copyLiveWorkDir(source, box, {
      maxEntries: registry.snapshots.maxEntries,
      maxBytes: registry.snapshots.maxBytes,
    });
    // A source that stopped meanwhile lost its files under the copy: the fork would be partial.
    if (!source.running) throw stopped();
  } catch (err) {
    await box.stop();
    throw err;
  }
  return box;
}
