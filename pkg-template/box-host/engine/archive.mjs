// Extraction of a gzip'd tar (the `fs/write` body) into a Box, relative to a Box directory.
// Only regular files and directories are accepted; every entry is resolved inside the Box,
// parents are created, and entry modes are applied exactly (permission bits only). Parsing is
// modern-tar's (zero dependencies: the package's only runtime dependency, issue 12 item 6).
import fs from 'node:fs';
import { createTarDecoder } from 'modern-tar';
import { BoxPathError, normalizeBoxPath, openBoxDir, openBoxFileForWrite } from './paths.mjs';

const { O_WRONLY, O_CREAT, O_TRUNC } = fs.constants;

/** An archive that cannot be read (answered as 400 `bad_request`). */
export class ArchiveError extends Error {
  constructor(message) {
    super(message);
    this.status = 400;
    this.code = 'bad_request';
  }
}

async function writeEntry(root, header, body, boxPath) {
  if (header.type === 'directory') {
    await body.cancel();
    const fd = openBoxDir(root, boxPath, { create: true });
    try {
      if (header.mode) fs.fchmodSync(fd, header.mode & 0o777);
    } finally {
      fs.closeSync(fd);
    }
    return;
  }
  let fd;
  try {
    fd = openBoxFileForWrite(root, boxPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600);
  } catch (err) {
    await body.cancel();
    if (err.code === 'ELOOP' || err.code === 'EISDIR') throw new BoxPathError(`cannot write ${boxPath}`);
    throw err;
  }
  try {
    fs.fchmodSync(fd, (header.mode ?? 0o644) & 0o777);
    for await (const chunk of body) {
      for (let written = 0; written < chunk.length; ) written += fs.writeSync(fd, chunk, written);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Whether `err` is already a host error (bad path, bad archive, a file system failure). */
const isHostError = (err) =>
  err instanceof BoxPathError ||
  err instanceof ArchiveError ||
  (typeof err?.code === 'string' && typeof err?.syscall === 'string');

/**
 * Extracts `body` (gzip'd tar bytes; a plain tar is accepted too) into the Box at host dir `root`,
 * entry names relative to the Box directory `boxCwd`, streaming: one entry's bytes at a time go
 * to disk. Rejects with BoxPathError / ArchiveError for bad entries (the entries before a bad one
 * stay written).
 */
export async function extractTarGz(root, boxCwd, body) {
  let bytes = new Blob([body]).stream();
  if (body[0] === 0x1f && body[1] === 0x8b) bytes = bytes.pipeThrough(new DecompressionStream('gzip'));
  const entries = bytes.pipeThrough(createTarDecoder({ strict: true })).getReader();
  try {
    for (;;) {
      const next = await entries.read();
      if (next.done) return;
      const { header, body: entryBody } = next.value;
      if (header.type !== 'file' && header.type !== 'directory') {
        await entryBody.cancel();
        throw new ArchiveError(`unsupported tar entry type ${header.type} for ${header.name}`);
      }
      let boxPath;
      try {
        boxPath = normalizeBoxPath(header.name, boxCwd);
      } catch (err) {
        await entryBody.cancel();
        throw err;
      }
      await writeEntry(root, header, entryBody, boxPath);
    }
  } catch (err) {
    await entries.cancel().catch(() => {});
    if (isHostError(err)) throw err;
    throw new ArchiveError(`invalid tar archive: ${err?.message ?? err}`);
  }
}
