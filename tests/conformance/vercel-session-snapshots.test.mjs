// Issue 35 snapshot and fork rows, Vercel protocol: the official @vercel/sandbox 3.5.0 SDK's own
// calls (`sandbox.snapshot()`, `Sandbox.create({ source: { type: 'snapshot' } })`, `Sandbox.fork`,
// `Snapshot.list` / `get` / `delete`) against the local Box host, and our Vercel client's requests
// for the same rows recorded by a proxy in front of it and compared with the SDK's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Sandbox, Snapshot } from '@vercel/sandbox';
import {
  configureSandbox,
  deleteSandboxSnapshot,
  forkSandboxSession,
  listSandboxSnapshots,
  openSandboxSession,
} from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { startRecordingProxy, vercelSdkParams } from '../support/recording-proxy.mjs';

let host;
let proxy;
let proxyUrl;
/** Requests through the proxy: `{ method, path, query, body }`, ids replaced by placeholders. */
let recorded = [];

before(async () => {
  host = await startBoxHost();
  proxy = await startRecordingProxy(host.baseUrl, (req, url, body) => {
    const isJson = (req.headers['content-type'] ?? '').startsWith('application/json') && body.length > 0;
    recorded.push({
      method: req.method,
      path: url.pathname
        .replace(/\/sessions\/[^/]+/, '/sessions/:sid')
        .replace(/\/snapshots\/snap_[^/]+/, '/snapshots/:id')
        .replace(/^\/v2\/sandboxes\/(?!sessions|snapshots)[^/]+\/fork$/, '/v2/sandboxes/:name/fork'),
      query: Object.fromEntries([...url.searchParams].filter(([key]) => key !== 'teamId')),
      body: isJson ? JSON.parse(body.toString('utf8')) : undefined,
    });
  });
  proxyUrl = proxy.url;
});

after(async () => {
  await proxy.close();
  await host.close();
});

const sdkParams = () => vercelSdkParams(host, proxyUrl);

const useOurVercelClient = () =>
  configureSandbox({
    provider: 'vercel',
    vercel: { token: host.token, teamId: 'team_local', projectId: 'prj_local', baseUrl: proxyUrl },
  });

/** The recorded requests of `routes` (`'METHOD path'`), in order. */
const of = (...routes) => recorded.filter((r) => routes.includes(`${r.method} ${r.path}`));

test('the SDK: snapshot() stops the sandbox, create from it sees the file, Snapshot.get/list/delete', async () => {
  const sandbox = await Sandbox.create(sdkParams());
  await sandbox.writeFiles([{ path: 'kept.txt', content: Buffer.from('kept by the SDK\n') }]);
  const snapshot = await sandbox.snapshot({ expiration: 0 });
  assert.match(snapshot.snapshotId, /^snap_/);
  assert.equal(snapshot.status, 'created');
  assert.equal(sandbox.status, 'stopped', 'a snapshot stops the sandbox (§6.9)');

  const restored = await Sandbox.create({
    ...sdkParams(),
    source: { type: 'snapshot', snapshotId: snapshot.snapshotId },
  });
  try {
    assert.equal((await restored.readFileToBuffer({ path: 'kept.txt' })).toString(), 'kept by the SDK\n');
  } finally {
    await restored.stop();
  }
  const got = await Snapshot.get({ ...sdkParams(), snapshotId: snapshot.snapshotId });
  assert.equal(got.sourceSessionId, snapshot.sourceSessionId);
  const listed = await Snapshot.list(sdkParams());
  assert.ok(listed.snapshots.some((s) => s.id === snapshot.snapshotId));
  await got.delete();
  assert.equal(got.status, 'deleted');
  await assert.rejects(Snapshot.get({ ...sdkParams(), snapshotId: snapshot.snapshotId }), /404|not found/i);
  await assert.rejects(
    Sandbox.create({ ...sdkParams(), source: { type: 'snapshot', snapshotId: snapshot.snapshotId } }),
    /410|snapshot/i,
  );
});

