// Box path resolution: a Box's `/` is a private host directory. Every Box path (cwd, fs paths,
// tar entries) is resolved inside it and may never escape it, neither by `..` nor by symlinks.
import fs from 'node:fs';
import path from 'node:path';

/**
 * A Box path that is malformed or would leave the Box (answered as 400 `bad_path` on the Vercel
 * routes). `escape` is true when the path would leave the Box (`..` above `/`, a symlink out).
 */
export class BoxPathError extends Error {
  constructor(message, { escape = false } = {}) {
    super(message);
    this.name = 'BoxPathError';
    this.status = 400;
    this.code = 'bad_path';
    this.escape = escape;
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

/**
 * Makes sure the Box directory `boxDir` exists (like `mkdir -p`), refusing any existing component
 * that is not a directory or that resolves outside the Box. Returns its host path.
 */
export function ensureBoxDir(root, boxDir) {
  let host = root;
  for (const seg of boxDir.split('/').filter(Boolean)) {
    host = path.join(host, seg);
    let st;
    try {
      st = fs.lstatSync(host);
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
      fs.mkdirSync(host, { mode: 0o755 });
      continue;
    }
    if (st.isSymbolicLink()) {
      const real = fs.realpathSync(host);
      if (!isInside(root, real)) throw new BoxPathError(`path resolves outside the Box: ${boxDir}`, { escape: true });
      if (!fs.statSync(real).isDirectory()) throw new BoxPathError(`not a directory: ${boxDir}`);
      host = real;
    } else if (!st.isDirectory()) {
      throw new BoxPathError(`not a directory: ${boxDir}`);
    }
  }
  return host;
}

/**
 * Host path for creating the Box file `boxPath`: parents are created and checked; the last
 * component is returned unresolved and must be opened with O_NOFOLLOW.
 */
export function prepareFileTarget(root, boxPath) {
  if (boxPath === '/') throw new BoxPathError('cannot write the Box root');
  const parent = ensureBoxDir(root, path.posix.dirname(boxPath));
  return path.join(parent, path.posix.basename(boxPath));
}
