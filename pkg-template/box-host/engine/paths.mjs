// Box path resolution: a Box's `/` is a private host directory. Every Box path (cwd, fs paths,
// tar entries) is resolved inside it and may never escape it, neither by `..` nor by symlinks.
import fs from 'node:fs';
import path from 'node:path';
import { boxOwner, ownCreated } from './box-user.mjs';

/**
 * A Box path that is malformed or would leave the Box (answered as 400 `bad_path` on the Vercel
 * routes). `escape` is true when the path would leave the Box (`..` above `/`, a symlink out).
 */
export class BoxPathError extends Error {
  constructor(message, { escape: leavesBox = false } = {}) {
    super(message);
    this.name = 'BoxPathError';
    this.status = 400;
    this.code = 'bad_path';
    this.escape = leavesBox;
  }
}

/**
 * Normalises `p` (absolute, or relative to the Box-absolute `cwd`) to a Box-absolute path such as
 * `/vercel/sandbox/a.txt`. Throws BoxPathError when `..` would climb above the Box root.
 */
export function normalizeBoxPath(p, cwd = '/') {
  if (typeof p !== 'string' || p === '' || p.includes('\0')) {
    throw new BoxPathError('path must be a non-empty string without NUL');
  }
  const base = p.startsWith('/') ? '' : normalizeBoxPath(cwd, '/');
  const out = [];
  for (const seg of `${base}/${p}`.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) throw new BoxPathError(`path escapes the Box: ${p}`, { escape: true });
      out.pop();
      continue;
    }
    out.push(seg);
  }
  return `/${out.join('/')}`;
}

function isInside(root, real) {
  return real === root || real.startsWith(`${root}/`);
}

/** Host path of a normalised Box path (lexical only; use the checked helpers for real access). */
export function hostPathOf(root, boxPath) {
  return path.join(root, boxPath);
}

/**
 * Host path of an existing Box file or directory, with symlinks resolved and checked.
 * Returns null when it does not exist; throws BoxPathError when it resolves outside the Box.
 */
export function resolveExisting(root, boxPath) {
  let real;
  try {
    real = fs.realpathSync(hostPathOf(root, boxPath));
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  }
  if (!isInside(root, real)) throw new BoxPathError(`path resolves outside the Box: ${boxPath}`, { escape: true });
  return real;
}

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;

// File opens never wait on the Box: a Box command can put a FIFO where the host reads or writes
// (`mkfifo report.txt`), and a blocking open(2) of a FIFO waits for its other end, holding the
// host's thread (the app's main thread when the host runs in-process) for good. Opens add
// O_NONBLOCK (a FIFO then opens at once for reading, and fails with ENXIO for writing when
// nobody reads it; regular files ignore the flag) and anything that is no regular file is refused.

/** Closes `fd` and throws BoxPathError unless it is a regular file. */
function requireRegularFile(fd, boxPath) {
  if (fs.fstatSync(fd).isFile()) return;
  fs.closeSync(fd);
  throw new BoxPathError(`not a regular file: ${boxPath}`);
}

// Race-free access (issue 9): a Box process can swap any directory of its Box for a symlink at
// any moment, so a path checked and then reopened may land outside. Every operation below works
// on directories *pinned* by an open fd whose real path (/proc/self/fd/N) was checked to be
// inside the Box; the next component is reached through that fd (`/proc/self/fd/N/<name>`), so
// whatever the Box renames afterwards, the checked inode is the one used. Final components of
// writes are opened with O_NOFOLLOW; reads are checked after the open.

