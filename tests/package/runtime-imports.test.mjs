// A server that only runs Definitions loads only the runtime: importing `@vite-hub/sandbox` and
// calling runSandbox must load none of the build tooling (the app's Vite and, on Vite 7, its
// esbuild; yaml, eslint-scope, trace-mapping, smol-toml, jsonc-parser; the vite/ glue) nor the
// tooling wasm. Each case runs in a fresh `node` with
// load-recorder.mjs preloaded; the control case proves the recorder sees those modules when a
// build-time function is called.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const recorder = new URL('../support/load-recorder.mjs', import.meta.url).href;

/** What a runtime-only process must not load, by what it is. */
const BUILD_ONLY = {
  esbuild: (line) => /^module:.*\/node_modules\/esbuild\//.test(line),
  vite: (line) => /^module:.*\/node_modules\/vite\//.test(line),
  yaml: (line) => /^module:.*\/node_modules\/yaml\//.test(line),
  'eslint-scope': (line) => /^module:.*\/node_modules\/eslint-scope\//.test(line),
  '@jridgewell/trace-mapping': (line) => /^module:.*\/node_modules\/@jridgewell\/trace-mapping\//.test(line),
  'smol-toml': (line) => /^module:.*\/node_modules\/smol-toml\//.test(line),
  'jsonc-parser': (line) => /^module:.*\/node_modules\/jsonc-parser\//.test(line),
  'the vite/ glue': (line) => /^module:.*\/dist\/vite\//.test(line),
  'the tooling wasm glue': (line) => /^module:.*\/vite_hub_sandbox_tooling\.js$/.test(line),
  'the tooling wasm module': (line) =>
    line.startsWith('wasm:') && line.slice(5).split(',').includes('checkModuleGraph'),
};

/** Runs `script` (an ES module) in a fresh node with the recorder; answers its stdout and the log lines. */
async function recorded(script) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vite-hub-imports-'));
  const log = path.join(dir, 'loads.log');
  try {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: os.tmpdir(), LOAD_RECORDER_LOG: log };
    const { stdout } = await run(process.execPath, ['--import', recorder, '--input-type=module', '-e', script], {
      cwd: repo,
      env,
    });
    return { stdout, lines: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const loadedOf = (lines) => Object.keys(BUILD_ONLY).filter((what) => lines.some(BUILD_ONLY[what]));

test('importing @vite-hub/sandbox and running a Definition loads no build tooling', async () => {
  const { stdout, lines } = await recorded(`
    import { registerSandbox, runSandbox, closeLocalBoxHost } from '@vite-hub/sandbox';
    registerSandbox('trivial', { files: [
      { path: 'package.json', content: '{"type":"module"}' },
      { path: 'index.mjs', content: 'export default (payload) => ({ sum: payload.a + payload.b })' },
    ] });
    const response = await runSandbox('trivial', { a: 1, b: 2 });
    console.log(JSON.stringify({ status: response.status, body: await response.json() }));
    await closeLocalBoxHost();
  `);
  assert.deepEqual(JSON.parse(stdout), { status: 200, body: { sum: 3 } });
  assert.ok(
    lines.some((line) => /^module:.*\/dist\/runtime\/index\.node\.mjs$/.test(line)),
    'the recorder saw the Node entry',
  );
  assert.ok(
    lines.some((line) => line.startsWith('wasm:') && line.includes('runSandbox')),
    'the recorder saw the runtime wasm',
  );
  assert.deepEqual(loadedOf(lines), [], lines.join('\n'));
  // Loaded by runtime/shared-host.mjs only when a thread offers or borrows a host (`vite dev`).
  assert.ok(!lines.includes('module:node:worker_threads'), 'a plain Run loaded node:worker_threads');
});

// order-summary has TypeScript and a pnpm workspace: every build library (yaml only for a workspace)
// but the wrangler config readers (smol-toml, jsonc-parser), which only the Cloudflare Provider
// Output of the Vite plugin loads.
test('control: a build-time function loads the tooling on first call (the recorder sees it)', async () => {
  const { stdout, lines } = await recorded(`
    import { readDefinitionDirectory } from '@vite-hub/sandbox';
    const { name } = await readDefinitionDirectory('examples/app/server/sandboxes/order-summary');
    console.log(JSON.stringify(name));
  `);
  assert.equal(JSON.parse(stdout), 'order-summary');
  assert.deepEqual(
    loadedOf(lines),
    Object.keys(BUILD_ONLY).filter((what) => !['smol-toml', 'jsonc-parser'].includes(what)),
  );
});
