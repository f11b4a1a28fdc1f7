// File routes of the Cloudflare container control API (protocol note §4.3, §6.3, §6.5):
// `/api/write`, `/api/read`, `/api/mkdir`, `/api/delete`, `/api/exists`. Paths are Box paths,
// relative ones resolved against the session cwd (`/workspace` by default); every path is
// confined to the Box directory by paths.mjs (no `..` above the root, no symlink out of it).
import fs from 'node:fs';
import path from 'node:path';
import { CONTAINER_WORK_DIR } from './cloudflare-containers.mjs';
import { ContainerApiError, sendContainerJson } from './cloudflare-errors.mjs';
import { readJson } from './http-io.mjs';
import {
  BoxPathError,
  ensureBoxDir,
  normalizeBoxPath,
  openBoxFileForRead,
  openBoxFileForWrite,
  resolveExisting,
  unlinkInBox,
} from '../engine/paths.mjs';

/** Largest file `/api/read` returns (bytes, §6.5 `MAX_ENCODED_FILE_SIZE`); larger → 413. */
export const MAX_READ_BYTES = 32 * 1024 * 1024;
/** Largest `/api/write` request body (bytes): 32 MiB of data, base64-encoded, plus the JSON around it. */
export const MAX_WRITE_BODY_BYTES = Math.ceil((MAX_READ_BYTES * 4) / 3) + 64 * 1024;
/** Longest path accepted (characters, §6.3). */
const MAX_PATH_CHARS = 4096;
const BASE64 = /^[A-Za-z0-9+/=]*$/;
const { O_WRONLY, O_CREAT, O_TRUNC } = fs.constants;

const MIME_TYPES = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.html': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.ts': 'text/typescript',
  '.json': 'application/json',
  '.csv': 'text/csv',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.wasm': 'application/wasm',
};
const TEXT_MIME = /^text\/|^application\/(json|xml)$|^image\/svg\+xml$/;

/** The request path as a Box path (relative to the session cwd) plus its wire form. */
function boxPathOf(containers, container, body) {
  const wire = body.path;
  if (typeof wire !== 'string' || wire === '' || wire.includes('\0') || wire.length > MAX_PATH_CHARS) {
    throw new ContainerApiError(
      400,
      'VALIDATION_FAILED',
      `path must be a non-empty string of at most ${MAX_PATH_CHARS} characters without NUL`,
    );
  }
  const sessionId = typeof body.sessionId === 'string' ? body.sessionId : undefined;
  const cwd = (sessionId && container.sessions.get(sessionId)?.cwd) || CONTAINER_WORK_DIR;
  return { wire, boxPath: normalizeBoxPath(wire, cwd) };
}

function notFound(wire, operation) {
  return new ContainerApiError(404, 'FILE_NOT_FOUND', `File not found: ${wire}`, { path: wire, operation });
}

function decodeContent(body) {
  const { content, encoding } = body;
  if (typeof content !== 'string') throw new ContainerApiError(400, 'VALIDATION_FAILED', 'content must be a string');
  if (encoding === 'base64') {
    if (!BASE64.test(content)) throw new ContainerApiError(400, 'VALIDATION_FAILED', 'content is not valid base64');
    return Buffer.from(content, 'base64');
  }
  if (encoding === undefined || encoding === 'utf-8' || encoding === 'utf8') return Buffer.from(content, 'utf8');
  throw new ContainerApiError(400, 'VALIDATION_FAILED', "encoding must be 'utf-8', 'utf8' or 'base64'");
}

/** `POST /api/write {path, content, encoding?}` → `{path}`; parents are created (mode 0644 files). */
export async function writeFile({ containers, container, req, res }) {
  const body = await readJson(req, MAX_WRITE_BODY_BYTES);
  const { wire, boxPath } = boxPathOf(containers, container, body);
  const bytes = decodeContent(body);
  // Parents pinned, the file opened with O_NOFOLLOW (paths.mjs): a symlink race cannot redirect it.
  let fd;
  try {
    fd = openBoxFileForWrite(container.box.root, boxPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644);
  } catch (err) {
    if (err.code === 'ELOOP') throw new BoxPathError(`cannot write through a symlink: ${wire}`, { escape: true });
    if (err.code === 'EISDIR')
      throw new ContainerApiError(400, 'IS_DIRECTORY', `Path is a directory: ${wire}`, { path: wire });
    throw err;
  }
  try {
    fs.writeFileSync(fd, bytes);
  } finally {
    fs.closeSync(fd);
  }
  sendContainerJson(res, { path: wire });
}

