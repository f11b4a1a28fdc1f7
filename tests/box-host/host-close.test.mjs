// host.close() while a create is in flight: the Box that create makes is stopped and removed
// before close() resolves (it is not live yet when close() begins, so stopping the live Boxes
// alone would leave it running and its directory on disk), and creates after close() are refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';

test('close() during a create leaves no Box directory behind, and a later create is refused', {
  timeout: 60_000,
}, async (t) => {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-close-'));
  fs.chmodSync(boxRoot, 0o701);
  t.after(() => fs.rmSync(boxRoot, { recursive: true, force: true }));
  // No spare Boxes (parked-boxes.mjs): the first directory to appear is then the create's own, and
  // a create cannot finish early on a spare made ready before close() (parked-nodes.test.mjs
  // covers closing while spares are made).
  const host = await startBoxHost({ boxRoot, parked: { size: 0 } });
  const create = () =>
    fetch(`${host.baseUrl}/v3/sandboxes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
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
  const answer = await inFlight.then(
    (response) => response.status,
    (error) => error.cause?.code ?? error.message,
  );
  assert.ok(
    answer === 503 || answer === 'ECONNRESET' || answer === 'UND_ERR_SOCKET',
    `the create in flight is refused, got ${answer}`,
  );
});

// A script's last `await host.close()` (closeLocalBoxHost(), the CLI's `run`) must keep the event
// loop alive until it is done: a spare's parked Node process is unref'd while it waits (it never
// holds the app open), so a close that waited for it to end with nothing ref'd let the loop empty
// before libuv reaped it, and Node exited 13 ("unsettled top-level await") after a 200 (issue 32).
// Read right after close() starts: every spare's process is held from the kill to its end.
test("close() holds the event loop until the spares' parked processes have ended", { timeout: 60_000 }, async (t) => {
  const host = await startBoxHost({ parked: { size: 2 } });
  if (host.isolation !== 'bubblewrap') {
    await host.close();
    t.skip(`spares are parked under bubblewrap only (this host: ${host.isolation})`);
    return;
  }
  host.unref();
  while (host.parked().ready < 2) {
    assert.equal(host.parked().lastError, null, 'a spare could not be made');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const processes = () => process.getActiveResourcesInfo().filter((resource) => resource === 'ProcessWrap').length;
  assert.equal(processes(), 0, 'a waiting spare holds the event loop');
  const closing = host.close();
  const heldWhileClosing = processes();
  await closing;
  assert.equal(heldWhileClosing, 2, "close() waits for the spares' processes with their handles ref'd");
  assert.equal(processes(), 0, 'nothing of the spares is held once close() is done');
});
