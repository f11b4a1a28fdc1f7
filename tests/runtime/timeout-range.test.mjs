// The largest Definition timeouts the rules allow (up to 2147483647 ms) run on the local provider:
// the Box lifetime asked for (timeout + 60 s grace) is capped at the JS timer maximum instead of
// overflowing the host's timer (which stopped the Box at once and failed the Run with a 502).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runSandbox, unregisterSandbox } from '@vite-hub/sandbox';
import { useLocalHost, defineTestSandbox } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

for (const timeout of [2147423647, 2147423648, 2147483647]) {
  test(`vitehub.sandbox.timeout ${timeout} runs`, async () => {
    const name = `max-timeout-${timeout}`;
    defineTestSandbox(name, 'export default () => "ok";', { manifest: { vitehub: { sandbox: { timeout } } } });
    try {
      const response = await runSandbox(name);
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(await response.json(), 'ok');
    } finally {
      unregisterSandbox(name);
    }
  });
}
