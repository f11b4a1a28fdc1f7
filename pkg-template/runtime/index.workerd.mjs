// Cloudflare Workers (workerd) entry: Wrangler imports the .wasm as a compiled module.
import wasmModule from '../wasm/vite_hub_sandbox_bg.wasm';
import * as wasm from '../wasm/vite_hub_sandbox.js';
import { createApi } from './api.mjs';

export { defineSandbox } from './api.mjs';

wasm.initSync({ module: wasmModule });

const api = createApi(wasm, () => (typeof process === 'object' && process?.env ? process.env : {}));
api.configureSandbox({});

export const { configureSandbox, registerSandbox, unregisterSandbox, listSandboxes, runSandbox, setSandboxDefinitionLoader } = api;
/** Kept for symmetry with the browser entry: the wasm is already instantiated here. */
export const initSandbox = async () => {};
