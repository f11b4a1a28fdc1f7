// A free-form Definition installs only the packages it imports, at the versions the app's
// lockfile resolves, never the app's whole manifest (issue 8, item 7): the prepared files are a
// generated package.json (+ a package-lock.json of the imported packages' closure from an npm lock)
// and the Run installs and runs them on a real local Box host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { discoverDefinitions, prepareFreeFormDefinition, registerSandbox, runSandbox } from '@vite-hub/sandbox';
import { useLocalHost } from '../support/local-host.mjs';

const fixture = fileURLToPath(new URL('../fixtures/free-form/dependency', import.meta.url));
const temporary = [];
let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

/** An app whose manifest has more than the free-form file imports (a range, not the locked version). */
function makeApp(lockfiles) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-free-form-install-'));
  temporary.push(root);
  const manifest = {
    name: 'big-app',
    private: true,
    type: 'module',
    dependencies: { slugify: '^1.6.0', 'left-pad': '^1.3.0', vite: '^7.3.8' },
    devDependencies: { typescript: '^5.9.3' },
  };
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.mkdirSync(path.join(root, 'src'));
  fs.copyFileSync(path.join(fixture, 'src/slug.sandbox.ts'), path.join(root, 'src/slug.sandbox.ts'));
  for (const [name, text] of Object.entries(lockfiles)) fs.writeFileSync(path.join(root, name), text);
  return root;
}

async function prepare(root) {
  const discovered = (await discoverDefinitions(root)).find((item) => item.name === 'slug');
  return prepareFreeFormDefinition(root, discovered);
}

const json = (file) => JSON.parse(new TextDecoder().decode(file.content));

test('an npm app: only the imported package, pinned to its locked version, with a lock of its closure; the Run installs it', async () => {
  const appLock = JSON.parse(fs.readFileSync(path.join(fixture, 'package-lock.json'), 'utf8'));
  appLock.name = 'big-app';
  appLock.packages[''] = {
    name: 'big-app',
    dependencies: { slugify: '^1.6.0', 'left-pad': '^1.3.0', vite: '^7.3.8' },
    devDependencies: { typescript: '^5.9.3' },
  };
  appLock.packages['node_modules/left-pad'] = {
    version: '1.3.0',
    resolved: 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz',
    license: 'WTFPL',
  };
  const root = makeApp({ 'package-lock.json': JSON.stringify(appLock, null, 2) });
  const prepared = await prepare(root);
  assert.deepEqual(prepared.dependencies, ['slugify']);
  assert.deepEqual(
    prepared.files.map((file) => file.path),
    ['package.json', 'package-lock.json', '.vite-hub-sandbox/definition.mjs'],
  );
  assert.deepEqual(json(prepared.files[0]), { private: true, type: 'module', dependencies: { slugify: '1.6.9' } });
  const lock = json(prepared.files[1]);
  assert.deepEqual(Object.keys(lock.packages), ['', 'node_modules/slugify']);
  assert.deepEqual(lock.packages[''], { dependencies: { slugify: '1.6.9' } });
  assert.equal(lock.packages['node_modules/slugify'].integrity, appLock.packages['node_modules/slugify'].integrity);

  registerSandbox(prepared.name, prepared);
  const response = await runSandbox('slug', { title: 'Only What It Imports' });
  assert.equal(response.status, 200, await response.clone().text());
  assert.deepEqual(await response.json(), { slug: 'only-what-it-imports' });
  assert.match(response.headers.get('server-timing'), /install;desc="(fresh|prepared|fresh-fallback)";dur=/);
});

test('a pnpm app: the manifest is pinned to the root importer version (peer suffix dropped)', async () => {
  const pnpmLock = [
    "lockfileVersion: '9.0'",
    'importers:',
    '  .:',
    '    dependencies:',
    '      slugify:',
    '        specifier: ^1.6.0',
    '        version: 1.6.8(typescript@5.9.3)',
    '      left-pad:',
    '        specifier: ^1.3.0',
    '        version: 1.3.0',
    '',
  ].join('\n');
  const prepared = await prepare(makeApp({ 'pnpm-lock.yaml': pnpmLock }));
  assert.deepEqual(
    prepared.files.map((file) => file.path),
    ['package.json', '.vite-hub-sandbox/definition.mjs'],
  );
  assert.deepEqual(json(prepared.files[0]).dependencies, { slugify: '1.6.8' });
});

test('no lockfile: the manifest range of the imported package only', async () => {
  const prepared = await prepare(makeApp({}));
  assert.deepEqual(json(prepared.files[0]), { private: true, type: 'module', dependencies: { slugify: '^1.6.0' } });
});

test('a broken pnpm-lock.yaml is named', async () => {
  await assert.rejects(prepare(makeApp({ 'pnpm-lock.yaml': 'importers: [\n' })), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message: /^pnpm-lock\.yaml is not valid YAML: /,
  });
});
