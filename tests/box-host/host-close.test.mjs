// host.close() while a create is in flight: the Box that create makes is stopped and removed
// before close() resolves (it is not live yet when close() begins, so stopping the live Boxes
// alone would leave it running and its directory on disk), and creates after close() are refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';

test('close() during a create leaves no Box directory behind, and a later create is refused', { timeout: 60_000 }, async (t) => {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-close-'));
  fs.chmodSync(boxRoot, 0o701);
  t.after(() => fs.rmSync(boxRoot, { recursive: true, force: true }));
  // No spare Boxes (parked-boxes.mjs): the first directory to appear is then the create's own, and
  // a create cannot finish early on a spare made ready before close() (parked-nodes.test.mjs
  // covers closing while spares are made).
  const host = await startBoxHost({ boxRoot, parked: { size: 0 } });
  const create = () => fetch(`${host.baseUrl}/v3/sandboxes`, { method: 'POST', headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' }, body: '{}' });
  // The create is in flight once its Box directory exists: close() then, before it answers.
  const dirMade = new Promise((resolve) => {
    const watcher = fs.watch(boxRoot, () => {
      watcher.close();
      resolve();
    });
  });
  const inFlight = create();
  await dirMade;
  await host.close();
  assert.deepEqual(fs.readdirSync(boxRoot), [], 'the Box of the create in flight is gone with the host');
  const answer = await inFlight.then((response) => response.status, (error) => error.cause?.code ?? error.message);
  assert.ok(answer === 503 || answer === 'ECONNRESET' || answer === 'UND_ERR_SOCKET', `the create in flight is refused, got ${answer}`);
});
