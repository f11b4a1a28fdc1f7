// The local Box host's snapshot store (pkg-template/box-host/engine/snapshots.mjs) on a real file
// system: what it refuses to keep, how it counts the disk it holds, and how it finds a tree
// rewritten behind its back.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { SnapshotStore } from '../../pkg-template/box-host/engine/snapshots.mjs';

const MiB = 1024 * 1024;

/** A store under a fresh folder, and a fresh Box work directory holding `files` ({ path: bytes | { sparse } }). */
function setUp(t, { maxBytes = 64 * MiB } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-snapstore-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const store = new SnapshotStore({ dir: path.join(root, 'snapshots'), maxBytes });
  let boxes = 0;
  const workDir = (files) => {
    boxes += 1;
    const dir = path.join(root, `box-${boxes}`);
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      if (content.sparse) {
        fs.writeFileSync(path.join(dir, name), '');
        fs.truncateSync(path.join(dir, name), content.sparse);
      } else fs.writeFileSync(path.join(dir, name), content);
    }
    return dir;
  };
  const kept = () => (fs.existsSync(store.dir) ? fs.readdirSync(store.dir) : []);
  return { root, store, workDir, kept };
}

const source = { sourceSessionId: 'sbx_test', sandboxName: 'test' };

test('a tree holding a setuid file is refused (422 snapshot_refused) and nothing of it reaches the store', async (t) => {
  const { store, workDir, kept } = setUp(t);
  const dir = workDir({ 'project/package.json': '{}', 'project/node_modules/.bin/sh': 'a shell' });
  fs.chmodSync(path.join(dir, 'project/node_modules/.bin/sh'), 0o4755);
  await assert.rejects(
    store.take(dir, source),
    (err) =>
      err.status === 422 &&
      err.code === 'snapshot_refused' &&
      /node_modules\/\.bin\/sh has the setuid or setgid bit/.test(err.message),
  );
  assert.deepEqual(kept(), []);
  assert.ok(fs.existsSync(path.join(dir, 'project/package.json')), 'the work directory is left for the Box to remove');
});

test('a tree holding a FIFO is refused', async (t) => {
  const { store, workDir, kept } = setUp(t);
  const dir = workDir({ 'project/package.json': '{}' });
  execFileSync('mkfifo', [path.join(dir, 'project/pipe')]);
  await assert.rejects(
    store.take(dir, source),
    (err) => err.code === 'snapshot_refused' && /project\/pipe is not a file/.test(err.message),
  );
  assert.deepEqual(kept(), []);
});

test('sparse files larger in all than the store, on another file system (the Box disk), are refused before anything is written', async (t) => {
  const { store, kept } = setUp(t, { maxBytes: 8 * MiB });
  await store.load();
  // The Box's own disk is a tmpfs: /dev/shm plays it, when it is another file system than TMPDIR's.
  if (!fs.existsSync('/dev/shm') || fs.statSync('/dev/shm').dev === fs.statSync(store.dir).dev)
    return t.skip('no tmpfs apart from TMPDIR at /dev/shm');
  const dir = fs.mkdtempSync('/dev/shm/vite-hub-snapstore-');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const name of ['a.bin', 'b.bin']) {
    fs.writeFileSync(path.join(dir, name), '');
    fs.truncateSync(path.join(dir, name), 5 * MiB);
  }
  assert.ok(fs.statSync(path.join(dir, 'a.bin')).blocks * 512 < MiB, 'the file is sparse there');
  await assert.rejects(
    store.take(dir, source),
    (err) =>
      err.code === 'snapshot_refused' &&
      /would take 10493952 bytes of disk in the snapshot store, more than the 8388608 bytes/.test(err.message),
  );
  assert.deepEqual(kept(), []);
});

