// Prepared projects (issue 12, item 1): a Run whose install digest was installed before starts
// from the local Box host's snapshot of it instead of installing. Real host, real processes, real
// `npm ci` of small packages from the npm registry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import {
  configureSandbox,
  dropPreparedProject,
  listPreparedProjects,
  listSandboxes,
  registerSandbox,
  runSandbox,
} from '@vite-hub/sandbox';
import { SLUGIFY_LOCK } from '../support/local-host.mjs';

const LEFT_PAD_LOCK = {
  lockfileVersion: 3,
  requires: true,
  packages: {
    '': { dependencies: { 'left-pad': '1.3.0' } },
    'node_modules/left-pad': {
      version: '1.3.0',
      resolved: 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz',
      integrity: 'sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQGinBN9yTQT3bFlCBy/aVx2HrNcqQGsdot8ghrjyrvMCoEA==',
      license: 'WTFPL',
    },
  },
};

/** Lists the installed packages and slugifies `payload.title` when slugify is there. */
const LIST_INDEX = `import fs from 'node:fs';
export default async function (payload = {}) {
  const installed = fs.readdirSync('node_modules').filter((name) => !name.startsWith('.')).sort();
  const slug = installed.includes('slugify') ? (await import('slugify')).default(payload.title ?? '', { lower: true }) : null;
  return { installed, slug };
}`;

/** Reads (and, with `tamper`, then changes) slugify's own files inside node_modules. */
const TAMPER_INDEX = `import fs from 'node:fs';
export default function (payload = {}) {
  const file = 'node_modules/slugify/slugify.js';
  const seen = { tampered: fs.readFileSync(file, 'utf8').includes('TAMPERED'), extra: fs.existsSync('node_modules/extra.txt') };
  if (payload.tamper) {
    fs.appendFileSync(file, '\\n// TAMPERED');
    fs.writeFileSync('node_modules/extra.txt', 'x');
  }
  return seen;
}`;

let host;
let stateDir;

before(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-prepared-test-'));
  host = await startBoxHost({ stateDir });
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
});

after(async () => {
  await host?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** Registers `name`: package.json (its own package name, so each test has its own digest), lockfile, index. */
function define(name, { dependencies, lock, index = LIST_INDEX }) {
  const manifest = { name: name.replaceAll('/', '-'), private: true, type: 'module', dependencies };
  registerSandbox(name, {
    files: [
      { path: 'package.json', content: JSON.stringify(manifest) },
      { path: 'package-lock.json', content: typeof lock === 'string' ? lock : JSON.stringify(lock, null, 2) },
      { path: 'index.mjs', content: index },
    ],
  });
}

/** One Run: `{ status, body, install, requests, ms }` (`install`: the install phase's desc). */
async function run(name, payload = {}) {
  const started = performance.now();
  const response = await runSandbox(name, payload);
  const ms = performance.now() - started;
  const requestsAtResponse = { ...host.counters().requests };
  const timing = response.headers.get('server-timing') ?? '';
  const install = /install;desc="([^"]+)"/.exec(timing)?.[1];
  return { status: response.status, body: await response.json(), install, timing, ms, requestsAtResponse };
}

async function snapshots() {
  const response = await fetch(`${host.baseUrl}/v2/sandboxes/snapshots`, {
    headers: { authorization: `Bearer ${host.token}` },
  });
  assert.equal(response.status, 200);
  return (await response.json()).snapshots;
}

