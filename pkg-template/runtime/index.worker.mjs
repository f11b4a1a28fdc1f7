// Worker-style runtimes other than Cloudflare (`worker` condition): the .wasm is imported as a
// compiled module; the env is `process.env` where the runtime has one.
import wasmModule from '../wasm/vite_hub_sandbox_bg.wasm';
import { workerApi } from './worker-api.mjs';

export { defineSandbox } from './api.mjs';
export { readRequestPayload, readValidatedPayload } from './payload.mjs';
export { requestSignal } from './request-signal.mjs';

const api = workerApi(wasmModule, () => (typeof process === 'object' && process?.env ? process.env : {}));

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
