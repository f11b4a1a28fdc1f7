// Cloudflare Workers (workerd) entry: Wrangler imports the .wasm as a compiled module, and the
// Worker's env (its Durable Object binding included) comes from `cloudflare:workers`, so a Run in
// a request handler finds the `SANDBOX` binding without the app passing `env` (DESIGN.md §4:
// a Cloudflare binding in the env selects the cloudflare provider when none is named).
import * as workers from 'cloudflare:workers';
import wasmModule from '../wasm/vite_hub_sandbox_bg.wasm';
import { workerApi } from './worker-api.mjs';

export { defineSandbox } from './api.mjs';
export { readRequestPayload, readValidatedPayload } from './payload.mjs';
export { requestSignal } from './request-signal.mjs';

// waitUntil keeps the request alive while the Box is given back after the Response.
// (read from the namespace: workerd versions without it leave it undefined).
const waitUntil = typeof workers.waitUntil === 'function' ? (work) => workers.waitUntil(work) : undefined;
const api = workerApi(wasmModule, () => workers.env, waitUntil);

export const {
  configureSandbox,
  registerSandbox,
  unregisterSandbox,
  listSandboxes,
  runSandbox,
  startSandbox,
  closeSandbox,
  setSandboxDefinitionLoader,
} = api;
export const { listPreparedProjects, dropPreparedProject, closeWarmPools, listWarmPools } = api;
/** Sessions: one Box driven by hand (runtime/session.mjs). */
export const { openSandboxSession, listSandboxSessions, resolveSandboxRunner } = api;
/** Kept for symmetry with the browser entry: the wasm is already instantiated here. */
export const initSandbox = async () => {};