/** Waits until the host has answered `count` stops (a Box is stopped after its Response). */
async function untilStopped(count) {
  const deadline = Date.now() + 20_000;
  while ((host.counters().requests.stop ?? 0) < count) {
    assert.ok(Date.now() < deadline, `expected ${count} stops, have ${host.counters().requests.stop ?? 0}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the host keeps `count` snapshots (they are taken after the Response). */
async function untilSnapshots(count) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const list = await snapshots();
    if (list.length >= count) return list;
    assert.ok(Date.now() < deadline, `expected ${count} snapshots, have ${list.length}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits for one snapshot that is not among `known` (ids) and returns it. */
async function newSnapshot(known) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const fresh = (await snapshots()).filter((s) => !known.has(s.id));
    if (fresh.length === 1) return fresh[0];
    assert.ok(fresh.length === 0 && Date.now() < deadline, `expected one new snapshot, have ${fresh.length}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const snapshotIds = async () => new Set((await snapshots()).map((s) => s.id));

const installDigest = (name) => listSandboxes().find((d) => d.name === name).install.digest;

test('the second Run of a Definition with dependencies starts from the prepared project: no install, 3 requests before stop', async (t) => {
  define('prep/second', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK });
  const have = (await snapshots()).length;
  host.resetCounters();
  const first = await run('prep/second', { title: 'First Run' });
  assert.deepEqual([first.status, first.body], [200, { installed: ['slugify'], slug: 'first-run' }]);
  assert.equal(first.install, 'fresh');
  assert.equal(host.counters().requests.cmd, 2, 'install and exec');
  await untilSnapshots(have + 1);
  // The first Run stops its Box after its Response: counted before the reset, not in the second.
  await untilStopped(1);

  host.resetCounters();
  const second = await run('prep/second', { title: 'Second Run' });
  assert.deepEqual([second.status, second.body], [200, { installed: ['slugify'], slug: 'second-run' }]);
  assert.equal(second.install, 'prepared');
  assert.match(second.timing, /install;desc="prepared";dur=0\.0/);
  // Before the Response: create-from-snapshot, write, exec. A plain JSON result is answered at
  // its frame, so the stop (sent once the process exits) may already be counted by then.
  const { stop: _stopRace, ...beforeResponse } = second.requestsAtResponse;
  assert.deepEqual(
    beforeResponse,
    { create: 1, 'fs/write': 1, cmd: 1 },
    'create-from-snapshot, write, exec (no install) before the Response',
  );
  await untilStopped(1);
  assert.deepEqual(host.counters().requests, { create: 1, 'fs/write': 1, cmd: 1, stop: 1 }, 'then stop');
  t.diagnostic(
    `first run ${first.ms.toFixed(0)} ms (${first.timing}); prepared run ${second.ms.toFixed(0)} ms (${second.timing})`,
  );
});

test('Definitions with different install digests get different prepared trees', async () => {
  define('prep/slug', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK });
  define('prep/pad', { dependencies: { 'left-pad': '1.3.0' }, lock: LEFT_PAD_LOCK });
  assert.notEqual(installDigest('prep/slug'), installDigest('prep/pad'));
  const have = (await snapshots()).length;
  assert.equal((await run('prep/slug')).install, 'fresh');
  assert.equal((await run('prep/pad')).install, 'fresh');
  await untilSnapshots(have + 2);
  const slug = await run('prep/slug', { title: 'A B' });
  const pad = await run('prep/pad', { title: 'A B' });
  assert.deepEqual([slug.install, slug.body], ['prepared', { installed: ['slugify'], slug: 'a-b' }]);
  assert.deepEqual([pad.install, pad.body], ['prepared', { installed: ['left-pad'], slug: null }]);
});

test('a handler edit keeps the install digest; a lockfile change makes a new one and installs fresh', async () => {
  define('prep/lock', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK });
  const digest = installDigest('prep/lock');
  const have = (await snapshots()).length;
  assert.equal((await run('prep/lock')).install, 'fresh');
  await untilSnapshots(have + 1);

  define('prep/lock', {
    dependencies: { slugify: '1.6.9' },
    lock: SLUGIFY_LOCK,
    index: `${LIST_INDEX}\n// an edited handler`,
  });
  assert.equal(installDigest('prep/lock'), digest);
  assert.equal((await run('prep/lock')).install, 'prepared');

  define('prep/lock', { dependencies: { slugify: '1.6.9' }, lock: JSON.stringify(SLUGIFY_LOCK) });
  assert.notEqual(installDigest('prep/lock'), digest);
  const known = await snapshotIds();
  const changed = await run('prep/lock', { title: 'X Y' });
  assert.deepEqual(
    [changed.status, changed.install, changed.body],
    [200, 'fresh', { installed: ['slugify'], slug: 'x-y' }],
  );
  await newSnapshot(known);
});

test('a damaged prepared project (a file deleted from its tree, a bad record) falls back to a fresh install and the Run succeeds', async () => {
  define('prep/damaged', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK });
  let known = await snapshotIds();
  assert.equal((await run('prep/damaged')).install, 'fresh');
  const newest = await newSnapshot(known);
  fs.rmSync(path.join(stateDir, 'snapshots', newest.id, 'tree', 'project', 'node_modules', 'slugify', 'slugify.js'));

  known = await snapshotIds();
  const afterDelete = await run('prep/damaged', { title: 'Still Works' });
  assert.deepEqual(
    [afterDelete.status, afterDelete.install, afterDelete.body],
    [200, 'fresh-fallback', { installed: ['slugify'], slug: 'still-works' }],
  );
  const again = await newSnapshot(known);
  assert.ok(!(await snapshots()).some((s) => s.id === newest.id), 'the damaged snapshot is removed');

  fs.writeFileSync(path.join(stateDir, 'snapshots', again.id, 'snapshot.json'), 'not a record');
  known = await snapshotIds();
  const afterRecord = await run('prep/damaged', { title: 'Bad Record' });
  assert.deepEqual(
    [afterRecord.status, afterRecord.install, afterRecord.body],
    [200, 'fresh-fallback', { installed: ['slugify'], slug: 'bad-record' }],
  );

  await newSnapshot(known);
  assert.equal((await run('prep/damaged')).install, 'prepared', 'prepared again after the fallback');
});

test('concurrent first Runs of one digest install once; the others start from its prepared project', async () => {
  define('prep/concurrent', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK });
  host.resetCounters();
  const runs = await Promise.all([0, 1, 2, 3].map((i) => run('prep/concurrent', { title: `Run ${i}` })));
  assert.deepEqual(
    runs.map((r) => [r.status, r.body.slug]),
    [0, 1, 2, 3].map((i) => [200, `run-${i}`]),
  );
  assert.deepEqual(runs.map((r) => r.install).sort(), ['fresh', 'prepared', 'prepared', 'prepared']);
  const { requests } = host.counters();
  assert.equal(requests.snapshot, 1);
  // The clean-up before the snapshot is part of the install's command (run::prepared::seal).
  assert.equal(requests.cmd, 1 + 4, 'one install, four execs');
});

