// The lazy registry seam: setSandboxDefinitionLoader(name → Promise<definition>) used by runSandbox
// for names not registered, with parsing cached per name + digest, base64 file contents.
import { test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  configureSandbox,
  runSandbox,
  registerSandbox,
  unregisterSandbox,
  setSandboxDefinitionLoader,
  closeLocalBoxHost,
} from '@vite-hub/sandbox';

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
  registerSandbox('answer', {
    files: [
      { path: 'package.json', content: '{"type":"module"}' },
      { path: 'index.mjs', content: 'export default () => "registered";' },
    ],
  });
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

const notFound = async (name) => {
  const response = await runSandbox(name);
  assert.equal(response.status, 500);
  const { error } = await response.json();
  assert.equal(error.code, 'SANDBOX_NOT_FOUND');
  return error.message;
};

test('a miss with no registry at all names the fix (the Vite plugin, or registerSandbox without Vite)', async () => {
  const message = await notFound('release-notes');
  assert.match(
    message,
    /^Sandbox "release-notes" was not found: no Definition is registered and no registry is installed\./,
  );
  assert.match(message, /add hubSandbox\(\) from '@vite-hub\/sandbox\/vite' to the plugins/);
  assert.match(message, /loaded @vite-hub\/sandbox around the plugin/);
  assert.match(message, /registerSandbox\(\) or registerSandboxDirectory\(\)/);
});

test('a miss in the registry proposes the closest names, then lists up to ten', async () => {
  const names = ['release-notes', 'slugify-title', ...Array.from({ length: 10 }, (_, i) => `job-${i}`)];
  setSandboxDefinitionLoader(
    async () => undefined,
    () => ({ names }),
  );
  assert.equal(
    await notFound('relase-notes'),
    'Sandbox "relase-notes" was not found. Did you mean "release-notes"? Registered: "job-0", "job-1", "job-2", "job-3", "job-4", "job-5", "job-6", "job-7", "job-8", "job-9" and 2 more.',
  );
  // registerSandbox names count too, without a describe().
  registerSandbox('answer', {
    files: [
      { path: 'package.json', content: '{"type":"module"}' },
      { path: 'index.mjs', content: 'export default () => 1;' },
    ],
  });
  try {
    setSandboxDefinitionLoader(null);
    assert.equal(
      await notFound('answr'),
      'Sandbox "answr" was not found. Did you mean "answer"? Registered: "answer".',
    );
  } finally {
    unregisterSandbox('answer');
  }
});

test('in production a miss lists no names and suggests none: a route that takes the name from its client would hand them out', async () => {
  setSandboxDefinitionLoader(
    async () => undefined,
    () => ({ names: ['release-notes', 'internal-billing'] }),
  );
  configureSandbox({ production: true });
  try {
    assert.equal(await notFound('relase-notes'), 'Sandbox "relase-notes" was not found.');
  } finally {
    configureSandbox({});
    setSandboxDefinitionLoader(null);
  }
});

test('a miss on a Definition the registry refused gives its reason; a throwing describe() is still a miss', async () => {
  setSandboxDefinitionLoader(
    async () => undefined,
    async () => ({ names: ['ok'], invalid: { broken: 'SANDBOX_INVALID_ARGUMENT: index.mjs:1:12 uses require()' } }),
  );
  assert.equal(
    await notFound('broken'),
    'Sandbox "broken" was not found: its Definition is invalid, so it is not in the registry: SANDBOX_INVALID_ARGUMENT: index.mjs:1:12 uses require()',
  );
  // An inherited key is no reason.
  assert.equal(await notFound('toString'), 'Sandbox "toString" was not found. Registered: "ok".');
  setSandboxDefinitionLoader(
    async () => undefined,
    () => {
      throw new Error('describe failed');
    },
  );
  assert.equal(
    await notFound('x'),
    'Sandbox "x" was not found: the registry has no Definitions yet (server/sandboxes/<name>/ or a <path>.sandbox.ts file).',
  );
});