function isUtf8Text(bytes) {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * `POST /api/read {path, encoding?}` → `{path, content, encoding: 'utf-8'|'base64', isBinary,
 * mimeType, size (bytes)}`. Without an encoding, text is UTF-8 and anything else base64 (§6.5).
 */
export async function readFile({ containers, container, req, res }) {
  const body = await readJson(req);
  const { wire, boxPath } = boxPathOf(containers, container, body);
  // Opened first, checked after (paths.mjs): a symlink swapped in meanwhile cannot redirect it.
  const fd = openBoxFileForRead(container.box.root, boxPath);
  if (fd === null) throw notFound(wire, 'read');
  let stat;
  let bytes;
  try {
    stat = fs.fstatSync(fd);
    if (stat.isFile() && stat.size <= MAX_READ_BYTES) bytes = fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (stat.isDirectory())
    throw new ContainerApiError(400, 'IS_DIRECTORY', `Path is a directory: ${wire}`, { path: wire });
  if (!stat.isFile())
    throw new ContainerApiError(400, 'VALIDATION_FAILED', `not a regular file: ${wire}`, { path: wire });
  if (stat.size > MAX_READ_BYTES) {
    throw new ContainerApiError(
      413,
      'FILE_TOO_LARGE',
      `File too large: ${wire} (${stat.size} bytes, limit ${MAX_READ_BYTES})`,
      { path: wire },
    );
  }
  const known = MIME_TYPES[path.posix.extname(boxPath).toLowerCase()];
  const isBinary = known ? !TEXT_MIME.test(known) : !isUtf8Text(bytes);
  const mimeType = known ?? (isBinary ? 'application/octet-stream' : 'text/plain');
  const { encoding } = body;
  if (encoding !== undefined && !['utf-8', 'utf8', 'base64'].includes(encoding)) {
    throw new ContainerApiError(400, 'VALIDATION_FAILED', "encoding must be 'utf-8', 'utf8' or 'base64'");
  }
  const asBase64 = encoding === 'base64' || (encoding === undefined && isBinary);
  sendContainerJson(res, {
    path: wire,
    content: bytes.toString(asBase64 ? 'base64' : 'utf8'),
    encoding: asBase64 ? 'base64' : 'utf-8',
    isBinary,
    mimeType,
    size: bytes.length,
  });
}

/** `POST /api/mkdir {path, recursive?}` → `{path, recursive}`; failure → 500 `FILESYSTEM_ERROR`. */
export async function mkdir({ containers, container, req, res }) {
  const body = await readJson(req);
  const { wire, boxPath } = boxPathOf(containers, container, body);
  const recursive = body.recursive === true;
  try {
    if (recursive) ensureBoxDir(container.box.root, boxPath);
    else container.box.mkdir(boxPath, '/');
  } catch (err) {
    if (err instanceof BoxPathError && err.escape) throw err;
    throw new ContainerApiError(500, 'FILESYSTEM_ERROR', `mkdir ${wire} failed: ${err.message}`, {
      path: wire,
      stderr: `mkdir: cannot create directory '${wire}': ${err.message}`,
    });
  }
  sendContainerJson(res, { path: wire, recursive });
}

/** `POST /api/delete {path}` → `{path}`; a directory → 400 `IS_DIRECTORY`, missing → 404. */
export async function deleteFile({ containers, container, req, res }) {
  const body = await readJson(req);
  const { wire, boxPath } = boxPathOf(containers, container, body);
  if (boxPath === '/') throw new ContainerApiError(400, 'IS_DIRECTORY', `Path is a directory: ${wire}`, { path: wire });
  // Through the pinned parent (paths.mjs): a directory the Box swaps for a symlink meanwhile
  // cannot send the unlink to a host file (found by the security review). The last component is
  // not followed: a symlink is removed itself, never its target.
  let removed;
  try {
    removed = unlinkInBox(container.box.root, boxPath);
  } catch (err) {
    if (err.isDirectory)
      throw new ContainerApiError(400, 'IS_DIRECTORY', `Path is a directory: ${wire}`, { path: wire });
    // A parent that is not a directory: nothing there to delete, as before.
    if (err instanceof BoxPathError && !err.escape) throw notFound(wire, 'delete');
    throw err;
  }
  if (!removed) throw notFound(wire, 'delete');
  sendContainerJson(res, { path: wire });
}

/** `POST /api/exists {path}` → `{path, exists}` (a path resolving outside the Box is refused). */
export async function exists({ containers, container, req, res }) {
  const body = await readJson(req);
  const { wire, boxPath } = boxPathOf(containers, container, body);
  sendContainerJson(res, { path: wire, exists: resolveExisting(container.box.root, boxPath) !== null });
}
