// docs/providers/cloudflare-rust.md shows the Rust Worker example's real files: each code block
// that follows a link to a file of examples/rust-worker/ is that file, byte for byte, and every
// file of the example is linked from the page. One source of truth: the example, which
// tests/cloudflare/rust-worker-example.test.mjs runs under wrangler dev.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PAGE = join(repoRoot, 'docs/providers/cloudflare-rust.md');
const EXAMPLE = join(repoRoot, 'examples/rust-worker');
// What its build and wrangler write there (each listed in its .gitignore), and the .gitignore itself.
const NOT_SHOWN = new Set(['.gitignore', '.vite-hub', 'build', '.wrangler', '.dev.vars', 'node_modules']);

/** The example's own files, as paths relative to it. */
function exampleFiles(dir = EXAMPLE) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (NOT_SHOWN.has(entry.name)) return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? exampleFiles(path) : [relative(EXAMPLE, path)];
  });
}

/**
 * The page's fenced blocks, each with the example file named by the first link of the prose
 * before it (since the previous block), or null.
 */
function blocks(text) {
  const found = [];
  let fence = null;
  let body = [];
  let file = null;
  for (const line of text.split('\n')) {
    if (fence === null) {
      const open = /^(```+)/.exec(line);
      if (open) {
        fence = open[1];
        body = [];
        continue;
      }
      file ??= /\]\((\.\.\/\.\.\/examples\/rust-worker\/[^)#]*)\)/.exec(line)?.[1] ?? null;
    } else if (line.startsWith(fence) && line.trim() === fence) {
      found.push({ file: file && relative(EXAMPLE, resolve(dirname(PAGE), file)), text: `${body.join('\n')}\n` });
      fence = null;
      file = null;
    } else {
      body.push(line);
    }
  }
  return found;
}

const page = readFileSync(PAGE, 'utf8');

test('each code block after a link to a file of examples/rust-worker/ is that file', () => {
  const shown = blocks(page).filter((block) => block.file && exampleFiles().includes(block.file));
  assert.deepEqual(shown.map((block) => block.file).sort(), [
    'Cargo.toml',
    'build.mjs',
    'index.mjs',
    'package.json',
    'server/sandboxes/release-notes/index.ts',
    'server/sandboxes/release-notes/package.json',
    'src/lib.rs',
    'wrangler.toml',
  ]);
  for (const block of shown)
    assert.equal(block.text, readFileSync(join(EXAMPLE, block.file), 'utf8'), `the block of ${block.file}`);
});

test('every file of the example is linked from the page', () => {
  const linked = new Set(
    [...page.matchAll(/\]\((\.\.\/\.\.\/examples\/rust-worker\/[^)#]*)\)/g)].map(([, target]) =>
      relative(EXAMPLE, resolve(dirname(PAGE), target)),
    ),
  );
  assert.deepEqual(
    exampleFiles().filter((file) => !linked.has(file)),
    [],
  );
});
