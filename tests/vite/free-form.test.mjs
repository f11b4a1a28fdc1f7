// Free-form Definitions (`<path>.sandbox.*` default-exporting defineSandbox): the option rules
// with file and line, bundling, project attachment, and runs on a real local Box host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  defineSandbox,
  discoverDefinitions,
  prepareFreeFormDefinition,
  registerSandbox,
  listSandboxes,
  runSandbox,
} from '@vite-hub/sandbox';
import { useLocalHost } from '../support/local-host.mjs';

const fixtures = fileURLToPath(new URL('../fixtures/free-form', import.meta.url));

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

/** Discovers the fixture app `app` and prepares its free-form Definition `name`. */
async function prepare(app, name) {
  const root = `${fixtures}/${app}`;
  const discovered = (await discoverDefinitions(root)).find((item) => item.name === name);
  assert.ok(discovered, `fixture ${app}/${name} is discovered`);
  assert.equal(discovered.kind, 'free-form');
  return prepareFreeFormDefinition(root, discovered);
}

async function rejectsWith(app, name, message) {
  await assert.rejects(prepare(app, name), (error) => {
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(error.message, message);
    return true;
  });
}

const EXAMPLE = 'export default defineSandbox({ run(payload, context) { ... } })';

test('defineSandbox is the identity at run time', () => {
  const definition = { run: () => 1, timeout: 5 };
  assert.equal(defineSandbox(definition), definition);
});

test('defineSandbox needs one direct object literal', async () => {
  await rejectsWith(
    'invalid',
    'not-object',
    `src/not-object.sandbox.ts:5: defineSandbox() takes one direct object literal; pass the options inline: ${EXAMPLE}.`,
  );
});

test('defineSandbox requires a run handler', async () => {
  await rejectsWith(
    'invalid',
    'missing-run',
    'src/missing-run.sandbox.ts:5: defineSandbox() requires a `run` handler; add run(payload, context) { ... } to its object.',
  );
});

test('options must be static JSON values (lines are those of the TypeScript source)', async () => {
  await rejectsWith(
    'invalid',
    'computed-option',
    'src/computed-option.sandbox.ts:9: defineSandbox() options must be static JSON-serializable values, and "timeout" is computed; write a literal (string, number, boolean, null, or an array or object of them).',
  );
});

test('project must be a boolean', async () => {
  await rejectsWith(
    'invalid',
    'project-string',
    'src/project-string.sandbox.ts:7: defineSandbox() option "project" must be a boolean (true or false).',
  );
});

test('timeout must be a positive integer of milliseconds', async () => {
  await rejectsWith(
    'invalid',
    'bad-timeout',
    'src/bad-timeout.sandbox.ts:5: defineSandbox() option "timeout" must be a positive integer <= 2147483647 (milliseconds).',
  );
});

test('unknown keys and not-yet-supported keys are rejected, not ignored', async () => {
  await rejectsWith(
    'invalid',
    'unknown-key',
    'src/unknown-key.sandbox.ts:5: defineSandbox() has an unknown option "memory"; supported options: run, timeout, project, description, input.',
  );
  await rejectsWith(
    'invalid',
    'env-key',
    'src/env-key.sandbox.ts:5: defineSandbox() option "env" is not supported by @vite-hub/sandbox yet; remove it (supported options: run, timeout, project, description, input).',
  );
});

test('a defineSandbox call assigned to a local binding and exported is rejected with the fix', async () => {
  await rejectsWith(
    'invalid',
    'local-binding',
    `src/local-binding.sandbox.ts:7: defineSandbox() is assigned to the local binding "definition" and that binding is exported, so its options cannot be read; export the call directly: ${EXAMPLE}.`,
  );
});

test('project: false with a runtime dependency is rejected', async () => {
  await rejectsWith(
    'dependency',
    'no-project',
    'src/no-project.sandbox.ts:5: declares project: false but has a runtime dependency "slugify"; remove project: false so package.json and its lockfile are installed in the Box, or stop importing "slugify".',
  );
});