test('the store counts the disk its trees take (blocks), and makes room before it writes', async (t) => {
  const { store, workDir } = setUp(t, { maxBytes: 8 * MiB });
  const dense = await store.take(workDir({ 'a.bin': Buffer.alloc(3 * MiB, 1) }), source);
  const sparse = await store.take(workDir({ 'b.bin': { sparse: 6 * MiB } }), source);
  assert.equal(sparse.sizeBytes, 6 * MiB);
  assert.ok(sparse.diskBytes < MiB, `diskBytes ${sparse.diskBytes} counts blocks`);
  assert.deepEqual(
    (await store.list()).map((r) => r.id).sort(),
    [dense.id, sparse.id].sort(),
    '9 MiB of sizes, 3 MiB of disk: both kept',
  );
  // 6 MiB more would take the store over 8 MiB: the least recently used goes first.
  const third = await store.take(workDir({ 'c.bin': Buffer.alloc(6 * MiB, 1) }), source);
  assert.deepEqual((await store.list()).map((r) => r.id).sort(), [sparse.id, third.id].sort());
});

test('a file of a snapshot rewritten at the same size is found at restore: 410 snapshot_not_found, and the snapshot is removed', async (t) => {
  const { store, workDir, root } = setUp(t);
  const record = await store.take(workDir({ 'project/index.mjs': 'export default () => 1;\n' }), source);
  await sleep(20);
  const file = path.join(store.dir, record.id, 'tree', 'project/index.mjs');
  fs.writeFileSync(file, 'export default () => 2;\n');
  assert.equal(fs.statSync(file).size, record.sizeBytes, 'same size');
  const target = fs.mkdtempSync(path.join(root, 'restore-'));
  await assert.rejects(
    store.restore(record.id, target),
    (err) => err.status === 410 && err.code === 'snapshot_not_found' && /damaged/.test(err.message),
  );
  assert.equal(await store.get(record.id), undefined);
  // An untouched snapshot restores, file for file.
  const intact = await store.take(workDir({ 'project/index.mjs': 'export default () => 3;\n' }), source);
  const fresh = fs.mkdtempSync(path.join(root, 'restore-'));
  await store.restore(intact.id, fresh);
  assert.equal(fs.readFileSync(path.join(fresh, 'project/index.mjs'), 'utf8'), 'export default () => 3;\n');
});

test('takes side by side stay within the bound: each makes room against the others', async (t) => {
  const { store, workDir } = setUp(t, { maxBytes: 8 * MiB });
  const records = await Promise.all(
    [1, 2, 3, 4].map((n) => store.take(workDir({ [`f${n}.bin`]: Buffer.alloc(3 * MiB, n) }), source)),
  );
  const kept = await store.list();
  assert.ok(kept.reduce((sum, r) => sum + r.diskBytes, 0) <= 8 * MiB, 'the store holds at most its bound');
  assert.deepEqual(
    kept.map((r) => r.id).sort(),
    records
      .slice(-2)
      .map((r) => r.id)
      .sort(),
    'the last two taken are the ones kept',
  );
});

test('a tree of more entries than the store keeps is refused; on a copy from the Box disk, empty files and directories count a block each', async (t) => {
  const { root, kept } = setUp(t);
  const store = new SnapshotStore({ dir: path.join(root, 'capped'), maxEntries: 10 });
  const many = fs.mkdtempSync(path.join(root, 'many-'));
  for (let i = 0; i < 11; i += 1) fs.writeFileSync(path.join(many, `f${i}`), '');
  await assert.rejects(
    store.take(many, source),
    (err) => err.code === 'snapshot_refused' && /more than 10 files, directories and symlinks/.test(err.message),
  );
  assert.deepEqual(kept(), []);
  if (!fs.existsSync('/dev/shm') || fs.statSync('/dev/shm').dev === fs.statSync(root).dev)
    return t.skip('no tmpfs apart from TMPDIR at /dev/shm');
  const small = new SnapshotStore({ dir: path.join(root, 'small'), maxBytes: 200 * 1024 });
  const dirs = fs.mkdtempSync('/dev/shm/vite-hub-snapstore-');
  t.after(() => fs.rmSync(dirs, { recursive: true, force: true }));
  for (let i = 0; i < 100; i += 1) fs.mkdirSync(path.join(dirs, `d${i}`));
  await assert.rejects(
    small.take(dirs, source),
    (err) => err.code === 'snapshot_refused' && /would take 409600 bytes of disk/.test(err.message),
  );
});
