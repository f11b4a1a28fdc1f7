// The npm package contract: exports conditions and files exist, no deep internals, and the
// workerd and browser entries bundle with esbuild under their export conditions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const manifest = JSON.parse(readFileSync(`${dist}package.json`, 'utf8'));

test('the exports map names only public subpaths, and every target exists', () => {
  assert.deepEqual(Object.keys(manifest.exports), ['.', './box-host', './sandbox_bg.wasm', './package.json']);
  assert.deepEqual(Object.keys(manifest.exports['.']), ['types', 'workerd', 'worker', 'node', 'browser', 'default']);
  const targets = [manifest.exports['.'], manifest.exports['./box-host']].flatMap(Object.values);
  for (const target of [...targets, manifest.exports['./sandbox_bg.wasm'], manifest.bin['vite-hub-sandbox']]) {
    assert.ok(existsSync(new URL(target, `file://${dist}`)), `${target} exists`);
  }
  assert.equal(manifest.sideEffects, false);
  assert.equal(manifest.type, 'module');
});

test('the wasm module stays under the 300 KB gzipped budget', async () => {
  const { gzipSync } = await import('node:zlib');
  const size = gzipSync(readFileSync(`${dist}wasm/vite_hub_sandbox_bg.wasm`)).length;
  assert.ok(size <= 300 * 1024, `${size} bytes gzipped`);
});

async function bundle(conditions, platform) {
  const result = await build({
    stdin: { contents: "import { runSandbox } from '@vite-hub/sandbox'; export default runSandbox;", resolveDir: fileURLToPath(new URL('.', import.meta.url)) },
    bundle: true,
    write: false,
    format: 'esm',
    platform,
    conditions,
    loader: { '.wasm': 'copy' },
    outdir: '/tmp/vite-hub-sandbox-bundle-test',
    logLevel: 'silent',
  });
  return result.outputFiles.map((file) => file.path.split('/').pop());
}

test('the workerd entry bundles without Node built-ins and imports the .wasm as a module', async () => {
  const files = await bundle(['workerd', 'worker'], 'neutral');
  assert.ok(files.some((name) => name.endsWith('.wasm')), files.join(', '));
  const source = readFileSync(`${dist}index.workerd.mjs`, 'utf8');
  assert.doesNotMatch(source, /from 'node:/);
});

test('the browser entry bundles for the browser platform', async () => {
  const files = await bundle(['browser'], 'browser');
  assert.ok(files.some((name) => name.endsWith('.js')), files.join(', '));
});
