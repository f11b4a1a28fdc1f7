// The runtime API in a Worker-style runtime, where the .wasm is imported as a compiled module by
// the entry (runtime/index.workerd.mjs for Cloudflare, runtime/index.worker.mjs elsewhere).
import * as wasm from '../wasm/vite_hub_sandbox.js';
import { createApi } from './api.mjs';

/**
 * Instantiates the runtime wasm from `wasmModule` and resolves the default config from `readEnv()`.
 * @param {WebAssembly.Module} wasmModule the compiled runtime module
 * @param {() => Record<string, unknown>} readEnv the runtime's environment (a Worker env may hold bindings)
 * @param {(work: Promise<unknown>) => void} [keepAlive] the runtime's waitUntil, for the work after a Response
 */
export function workerApi(wasmModule, readEnv, keepAlive) {
  wasm.initSync({ module: wasmModule });
  const api = createApi(wasm, readEnv, keepAlive);
  api.configureSandbox({});
  return api;
}