test('a Run waiting for another Run to prepare its project rejects at once when its signal fires', async () => {
  define('prep/abort', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK });
  const known = await snapshotIds();
  const owner = run('prep/abort', { title: 'Owner' });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const controller = new AbortController();
  const waiting = runSandbox('prep/abort', {}, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error('caller gave up')), 100);
  const settled = waiting.then(
    () => 'resolved',
    () => 'rejected',
  );
  assert.equal(await Promise.race([settled, owner.then(() => 'owner answered first')]), 'rejected');
  await assert.rejects(waiting, /caller gave up/);
  const done = await owner;
  assert.deepEqual([done.status, done.install], [200, 'fresh']);
  await newSnapshot(known);
});

test('a Box cannot change the prepared tree that later Runs see', async () => {
  define('prep/tamper', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK, index: TAMPER_INDEX });
  const have = (await snapshots()).length;
  // The first Run writes into its node_modules: the snapshot was taken before its handler ran
  // (run::prepared::seal), so the next Run starts from the tree the install left.
  const first = await run('prep/tamper', { tamper: true });
  assert.deepEqual([first.install, first.body], ['fresh', { tampered: false, extra: false }]);
  await untilSnapshots(have + 1);
  const second = await run('prep/tamper');
  assert.deepEqual([second.install, second.body], ['prepared', { tampered: false, extra: false }]);
  // A prepared Run writes into its private copy; the next one sees the original.
  const third = await run('prep/tamper', { tamper: true });
  assert.deepEqual([third.install, third.body], ['prepared', { tampered: false, extra: false }]);
  const fourth = await run('prep/tamper');
  assert.deepEqual([fourth.install, fourth.body], ['prepared', { tampered: false, extra: false }]);
});

test('what a handler leaves in its project never reaches the prepared project: its index.mjs made a directory, a .pnp.cjs below the root', async () => {
  const POISON_INDEX = `import fs from 'node:fs';
export default function (payload = {}) {
  if (payload.poison) {
    fs.rmSync('index.mjs');
    fs.mkdirSync('index.mjs/deeper', { recursive: true });
    fs.mkdirSync('lib', { recursive: true });
    fs.writeFileSync('lib/.pnp.cjs', 'module.exports = "seen by the next Definition"');
  }
  return { pnp: fs.existsSync('lib/.pnp.cjs'), slugify: fs.existsSync('node_modules/slugify') };
}`;
  define('prep/poison', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK, index: POISON_INDEX });
  const known = await snapshotIds();
  const first = await run('prep/poison', { poison: true });
  assert.deepEqual([first.status, first.install, first.body], [200, 'fresh', { pnp: true, slugify: true }]);
  await newSnapshot(known);
  // The next Runs of the digest start from the prepared project, which holds none of it.
  for (let i = 0; i < 2; i += 1) {
    const next = await run('prep/poison');
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.deepEqual([next.install, next.body], ['prepared', { pnp: false, slugify: true }]);
  }
});

test('listPreparedProjects lists the kept snapshots; dropPreparedProject(digest) deletes them and the next Run installs', async () => {
  define('prep/drop', { dependencies: { slugify: '1.6.9' }, lock: SLUGIFY_LOCK });
  const known = await snapshotIds();
  assert.equal((await run('prep/drop')).install, 'fresh');
  const kept = await newSnapshot(known);
  const listed = await listPreparedProjects();
  assert.deepEqual(listed.map((p) => p.id).sort(), [...(await snapshotIds())].sort());
  const item = listed.find((p) => p.id === kept.id);
  assert.ok(item.sizeBytes > 0 && item.createdAt > 0, JSON.stringify(item));

  assert.equal(await dropPreparedProject(installDigest('prep/drop')), 1);
  assert.ok(!(await snapshotIds()).has(kept.id));
  const before = await snapshotIds();
  assert.equal((await run('prep/drop')).install, 'fresh');
  await newSnapshot(before);
  await assert.rejects(dropPreparedProject('not-a-digest'), { code: 'SANDBOX_INVALID_ARGUMENT' });
});

test('the host keeps its snapshots across restarts and bounds them', async () => {
  const restarted = await startBoxHost({ stateDir, maxSnapshots: 2 });
  try {
    const response = await fetch(`${restarted.baseUrl}/v2/sandboxes/snapshots`, {
      headers: { authorization: `Bearer ${restarted.token}` },
    });
    const { snapshots: kept } = await response.json();
    assert.equal(kept.length, 2, 'the least recently used snapshots beyond maxSnapshots are removed');
    assert.equal(fs.readdirSync(path.join(stateDir, 'snapshots')).length, 2);
  } finally {
    await restarted.close();
  }
});
