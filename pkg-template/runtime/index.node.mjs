// Node 20+ entry: instantiates the runtime wasm synchronously from disk and starts the local Box
// host in-process the first time a Run needs the `local` provider. The build-time functions it
// also exports (reading a Definition folder, discovery, free-form preparation) import build/ —
// esbuild, acorn, yaml, eslint-scope, trace-mapping and the tooling wasm — on their first call
// only, so a server that only runs Definitions never loads them (tests/node/runtime-imports.test.mjs).
import { wasm } from './wasm-node.mjs';
import { createApi, defineSandbox } from './api.mjs';

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
export const { listPreparedProjects, dropPreparedProject } = api;
/** Sessions: one Box driven by hand (runtime/session.mjs). */
export const { openSandboxSession, resolveSandboxRunner } = api;
export { defineSandbox };

/**
 * Reads a Definition folder into what `registerSandbox` takes, compiling its TypeScript and
 * checking its module graph (build/definition-directory.mjs, loaded on the first call). Node only.
 */
export async function readDefinitionDirectory(directory, options) {
  const build = await import('../build/definition-directory.mjs');
  return build.readDefinitionDirectory(directory, options);
}

/** Prepares a discovered free-form Definition (build/free-form.mjs, loaded on the first call). Node only. */
export async function prepareFreeFormDefinition(appRoot, discovered) {
  const build = await import('../build/free-form.mjs');
  return build.prepareFreeFormDefinition(appRoot, discovered);
}

/** Finds the Definitions under an app root (build/discovery.mjs, loaded on the first call). Node only. */
export async function discoverDefinitions(root) {
  const build = await import('../build/discovery.mjs');
  return build.discoverDefinitions(root);
}

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
