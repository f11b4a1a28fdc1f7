// Package-entry validation (contract §4.4): one fixture folder per rule under
// tests/fixtures/validation/, read with readDefinitionDirectory (facts in JS, rules in Rust).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readDefinitionDirectory, registerSandboxDirectory } from '@vite-hub/sandbox';
import { compileTypeScriptFiles } from '../../dist/vite/definition-directory.mjs';

const fixtures = fileURLToPath(new URL('../fixtures/validation/', import.meta.url));

/** Temporary folders made here; removed when the file's tests end. */
const temporary = [];
after(() => {
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

/** Asserts that reading the fixture `name` fails with exactly `Sandbox "<name>": <detail>`. */
async function rejectsWith(name, detail) {
  await assert.rejects(readDefinitionDirectory(path.join(fixtures, name)), (error) => {
    assert.equal(error.name, 'SandboxError');
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(error.message, `Sandbox "${name}": ${detail}`);
    return true;
  });
}

/** Writes `files` to a temp dir and prints JSON of `await (await import(entry)).default()`. */
function runCompiled(files, entry) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-validation-'));
  temporary.push(out);
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(out, file.path)), { recursive: true });
    fs.writeFileSync(path.join(out, file.path), file.content);
  }
  const script = `const m = await import(${JSON.stringify(`./${entry}`)}); console.log(JSON.stringify(await m.default()));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: out, encoding: 'utf8' });
  assert.equal(child.stderr, '');
  return JSON.parse(child.stdout);
}

const text = (file) => new TextDecoder().decode(file.content);

test('R0022 require() in TypeScript names the TypeScript source line, not the compiled one', async () => {
  await rejectsWith(
    'r0022-require-ts',
    'index.ts:4:12 uses CommonJS require(), which does not exist in an ES module (R0022). Use import (or await import() to load conditionally); for a CommonJS-only API use createRequire(import.meta.url) from "node:module".',
  );
});

test('R0022 module.exports in a JS helper reached from the entry', async () => {
  await rejectsWith(
    'r0022-module-exports',
    'lib/legacy.js:4:1 uses CommonJS module.exports assignment, which does not exist in an ES module (R0022). Use export default or named export declarations instead.',
  );
});

// esbuild's `format: 'esm'` would wrap a TypeScript file that only uses CommonJS in its own
// `module`/`exports` binding, hiding the use from the check (and the Run would then succeed).
test('R0022 module.exports in a TypeScript helper is found in its source, not hidden by the compile', async () => {
  await rejectsWith(
    'r0022-module-exports-ts',
    'lib/legacy.ts:4:1 uses CommonJS module.exports assignment, which does not exist in an ES module (R0022). Use export default or named export declarations instead.',
  );
});

test('R0022 exports.x = assignment', async () => {
  await rejectsWith(
    'r0022-exports-member',
    'index.ts:2:1 uses CommonJS exports assignment, which does not exist in an ES module (R0022). Use export declarations instead.',
  );
});

test('R0022 TypeScript import x = require()', async () => {
  await rejectsWith(
    'r0022-import-equals',
    'index.ts:1:15 uses CommonJS import x = require(), which does not exist in an ES module (R0022). Use import x from "…" (or import * as x from "…") instead.',
  );
});

test('R0022 allows a local function named require, obj.require, a label and local module/exports bindings', async () => {
  const { files } = await readDefinitionDirectory(path.join(fixtures, 'r0022-allowed-names'));
  assert.deepEqual(
    files.map((file) => file.path),
    ['index.ts', 'index.ts.mjs', 'package.json'],
  );
  assert.deepEqual(runCompiled(files, 'index.ts.mjs'), ['local a', 'b', 1, 2, 1, 1]);
});

test('R0023 a dynamic import() with a non-literal specifier', async () => {
  await rejectsWith(
    'r0023-dynamic',
    'index.mjs:2:31 has a dynamic import() whose specifier is not a string literal (R0023). Use a literal path such as import("./plugins/a.ts") so every module of the package can be checked.',
  );
});

test('R0024 a #alias package import', async () => {
  await rejectsWith(
    'r0024-alias',
    'index.ts:1:24 imports "#lib/helper.ts", a package.json "imports" alias, which Sandbox packages do not support (R0024). Import files of the package by a relative path such as "./lib/util.ts".',
  );
});

test('R0025 a self-import by package name', async () => {
  await rejectsWith(
    'r0025-self',
    'index.ts:1:19 imports "r0025-self/lib/x.ts", the package\'s own name "r0025-self" (R0025). Import files of the package by a relative path such as "./lib/util.ts".',
  );
});

test('R0026 a URL import', async () => {
  await rejectsWith(
    'r0026-url',
    'index.mjs:1:22 imports "https://esm.sh/canvas-confetti", a https: URL (R0026). Import files of the package by a relative path and other code as a dependency in package.json.',
  );
});

test('R0027 a relative import leaving the package directory', async () => {
  await rejectsWith(
    'r0027-outside',
    'index.ts:1:24 imports "../shared.ts", which leaves the package directory (R0027). Move the file into the package, or publish it as a dependency and import it by its package name.',
  );
});

test('R0027 inside a workspace: packagePath bounds the package', async () => {
  const files = [
    { path: 'pkgs/a/package.json', content: '{"type":"module"}' },
    { path: 'pkgs/a/index.ts', content: "import { b } from '../b/b.ts';\nexport default () => b;\n" },
    { path: 'pkgs/b/b.ts', content: 'export const b = 1;\n' },
  ];
  await assert.rejects(compileTypeScriptFiles(files, { name: 'a', packagePath: 'pkgs/a' }), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message:
      'Sandbox "a": pkgs/a/index.ts:1:19 imports "../b/b.ts", which leaves the package directory "pkgs/a" (R0027). Move the file into the package, or publish it as a dependency and import it by its package name.',
  });
});

test('R0028 an extensionless import names the file it probably meant', async () => {
  await rejectsWith(
    'r0028-extensionless',
    'index.ts:1:24 imports "./helper" without a file extension (R0028). Write the file name with its extension: "./helper.ts".',
  );
});

test('R0029 a .cjs target', async () => {
  await rejectsWith(
    'r0029-cjs',
    'index.mjs:1:20 imports "./legacy.cjs", a CommonJS file (R0029). Convert it to an ES module (.js, .mjs, .ts or .mts in this "type": "module" package) and import that.',
  );
});

test('R0030 a .tsx target', async () => {
  await rejectsWith(
    'r0030-tsx',
    'index.ts:1:22 imports "./view.tsx", a JSX file, which Sandbox packages do not compile (R0030). Move the code to a .ts or .js file without JSX.',
  );
});

test('R0031 a runtime import of a .d.ts (an import type of one is fine)', async () => {
  await rejectsWith(
    'r0031-dts',
    'index.ts:2:26 imports "./defaults.d.ts", a declaration file with no runtime code (R0031). Use "import type" for types, or import the module that implements them.',
  );
});

// The message is the parser's: the app's Vite parses Definition modules (rollup's parser on Vite 7, the one the workspace installs).
test('a reachable JS file that is not a valid ES module', async () => {
  await rejectsWith(
    'syntax-error-js',
    'lib/bad.js:2:1 is not a valid ES module: Return statement is not allowed here. Fix the syntax; Sandbox packages run as ES modules.',
  );
});

test('R0017 wins: without "type": "module" the graph is not checked, registration names the type', async () => {
  const dir = path.join(fixtures, 'r0017-type-wins');
  const { files } = await readDefinitionDirectory(dir);
  assert.deepEqual(
    files.map((file) => file.path),
    ['index.mjs', 'package.json'],
  );
  await assert.rejects(registerSandboxDirectory(dir), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message: 'Sandbox "r0017-type-wins" must be an ES module package: add "type": "module" to its package.json.',
  });
});

test('a valid graph: bare, node: and builtin imports, TS twins, literal dynamic imports, assets; unreachable CommonJS is ignored', async () => {
  const { files } = await readDefinitionDirectory(path.join(fixtures, 'valid-graph'));
  const all = Object.fromEntries(files.map((file) => [file.path, file]));
  assert.match(text(all['index.ts.mjs']), /from "\.\/lib\/util\.ts\.mjs";\nexport \* from "\.\/lib\/util\.ts\.mjs";/);
  assert.match(text(all['index.ts.mjs']), /import\("\.\/lib\/late\.mts\.mjs"\)/);
  assert.match(text(all['lib/util.ts.mjs']), /from "\.\/tag\.mjs";/);
  assert.deepEqual(runCompiled(files, 'index.ts.mjs'), ['util tag', 'late', 'Summarise.', '/']);
});
