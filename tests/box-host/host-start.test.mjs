// The local Box host's start (issue 12, first Run): its probes (bwrap, the namespace and network
// tools, a tmpfs mount) run once per process and side by side, and every host of the process gets
// the isolation they found; a start that cannot use its Box root fails with that cause.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The modules the package's own start path loads (dist/), not copies of them.
const boxHostUrl = import.meta.resolve('@vite-hub/sandbox/box-host');
const { startBoxHost } = await import(boxHostUrl);
const isolation = await import(new URL('./engine/isolation.mjs', boxHostUrl).href);

test('the probes run once per process: every caller gets the same answer', async () => {
  const probe = isolation.bubblewrapWorks();
  assert.equal(isolation.bubblewrapWorks(), probe, 'callers share one bwrap probe');
  assert.equal(isolation.hostFeatures(), isolation.hostFeatures(), 'one features probe per process');
  const works = await probe;
  assert.equal(typeof works, 'boolean');
  // A success is kept for the process; a failure is probed again by the next caller.
  if (works) assert.equal(isolation.bubblewrapWorks(), probe);
  else assert.notEqual(isolation.bubblewrapWorks(), probe);
});

test('every host of the process gets the isolation the probes found', async () => {
  const canBwrap = await isolation.bubblewrapWorks();
  const features = await isolation.hostFeatures();
  const expected = isolation.executionAuthority(canBwrap ? 'bubblewrap' : 'none', false, features.netTool !== null);
  const hosts = [];
  try {
    // Two at once (both wait on the same probes) and one after (the probes are done).
    hosts.push(...(await Promise.all([startBoxHost({}), startBoxHost({ isolation: 'auto' })])));
    hosts.push(await startBoxHost({}));
    for (const host of hosts) assert.deepEqual(host.executionAuthority, expected);
    if (canBwrap) {
      const required = await startBoxHost({ isolation: 'bubblewrap' });
      hosts.push(required);
      assert.equal(required.executionAuthority.isolation, 'process');
    } else {
      await assert.rejects(startBoxHost({ isolation: 'bubblewrap' }), /bwrap is missing or cannot create a sandbox/);
    }
  } finally {
    await Promise.all(hosts.map((host) => host.close()));
  }
});

test('a start whose Box root does not exist fails with that cause', async () => {
  const boxRoot = path.join(os.tmpdir(), `vite-hub-no-such-root-${process.pid}`);
  await assert.rejects(startBoxHost({ boxRoot }), (err) => err.code === 'ENOENT' && err.message.includes(boxRoot));
});

test('on a root host the Box root must be reachable by the Box users: a fresh private one of the host is opened for search, one holding other files or below a private directory is refused', async (t) => {
  const features = await isolation.hostFeatures();
  if (!(features.boxUsers && (await isolation.bubblewrapWorks())))
    return t.skip('Box users need a root host with unprivileged bwrap');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-box-root-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  assert.equal(fs.statSync(scratch).mode & 0o777, 0o700);
  const host = await startBoxHost({ boxRoot: scratch });
  try {
    assert.equal(host.boxUsers, true);
    assert.equal(fs.statSync(scratch).mode & 0o777, 0o701, 'search for others, no listing');
  } finally {
    await host.close();
  }
  // A private directory holding other files is not opened: they would be reachable by everyone.
  const holding = path.join(scratch, 'holding');
  fs.mkdirSync(holding, { mode: 0o700 });
  fs.writeFileSync(path.join(holding, 'known.txt'), 'private');
  await assert.rejects(
    startBoxHost({ boxRoot: holding }),
    /is not searchable by other users, whom Box commands run as on a root host, and holds other files/,
  );
  assert.equal(fs.statSync(holding).mode & 0o777, 0o700, 'left as it was');
  const below = path.join(scratch, 'inner', 'boxes');
  fs.mkdirSync(below, { recursive: true });
  fs.chmodSync(path.join(scratch, 'inner'), 0o700);
  await assert.rejects(
    startBoxHost({ boxRoot: below }),
    (err) =>
      err.message.includes(`is below ${path.join(scratch, 'inner')}, which other users cannot search`) &&
      /set TMPDIR/.test(err.message),
  );
});
