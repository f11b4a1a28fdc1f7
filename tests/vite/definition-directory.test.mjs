// readDefinitionDirectory / compileTypeScriptFiles against real folders (the built package: the
// module-graph rules are in the wasm, initialised by the Node entry).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readDefinitionDirectory } from '@vite-hub/sandbox';
import { compileTypeScriptFiles } from '../../dist/vite/definition-directory.mjs';

/** Temporary folders made here; removed when the file's tests end. */
const temporary = [];
after(() => {
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

function makeTree(files, name = 'definition') {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-definition-'));
  temporary.push(root);
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  for (const [relative, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
    fs.writeFileSync(path.join(dir, relative), text);
  }
  return dir;
}

const text = (file) => new TextDecoder().decode(file.content);
const byPath = (files) => Object.fromEntries(files.map((file) => [file.path, file]));

test('exclusions, POSIX paths, sorted output and the folder name', async () => {
  const dir = makeTree(
    {
      'package.json': '{"type":"module"}',
      'index.mjs': 'export default () => 1;\n',
      'lib/deep/helper.mjs': 'export const x = 1;\n',
      'node_modules/dep/index.js': 'nope',
      'lib/node_modules/dep/index.js': 'nope',
      '.git/HEAD': 'nope',
      '.env': 'SECRET=1',
      '.env.local': 'SECRET=1',
      'lib/.env.production': 'SECRET=1',
      '.npmrc': '//registry/:_authToken=x',
      'bun.lockb': 'binary',
      '.envrc-not-excluded': 'kept',
    },
    'tools-echo',
  );
  const { name, files } = await readDefinitionDirectory(dir);
  assert.equal(name, 'tools-echo');
  assert.deepEqual(
    files.map((file) => file.path),
    ['.envrc-not-excluded', 'index.mjs', 'lib/deep/helper.mjs', 'package.json'],
  );
  assert.equal(text(byPath(files)['lib/deep/helper.mjs']), 'export const x = 1;\n');
  assert.ok(files.every((file) => file.content instanceof Uint8Array && !('mode' in file)));
});

test('mode is kept only when an executable bit is set', async () => {
  const dir = makeTree({ 'package.json': '{}', 'run.sh': '#!/bin/sh\n', 'data.txt': 'x' });
  fs.chmodSync(path.join(dir, 'run.sh'), 0o750);
  fs.chmodSync(path.join(dir, 'data.txt'), 0o640);
  const files = byPath((await readDefinitionDirectory(dir)).files);
  assert.equal(files['run.sh'].mode, 0o750);
  assert.equal('mode' in files['data.txt'], false);
  assert.equal('mode' in files['package.json'], false);
});

test('symlinks: inside targets are read, escaping ones are rejected', async () => {
  const dir = makeTree({ 'package.json': '{}', 'real/a.txt': 'inside' });
  fs.symlinkSync('real/a.txt', path.join(dir, 'link.txt'));
  fs.symlinkSync('real', path.join(dir, 'linked-dir'));
  const files = byPath((await readDefinitionDirectory(dir)).files);
  assert.equal(text(files['link.txt']), 'inside');
  assert.equal(text(files['linked-dir/a.txt']), 'inside');

  const outside = path.join(path.dirname(dir), 'secret.txt');
  fs.writeFileSync(outside, 'secret');
  fs.symlinkSync('../secret.txt', path.join(dir, 'escape.txt'));
  await assert.rejects(readDefinitionDirectory(dir), (error) => {
    assert.ok(error instanceof Error);
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(
      error.message,
      `Definition file "escape.txt" is a symlink to "../secret.txt", outside the Definition folder "${dir}"; ` +
        'copy the file into the folder or remove the link.',
    );
    return true;
  });
});

test('exclusion ignores the letter case of names; prod.env is not a dotenv file', async () => {
  const dir = makeTree({
    'package.json': '{}',
    '.ENV': 'SECRET=1',
    '.Env.local': 'SECRET=1',
    'sub/.NPMRC': '//registry/:_authToken=x',
    'Node_Modules/dep/index.js': 'nope',
    'prod.env': 'SHIPPED=1',
  });
  const { files } = await readDefinitionDirectory(dir);
  assert.deepEqual(
    files.map((file) => file.path),
    ['package.json', 'prod.env'],
  );
});

test('symlinks: links to excluded files are skipped; excluded links are skipped before resolving', async () => {
  const dir = makeTree({
    'package.json': '{}',
    '.env': 'SECRET=1',
    '.git/config': '[core]',
    'node_modules/dep/index.js': 'nope',
    'sub/keep.txt': 'kept',
  });
  fs.symlinkSync('.env', path.join(dir, 'config.txt'));
  fs.symlinkSync('../.env', path.join(dir, 'sub', 'settings.txt'));
  fs.symlinkSync('.git', path.join(dir, 'gitlink'));
  fs.symlinkSync('node_modules', path.join(dir, 'nmlink'));
  fs.symlinkSync('node_modules/dep/index.js', path.join(dir, 'dep.js'));
  // The monorepo pattern: the package's .env points at the repository's; never shipped, no error.
  fs.writeFileSync(path.join(path.dirname(dir), '.env'), 'ROOT_SECRET=1');
  fs.symlinkSync('../.env', path.join(dir, '.env.local'));
  fs.symlinkSync('../../outside-node-modules', path.join(dir, 'sub', 'node_modules'));
  const { files } = await readDefinitionDirectory(dir);
  assert.deepEqual(
    files.map((file) => file.path),
    ['package.json', 'sub/keep.txt'],
  );
  assert.ok(files.every((file) => !text(file).includes('SECRET')));
});

test('TypeScript: compiled siblings, rewritten specifiers, and the result runs under node', async () => {
  const dir = makeTree({
    'package.json': '{"type":"module"}',
    'index.ts': [
      "import type { Shape } from './types.ts';",
      "import { double } from './lib/math.ts';",
      "import { greet } from './greet.js';",
      "import { plain } from './plain.js';",
      "export * from './lib/math.ts';",
      'export default async function run(payload: { n?: number } = {}): Promise<Shape> {',
      "  const { label } = await import('./lib/label.mts');",
      '  return { value: double(payload.n ?? 2), text: greet(label), plain };',
      '}',
      '',
    ].join('\n'),
    'types.ts': 'export interface Shape { value: number; text: string; plain: string }\n',
    'types.d.ts': 'export declare const ignored: number;\n',
    'greet.ts': 'export const greet = (who: string): string => `hi ${who}`;\n',
    'plain.js': "export const plain = 'js';\n",
    'lib/math.ts':
      "import { label } from '../lib/label.mjs';\nexport const double = (n: number): number => n * 2;\nexport const tag = label;\n",
    'lib/label.mts': "export const label: string = 'mts';\n",
  });
  const { files } = await readDefinitionDirectory(dir);
  assert.deepEqual(
    files.map((file) => file.path),
    [
      'greet.ts',
      'greet.ts.mjs',
      'index.ts',
      'index.ts.mjs',
      'lib/label.mts',
      'lib/label.mts.mjs',
      'lib/math.ts',
      'lib/math.ts.mjs',
      'package.json',
      'plain.js',
      'types.d.ts',
      'types.ts',
      'types.ts.mjs',
    ],
  );
  const all = byPath(files);
  const index = text(all['index.ts.mjs']);
  assert.match(index, /from "\.\/lib\/math\.ts\.mjs";/);
  assert.match(index, /from "\.\/greet\.ts\.mjs";/);
  assert.match(index, /from "\.\/plain\.js";/);
  assert.match(index, /export \* from "\.\/lib\/math\.ts\.mjs";/);
  assert.match(index, /import\("\.\/lib\/label\.mts\.mjs"\)/);
  assert.doesNotMatch(index, /types\.ts/);
  assert.match(text(all['lib/math.ts.mjs']), /from "\.\.\/lib\/label\.mts\.mjs";/);

  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-compiled-'));
  temporary.push(out);
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(out, file.path)), { recursive: true });
    fs.writeFileSync(path.join(out, file.path), file.content);
  }
  const script =
    'const m = await import("./index.ts.mjs"); console.log(JSON.stringify([await m.default({ n: 5 }), m.tag]));';
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: out, encoding: 'utf8' });
  assert.equal(child.stderr, '');
  assert.equal(child.stdout, '[{"value":10,"text":"hi mts","plain":"js"},"mts"]\n');
});

