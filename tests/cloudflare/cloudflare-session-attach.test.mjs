// Issue 35 rows on the cloudflare provider (here on the local Box host, a Worker given
// SANDBOX_LOCAL_URL and SANDBOX_LOCAL_TOKEN, in this Node process): `openSandboxSession({ id })`
// is the Durable Object of that id (as `sandboxId`), and what the container API has no
// equivalent for says so: `updateNetworkPolicy` and `listSandboxSessions` are SANDBOX_NOT_SUPPORTED
// naming the provider and the operation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, listSandboxSessions, openSandboxSession } from '@vite-hub/sandbox';

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

const notSupported = (operation) => (error) => {
  assert.equal(error.code, 'SANDBOX_NOT_SUPPORTED', error.message);
  assert.equal(error.details?.operation ?? error.operation, operation, JSON.stringify(error));
  assert.match(error.message, /cloudflare/);
  return true;
};

test('openSandboxSession({ id }) reaches the Box of that id; no network policy, no list', {
  timeout: 120_000,
}, async () => {
  const session = await openSandboxSession();
  try {
    await session.write('/workspace/marker.txt', 'from the first Session');
    const again = await openSandboxSession({ id: session.id });
    try {
      assert.equal(again.id, session.id);
      assert.equal(await again.readText('/workspace/marker.txt'), 'from the first Session');
    } finally {
      await again.close();
    }
    await assert.rejects(session.updateNetworkPolicy('deny-all'), notSupported('updateNetworkPolicy'));
    await assert.rejects(listSandboxSessions(), notSupported('listSandboxSessions'));
  } finally {
    await session.close();
  }
});
