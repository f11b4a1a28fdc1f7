// generateSandboxArtifacts: dev and build generations live side by side (a `vite build` next to a
// running `vite dev` never bundles the dev registry), a Definition may be named like any generated
// file, and in dev a broken Definition keeps its last good version while the others update.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateSandboxArtifacts } from '@vite-hub/sandbox/vite';
import { copyExampleApp, removeDir } from '../support/vite-app.mjs';

const apps = [];
after(() => apps.forEach(removeDir));

function appWith(files) {
  const app = copyExampleApp('generate');
  apps.push(app);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(app, file, '..'), { recursive: true });
    writeFileSync(join(app, file), content);
  }
  return app;
}

/** The dev registry's loader, imported fresh (it reads the generated JSON on every call). */
async function devLoader(app) {
  const url = pathToFileURL(join(app, '.vite-hub/sandbox/dev/registry.mjs'));
  return (await import(`${url}?${Date.now()}`)).loadDefinition;
}

test('dev and build write separate registries; the build one never reads the dev files', async () => {
  const app = appWith({});
  const dev = await generateSandboxArtifacts({ root: app, mode: 'dev' });
  const build = await generateSandboxArtifacts({ root: app, mode: 'build' });
  assert.equal(dev.dir, join(app, '.vite-hub/sandbox/dev'));
  assert.equal(build.dir, join(app, '.vite-hub/sandbox/build'));
  const buildRegistry = readFileSync(join(build.dir, 'registry.mjs'), 'utf8');
  assert.doesNotMatch(buildRegistry, /readFile|\.vite-hub\/sandbox\/dev/);
  assert.match(buildRegistry, /\["release-notes", \(\) => import\("\.\/definitions\/release-notes\.mjs"\)\]/);
  assert.match(readFileSync(join(dev.dir, 'registry.mjs'), 'utf8'), /readFile/);
  // A build generation leaves the dev one as it was.
  assert.deepEqual((await generateSandboxArtifacts({ root: app, mode: 'dev' })).changed, []);
});

test('Definitions named "index", "definitions", "__proto__" or "constructor" load in dev and build', async () => {
  const names = ['index', 'definitions', '__proto__', 'constructor'];
  const files = {};
  for (const name of names) {
    files[`server/sandboxes/${name}/package.json`] = JSON.stringify({ name: `pkg-${name}`, type: 'module' });
    files[`server/sandboxes/${name}/index.mjs`] = `export default () => ${JSON.stringify(name)};\n`;
  }
  const app = appWith(files);
  await generateSandboxArtifacts({ root: app, mode: 'dev' });
  await generateSandboxArtifacts({ root: app, mode: 'build' });
  const dev = await devLoader(app);
  const build = (await import(pathToFileURL(join(app, '.vite-hub/sandbox/build/registry.mjs')).href)).loadDefinition;
  for (const load of [dev, build]) {
    for (const name of [...names, 'release-notes']) {
      const definition = await load(name);
      assert.equal(definition?.name, name);
      assert.ok(Array.isArray(definition.files), name);
    }
    assert.equal(await load('toString'), undefined);
  }
});

