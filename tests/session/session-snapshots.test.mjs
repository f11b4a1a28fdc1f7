// Session snapshots and forks on the local provider (a real local Box host, real processes):
// `snapshot()` stops the Box and `openSandboxSession({ snapshotId })` sees its files; a fork
// copies a running Box that keeps running; Session snapshots are listed and deleted apart from
// prepared projects' (a prepared project's snapshot is neither listed, deleted nor opened here).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  deleteSandboxSnapshot,
  forkSandboxSession,
  listPreparedProjects,
  listSandboxSnapshots,
  openSandboxSession,
} from '@vite-hub/sandbox';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SnapshotStore } from '../../pkg-template/box-host/engine/snapshots.mjs';
import { useLocalHost } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

/** A request to the host with its token. */
async function hostCall(method, path, body) {
  const response = await fetch(`${host.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

test('snapshot() stops the Box, and a Session opened from it sees the files the first one wrote', async () => {
  const first = await openSandboxSession();
  await first.write('notes/a.txt', 'from the first Session\n');
  await first.exec('sh', ['-c', 'echo made by a command > built.txt']);
  const snapshot = await first.snapshot();
  assert.match(snapshot.snapshotId, /^snap_/);
  assert.equal(snapshot.sourceSessionId, first.id);
  assert.ok(snapshot.sizeBytes > 0 && snapshot.createdAt > 0);
  assert.equal(snapshot.expiresAt, undefined);
  // The snapshot stopped the Box: the Session says so and refuses operations, naming the snapshot.
  assert.equal(first.status, 'stopped');
  assert.equal((await hostCall('GET', `/v2/sandboxes/sessions/${first.id}`)).body.session.status, 'stopped');
  await assert.rejects(first.readText('notes/a.txt'), (error) => {
    assert.equal(error.code, 'SANDBOX_INVALID_STATE');
    assert.equal(error.status, 409);
    assert.match(error.message, /stopped by its snapshot\(\)/);
    return true;
  });
  // Snapshot of a stopped Session: 409.
  await assert.rejects(first.snapshot(), (error) => error.code === 'SANDBOX_INVALID_STATE' && error.status === 409);
  await first.close(); // nothing left to stop: resolves

  const second = await openSandboxSession({ snapshotId: snapshot.snapshotId });
  try {
    assert.equal(await second.readText('notes/a.txt'), 'from the first Session\n');
    assert.equal(await second.readText('built.txt'), 'made by a command\n');
    assert.equal(
      (await hostCall('GET', `/v2/sandboxes/sessions/${second.id}`)).body.session.sourceSnapshotId,
      snapshot.snapshotId,
    );
  } finally {
    await second.close();
  }
  assert.equal(await deleteSandboxSnapshot(snapshot.snapshotId), true);
});

test('snapshot({ expiration }) is kept that long; a closed Session cannot be snapshotted (409)', async () => {
  const session = await openSandboxSession();
  await session.write('x.txt', 'x');
  const before = Date.now();
  const snapshot = await session.snapshot({ expiration: 3_600_000 });
  assert.ok(snapshot.expiresAt >= before + 3_600_000 && snapshot.expiresAt <= Date.now() + 3_600_000);
  assert.equal(await deleteSandboxSnapshot(snapshot.snapshotId), true);

  const closed = await openSandboxSession();
  await closed.close();
  await assert.rejects(closed.snapshot(), (error) => {
    assert.equal(error.code, 'SANDBOX_INVALID_STATE');
    assert.equal(error.status, 409);
    return true;
  });
  await assert.rejects(closed.snapshot({ expiration: -1 }), (error) => error.code === 'SANDBOX_INVALID_STATE');
  const open = await openSandboxSession();
  try {
    await assert.rejects(open.snapshot({ expiration: -1 }), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
    await assert.rejects(open.snapshot({ expires: 1 }), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(open.status, 'running', 'a refused argument sends nothing');
  } finally {
    await open.close();
  }
});

test('a fork sees the source’s files; the source keeps running, and the two diverge', async () => {
  const source = await openSandboxSession();
  const server = await source.spawn('sh', ['-c', 'echo started; sleep 300']);
  let fork;
  let byId;
  try {
    await source.write('shared.txt', 'before the fork\n');
    await source.exec('sh', ['-c', 'mkdir -p deep/er && echo nested > deep/er/n.txt && ln -s shared.txt link.txt']);
    fork = await forkSandboxSession(source);
    assert.notEqual(fork.id, source.id);
    assert.equal(fork.status, 'running');
    assert.equal(await fork.readText('shared.txt'), 'before the fork\n');
    assert.equal(await fork.readText('deep/er/n.txt'), 'nested\n');
    assert.equal((await fork.exec('readlink', ['link.txt'])).stdout, 'shared.txt\n');
    // The source still runs, its spawned Command too.
    assert.equal(source.status, 'running');
    assert.equal((await hostCall('GET', `/v2/sandboxes/sessions/${source.id}`)).body.session.status, 'running');
    const again = await source.command(server.id);
    assert.equal(
      (await hostCall('GET', `/v2/sandboxes/sessions/${source.id}/cmd/${again.id}`)).body.command.exitCode,
      null,
    );
    // They diverge: each sees only its own writes.
    await source.write('shared.txt', 'source after\n');
    await fork.write('shared.txt', 'fork after\n');
    await fork.write('only-fork.txt', 'f');
    assert.equal(await source.readText('shared.txt'), 'source after\n');
    assert.equal(await fork.readText('shared.txt'), 'fork after\n');
    assert.equal(await source.exists('only-fork.txt'), false);
    // By id (the local host names a Session's Box by its id), with a lifetime of its own.
    byId = await forkSandboxSession(source.id, { timeout: 60_000 });
    assert.equal(await byId.readText('shared.txt'), 'source after\n');
    assert.equal((await hostCall('GET', `/v2/sandboxes/sessions/${byId.id}`)).body.session.timeout, 60_000);
  } finally {
    await server.kill('SIGKILL');
    await fork?.close();
    await byId?.close();
    await source.close();
  }
  // A closed source: 409 from its handle, and by id the host says it is stopped (410).
  await assert.rejects(forkSandboxSession(source), (error) => error.code === 'SANDBOX_INVALID_STATE');
  await assert.rejects(forkSandboxSession(source.id), (error) => {
    assert.equal(error.code, 'SANDBOX_TRANSPORT_ERROR');
    assert.equal(error.details.status, 410);
    assert.equal(error.details.operation, 'fork');
    return true;
  });
  await assert.rejects(forkSandboxSession('sbx_unknown'), (error) => {
    assert.equal(error.code, 'SANDBOX_NOT_FOUND');
    assert.equal(error.details.operation, 'fork');
    return true;
  });
  await assert.rejects(forkSandboxSession(42), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
  await assert.rejects(forkSandboxSession('a/b'), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
});

test('a fork never follows a symlink out of the Box: a link to a host file stays a link', async () => {
  const source = await openSandboxSession();
  let fork;
  try {
    await source.exec('sh', ['-c', 'ln -s /etc/hostname host-link && mkdir d && ln -s / d/root']);
    fork = await forkSandboxSession(source);
    assert.equal((await fork.exec('readlink', ['host-link'])).stdout, '/etc/hostname\n');
    assert.equal((await fork.exec('readlink', ['d/root'])).stdout, '/\n');
    // Copied as links, not as the host's files: the fork's work directory holds nothing else.
    assert.equal((await fork.exec('find', ['.', '-type', 'f'])).stdout, '');
  } finally {
    await fork?.close();
    await source.close();
  }
});

test('a fork racing a source that swaps directories for symlinks to /etc copies no host file', async () => {
  const source = await openSandboxSession();
  // Swaps d1..d8 between directories and symlinks to the host's /etc (read-only in the Box) as fast as it can.
  const racer = await source.spawn('sh', [
    '-c',
    'while true; do for i in 1 2 3 4 5 6 7 8; do rm -rf d$i; mkdir d$i; echo mine > d$i/own.txt; done; for i in 1 2 3 4 5 6 7 8; do rm -rf d$i; ln -s /etc d$i; done; done',
  ]);
  try {
    for (let i = 0; i < 12; i += 1) {
      const fork = await forkSandboxSession(source);
      try {
        // Whatever state each d was copied in, nothing of /etc came with it: only the Box's own
        // file, or the link itself.
        const found = await fork.exec('find', ['.', '-mindepth', '1', '-not', '-regex', '[.]/d[1-8]\\(/own[.]txt\\)?']);
        assert.equal(found.stdout, '', `fork ${i} holds ${found.stdout}`);
      } finally {
        await fork.close();
      }
    }
  } finally {
    await racer.kill('SIGKILL');
    await source.close();
  }
});

test('listSandboxSnapshots() lists it; deleteSandboxSnapshot() removes it, and opening it after is SANDBOX_NOT_FOUND', async () => {
  const session = await openSandboxSession();
  await session.write('keep.txt', 'k');
  const { snapshotId } = await session.snapshot();
  const listed = (await listSandboxSnapshots()).find((s) => s.snapshotId === snapshotId);
  assert.ok(listed, 'the new snapshot is listed');
  assert.equal(listed.sourceSessionId, session.id);
  assert.ok(!(await listPreparedProjects()).some((p) => p.id === snapshotId), 'not a prepared project');

  assert.equal(await deleteSandboxSnapshot(snapshotId), true);
  assert.equal(await deleteSandboxSnapshot(snapshotId), false, 'already gone');
  assert.ok(!(await listSandboxSnapshots()).some((s) => s.snapshotId === snapshotId));
  await assert.rejects(openSandboxSession({ snapshotId }), (error) => {
    assert.equal(error.code, 'SANDBOX_NOT_FOUND');
    assert.equal(error.details.status, 410, "the host's 410 snapshot_not_found");
    assert.equal(error.details.operation, 'create');
    assert.match(error.message, new RegExp(snapshotId));
    return true;
  });
  await assert.rejects(openSandboxSession({ snapshotId: '' }), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
  await assert.rejects(deleteSandboxSnapshot('../x'), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
});

test('a prepared project’s snapshot is not a Session’s: not listed, not deleted, not opened', async () => {
  // A Box snapshotted as a Run's prepare snapshots it (the runtime marks the request).
  const created = await hostCall('POST', '/v3/sandboxes', {});
  assert.equal(created.status, 200);
  const sid = created.body.session.id;
  await hostCall('POST', `/v2/sandboxes/sessions/${sid}/cmd`, {
    command: 'sh',
    args: ['-c', 'mkdir -p node_modules/secret && echo installed > node_modules/secret/index.js'],
    wait: true,
    logs: true,
  });
  const taken = await hostCall('POST', `/v2/sandboxes/sessions/${sid}/snapshot`, { __snapshotKind: 'prepared' });
  assert.equal(taken.status, 200);
  const prepared = taken.body.snapshot.id;
  try {
    assert.ok(
      (await listPreparedProjects()).some((p) => p.id === prepared),
      'a prepared project',
    );
    assert.ok(!(await listSandboxSnapshots()).some((s) => s.snapshotId === prepared), 'not a Session snapshot');
    assert.equal(await deleteSandboxSnapshot(prepared), false, 'not deletable as a Session snapshot');
    assert.equal((await hostCall('GET', `/v2/sandboxes/snapshots/${prepared}`)).status, 200, 'still kept');
    await assert.rejects(openSandboxSession({ snapshotId: prepared }), (error) => error.code === 'SANDBOX_NOT_FOUND');
    // The SDK's own calls (no `kind`) still see every snapshot, as on Vercel.
    assert.ok((await hostCall('GET', '/v2/sandboxes/snapshots')).body.snapshots.some((s) => s.id === prepared));
  } finally {
    await hostCall('DELETE', `/v2/sandboxes/snapshots/${prepared}`);
  }
});

test('hostile arguments are a SandboxError before any request, never a trap', async () => {
  const thrower = () => {
    throw new Error('trap');
  };
  const trapAll = new Proxy({}, { get: thrower, ownKeys: thrower, getOwnPropertyDescriptor: thrower, has: thrower });
  const invalid = (error) => error.code === 'SANDBOX_INVALID_ARGUMENT';
  await assert.rejects(forkSandboxSession(trapAll), invalid);
  await assert.rejects(forkSandboxSession('sbx_x', trapAll), invalid);
  await assert.rejects(openSandboxSession({ snapshotId: trapAll }), invalid);
  await assert.rejects(deleteSandboxSnapshot(Symbol('x')), invalid);
  const session = await openSandboxSession();
  try {
    await assert.rejects(session.snapshot(trapAll), invalid);
    await assert.rejects(
      session.snapshot({
        get expiration() {
          return thrower();
        },
      }),
      invalid,
    );
    await assert.rejects(session.fork(trapAll), invalid);
    assert.equal(session.status, 'running');
    assert.equal((await session.exec('echo', ['still here'])).stdout, 'still here\n');
  } finally {
    await session.close();
  }
});

test('over its bounds the host removes prepared projects before Session snapshots, never the one just taken', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-snapkinds-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const store = new SnapshotStore({ dir: path.join(root, 'snapshots'), maxSnapshots: 2 });
  let boxes = 0;
  const take = (kind) => {
    boxes += 1;
    const dir = path.join(root, `box-${boxes}`);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'f.txt'), String(boxes));
    return store.take(dir, { sourceSessionId: `sbx_${boxes}`, sandboxName: `box-${boxes}`, kind });
  };
  const ids = async () => (await store.list({ sortOrder: 'asc' })).map((r) => r.id);
  const session = await take('session');
  const prepared = await take('prepared');
  // A third: the least recently used is the Session's, but the prepared project goes.
  const newer = await take('prepared');
  assert.deepEqual(await ids(), [session.id, newer.id]);
  assert.ok(!(await ids()).includes(prepared.id));
  // With only Session snapshots besides it, the one just taken stays; the oldest Session's goes.
  const second = await take('session');
  assert.deepEqual(await ids(), [session.id, second.id], 'the prepared project went first');
  const third = await take('session');
  assert.deepEqual(await ids(), [second.id, third.id]);
  assert.deepEqual((await store.list({ kind: 'session' })).map((r) => r.id).sort(), [second.id, third.id].sort());
});