test('TypeScript keeps import attributes: a JSON import compiles and runs under node', async () => {
  const dir = makeTree({
    'package.json': '{"type":"module"}',
    'index.ts': "import data from './data.json' with { type: 'json' };\nexport default (): number => data.n;\n",
    'data.json': '{"n":7}',
  });
  const { files } = await readDefinitionDirectory(dir);
  const compiled = text(byPath(files)['index.ts.mjs']);
  assert.match(compiled, /from "\.\/data\.json" with \{ type: "json" \}/);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-compiled-'));
  temporary.push(out);
  for (const file of files) fs.writeFileSync(path.join(out, file.path), file.content);
  const child = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', 'const m = await import("./index.ts.mjs"); console.log(m.default());'],
    { cwd: out, encoding: 'utf8' },
  );
  assert.equal(child.stderr, '');
  assert.equal(child.stdout, '7\n');
});

test('compileTypeScriptFiles works in memory with string or byte contents', async () => {
  const files = await compileTypeScriptFiles([
    { path: 'index.mts', content: "import { a } from './a.mjs';\nexport default (): number => a;\n" },
    { path: 'a.ts', content: new TextEncoder().encode('export const a: number = 1;\n'), mode: 0o755 },
  ]);
  assert.deepEqual(
    files.map((file) => [file.path, file.mode]),
    [
      ['a.ts', 0o755],
      ['a.ts.mjs', undefined],
      ['index.mts', undefined],
      ['index.mts.mjs', undefined],
    ],
  );
  // The module syntax stays as written (no output format: see compileOne).
  assert.equal(text(files[3]), 'import { a } from "./a.ts.mjs";\nexport default () => a;\n');
  assert.equal(text(files[1]), 'export const a = 1;\n');
});

test('a file already named like a compiled sibling is an error', async () => {
  const dir = makeTree({
    'package.json': '{}',
    'index.ts': 'export default () => 1;\n',
    'index.ts.mjs': 'export default 2;\n',
  });
  await assert.rejects(readDefinitionDirectory(dir), (error) => {
    assert.ok(error instanceof Error);
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(
      error.message,
      'Definition file "index.ts.mjs" collides with the compiled output of "index.ts"; rename it.',
    );
    return true;
  });
});

test('a TypeScript syntax error names the file and line', async () => {
  const dir = makeTree({
    'package.json': '{}',
    'index.ts': 'export default () => 1;\n',
    'lib/broken.ts': 'const ok = 1;\nconst = ;\n',
  });
  await assert.rejects(readDefinitionDirectory(dir), (error) => {
    assert.ok(error instanceof Error);
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(error.message, 'Cannot compile lib/broken.ts:2:7: Expected identifier but found "="');
    return true;
  });
});