test('dev: a broken Definition keeps its last good version, the others update, a new broken one is left out', async () => {
  const app = appWith({});
  await generateSandboxArtifacts({ root: app, mode: 'dev' });
  const load = await devLoader(app);
  const lastGood = await load('release-notes');

  writeFileSync(join(app, 'server/sandboxes/release-notes/package.json'), '{"name":"release-notes"}');
  writeFileSync(join(app, 'server/sandboxes/slugify-title/index.mjs'), 'export default () => "edited";\n');
  mkdirSync(join(app, 'server/sandboxes/new-broken'));
  writeFileSync(join(app, 'server/sandboxes/new-broken/package.json'), '{"name":"new-broken","type":"module"}');
  writeFileSync(join(app, 'server/sandboxes/new-broken/index.mjs'), 'module.exports = () => 1;\n');
  const result = await generateSandboxArtifacts({ root: app, mode: 'dev' }).catch((e) => e);
  assert.ok(!(result instanceof Error), String(result));
  assert.deepEqual(
    result.errors.map((e) => [e.name, e.error.code]),
    [
      ['new-broken', 'SANDBOX_INVALID_ARGUMENT'],
      ['release-notes', 'SANDBOX_INVALID_ARGUMENT'],
    ],
  );
  assert.match(result.errors[0].error.message, /index\.mjs:1:1 .*module\.exports/);
  assert.equal(result.names.includes('new-broken'), false);
  assert.equal(await load('new-broken'), undefined);
  // The types follow what is served: the kept last good version keeps its name (loosely typed,
  // its entry no longer being the served one), the new broken one has none.
  const types = readFileSync(join(app, '.vite-hub/sandbox/sandbox.d.ts'), 'utf8');
  assert.match(types, /"release-notes": \{ payload: unknown; result: unknown \};/);
  assert.match(types, /"slugify-title": \{ payload: SandboxPayloadOf</);
  assert.doesNotMatch(types, /new-broken/);
  assert.deepEqual(await load('release-notes'), lastGood);
  const slugify = await load('slugify-title');
  const index = slugify.files.find((f) => f.path === 'index.mjs');
  assert.equal(Buffer.from(index.content, 'base64').toString(), 'export default () => "edited";\n');

  // Build mode stays all-or-nothing, and names every invalid Definition at once.
  const built = await generateSandboxArtifacts({ root: app, mode: 'build' }).then(
    () => assert.fail('the build passed'),
    (error) => error,
  );
  assert.equal(built.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.match(
    built.message,
    /^2 Sandbox Definitions are invalid \(the build stops on any\):\n- Sandbox "new-broken": index.mjs:1:1 .*R0022.*\n- .*release-notes/s,
  );
  assert.deepEqual(
    built.errors.map((e) => e.code),
    ['SANDBOX_INVALID_ARGUMENT', 'SANDBOX_INVALID_ARGUMENT'],
  );
});

test('dev: a folder discovery refuses (no entry yet, several entries) does not freeze the others', async () => {
  const app = appWith({});
  await generateSandboxArtifacts({ root: app, mode: 'dev' });
  const load = await devLoader(app);
  const lastGood = await load('release-notes');
  // A Definition being created (package.json, no entry yet) and a known one given a second entry.
  mkdirSync(join(app, 'server/sandboxes/being-created'));
  writeFileSync(join(app, 'server/sandboxes/being-created/package.json'), '{"type":"module"}');
  writeFileSync(join(app, 'server/sandboxes/release-notes/index.mjs'), 'export default () => 1;\n');
  writeFileSync(join(app, 'server/sandboxes/slugify-title/index.mjs'), 'export default () => "edited";\n');
  const result = await generateSandboxArtifacts({ root: app, mode: 'dev' });
  assert.deepEqual(
    result.errors.map((e) => [e.name, e.error.code, e.error.message]),
    [
      [
        'release-notes',
        'SANDBOX_INVALID_ARGUMENT',
        'Sandbox package "server/sandboxes/release-notes" has multiple entrypoints: index.ts, index.mjs.',
      ],
      [
        'being-created',
        'SANDBOX_INVALID_ARGUMENT',
        'Sandbox package "server/sandboxes/being-created" requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs).',
      ],
    ],
  );
  assert.deepEqual(await load('release-notes'), lastGood, 'the refused folder keeps its last good version');
  assert.equal(await load('being-created'), undefined);
  const slugify = await load('slugify-title');
  assert.equal(
    Buffer.from(slugify.files.find((f) => f.path === 'index.mjs').content, 'base64').toString(),
    'export default () => "edited";\n',
  );
  await assert.rejects(generateSandboxArtifacts({ root: app, mode: 'build' }), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message: /multiple entrypoints/,
  });
});

test('describeRegistry() answers the names, and in dev why a refused Definition is out (app-relative)', async () => {
  const app = appWith({
    'server/sandboxes/__proto__/package.json': JSON.stringify({ name: 'pkg-proto', type: 'module' }),
    'server/sandboxes/__proto__/index.mjs': 'export default () => 1;\n',
    'server/sandboxes/broken/package.json': JSON.stringify({ name: 'broken', type: 'module' }),
    'server/sandboxes/broken/index.mjs': "const fs = require('node:fs');\nexport default () => 1;\n",
  });
  const dev = await generateSandboxArtifacts({ root: app, mode: 'dev' });
  assert.deepEqual(
    dev.errors.map((e) => e.name),
    ['broken'],
  );
  const { describeRegistry } = await import(
    `${pathToFileURL(join(app, '.vite-hub/sandbox/dev/registry.mjs'))}?${Date.now()}`
  );
  const described = await describeRegistry();
  assert.deepEqual(described.names, ['__proto__', 'order-summary', 'release-notes', 'slugify-title', 'word-count']);
  assert.deepEqual(Object.keys(described.invalid), ['broken']);
  assert.match(described.invalid.broken, /^SANDBOX_INVALID_ARGUMENT: .*index\.mjs:1:12/s);
  assert.ok(!described.invalid.broken.includes(app), described.invalid.broken);
  assert.equal(readFileSync(join(app, '.vite-hub/.gitignore'), 'utf8'), '*\n');
});

test('build with registryJson: registry.json holds, by name, the Definition objects the modules export; other modes refuse it', async () => {
  const app = appWith({});
  const build = await generateSandboxArtifacts({ root: app, mode: 'build', registryJson: true });
  const json = JSON.parse(readFileSync(join(build.dir, 'registry.json'), 'utf8'));
  assert.deepEqual(Object.keys(json), build.names);
  const { loadDefinition } = await import(pathToFileURL(join(build.dir, 'registry.mjs')));
  for (const name of build.names) assert.deepEqual(json[name], await loadDefinition(name), name);
  const plain = await generateSandboxArtifacts({ root: appWith({}), mode: 'build' });
  assert.ok(!plain.changed.includes('build/registry.json'));
  await assert.rejects(generateSandboxArtifacts({ root: app, mode: 'dev', registryJson: true }), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message: /registryJson is for mode "build"/,
  });
});
