// wrangler's build step for the repository's Worker (wrangler.toml `[build] command`):
// 1. writes the registry of examples/app (examples/app/.vite-hub/sandbox/build/, the files
//    `vite build` writes, plus registry.json, which the Rust Worker `include_str!`s);
// 2. builds the Rust Worker (worker/Cargo.toml) with worker-build into worker/build/, which the
//    main module worker/index.mjs re-exports.
// Needs the built package (`node scripts/build.mjs`: the core's build-time rules run from dist/)
// and worker-build (`bash scripts/setup.sh`). Offline: worker-build is given the wasm-bindgen CLI
// setup.sh installs and the esbuild and binaryen wasm-opt of node_modules, instead of downloading
// its own.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSandboxArtifacts } from '@vite-hub/sandbox/vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
// Provider settings come from the Worker's env at request time (worker/src/lib.rs), never from the build.
const { names } = await generateSandboxArtifacts({ root: join(root, 'examples/app'), mode: 'build', config: {}, registryJson: true });
console.log(`[worker] registry of examples/app: ${names.join(', ')}`);

const bin = (name) => join(root, 'node_modules/.bin', name);
try {
  execFileSync('worker-build', ['--release'], {
    cwd: join(root, 'worker'),
    stdio: 'inherit',
    env: { ...process.env, WASM_BINDGEN_BIN: 'wasm-bindgen', ESBUILD_BIN: bin('esbuild'), WASM_OPT_BIN: bin('wasm-opt') },
  });
} catch (error) {
  if (error.code === 'ENOENT') throw new Error('worker-build is not installed: run `bash scripts/setup.sh` (it installs the version the workspace pins)');
  throw error;
}
console.log(`[worker] built worker/build/ with worker-build in ${((Date.now() - started) / 1000).toFixed(1)} s`);