test('a problem outside the file (a broken app package.json) names each Definition it stops', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'vhs-free-form-manifest-'));
  try {
    writeFileSync(path.join(root, 'package.json'), '{"name":"app","type":"module",\n');
    mkdirSync(path.join(root, 'src'));
    const source =
      "import { defineSandbox } from '@vite-hub/sandbox'\nexport default defineSandbox({ run: () => 1 })\n";
    for (const name of ['a', 'b']) writeFileSync(path.join(root, 'src', `${name}.sandbox.ts`), source);
    const discovered = await discoverDefinitions(root);
    assert.deepEqual(
      discovered.map((item) => item.name),
      ['a', 'b'],
    );
    for (const definition of discovered) {
      await assert.rejects(prepareFreeFormDefinition(root, definition), (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
        assert.match(
          error.message,
          new RegExp(`^Cannot bundle src/${definition.name}\\.sandbox\\.ts: package\\.json:2:1: `),
        );
        return true;
      });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a free-form Definition with a local helper is bundled into one module and runs with its timeout', async () => {
  const prepared = await prepare('app', 'greet');
  assert.equal(prepared.name, 'greet');
  assert.equal(prepared.entry, '.vite-hub-sandbox/definition.mjs');
  assert.equal(prepared.timeout, 20000);
  assert.equal(prepared.project, false);
  assert.deepEqual(prepared.inputs, ['src/greet.sandbox.ts', 'src/lib/shout.ts']);
  assert.deepEqual(
    prepared.files.map((file) => file.path),
    ['package.json', '.vite-hub-sandbox/definition.mjs'],
  );
  assert.deepEqual(JSON.parse(new TextDecoder().decode(prepared.files[0].content)), { type: 'module', private: true });
  const bundle = new TextDecoder().decode(prepared.files[1].content);
  assert.match(bundle, /function shout\(text\)/, 'the helper is inlined');
  assert.doesNotMatch(
    bundle,
    /from ["']@vite-hub\/sandbox["']|wasm/,
    'the package is replaced by the defineSandbox shim',
  );

  registerSandbox(prepared.name, prepared);
  assert.equal(listSandboxes().find((item) => item.name === 'greet').timeoutMs, 20000);
  const response = await runSandbox('greet', { name: 'ada' }, { context: { greeting: 'hi' } });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(response.headers.get('content-type'), 'application/json');
  assert.deepEqual(await response.json(), { message: 'HI ADA!', cwdIsProject: true });
});

// slow resolves 'too late' after 30 s: a Run that waited for the handler answers 200 then, not 504.
test('the defineSandbox timeout bounds the Run', { timeout: 120_000 }, async () => {
  const prepared = await prepare('app', 'slow');
  assert.equal(prepared.timeout, 1500);
  registerSandbox(prepared.name, prepared);
  const response = await runSandbox('slow');
  assert.equal(response.status, 504);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_TIMEOUT');
  assert.equal(body.error.details.timeoutMs, 1500);
});

test('a runtime npm dependency attaches the project: package.json + lockfile ship and install in the Box', async () => {
  const prepared = await prepare('dependency', 'slug');
  assert.equal(prepared.project, true);
  assert.deepEqual(prepared.dependencies, ['slugify']);
  assert.deepEqual(
    prepared.files.map((file) => file.path),
    ['package.json', 'package-lock.json', '.vite-hub-sandbox/definition.mjs'],
  );
  const bundle = new TextDecoder().decode(prepared.files[2].content);
  assert.match(bundle, /from "slugify"/, 'the dependency stays external');
  assert.equal(prepared.timeout, undefined);

  registerSandbox(prepared.name, prepared);
  const listed = listSandboxes().find((item) => item.name === 'slug');
  assert.equal(listed.packageManager, 'npm');
  const response = await runSandbox('slug', { title: 'Hello, Wörld & Friends!' });
  assert.equal(response.status, 200, await response.clone().text());
  assert.deepEqual(await response.json(), { slug: 'hello-world-and-friends' });
  assert.match(response.headers.get('server-timing'), /install;desc="(fresh|prepared|fresh-fallback)";dur=/);
});

test("bundling a free-form Definition leaves the process's NODE_ENV as it was (Vite's build sets it when unset)", async () => {
  const before = process.env.NODE_ENV;
  try {
    delete process.env.NODE_ENV;
    await prepare('app', 'greet');
    assert.equal(process.env.NODE_ENV, undefined, 'an app process without NODE_ENV stays a development process');
    process.env.NODE_ENV = 'development';
    await prepare('app', 'greet');
    assert.equal(process.env.NODE_ENV, 'development');
  } finally {
    if (before === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = before;
  }
});
