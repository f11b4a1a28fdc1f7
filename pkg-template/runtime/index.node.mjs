// Node 20+ entry: instantiates the wasm synchronously from disk and starts the local Box host
// in-process the first time a Run needs the `local` provider.
import { wasm } from './wasm-node.mjs';
import { createApi, defineSandbox } from './api.mjs';
import { readDefinitionDirectory } from '../build/definition-directory.mjs';

let localHost = null;
wasm.setLocalBoxHostStarter(async () => {
  const { startBoxHost } = await import('../box-host/index.mjs');
  localHost = await startBoxHost({});
  localHost.unref?.();
  return { baseUrl: localHost.baseUrl, token: localHost.token };
});

const api = createApi(wasm, () => process.env);
api.configureSandbox({});

export const { configureSandbox, registerSandbox, unregisterSandbox, listSandboxes, runSandbox, setSandboxDefinitionLoader } = api;
export { readDefinitionDirectory, defineSandbox };
export { prepareFreeFormDefinition } from '../build/free-form.mjs';
export { discoverDefinitions } from '../build/discovery.mjs';

/**
 * Reads a Definition folder (compiling its TypeScript; with `options.appRoot`, an enclosing pnpm
 * workspace up to the app root joins it) and registers it under `name` (default: the folder
 * name). Node only.
 */
export async function registerSandboxDirectory(directory, name, options = {}) {
  const definition = await readDefinitionDirectory(directory, options);
  registerSandbox(name ?? definition.name, definition);
  return name ?? definition.name;
}

/** Stops the in-process local Box host, if one was started (every Box it holds is stopped). */
export async function closeLocalBoxHost() {
  const host = localHost;
  localHost = null;
  wasm.forgetLocalBoxHost();
  if (host) await host.close();
}

/** Kept for symmetry with the browser entry: the wasm is already instantiated here. */
export const initSandbox = async () => {};
