// Snapshots of the local Box host (the Vercel protocol's `sandbox.snapshot()` and create from
// `source: { type: 'snapshot' }`, protocol note §7.5), kept on disk under the host's state dir so
// they survive host restarts. The Run uses them as prepared projects (an installed node_modules
// per install digest); see docs/internals/prepared-projects.md "Prepared projects".
//
// Layout: `<stateDir>/snapshots/<snapshotId>/tree/` holds the Box's work directory as it was
// when the snapshot was taken, `<stateDir>/snapshots/<snapshotId>/snapshot.json` its record,
// written last (a directory without a readable record for 10 minutes is incomplete and removed;
// a damaged one is removed when a Box is created from it). A snapshot is
// never shown to a Box: a Box created from it gets a private copy of the tree, checked against
// the record's file count and byte total while it is copied (a damaged tree is dropped and the
// create answers 410 `snapshot_not_found`, so the caller starts from scratch).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BoxRequestError } from './box.mjs';
import { boxOwner } from './box-user.mjs';

/** Snapshots kept at most by default; the least recently used ones are removed beyond. */
export const DEFAULT_MAX_SNAPSHOTS = 32;
/** Bytes of snapshot trees kept at most by default (2 GiB); least recently used removed beyond. */
export const DEFAULT_MAX_SNAPSHOT_BYTES = 2 * 1024 * 1024 * 1024;

const ID = /^snap_[0-9a-f]{24}$/;

/** The Box name of a Run that prepares a project (crates/core run/install.rs `prepared_name`). */
const PREPARED_NAME = /^vitehub-prepared-/;

/**
 * What a snapshot is kept for: `'prepared'` (a Run's prepared project: an installed tree; the
 * runtime's snapshot request says so, `__snapshotKind: 'prepared'`) or `'session'` (any other: a
 * Session's `snapshot()`, the SDK's `sandbox.snapshot()`). A record of an older host, without a
 * kind, is a prepared project's when its Box was named `vitehub-prepared-…`. Listings, reads,
 * deletes and creates from a snapshot may be held to one kind (`?kind=`, `__snapshotKind`;
 * protocols/vercel-api.mjs), so a Session's calls never see nor open a Definition's installed tree.
 * @returns {'prepared' | 'session'}
 */
export function snapshotKind(record) {
  if (record?.kind === 'prepared' || record?.kind === 'session') return record.kind;
  return PREPARED_NAME.test(record?.sandboxName ?? '') ? 'prepared' : 'session';
}
const RECORD = 'snapshot.json';

/**
 * The platform of the `node` Box commands run (`<platform>-<arch>-abi<modules>`): a snapshot is
 * only restored on the platform it was taken on (native addons are built for one ABI). Box
 * commands run the host's own Node (box-toolchain.mjs), so it is this process's.
 */
function boxPlatform() {
  return Promise.resolve(`${process.platform}-${process.arch}-abi${process.versions.modules}`);
}

/**
 * Copies directory `from` into the existing directory `to`; resolves to `{ files, bytes }`. The
 * copies belong to `owner` (`{ uid, gid }`, box-user.mjs) when given. (A restore runs before the
 * Box's first command: nothing in `to` can be swapped meanwhile.)
 */
async function copyTree(from, to, owner = null, sealedAt = Infinity) {
  const totals = { files: 0, bytes: 0 };
  const own = owner === null ? async () => {} : (target) => fs.promises.lchown(target, owner.uid, owner.gid);
  const unchanged = async (source) => {
    if ((await fs.promises.lstat(source)).ctimeMs > sealedAt)
      throw new Error(`${source} changed after the snapshot was sealed`);
  };
  async function copyDir(src, dst) {
    await unchanged(src);
    const entries = await fs.promises.readdir(src, { withFileTypes: true });
    await eachBounded(entries, async (entry) => {
      const s = path.join(src, entry.name);
      const d = path.join(dst, entry.name);
      if (entry.isDirectory()) {
        const { mode } = await fs.promises.lstat(s);
        await fs.promises.mkdir(d, { mode: mode & 0o777 });
        await own(d);
        await copyDir(s, d);
      } else if (entry.isSymbolicLink()) {
        await unchanged(s);
        await fs.promises.symlink(await fs.promises.readlink(s), d);
        await own(d);
        totals.files += 1;
      } else if (entry.isFile()) {
        await unchanged(s);
        await fs.promises.copyFile(s, d, fs.constants.COPYFILE_FICLONE);
        await own(d);
        // (read the size first: `x += await y` would add to the value x had before the await)
        const { size } = await fs.promises.lstat(d);
        totals.bytes += size;
        totals.files += 1;
      }
    });
  }
  await copyDir(from, to);
  return totals;
}

