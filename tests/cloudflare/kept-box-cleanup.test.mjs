// The clean-up of a Run on a kept Cloudflare Box (a `sandboxId`) deletes the Run's folder and
// keeps the Box: when that deletion fails, the report says so, with rm's reason, instead of
// claiming the Box "could not be stopped" (no stop was asked). The cloudflare provider on the
// local Box host (SANDBOX_LOCAL_URL), in this Node process; under bubblewrap a Box command is an
// unprivileged uid, so a directory its handler makes unreadable stops `rm -rf`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, startSandbox } from '@vite-hub/sandbox';
import { NO_BWRAP, defineTestSandbox } from '../support/local-host.mjs';

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

test("a Run's folder that cannot be deleted from a kept Box is reported as that, not as a stop", {
  skip: NO_BWRAP,
  timeout: 120_000,
}, async () => {
  defineTestSandbox(
    'cf/locked',
    `
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
export default () => {
  mkdirSync('locked/inner', { recursive: true });
  writeFileSync('locked/inner/file', 'x');
  chmodSync('locked', 0);
  return 'locked';
};`,
  );
  const run = startSandbox('cf/locked', null, { sandboxId: 'cf-kept-cleanup' });
  const response = await run.response();
  assert.equal(response.status, 200, await response.clone().text());
  const error = await run.closed().then(
    () => assert.fail('closed() resolved'),
    (reason) => reason,
  );
  assert.equal(error.name, 'SandboxError', error.stack);
  assert.doesNotMatch(error.message, /could not be stopped/, error.message);
  assert.match(
    error.message,
    /The clean-up after a Run of Sandbox "cf\/locked" failed: the Run's folder \/workspace\/\.vite-hub-runs\/[^ ]+ could not be removed from the kept Box: .*Permission denied/,
    error.message,
  );
});