/** ownCreated (box-user.mjs) of an fd this module hands out; the fd is closed when that throws. */
function ownOrClose(fd, owner) {
  try {
    ownCreated(fd, owner);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

function fdPath(fd) {
  return `/proc/self/fd/${fd}`;
}

/**
 * Closes `fd` and throws BoxPathError (escape) unless it is inside the Box at `root` in this
 * process's own view: its path (/proc/self/fd/N) is under `root` and that path is the very inode
 * opened. The second check matters because a symlink the Box made may lead through
 * `/proc/<pid>/root` into a Box process's own mount namespace, where the Box can bind any file it
 * sees (/etc/shadow, /proc/kallsyms) at a path that reads like its own: the fd's path then names a
 * different file here (found by the security review).
 */
function requireInside(root, fd, boxPath) {
  const real = fs.readlinkSync(fdPath(fd));
  let same = false;
  if (isInside(root, real)) {
    try {
      const opened = fs.fstatSync(fd);
      const here = fs.lstatSync(real);
      same = opened.dev === here.dev && opened.ino === here.ino;
    } catch {
      same = false;
    }
  }
  if (same) return;
  fs.closeSync(fd);
  throw new BoxPathError(`path resolves outside the Box: ${boxPath}`, { escape: true });
}

/** Opens `hostPath` (a directory) and checks where the opened inode really is. */
function pinDir(root, hostPath, boxPath) {
  let fd;
  try {
    fd = fs.openSync(hostPath, O_RDONLY | O_DIRECTORY);
  } catch (err) {
    if (err.code === 'ENOTDIR') throw new BoxPathError(`not a directory: ${boxPath}`);
    throw err;
  }
  requireInside(root, fd, boxPath);
  return fd;
}

/**
 * Opens the Box directory `boxDir` pinned (see above) and returns its fd (the caller closes it).
 * With `create`, missing components are made (like `mkdir -p`), given to `owner` (box-user.mjs
 * boxOwner of the Box, read here unless the caller has it). Throws ENOENT errors for a
 * missing component otherwise, BoxPathError for a non-directory or a component outside the Box.
 */
export function openBoxDir(root, boxDir, { create = false, owner = create ? boxOwner(root) : null } = {}) {
  let fd = pinDir(root, root, '/');
  for (const seg of boxDir.split('/').filter(Boolean)) {
    const next = `${fdPath(fd)}/${seg}`;
    let child;
    let made = false;
    try {
      if (create) {
        try {
          fs.mkdirSync(next, { mode: 0o755 });
          made = true;
        } catch (err) {
          if (err.code !== 'EEXIST') throw err;
        }
      }
      child = pinDir(root, next, boxDir);
    } finally {
      fs.closeSync(fd);
    }
    fd = child;
    // Given away through the pinned fd: a symlink swapped in meanwhile is never followed.
    if (made) ownOrClose(fd, owner);
  }
  return fd;
}

/**
 * Makes sure the Box directory `boxDir` exists (like `mkdir -p`), refusing any existing component
 * that is not a directory or that resolves outside the Box. Returns its host path (for display
 * and for bubblewrap binds; file access goes through the functions below).
 */
export function ensureBoxDir(root, boxDir) {
  const fd = openBoxDir(root, boxDir, { create: true });
  try {
    return fs.readlinkSync(fdPath(fd));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens the Box file `boxPath` for writing with `flags` (O_NOFOLLOW is added: a symlink there is
 * refused with the open's ELOOP error, a directory with EISDIR) and `mode`; parents are created
 * and pinned. Never waits (O_NONBLOCK): a FIFO or socket there is refused with BoxPathError, as
 * is any other file that is not a regular one. Returns the fd.
 */
export function openBoxFileForWrite(root, boxPath, flags, mode) {
  if (boxPath === '/') throw new BoxPathError('cannot write the Box root');
  const owner = boxOwner(root);
  const dir = openBoxDir(root, path.posix.dirname(boxPath), { create: true, owner });
  let fd;
  try {
    fd = fs.openSync(`${fdPath(dir)}/${path.posix.basename(boxPath)}`, flags | O_NOFOLLOW | O_NONBLOCK, mode);
  } catch (err) {
    // ENXIO: a FIFO without a reader, or a socket.
    if (err.code === 'ENXIO') throw new BoxPathError(`not a regular file: ${boxPath}`);
    throw err;
  } finally {
    fs.closeSync(dir);
  }
  requireRegularFile(fd, boxPath);
  requireInside(root, fd, boxPath);
  ownOrClose(fd, owner);
  return fd;
}

/**
 * Opens an existing Box file for reading and checks where the opened file really is (a symlink
 * inside the Box is followed; one leading out is refused). Returns the fd, or null when missing.
 * Never waits: opened with O_NONBLOCK, so a FIFO opens at once (callers refuse what is no
 * regular file by its fstat); a socket is refused here (ENXIO). The path is also resolved before
 * the open, so a symlink that already leads out of the Box (to a host device, whose open alone
 * may act) is refused without opening its target; the check after the open stays for a swap.
 */
export function openBoxFileForRead(root, boxPath) {
  if (resolveExisting(root, boxPath) === null) return null;
  let fd;
  try {
    fd = fs.openSync(hostPathOf(root, boxPath), O_RDONLY | O_NONBLOCK);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    if (err.code === 'ENXIO') throw new BoxPathError(`not a regular file: ${boxPath}`);
    throw err;
  }
  requireInside(root, fd, boxPath);
  return fd;
}

/** Creates one directory `boxPath` (not recursive) under its pinned parent. */
export function mkdirInBox(root, boxPath) {
  const dir = openBoxDir(root, path.posix.dirname(boxPath));
  try {
    const target = `${fdPath(dir)}/${path.posix.basename(boxPath)}`;
    fs.mkdirSync(target, { mode: 0o755 });
    const made = pinDir(root, target, boxPath);
    try {
      ownCreated(made, boxOwner(root));
    } finally {
      fs.closeSync(made);
    }
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * Removes the Box file `boxPath` (not a directory; a symlink itself, never its target) through its
 * pinned parent, so a directory swapped for a symlink meanwhile cannot redirect the unlink.
 * Returns false when it does not exist; throws BoxPathError (`isDirectory`) for a directory.
 */
export function unlinkInBox(root, boxPath) {
  let dir;
  try {
    dir = openBoxDir(root, path.posix.dirname(boxPath));
  } catch (err) {
    if (err.code === 'ENOENT') return false;
    throw err;
  }
  try {
    const target = `${fdPath(dir)}/${path.posix.basename(boxPath)}`;
    const stat = fs.lstatSync(target, { throwIfNoEntry: false });
    if (!stat) return false;
    if (stat.isDirectory()) throw Object.assign(new BoxPathError(`is a directory: ${boxPath}`), { isDirectory: true });
    fs.unlinkSync(target);
    return true;
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * Host path for creating the Box file `boxPath`: parents are created and checked; the last
 * component is returned unresolved and must be opened with O_NOFOLLOW. Prefer
 * openBoxFileForWrite, which cannot be raced.
 */
export function prepareFileTarget(root, boxPath) {
  if (boxPath === '/') throw new BoxPathError('cannot write the Box root');
  const parent = ensureBoxDir(root, path.posix.dirname(boxPath));
  return path.join(parent, path.posix.basename(boxPath));
}
