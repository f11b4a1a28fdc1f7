// The cloudflare provider on the local Box host (a Worker given SANDBOX_LOCAL_URL and
// SANDBOX_LOCAL_TOKEN, here in this Node process): a path that leaves the Box is the host's 403
// PERMISSION_DENIED (box-host/protocols/cloudflare-errors.mjs), and the error says so. Only the
// host's 401 is a token problem; a 403 blamed on SANDBOX_LOCAL_TOKEN sent the user to the wrong fix.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';

let host;
before(async () => {
  host = await startBoxHost({});
});
after(async () => {
  configureSandbox({});
  await host.close();
});

test('a path that escapes the Box says so, and does not blame SANDBOX_LOCAL_TOKEN', { timeout: 120_000 }, async () => {
  configureSandbox({
    provider: 'cloudflare',
    env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
  });
  const session = await openSandboxSession();
  try {
    const linked = await session.exec('ln', ['-s', '/', 'up']);
    assert.equal(linked.exitCode, 0, JSON.stringify(linked));
    for (const attempt of [() => session.read('up/etc/hostname'), () => session.write('up/tmp/escaped', 'x')]) {
      await assert.rejects(attempt(), (error) => {
        assert.match(error.message, /path resolves outside the Box/, error.message);
        assert.doesNotMatch(error.message, /SANDBOX_LOCAL_TOKEN|token/i, error.message);
        assert.notEqual(error.code, 'SANDBOX_PROVIDER_AUTH', error.message);
        assert.equal(error.details?.status, 403, JSON.stringify(error.details));
        return true;
      });
    }
  } finally {
    await session.close();
  }
});

test('a wrong SANDBOX_LOCAL_TOKEN (the host answers 401) is still named', { timeout: 60_000 }, async () => {
  configureSandbox({
    provider: 'cloudflare',
    env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: 'w'.repeat(32) },
  });
  await assert.rejects(openSandboxSession(), (error) => {
    assert.equal(error.code, 'SANDBOX_PROVIDER_AUTH', error.message);
    assert.match(error.message, /answered 401: .*; check SANDBOX_LOCAL_TOKEN/, error.message);
    return true;
  });
});