/** Entries (files, directories, symlinks) a kept tree may hold: more is refused (inodes, and the walk's time and memory). */
export const MAX_SNAPSHOT_ENTRIES = 250_000;
/** Disk one entry takes at least once written (a block; an empty file or directory has an inode and usually a block). */
const ENTRY_BYTES = 4096;
/** Entries of one directory handled at once by a walk or a copy: memory stays bounded whatever a directory holds. */
const WALK_CONCURRENCY = 64;

/** Runs `task` on every item, at most WALK_CONCURRENCY at once; rejects with the first failure. */
async function eachBounded(items, task) {
  for (let at = 0; at < items.length; at += WALK_CONCURRENCY) {
    await Promise.all(items.slice(at, at + WALK_CONCURRENCY).map(task));
  }
}

/** The setuid and setgid bits: a tree that the store keeps never carries them. */
const SPECIAL_BITS = 0o6000;

/**
 * Measures the tree under `dir`, which the store may keep: `{ files, bytes, diskBytes, entries,
 * lastChangeMs }`, the
 * count of regular files and symlinks, the sum of their sizes (what a restore copies, checked
 * against the record) and the bytes of disk they really take (`st_blocks` × 512: a sparse file
 * takes less than its size, a tree on another file system may take more once copied) and the
 * latest ctime of its entries (ms since the epoch). Rejects a
 * tree holding anything but directories, regular files and symlinks (a device, a FIFO, a
 * socket), more than `maxEntries` entries (default MAX_SNAPSHOT_ENTRIES), or a file with the setuid or setgid bit: a Box's install must not leave a
 * privileged program on the host's disk, even behind the store's 0700 directories.
 */
async function inspectTree(dir, maxEntries = MAX_SNAPSHOT_ENTRIES) {
  const totals = { files: 0, bytes: 0, diskBytes: 0, entries: 0, lastChangeMs: 0 };
  async function walk(current) {
    totals.lastChangeMs = Math.max(totals.lastChangeMs, (await fs.promises.lstat(current)).ctimeMs);
    const entries = await fs.promises.readdir(current);
    totals.entries += entries.length;
    if (totals.entries > maxEntries)
      throw new Error(`it holds more than ${maxEntries} files, directories and symlinks`);
    await eachBounded(entries, async (name) => {
      const p = path.join(current, name);
      const stat = await fs.promises.lstat(p);
      const where = path.relative(dir, p);
      if (!stat.isDirectory() && !stat.isFile() && !stat.isSymbolicLink())
        throw new Error(`${where} is not a file, a directory or a symlink`);
      if (stat.isFile() && (stat.mode & SPECIAL_BITS) !== 0) throw new Error(`${where} has the setuid or setgid bit`);
      totals.diskBytes += stat.blocks * 512;
      totals.lastChangeMs = Math.max(totals.lastChangeMs, stat.ctimeMs);
      if (stat.isDirectory()) return walk(p);
      totals.files += 1;
      if (stat.isFile()) totals.bytes += stat.size;
    });
  }
  await walk(dir);
  return totals;
}

/** Moves `from` to `to` (a rename, or a copy then removal across file systems). */
async function moveDir(from, to) {
  try {
    await fs.promises.rename(from, to);
  } catch (err) {
    if (err.code !== 'EXDEV') throw err;
    await fs.promises.mkdir(to);
    await copyTree(from, to);
    await fs.promises.rm(from, { recursive: true, force: true });
  }
}

/** An unreadable snapshot dir older than this (ms) is removed at load; a younger one may be another host's snapshot in progress. */
const INCOMPLETE_GRACE_MS = 10 * 60_000;

async function stale(dir) {
  try {
    return Date.now() - (await fs.promises.stat(dir)).mtimeMs > INCOMPLETE_GRACE_MS;
  } catch {
    return false;
  }
}

export class SnapshotStore {
  /**
   * The take in progress (takes run one after another).
   * @type {Promise<unknown>}
   */
  #taking = Promise.resolve();

  /**
   * `dir`: `<stateDir>/snapshots`; `maxSnapshots`, `maxBytes`: the bounds kept after every new
   * snapshot (least recently used first out; expired ones always).
   */
  constructor({
    dir,
    maxSnapshots = DEFAULT_MAX_SNAPSHOTS,
    maxBytes = DEFAULT_MAX_SNAPSHOT_BYTES,
    maxEntries = MAX_SNAPSHOT_ENTRIES,
  }) {
    this.dir = dir;
    this.maxSnapshots = maxSnapshots;
    this.maxBytes = maxBytes;
    this.maxEntries = maxEntries;
    this.records = new Map();
    this.loaded = undefined;
    this.platform = undefined;
  }

