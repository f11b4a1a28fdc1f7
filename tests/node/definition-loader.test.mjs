// The lazy registry seam: setSandboxDefinitionLoader(name → Promise<definition>) used by runSandbox
// for names not registered, with parsing cached per name + digest, base64 file contents.
import { test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { runSandbox, registerSandbox, unregisterSandbox, setSandboxDefinitionLoader, closeLocalBoxHost } from '@vite-hub/sandbox';

after(() => closeLocalBoxHost());
afterEach(() => setSandboxDefinitionLoader(null));

const b64 = (text) => Buffer.from(text).toString('base64');
const definition = (value, digest) => ({
  digest,
  files: [
    { path: 'package.json', content: b64('{"name":"answer","type":"module"}'), encoding: 'base64' },
    { path: 'index.mjs', content: b64(`export default () => ${JSON.stringify(value)};`), encoding: 'base64' },
  ],
});

test('an unregistered name is loaded through the loader; registerSandbox wins over it', async () => {
  const asked = [];
  setSandboxDefinitionLoader(async (name) => {
    asked.push(name);
    return name === 'answer' ? definition('from the loader', 'd1') : undefined;
  });
  assert.deepEqual(await (await runSandbox('answer')).json(), 'from the loader');
  const missing = await runSandbox('other');
  assert.equal(missing.status, 500);
  assert.equal((await missing.json()).error.code, 'SANDBOX_NOT_FOUND');
  assert.deepEqual(asked, ['answer', 'other']);
  registerSandbox('answer', { files: [{ path: 'package.json', content: '{"type":"module"}' }, { path: 'index.mjs', content: 'export default () => "registered";' }] });
  try {
    assert.deepEqual(await (await runSandbox('answer')).json(), 'registered');
    assert.deepEqual(asked, ['answer', 'other']);
  } finally {
    unregisterSandbox('answer');
  }
});

test('a Definition is parsed once per digest: the same digest reuses it, a new digest is re-read', async () => {
  let current = definition('first', 'digest-1');
  setSandboxDefinitionLoader(async () => current);
  assert.equal(await (await runSandbox('answer')).json(), 'first');
  // Same digest, different files: the cached parse is used (the digest is the content key).
  current = { ...definition('ignored', 'digest-1') };
  assert.equal(await (await runSandbox('answer')).json(), 'first');
  current = definition('second', 'digest-2');
  assert.equal(await (await runSandbox('answer')).json(), 'second');
});

test('loader failures and invalid Definitions become error Responses', async () => {
  setSandboxDefinitionLoader(async () => {
    throw new Error('chunk missing');
  });
  const failed = await runSandbox('answer');
  assert.equal(failed.status, 500);
  const body = await failed.json();
  assert.equal(body.error.code, 'SANDBOX_RUNTIME_ERROR');
  setSandboxDefinitionLoader(async () => ({ files: [{ path: 'index.mjs', content: '!!', encoding: 'base64' }] }));
  const invalid = await runSandbox('answer');
  assert.equal(invalid.status, 400);
  assert.match((await invalid.json()).error.message, /not valid base64 \(index\.mjs\)/);
});
