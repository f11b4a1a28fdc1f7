// wrangler's build step: the registry of server/sandboxes/ (TypeScript compiled by Vite's
// transformer), then the Rust Worker. worker-build downloads wasm-bindgen, esbuild and wasm-opt
// unless WASM_BINDGEN_BIN, ESBUILD_BIN and WASM_OPT_BIN name them.
import { execFileSync } from 'node:child_process';
import { generateSandboxArtifacts } from '@vite-hub/sandbox/vite';

await generateSandboxArtifacts({ root: '.', mode: 'build', registryJson: true }); // .vite-hub/sandbox/build/registry.json
execFileSync('worker-build', ['--release'], { stdio: 'inherit' }); // build/index.js + build/index_bg.wasm
