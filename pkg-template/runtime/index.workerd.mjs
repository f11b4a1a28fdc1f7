// Cloudflare Workers (workerd) entry: Wrangler imports the .wasm as a compiled module, and the
// Worker's env (its Durable Object binding included) comes from `cloudflare:workers`, so a Run in
// a request handler finds the `SANDBOX` binding without the app passing `env` (DESIGN.md §4:
// a Cloudflare binding in the env selects the cloudflare provider when none is named).
import { env } from 'cloudflare:workers';
import wasmModule from '../wasm/vite_hub_sandbox_bg.wasm';
import { workerApi } from './worker-api.mjs';

export { defineSandbox } from './api.mjs';

const api = workerApi(wasmModule, () => env);

export const { configureSandbox, registerSandbox, unregisterSandbox, listSandboxes, runSandbox, setSandboxDefinitionLoader } = api;
export const { listPreparedProjects, dropPreparedProject } = api;
/** Sessions: one Box driven by hand (runtime/session.mjs). */
export const { openSandboxSession, resolveSandboxRunner } = api;
/** Kept for symmetry with the browser entry: the wasm is already instantiated here. */
export const initSandbox = async () => {};
