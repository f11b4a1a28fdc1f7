// Bundles the Node runtime entry of a built dist/ in place, so `import('@vite-hub/sandbox')` in
// Node reads 3 files of the package instead of 10: about 6 ms of a fresh import on a 2-core Xeon,
// where each module costs its resolution, read and compile (issue 12: the runtime entry imports in
// ≤ 30 ms; `node scripts/bench.mjs` prints the import time). The readable sources stay in
// pkg-template/runtime/; the bundles are what dist/ ships:
//
// - runtime/wasm-node.mjs: itself plus the wasm-bindgen glue (the one runtime wasm instance of
//   the process; build/generate.mjs imports this same file);
// - runtime/index.node.mjs: itself plus the stateless runtime modules it imports. It keeps
//   wasm-node.mjs and shared-host.mjs (the module state build/ shares with it) and everything it
//   loads on demand (box-host/, build/, warm-up.mjs) as imports of their own files.
//
// Run by scripts/build.mjs after the shared facts are generated; run it alone after copying a
// changed pkg-template/runtime/ file into dist/ by hand: `node scripts/bundle-node-entry.mjs`.
import { build } from 'esbuild';
import { copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Module files the Node entry keeps importing by path: shared state, or loaded on first use. */
const KEPT_IMPORTS = ['./wasm-node.mjs', './shared-host.mjs', './warm-up.mjs', '../box-host/*', '../build/*'];

/** Bundles `<dist>/runtime/wasm-node.mjs` and `<dist>/runtime/index.node.mjs` in place. */
export async function bundleNodeEntry(dist, sources = join(dist, '..', 'pkg-template')) {
  const runtime = join(dist, 'runtime');
  // From the readable sources each time, so running it twice bundles the same input.
  for (const file of ['wasm-node.mjs', 'index.node.mjs']) copyFileSync(join(sources, 'runtime', file), join(runtime, file));
  const common = { bundle: true, format: 'esm', platform: 'node', target: 'node20', write: true, allowOverwrite: true, logLevel: 'warning', legalComments: 'none' };
  await build({ ...common, entryPoints: [join(runtime, 'wasm-node.mjs')], outfile: join(runtime, 'wasm-node.mjs') });
  await build({ ...common, entryPoints: [join(runtime, 'index.node.mjs')], outfile: join(runtime, 'index.node.mjs'), external: KEPT_IMPORTS });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  await bundleNodeEntry(join(root, 'dist'));
  console.log('bundled dist/runtime/index.node.mjs and dist/runtime/wasm-node.mjs');
}