  /** Reads the records on disk once (incomplete or unreadable snapshot dirs are removed). */
  load() {
    this.loaded ??= (async () => {
      await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 });
      for (const name of await fs.promises.readdir(this.dir)) {
        const record = await this.#readRecord(name);
        if (record) this.records.set(record.id, record);
        else if (await stale(path.join(this.dir, name)))
          await fs.promises.rm(path.join(this.dir, name), { recursive: true, force: true });
      }
      await this.#evict();
    })();
    return this.loaded;
  }

  #platform() {
    this.platform ??= boxPlatform();
    return this.platform;
  }

  async #readRecord(id) {
    if (!ID.test(id)) return null;
    try {
      const record = JSON.parse(await fs.promises.readFile(path.join(this.dir, id, RECORD), 'utf8'));
      const valid =
        record &&
        record.id === id &&
        Number.isInteger(record.files) &&
        Number.isInteger(record.sizeBytes) &&
        typeof record.platform === 'string' &&
        fs.statSync(path.join(this.dir, id, 'tree')).isDirectory();
      return valid ? record : null;
    } catch {
      return null;
    }
  }

  /**
   * Takes a snapshot of `workDirHost` (moved into the store, so the Box must be stopped before and
   * removed after): `{ sourceSessionId, sandboxName, expiration? (ms, 0 = never), kind? }` → the
   * record (`kind`: snapshotKind's, else by `sandboxName`).
   */
  take(workDirHost, options) {
    // One take at a time: each makes room for itself against what the store holds, so takes
    // side by side would each count without the others.
    const taken = this.#taking.then(() => this.#take(workDirHost, options));
    this.#taking = taken.catch(() => {});
    return taken;
  }

  async #take(workDirHost, { sourceSessionId, sandboxName, expiration, kind }) {
    await this.load();
    // Checked where it stands, before anything is written: a move from the Box's own disk (a
    // tmpfs) copies the files, and a sparse file then takes its whole size.
    const inBox = await inspectTree(workDirHost, this.maxEntries).catch((err) => {
      throw new BoxRequestError(
        422,
        'snapshot_refused',
        `the work directory cannot be kept as a snapshot: ${err.message}`,
      );
    });
    // The disk it will take here: its blocks when it is renamed in; when it is copied from
    // another file system, its sizes (a copy fills the holes of sparse files) and a block for
    // every entry (an empty file or directory still takes one).
    const copied = (await fs.promises.stat(workDirHost)).dev !== (await fs.promises.stat(this.dir)).dev;
    const needed = copied ? inBox.bytes + inBox.entries * ENTRY_BYTES : inBox.diskBytes;
    if (needed > this.maxBytes) {
      throw new BoxRequestError(
        422,
        'snapshot_refused',
        `the work directory would take ${needed} bytes of disk in the snapshot store, more than the ${this.maxBytes} bytes it keeps`,
      );
    }
    // Room first: the store stays within maxBytes while the tree is written, not only after.
    await this.#evict(needed);
    const id = `snap_${randomBytes(12).toString('hex')}`;
    const dir = path.join(this.dir, id);
    await fs.promises.mkdir(dir, { mode: 0o700 });
    try {
      const tree = path.join(dir, 'tree');
      await moveDir(workDirHost, tree);
      // A copy is measured again where it now stands (its blocks, its ctimes); a renamed tree is
      // the same inodes, of which only its top directory's ctime moved with the rename.
      const { files, bytes, diskBytes, lastChangeMs } = copied
        ? await inspectTree(tree, this.maxEntries)
        : { ...inBox, lastChangeMs: Math.max(inBox.lastChangeMs, (await fs.promises.lstat(tree)).ctimeMs) };
      const now = Date.now();
      const record = {
        id,
        sourceSessionId,
        sandboxName,
        kind: kind ?? snapshotKind({ sandboxName }),
        platform: await this.#platform(),
        files,
        sizeBytes: bytes,
        diskBytes,
        // The latest ctime in the tree as kept (ms): an entry whose ctime is later was changed since.
        sealedAt: lastChangeMs,
        createdAt: now,
        updatedAt: now,
        lastUsedAt: now,
        expiresAt: expiration ? now + expiration : undefined,
      };
      await this.#writeRecord(record);
      this.records.set(id, record);
      await this.#evict(0, id);
      return record;
    } catch (err) {
      await fs.promises.rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  async #writeRecord(record) {
    const file = path.join(this.dir, record.id, RECORD);
    await fs.promises.writeFile(`${file}.tmp`, JSON.stringify(record));
    await fs.promises.rename(`${file}.tmp`, file);
  }

  /**
   * Copies snapshot `id`'s tree into `workDirHost` (an empty Box work directory). A snapshot that
   * is unknown, of another platform, expired or damaged (its record unreadable, a file missing or
   * changed in size, or any entry changed after the snapshot was sealed: its ctime, which no
   * rewrite can set back, is later than the record's `sealedAt`) is removed and answered 410
   * `snapshot_not_found`. With `kind`, a snapshot of another kind (snapshotKind) is answered as
   * an unknown one.
   * @param {string} id
   * @param {string} workDirHost
   * @param {{ kind?: 'prepared' | 'session' }} [options]
   */
  async restore(id, workDirHost, { kind } = {}) {
    await this.load();
    const record = typeof id === 'string' ? this.records.get(id) : undefined;
    const gone = (why) => new BoxRequestError(410, 'snapshot_not_found', `Snapshot ${id} ${why}`);
    if (!record || (kind !== undefined && snapshotKind(record) !== kind)) throw gone('was not found');
    if (record.platform !== (await this.#platform())) {
      await this.#remove(id);
      throw gone(`was taken on another platform (${record.platform})`);
    }
    if (record.expiresAt !== undefined && record.expiresAt <= Date.now()) {
      await this.#remove(id);
      throw gone('has expired');
    }
    let copied;
    try {
      const onDisk = await this.#readRecord(id);
      if (
        !onDisk ||
        onDisk.files !== record.files ||
        onDisk.sizeBytes !== record.sizeBytes ||
        onDisk.sealedAt !== record.sealedAt
      )
        throw new Error('record changed');
      copied = await copyTree(path.join(this.dir, id, 'tree'), workDirHost, boxOwner(workDirHost), record.sealedAt);
    } catch {
      copied = undefined;
    }
    if (!copied || copied.files !== record.files || copied.bytes !== record.sizeBytes) {
      await this.#remove(id);
      throw gone('is damaged (its files differ from its record) and was removed');
    }
    record.lastUsedAt = Date.now();
    this.#writeRecord(record).catch(() => {});
    return record;
  }

  /** The record of snapshot `id`, or undefined. */
  async get(id) {
    await this.load();
    return this.records.get(id);
  }

  /**
   * Records, newest first (`sortOrder: 'asc'` oldest first), optionally of one sandbox name and
   * of one kind (snapshotKind).
   * @param {{ name?: string, sortOrder?: 'asc' | 'desc', kind?: 'prepared' | 'session' }} [options]
   */
  async list({ name, sortOrder = 'desc', kind } = {}) {
    await this.load();
    const all = [...this.records.values()].filter(
      (r) => (name === undefined || r.sandboxName === name) && (kind === undefined || snapshotKind(r) === kind),
    );
    all.sort((a, b) => (sortOrder === 'asc' ? a.createdAt - b.createdAt : b.createdAt - a.createdAt));
    return all;
  }

  /** Removes snapshot `id` (record first, then its tree); the removed record or undefined. */
  async delete(id) {
    await this.load();
    return this.#remove(id);
  }

  async #remove(id) {
    const record = this.records.get(id);
    if (!ID.test(String(id))) return record;
    this.records.delete(id);
    await fs.promises.rm(path.join(this.dir, id, RECORD), { force: true });
    await fs.promises.rm(path.join(this.dir, id), { recursive: true, force: true });
    return record;
  }

  /**
   * Removes expired snapshots, then while over the bounds with `reserveBytes` more: prepared
   * projects first (a cache a Run makes again), then Session snapshots (what a caller kept), each
   * least recently used first; never `keep` (the snapshot just taken).
   */
  async #evict(reserveBytes = 0, keep = undefined) {
    const now = Date.now();
    for (const record of [...this.records.values()]) {
      if (record.expiresAt !== undefined && record.expiresAt <= now) await this.#remove(record.id);
    }
    const rank = (record) => (snapshotKind(record) === 'prepared' ? 0 : 1);
    const byUse = [...this.records.values()]
      .filter((record) => record.id !== keep)
      .sort((a, b) => rank(a) - rank(b) || a.lastUsedAt - b.lastUsedAt);
    const kept = keep === undefined ? undefined : this.records.get(keep);
    // The disk a tree takes, not the sizes of its files (a record of an older host has only those).
    const held = (record) => record.diskBytes ?? record.sizeBytes;
    let bytes = byUse.reduce((sum, r) => sum + held(r), reserveBytes + (kept ? held(kept) : 0));
    const count = () => byUse.length + (kept ? 1 : 0);
    while (byUse.length > 0 && (count() > this.maxSnapshots || bytes > this.maxBytes)) {
      const oldest = byUse.shift();
      bytes -= held(oldest);
      await this.#remove(oldest.id);
    }
  }
}

/** The `Snapshot` wire object (protocol note §6.5). */
export function snapshotJSON(record, status = 'created') {
  const json = {
    id: record.id,
    sourceSessionId: record.sourceSessionId,
    region: 'local',
    status,
    sizeBytes: record.sizeBytes,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastUsedAt: record.lastUsedAt,
  };
  if (record.expiresAt !== undefined) json.expiresAt = record.expiresAt;
  return json;
}
