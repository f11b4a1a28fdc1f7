// Browser / bundler entry: the wasm is fetched once, on first use (or by `initSandbox(url)`).
// The `local` provider needs a running Box host here: configureSandbox({ local: { baseUrl, token } }).
import initWasm, * as wasm from '../wasm/vite_hub_sandbox.js';
import { createApi } from './api.mjs';

export { defineSandbox } from './api.mjs';
export { readRequestPayload, readValidatedPayload } from './payload.mjs';
export { requestSignal } from './request-signal.mjs';

let ready = null;
/** Loads the wasm module once; `input` is an optional URL, Response or bytes of `sandbox_bg.wasm`. */
export function initSandbox(input) {
  ready ??= initWasm(input === undefined ? undefined : { module_or_path: input }).then(() => {
    api.configureSandbox({});
    if (pendingLoader !== undefined) api.setSandboxDefinitionLoader(...pendingLoader);
  });
  return ready;
}

const api = createApi(wasm, () => ({}));

const afterInit =
  (name) =>
  async (...args) => {
    await initSandbox();
    return api[name](...args);
  };
const initialised =
  (name) =>
  (...args) => {
    if (!ready) throw new Error(`${name}() needs the wasm module: await initSandbox() first`);
    return api[name](...args);
  };

export const runSandbox = afterInit('runSandbox');
/** Sessions: one Box driven by hand (runtime/session.mjs). */
export const openSandboxSession = afterInit('openSandboxSession');
export const listSandboxSessions = afterInit('listSandboxSessions');
export const resolveSandboxRunner = afterInit('resolveSandboxRunner');
export const closeSandbox = afterInit('closeSandbox');
/** Returns the handle at once; the Run starts once the wasm is loaded. */
export const startSandbox = (name, payload, options) => {
  const started = initSandbox().then(() => api.startSandbox(name, payload, options));
  let handle = null;
  started.then(
    (h) => (handle = h),
    () => {},
  );
  return {
    get status() {
      return handle ? handle.status : 'pending';
    },
    response: () => started.then((h) => h.response()),
    async *logs() {
      yield* (await started).logs();
    },
    closed: () => started.then((h) => h.closed()),
  };
};
export const configureSandbox = initialised('configureSandbox');
export const registerSandbox = initialised('registerSandbox');
export const unregisterSandbox = initialised('unregisterSandbox');
export const listSandboxes = initialised('listSandboxes');
export const listPreparedProjects = afterInit('listPreparedProjects');
export const dropPreparedProject = afterInit('dropPreparedProject');
export const closeWarmPools = afterInit('closeWarmPools');
export const listWarmPools = initialised('listWarmPools');
/** Works before init: the loader is installed once the wasm is ready. */
let pendingLoader;
export const setSandboxDefinitionLoader = (loader, describe) => {
  pendingLoader = [loader, describe];
  if (ready) ready.then(() => api.setSandboxDefinitionLoader(...pendingLoader));
};
