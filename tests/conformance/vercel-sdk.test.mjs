// The official @vercel/sandbox 3.5.0 SDK against the local Box host (fetch seam, protocol note §3).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Sandbox, Snapshot } from '@vercel/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';

const VERCEL_API = 'https://vercel.com/api';
let host;
let sandbox;
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-sdk-state-'));

before(async () => {
  host = await startBoxHost({ stateDir });
});

after(async () => {
  if (sandbox) await sandbox.stop().catch(() => {});
  await host.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

function sdkParams() {
  return {
    token: host.token,
    teamId: 'team_local',
    projectId: 'prj_local',
    fetch: (url, init) => globalThis.fetch(String(url).replace(VERCEL_API, host.baseUrl), init),
  };
}

test('the official SDK drives a Box end to end', async (t) => {
  sandbox = await Sandbox.create(sdkParams());
  assert.match(sandbox.sandboxId ?? sandbox.name, /^sbx_[0-9a-f]{24}$/);

  await t.test('writeFiles: text, binary, nested path', async () => {
    await sandbox.writeFiles([
      { path: 'hello.txt', content: Buffer.from('héllo€ text\n') },
      { path: 'bin/data.bin', content: Buffer.from([0, 1, 2, 255, 254, 10, 13]) },
      { path: 'deep/nested/dir/run.mjs', content: Buffer.from('console.log("nested ok")\n'), mode: 0o755 },
    ]);
    const text = await sandbox.readFileToBuffer({ path: 'hello.txt' });
    assert.equal(text.toString('utf8'), 'héllo€ text\n');
    const bin = await sandbox.readFileToBuffer({ path: '/vercel/sandbox/bin/data.bin' });
    assert.deepEqual([...bin], [0, 1, 2, 255, 254, 10, 13]);
    const mode = await sandbox.runCommand('stat', ['-c', '%a', 'deep/nested/dir/run.mjs']);
    assert.equal((await mode.stdout()).trim(), '755');
  });

  await t.test('runCommand waiting: stdout, stderr, non-ASCII, exit codes', async () => {
    const ok = await sandbox.runCommand('node', [
      '-e',
      'process.stdout.write("héllo€ out\\n"); process.stderr.write("érr€\\n")',
    ]);
    assert.equal(ok.exitCode, 0);
    assert.equal(await ok.stdout(), 'héllo€ out\n');
    assert.equal(await ok.stderr(), 'érr€\n');

    const big = await sandbox.runCommand('node', ['-e', 'process.stdout.write("€".repeat(100000))']);
    assert.equal(await big.stdout(), '€'.repeat(100000));

    const failing = await sandbox.runCommand('node', ['-e', 'console.error("boom"); process.exit(3)']);
    assert.equal(failing.exitCode, 3);
    assert.equal(await failing.stderr(), 'boom\n');

    const nested = await sandbox.runCommand({ cmd: 'node', args: ['run.mjs'], cwd: '/vercel/sandbox/deep/nested/dir' });
    assert.equal(nested.exitCode, 0);
    assert.equal(await nested.stdout(), 'nested ok\n');

    const env = await sandbox.runCommand({
      cmd: 'node',
      args: ['-e', 'console.log(process.env.GREETING)'],
      env: { GREETING: 'hi there' },
    });
    assert.equal(await env.stdout(), 'hi there\n');
  });

  await t.test('runCommand detached: wait, stdout, kill', async () => {
    const quick = await sandbox.runCommand({
      cmd: 'node',
      args: ['-e', 'setTimeout(() => { console.log("done€"); process.exit(5) }, 200)'],
      detached: true,
    });
    assert.equal(quick.exitCode, null);
    const finished = await quick.wait();
    assert.equal(finished.exitCode, 5);
    assert.equal(await quick.stdout(), 'done€\n');

    const long = await sandbox.runCommand({
      cmd: 'node',
      args: ['-e', 'console.log("started"); setInterval(() => {}, 1000)'],
      detached: true,
    });
    for await (const log of long.logs()) {
      assert.deepEqual(log, { stream: 'stdout', data: 'started\n' });
      break;
    }
    const fetched = await sandbox.getCommand(long.cmdId);
    assert.equal(fetched.exitCode, null);
    await long.kill('SIGKILL');
    const killed = await long.wait();
    assert.equal(killed.exitCode, 137);
    assert.equal(await long.stdout(), 'started\n');
  });

  await t.test('readFile: content and missing file', async () => {
    const stream = await sandbox.readFile({ path: 'hello.txt' });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(Buffer.concat(chunks).toString('utf8'), 'héllo€ text\n');
    assert.equal(await sandbox.readFile({ path: 'does-not-exist.txt' }), null);
  });

  await t.test('mkDir is not recursive', async () => {
    await sandbox.mkDir('made');
    const ls = await sandbox.runCommand('sh', ['-c', 'test -d /vercel/sandbox/made && echo yes']);
    assert.equal(await ls.stdout(), 'yes\n');
    await assert.rejects(sandbox.mkDir('missing/child'), /Status code 400/);
  });

  await t.test('stop, then operations fail', async () => {
    await sandbox.stop();
    assert.equal(sandbox.status, 'stopped');
    await assert.rejects(sandbox.runCommand('true'), (err) => {
      assert.equal(err.response?.status, 410);
      return true;
    });
    await assert.rejects(
      sandbox.writeFiles([{ path: 'x.txt', content: Buffer.from('x') }]),
      (err) => err.response?.status === 410,
    );
  });
  sandbox = undefined;

  // Exact wire traffic: after stop, each 410 makes the SDK resume (`GET /v2/sandboxes/:name`)
  // and retry once, so the two post-stop calls cost 2 + 1 requests each.
  assert.deepEqual(host.counters(), {
    requests: {
      create: 1,
      'fs/write': 3,
      'fs/read': 4,
      cmd: 11,
      'cmd/wait': 2,
      'cmd/logs': 3,
      'cmd/get': 1,
      'cmd/kill': 1,
      'fs/mkdir': 2,
      stop: 1,
      'sandbox/get': 2,
    },
    total: 31,
  });
});

test('snapshots: sandbox.snapshot(), Snapshot.get and list, create from a snapshot, snapshot.delete()', async () => {
  const source = await Sandbox.create({ ...sdkParams(), name: 'snapshot-source' });
  await source.writeFiles([{ path: 'kept/file.txt', content: Buffer.from('kept across the snapshot') }]);
  const snapshot = await source.snapshot();
  assert.match(snapshot.snapshotId, /^snap_[0-9a-f]{24}$/);
  assert.equal(snapshot.status, 'created');
  assert.ok(snapshot.sizeBytes > 0);
  await assert.rejects(source.runCommand('true'), 'the snapshot stopped the source session');

  const got = await Snapshot.get({ ...sdkParams(), snapshotId: snapshot.snapshotId });
  assert.equal(got.snapshotId, snapshot.snapshotId);
  const listed = await (await Snapshot.list({ ...sdkParams(), name: 'snapshot-source' })).toArray();
  assert.deepEqual(
    listed.map((s) => s.id),
    [snapshot.snapshotId],
  );
  assert.deepEqual(await (await Snapshot.list({ ...sdkParams(), name: 'no-such-sandbox' })).toArray(), []);

  const restored = await Sandbox.create({
    ...sdkParams(),
    source: { type: 'snapshot', snapshotId: snapshot.snapshotId },
  });
  try {
    assert.equal((await restored.readFileToBuffer({ path: 'kept/file.txt' })).toString(), 'kept across the snapshot');
    await restored.writeFiles([{ path: 'kept/file.txt', content: Buffer.from('changed in one Box') }]);
  } finally {
    await restored.stop();
  }
  const again = await Sandbox.create({ ...sdkParams(), source: { type: 'snapshot', snapshotId: snapshot.snapshotId } });
  try {
    assert.equal(
      (await again.readFileToBuffer({ path: 'kept/file.txt' })).toString(),
      'kept across the snapshot',
      'each Box gets a private copy',
    );
  } finally {
    await again.stop();
  }

  await snapshot.delete();
  await assert.rejects(
    Snapshot.get({ ...sdkParams(), snapshotId: snapshot.snapshotId }),
    (err) => err.response?.status === 404,
  );
  await assert.rejects(
    Sandbox.create({ ...sdkParams(), source: { type: 'snapshot', snapshotId: snapshot.snapshotId } }),
    (err) => err.response?.status === 410 && err.json?.error?.code === 'snapshot_not_found',
  );
});
