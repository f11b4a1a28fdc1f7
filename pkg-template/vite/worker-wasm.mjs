// The runtime `.wasm` in a Worker build (workerd/worker conditions). The package's workerd entry
// (runtime/index.workerd.mjs) does `import wasmModule from '../wasm/vite_hub_sandbox_bg.wasm'`,
// which Wrangler and workerd load as a CompiledWasm module. Vite cannot bundle that import (its
// wasm fallback refuses the "ESM integration proposal"), Nitro's `experimental.wasm` turns it into
// a JavaScript file that workerd rejects, and a plain external keeps a path that points nowhere
// after bundling. So the plugin keeps the import as an external whose path it rewrites, per chunk,
// to `assets/vite_hub_sandbox_bg-<hash>.wasm` relative to that chunk, and writes the bytes there
// itself (a server build does not write emitted assets: Vite's `build.ssrEmitAssets` is off).
// See docs/internals/worker-builds.md "Provider Output".
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The file name of the runtime module, and of the importer that loads it as a module. */
const WASM_NAME = 'vite_hub_sandbox_bg.wasm';
const WORKERD_ENTRY = 'index.workerd.mjs';
/** Stands for the asset's path in the bundle until the chunk's own location is known. */
const PLACEHOLDER_ID = '__VITE_HUB_SANDBOX_RUNTIME_WASM__';

/** Whether `id` (as imported by `importer`) is the runtime wasm of this package's workerd entry. */
export function isRuntimeWasmImport(id, importer) {
  return (
    typeof importer === 'string' && path.basename(importer) === WORKERD_ENTRY && path.posix.basename(id) === WASM_NAME
  );
}

/**
 * Resolves the runtime wasm import to an external placeholder and reads the bytes (once per
 * build; `state` is per Vite environment).
 * @returns {{ id: string, external: true }}
 */
export function externalizeRuntimeWasm(state, id, importer) {
  if (state.fileName === undefined) {
    state.bytes = readFileSync(path.resolve(path.dirname(importer), id));
    const hash = createHash('sha256').update(state.bytes).digest('hex').slice(0, 8);
    state.fileName = `assets/${WASM_NAME.replace(/\.wasm$/, '')}-${hash}.wasm`;
  }
  return { id: PLACEHOLDER_ID, external: true };
}

/** Writes the wasm into the output directory of a bundle that imports it (Rollup `writeBundle`). */
export function writeRuntimeWasm(state, outputOptions) {
  if (state?.fileName === undefined || !state.used || !outputOptions.dir) return;
  const file = path.join(outputOptions.dir, state.fileName);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, state.bytes);
}

/**
 * Rewrites the placeholder import in a rendered chunk to `./<relative path to the asset>`.
 * @returns {{ code: string, map: null } | null}
 */
export function rewriteRuntimeWasmImport(state, code, chunk) {
  if (state?.fileName === undefined || !code.includes(PLACEHOLDER_ID)) return null;
  state.used = true;
  let relative = path.posix.relative(path.posix.dirname(chunk.fileName), state.fileName);
  if (!relative.startsWith('.')) relative = `./${relative}`;
  return { code: code.split(PLACEHOLDER_ID).join(relative), map: null };
}

export { PLACEHOLDER_ID, WASM_NAME };
