// generateSandboxArtifacts: dev and build generations live side by side (a `vite build` next to a
// running `vite dev` never bundles the dev registry), a Definition may be named like any generated
// file, and in dev a broken Definition keeps its last good version while the others update.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateSandboxArtifacts } from '@vite-hub/sandbox/vite';
import { copyExampleApp, removeDir } from './vite-app.mjs';

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
  assert.match(buildRegistry, /"release-notes": \(\) => import\("\.\/definitions\/release-notes\.mjs"\)/);
  assert.match(readFileSync(join(dev.dir, 'registry.mjs'), 'utf8'), /readFile/);
  // A build generation leaves the dev one as it was.
  assert.deepEqual((await generateSandboxArtifacts({ root: app, mode: 'dev' })).changed, []);
});

test('a Definition named "index" (or "definitions") does not collide with the dev index file', async () => {
  const app = appWith({
    'server/sandboxes/index/package.json': '{"name":"index","type":"module"}',
    'server/sandboxes/index/index.mjs': 'export default () => "index";\n',
    'server/sandboxes/definitions/package.json': '{"name":"definitions","type":"module"}',
    'server/sandboxes/definitions/index.mjs': 'export default () => "definitions";\n',
  });
  await generateSandboxArtifacts({ root: app, mode: 'dev' });
  const load = await devLoader(app);
  for (const name of ['index', 'definitions', 'release-notes']) {
    const definition = await load(name);
    assert.equal(definition.name, name);
    assert.ok(Array.isArray(definition.files), name);
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
  writeFileSync(join(app, 'server/sandboxes/new-broken/index.mjs'), "module.exports = () => 1;\n");
  const result = await generateSandboxArtifacts({ root: app, mode: 'dev' }).catch((e) => e);
  assert.ok(!(result instanceof Error), String(result));
  assert.deepEqual(result.errors.map((e) => [e.name, e.error.code]), [['new-broken', 'SANDBOX_INVALID_ARGUMENT'], ['release-notes', 'SANDBOX_INVALID_ARGUMENT']]);
  assert.match(result.errors[0].error.message, /index\.mjs:1:1 .*module\.exports/);
  assert.equal(result.names.includes('new-broken'), false);
  assert.equal(await load('new-broken'), undefined);
  assert.deepEqual(await load('release-notes'), lastGood);
  const slugify = await load('slugify-title');
  const index = slugify.files.find((f) => f.path === 'index.mjs');
  assert.equal(Buffer.from(index.content, 'base64').toString(), 'export default () => "edited";\n');

  // Build mode stays all-or-nothing.
  await assert.rejects(generateSandboxArtifacts({ root: app, mode: 'build' }), { code: 'SANDBOX_INVALID_ARGUMENT', message: /^Sandbox "new-broken": index.mjs:1:1 .*R0022/ });
});
