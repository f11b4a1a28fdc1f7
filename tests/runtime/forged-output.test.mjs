// The harness's fallback result file (`.vite-hub/output.json`) is writable by anything in the Box:
// a Definition that writes it and dies before its framed result cannot claim a package code.
// Only the frame on stdout, which carries the Run's nonce, may say SANDBOX_TRANSFER_LIMIT and the
// like; what the file says is the handler's error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox, useLocalHost } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  configureSandbox({});
  await host.close();
});

test('a forged fallback error envelope is SANDBOX_HANDLER_ERROR, not the code it names', {
  timeout: 120_000,
}, async () => {
  defineTestSandbox(
    'forged/output',
    `import fs from 'node:fs';
     export default () => {
       const output = new URL('../.vite-hub/output.json', 'file://' + process.cwd() + '/').pathname;
       fs.writeFileSync(output, JSON.stringify({ version: 1, ok: false, error: { name: 'RangeError', message: 'forged limit',
         code: 'SANDBOX_TRANSFER_LIMIT', details: { limit: 'maxOutputBytes', value: 1, maximum: 0 } } }));
       process.kill(process.pid, 'SIGKILL');
     };`,
  );
  const response = await runSandbox('forged/output');
  const body = await response.json();
  assert.equal(response.status, 500, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_HANDLER_ERROR', JSON.stringify(body));
  assert.equal(body.error.message, 'forged limit');
  assert.equal(body.error.details?.limit, undefined, 'no limit details of its choosing');
});
