// Extraction of a gzip'd tar (the `fs/write` body) into a Box, relative to a Box directory.
// Only regular files and directories are accepted; every entry is resolved inside the Box,
// parents are created, and entry modes are applied exactly (permission bits only).
import fs from 'node:fs';
import { Parser } from 'tar';
import { BoxPathError, normalizeBoxPath, openBoxDir, openBoxFileForWrite } from './paths.mjs';

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const { O_WRONLY, O_CREAT, O_TRUNC } = fs.constants;

/** An archive that cannot be read (answered as 400 `bad_request`). */
export class ArchiveError extends Error {
  constructor(message) {
    super(message);
    this.status = 400;
    this.code = 'bad_request';
  }
}

function writeEntry(root, entry, boxPath, pending) {
  if (entry.type === 'Directory') {
    const fd = openBoxDir(root, boxPath, { create: true });
    try {
      if (entry.mode) fs.fchmodSync(fd, entry.mode & 0o777);
    } finally {
      fs.closeSync(fd);
    }
    entry.resume();
    return;
  }
  let fd;
  try {
    fd = openBoxFileForWrite(root, boxPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600);
  } catch (err) {
    if (err.code === 'ELOOP' || err.code === 'EISDIR') throw new BoxPathError(`cannot write ${boxPath}`);
    throw err;
  }
  fs.fchmodSync(fd, (entry.mode ?? 0o644) & 0o777);
  const out = fs.createWriteStream(null, { fd });
  pending.push(
    new Promise((resolve, reject) => {
      out.on('close', resolve);
      out.on('error', reject);
      entry.on('error', reject);
    }),
  );
  entry.pipe(out);
}

/**
 * Extracts `body` (gzip'd tar bytes) into the Box at host dir `root`, entry names relative to the
 * Box directory `boxCwd`. Rejects with BoxPathError / ArchiveError for bad entries.
 */
export function extractTarGz(root, boxCwd, body) {
  return new Promise((resolve, reject) => {
    const pending = [];
    let failure = null;
    const parser = new Parser({ strict: true });
    parser.on('entry', (entry) => {
      if (failure) return entry.resume();
      try {
        if (!FILE_TYPES.has(entry.type) && entry.type !== 'Directory') {
          throw new ArchiveError(`unsupported tar entry type ${entry.type} for ${entry.path}`);
        }
        writeEntry(root, entry, normalizeBoxPath(entry.path, boxCwd), pending);
      } catch (err) {
        failure = err;
        entry.resume();
      }
    });
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      Promise.all(pending).then(
        () => (failure ? reject(failure) : resolve()),
        (err) => reject(failure ?? err),
      );
    };
    parser.on('error', (err) => {
      failure ??= new ArchiveError(`invalid tar archive: ${err.message}`);
      done();
    });
    parser.on('end', done);
    parser.on('close', done);
    parser.end(body);
  });
}
