// A Run waiting for its turn on a kept Cloudflare Box (a held sandboxId) polls; each poll waits on
// the caller's signal too, and must leave no abort listener behind on it (Node warns past 10:
// MaxListenersExceededWarning, and the listeners pile up for as long as the wait lasts). The
// cloudflare provider on the local Box host (SANDBOX_LOCAL_URL), in this Node process.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await startBoxHost({});
  configureSandbox({
    provider: 'cloudflare',
    env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
  });
});
after(async () => {
  configureSandbox({});
  await host.close();
});

test('a Run waiting for a held sandboxId keeps at most a few abort listeners on its signal, however long it waits', {
  timeout: 120_000,
}, async () => {
  defineTestSandbox('cf/hold', 'export default (ms) => new Promise((resolve) => setTimeout(() => resolve(ms), ms));');
  const options = { sandboxId: 'cf-held-turn' };
  const holding = runSandbox('cf/hold', 3000, options);
  // Give the first Run the kept Box, then queue the second behind it.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const controller = new AbortController();
  const waiting = runSandbox('cf/hold', 1, { ...options, signal: controller.signal });
  // The polls wait on the caller's signal, or on a signal the Run derives from it (its deadline):
  // Node names any of them that gathers more than 10 listeners.
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning);
  process.on('warning', onWarning);
  let most = 0;
  try {
    for (let i = 0; i < 20; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      most = Math.max(most, getEventListeners(controller.signal, 'abort').length);
    }
    assert.equal((await holding).status, 200);
    assert.equal((await waiting).status, 200);
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  assert.ok(most <= 3, `${most} abort listeners on the waiting Run's signal`);
  assert.deepEqual(
    warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
    [],
  );
});
