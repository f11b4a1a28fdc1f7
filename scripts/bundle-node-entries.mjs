// Bundles the Node entries of a built dist/ in place, so Node reads a few package files where it
// read dozens: each module costs its resolution, read and compile (issue 12: the runtime entry
// imports in ≤ 30 ms, and the first Run pays for loading the in-process Box host; `node
// scripts/bench.mjs` prints both). The readable sources stay in pkg-template/; the bundles are
// what dist/ ships. Each entry keeps importing by path the files whose module state other files
// share (one instance per process) and what it loads on demand:
//
// - runtime/wasm-node.mjs: itself plus the wasm-bindgen glue (the one runtime wasm instance of
//   the process; vite/generate.mjs imports this same file);
// - runtime/index.node.mjs: itself plus the stateless runtime modules (api, facts, payload,
//   run-handle, session, sandbox-error); 3 files to import instead of 10 (-6 ms on a 2-core Xeon);
// - box-host/index.mjs (`@vite-hub/sandbox/box-host`, and the in-process host of the first Run):
//   the host's modules but engine/isolation.mjs (its probes run once per process) and
//   engine/box-seccomp.mjs (it finds the seccomp programs beside engine/ by its own URL); -13 ms.
//
// Run by scripts/build.mjs after the shared facts are generated; run it alone after copying a
// changed pkg-template/ file into dist/ by hand: `node scripts/bundle-node-entries.mjs`.
import { build } from 'esbuild';
import { copyFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The bundled entries (dist-relative) and the files each keeps as modules of their own, relative
 * to the entry: a path names one file, whichever folder imports it; a `dir/*` pattern keeps every
 * import written with that prefix.
 */
export const ENTRIES = [
  { file: 'runtime/wasm-node.mjs', kept: [] },
  {
    file: 'runtime/index.node.mjs',
    kept: ['./wasm-node.mjs', './shared-host.mjs', './warm-up.mjs', '../box-host/*', '../vite/*'],
  },
  { file: 'box-host/index.mjs', kept: ['./engine/isolation.mjs', './engine/box-seccomp.mjs'] },
];

/** Bundles each of ENTRIES in `dist` in place, from its source in `sources` (pkg-template/). */
export async function bundleNodeEntries(dist, sources = join(dist, '..', 'pkg-template')) {
  for (const { file, kept } of ENTRIES) {
    // From the readable source each time, so running it twice bundles the same input.
    copyFileSync(join(sources, file), join(dist, file));
    await build({
      entryPoints: [join(dist, file)],
      outfile: join(dist, file),
      allowOverwrite: true,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // The package's dependencies (modern-tar) resolve from the app's node_modules.
      packages: 'external',
      external: kept.filter((spec) => spec.includes('*')),
      plugins: [
        keepFiles(
          dirname(join(dist, file)),
          kept.filter((spec) => !spec.includes('*')),
        ),
      ],
      logLevel: 'warning',
      legalComments: 'none',
    });
  }
}

/**
 * An esbuild plugin that leaves each of `files` (paths relative to `entryDir`) out of the bundle
 * and imports it from the entry instead, also where a module of another folder imports it
 * (engine/box.mjs imports `./isolation.mjs`, the entry imports `./engine/isolation.mjs`): esbuild's
 * own `external` matches the import text, which differs from folder to folder.
 */
function keepFiles(entryDir, files) {
  const kept = new Map(files.map((spec) => [resolve(entryDir, spec), spec]));
  return {
    name: 'keep-files',
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, ({ path, resolveDir }) => {
        const target = resolve(resolveDir, path);
        if (!kept.has(target)) return undefined;
        const fromEntry = relative(entryDir, target).split('\\').join('/');
        return { path: fromEntry.startsWith('.') ? fromEntry : `./${fromEntry}`, external: true };
      });
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  await bundleNodeEntries(join(root, 'dist'));
  console.log(`bundled ${ENTRIES.map(({ file }) => `dist/${file}`).join(', ')}`);
}
