// The prepared-project fingerprint (crates/core/src/harness/fingerprint.cjs, the in-Box rule that
// decides whether an installed tree is still the one the install left, issue 32 item 3): two
// different trees never give one fingerprint. Round 4 forged one: a handler deleted a file of its
// node_modules and appended that file's record to the file before it, and the hash of
// `name\0mode\0content\0` records stayed the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import vm from 'node:vm';

const source = fs.readFileSync(new URL('../../crates/core/src/harness/fingerprint.cjs', import.meta.url), 'utf8');
const fingerprint = vm.runInThisContext(`(function (require) { ${source}; return fingerprint; })`)(
  createRequire(import.meta.url),
);

/** A project folder holding `files` ({ relative path: content }; a path ending in '/' is a directory). */
function tree(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fingerprint-'));
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name);
    if (name.endsWith('/')) {
      fs.mkdirSync(file, { recursive: true });
      continue;
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  return root;
}

test('a file deleted and its record appended to the file before it changes the fingerprint', (t) => {
  const genuine = tree({ 'node_modules/a.js': 'A', 'node_modules/b.js': 'B' });
  const mode = fs.lstatSync(path.join(genuine, 'node_modules/b.js')).mode;
  const forged = tree({ 'node_modules/a.js': `A\0node_modules/b.js\0${mode}\0B` });
  t.after(() => {
    for (const dir of [genuine, forged]) fs.rmSync(dir, { recursive: true, force: true });
  });
  assert.notEqual(fingerprint(forged), fingerprint(genuine));
});

test('directories count: an empty directory removed, or a file turned into a directory, changes it', (t) => {
  const withDir = tree({ 'node_modules/a.js': 'A', 'node_modules/empty/': '' });
  const withoutDir = tree({ 'node_modules/a.js': 'A' });
  const asFile = tree({ 'node_modules/x': '' });
  const asDir = tree({ 'node_modules/x/': '' });
  t.after(() => {
    for (const dir of [withDir, withoutDir, asFile, asDir]) fs.rmSync(dir, { recursive: true, force: true });
  });
  assert.notEqual(fingerprint(withDir), fingerprint(withoutDir));
  assert.notEqual(fingerprint(asFile), fingerprint(asDir));
});

test('a mode change and a moved byte between files change it; the same tree gives the same one', (t) => {
  const one = tree({ 'node_modules/p/a': 'ab', 'node_modules/p/b': 'c' });
  const moved = tree({ 'node_modules/p/a': 'a', 'node_modules/p/b': 'bc' });
  const again = tree({ 'node_modules/p/a': 'ab', 'node_modules/p/b': 'c' });
  t.after(() => {
    for (const dir of [one, moved, again]) fs.rmSync(dir, { recursive: true, force: true });
  });
  assert.equal(fingerprint(again), fingerprint(one));
  assert.notEqual(fingerprint(moved), fingerprint(one));
  // Files outside the installed trees are the Run's own: not counted.
  fs.writeFileSync(path.join(again, 'index.mjs'), 'export default 1');
  assert.equal(fingerprint(again), fingerprint(one));
  fs.chmodSync(path.join(again, 'node_modules/p/a'), 0o755);
  assert.notEqual(fingerprint(again), fingerprint(one));
});