test('the SDK: Sandbox.fork copies a running sandbox, which keeps running', async () => {
  const source = await Sandbox.create(sdkParams());
  try {
    await source.writeFiles([{ path: 'shared.txt', content: Buffer.from('before\n') }]);
    const fork = await Sandbox.fork({ ...sdkParams(), sourceSandbox: source.name, timeout: 60_000 });
    try {
      assert.equal((await fork.readFileToBuffer({ path: 'shared.txt' })).toString(), 'before\n');
      await fork.writeFiles([{ path: 'shared.txt', content: Buffer.from('fork\n') }]);
      assert.equal(source.status, 'running');
      assert.equal((await source.readFileToBuffer({ path: 'shared.txt' })).toString(), 'before\n');
    } finally {
      await fork.stop();
    }
  } finally {
    await source.stop();
  }
  await assert.rejects(Sandbox.fork({ ...sdkParams(), sourceSandbox: source.name }), /410|stopped/i);
});

test('our client sends the SDK’s requests for snapshot, create from a snapshot, fork, list and delete', async () => {
  // The SDK's.
  recorded = [];
  const sandbox = await Sandbox.create(sdkParams());
  const fork = await Sandbox.fork({ ...sdkParams(), sourceSandbox: sandbox.name, timeout: 60_000 });
  await fork.stop();
  const withExpiry = await sandbox.snapshot({ expiration: 3_600_000 });
  const restored = await Sandbox.create({
    ...sdkParams(),
    source: { type: 'snapshot', snapshotId: withExpiry.snapshotId },
  });
  const plain = await restored.snapshot();
  await Snapshot.list(sdkParams());
  await withExpiry.delete();
  await plain.delete();
  const sdk = recorded;

  // Ours, the same rows.
  useOurVercelClient();
  recorded = [];
  const session = await openSandboxSession({ provider: 'vercel' });
  const forked = await forkSandboxSession(session, { timeout: 60_000 });
  await forked.close();
  const first = await session.snapshot({ expiration: 3_600_000 });
  const again = await openSandboxSession({ snapshotId: first.snapshotId });
  const second = await again.snapshot();
  assert.ok((await listSandboxSnapshots()).some((s) => s.snapshotId === second.snapshotId));
  assert.equal(await deleteSandboxSnapshot(first.snapshotId), true);
  assert.equal(await deleteSandboxSnapshot(second.snapshotId), true);
  const ours = recorded;

  const row = (requests, route) => requests.filter((r) => `${r.method} ${r.path}` === route);
  const snapshotRoute = 'POST /v2/sandboxes/sessions/:sid/snapshot';
  assert.deepEqual(
    row(ours, snapshotRoute).map((r) => r.body),
    row(sdk, snapshotRoute).map((r) => r.body),
  );
  assert.deepEqual(
    row(sdk, snapshotRoute).map((r) => r.body),
    [{ expiration: 3_600_000 }, undefined],
  );
  const forkRoute = 'POST /v2/sandboxes/:name/fork';
  assert.deepEqual(row(ours, forkRoute), row(sdk, forkRoute));
  assert.deepEqual(row(sdk, forkRoute)[0].body, { timeout: 60_000 });
  assert.deepEqual(row(sdk, forkRoute)[0].query, { projectId: 'prj_local' });
  // Create from a snapshot: the same `source` (the rest of a Session's create is its own).
  const sources = (requests) =>
    row(requests, 'POST /v3/sandboxes')
      .map((r) => r.body.source)
      .filter(Boolean);
  assert.deepEqual(
    sources(ours).map((s) => s.type),
    ['snapshot'],
  );
  assert.deepEqual(sources(sdk), [{ type: 'snapshot', snapshotId: withExpiry.snapshotId }]);
  assert.deepEqual(sources(ours), [{ type: 'snapshot', snapshotId: first.snapshotId }]);
  // List and delete: the SDK's routes; our list names the project as the SDK does.
  const listRoute = 'GET /v2/sandboxes/snapshots';
  assert.equal(row(ours, listRoute).length, 1);
  assert.equal(row(ours, listRoute)[0].query.project, row(sdk, listRoute)[0].query.project);
  const deleteRoute = 'DELETE /v2/sandboxes/snapshots/:id';
  assert.equal(row(ours, deleteRoute).length, 2);
  assert.deepEqual(
    row(ours, deleteRoute).map((r) => r.body),
    row(sdk, deleteRoute).map((r) => r.body),
  );
});
