// Node 20+ entry: instantiates the runtime wasm synchronously from disk and starts the local Box
// host in-process the first time a Run needs the `local` provider. The build-time functions it
// also exports (reading a Definition folder, discovery, free-form preparation) import vite/ —
// esbuild, acorn, yaml, eslint-scope, trace-mapping and the tooling wasm — on their first call
// only, so a server that only runs Definitions never loads them (tests/runtime/runtime-imports.test.mjs).
import { wasm } from './wasm-node.mjs';
import { createApi, defineSandbox } from './api.mjs';
import { borrowLocalBoxHost, setOfferedHost } from './shared-host.mjs';
import { sandboxError } from './sandbox-error.mjs';

let localHost = null;
/** The host start failures already printed (each once per process). */
const startFailuresSaid = new Set();
/** The host `warmUp()` last warmed and that warm-up (one per host; a failed one is tried again). */
let warmedHost = null;
let warmedPaths = null;
/** The last warmUp() call. */
let warming = null;
// The core owns the one in-process host (src/provider/local/host.rs) and calls this once: it
// borrows the host another thread of this process warmed up (shared-host.mjs), else starts one.
// The Runs of this thread call a host it started in process (the host's `fetch`: no loopback
// socket, no HTTP parse, no token); a borrowed host over HTTP. Then one uncounted request
// (`GET /_vite-hub/counters`) sets up that path — Node loads undici (Request, Response) on first
// use, and over HTTP its parser and the kept-alive connection the Runs reuse; its ms become the
// `connect` phase of Server-Timing (`host` is the rest).
wasm.setLocalBoxHostStarter(
  async (
    /** @type {{ isolation?: string, parked?: object, memoryRequestBytes?: number, production?: boolean, shareHostNetwork?: boolean, harness?: string }} */ {
      isolation,
      parked,
      memoryRequestBytes,
      production,
      shareHostNetwork,
      harness,
    } = {},
  ) => {
    let host = await borrowLocalBoxHost();
    let own = null;
    if (!host) {
      // The host's probes (bwrap, the network tools, a tmpfs mount: isolation.mjs, once per process)
      // are child processes: started first, so loading the rest of the host and this isolate's
      // fetch (Node 20 loads undici, ~25-40 ms, on the first use of `Response` or `fetch`) happen
      // while they run instead of after them.
      const { hostFeatures } = await import('../box-host/engine/host-probe.mjs');
      hostFeatures();
      const loading = import('../box-host/index.mjs');
      void globalThis.Response;
      const { startBoxHost } = await loading;
      try {
        // `production` is the config's (else its env's NODE_ENV), so `production: true` refuses
        // Boxes without isolation as NODE_ENV=production does.
        // `harness`: the core's, which its parked processes import before a Run's handover.
        own = await startBoxHost({ isolation, parked, memoryRequestBytes, production, shareHostNetwork, harness });
      } catch (error) {
        // Said on the server's own output too, once per reason: the Run's error reaches only the
        // client that made it, and every Run tries the start again.
        const line = `[vite-hub-sandbox] the local Box host did not start: ${error.message}`;
        if (!startFailuresSaid.has(line)) console.error(line);
        startFailuresSaid.add(line);
        throw error;
      }
      own.unref?.();
      // One line when Boxes get less than isolation, a Box network, limits and the tools they need.
      if (own.degraded) console.warn(own.description);
      localHost = own;
      host = own;
    }
    const connectStarted = performance.now();
    // This thread's own host is called in process (its `fetch`: no socket, no HTTP parse); a
    // borrowed one (another thread's) over HTTP with its token.
    const send = own
      ? (path) => own.fetch(new Request(`${own.baseUrl}${path}`))
      : (path) => fetch(`${host.baseUrl}${path}`, { headers: { authorization: `Bearer ${host.token}` } });
    try {
      const probe = await send('/_vite-hub/counters');
      await probe.arrayBuffer();
      if (!probe.ok) throw new Error(`the local Box host answered its first request with HTTP ${probe.status}`);
    } catch (error) {
      // The core forgets a failed start: close this host so the next try starts a fresh one.
      if (own) {
        localHost = null;
        await own.close();
      }
      throw error;
    }
    const connectMs = performance.now() - connectStarted;
    return own
      ? { baseUrl: own.baseUrl, token: own.token, fetch: own.fetch, connectMs }
      : { baseUrl: host.baseUrl, token: host.token, connectMs };
  },
);
// What this thread offers the worker threads of the process (when the Vite plugin offers): the
// host its warmUp() warmed, once warm; nothing when it warmed none.
setOfferedHost(async () => {
  if (!warming) return null;
  await warming;
  return localHost && { baseUrl: localHost.baseUrl, token: localHost.token };
});

const api = createApi(wasm, () => process.env);
api.configureSandbox({});

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
export { defineSandbox };
export { readRequestPayload, readValidatedPayload } from './payload.mjs';
export { requestSignal } from './request-signal.mjs';

/**
 * A module of vite/ (the build steps), imported on first use. Its specifier is made at run time
 * on purpose: a deployment's file tracer (Nitro's for a Node server) follows a literal
 * `import('../vite/…')` and would copy the build steps and their libraries (yaml, eslint-scope,
 * …) into a server that only runs Definitions (tests/e2e/zero-config.test.mjs measures it).
 */
const moduleUrl = import.meta.url;
function buildModule(name) {
  return import(new URL(`../vite/${name}.mjs`, moduleUrl).href);
}

/**
 * Reads a Definition folder into what `registerSandbox` takes, compiling its TypeScript and
 * checking its module graph (vite/definition-directory.mjs, loaded on the first call). Node only.
 */
export async function readDefinitionDirectory(directory, options) {
  const build = await buildModule('definition-directory');
  return build.readDefinitionDirectory(directory, options);
}

/** Prepares a discovered free-form Definition (vite/free-form.mjs, loaded on the first call). Node only. */
export async function prepareFreeFormDefinition(appRoot, discovered) {
  const build = await buildModule('free-form');
  return build.prepareFreeFormDefinition(appRoot, discovered);
}

/** Finds the Definitions under an app root (vite/discovery.mjs, loaded on the first call). Node only. */
export async function discoverDefinitions(root) {
  const build = await buildModule('discovery');
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

/**
 * Starts the in-process local Box host ahead of the first Run (the one every Run on the `local`
 * provider without `local.baseUrl` shares). Resolves `true` when it listens and the first request
 * to it is done, and one throwaway Box was opened, written and stopped on it (the host's and this
 * isolate's first-use costs: warm-up.mjs); idempotent (a second call, or one during a start, waits
 * for the same host and warm-up). With `{ onlyIfUsed: true }` it does so only when the current
 * configuration's Runs go to that host, and resolves `false` at once, starting nothing, otherwise
 * (what a server's start-up calls: nitro-warm-up.mjs). Node only.
 * @param {{ onlyIfUsed?: boolean }} [options]
 * @throws {SandboxError} `SANDBOX_PROVIDER_UNAVAILABLE` when the host did not start;
 *   `SANDBOX_INVALID_ARGUMENT` (a rejection) for options that are not a plain object, that have a
 *   key other than `onlyIfUsed`, or whose `onlyIfUsed` is no boolean or cannot be read.
 */
export function warmUp(options) {
  let onlyIfUsed;
  try {
    onlyIfUsed = warmUpOnlyIfUsed(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const started = wasm.warmUpLocalBoxHost(onlyIfUsed);
  const current = (async () => {
    if (!(await started)) return false;
    const host = localHost;
    if (!host) return true;
    if (warmedHost !== host) {
      warmedHost = host;
      warmedPaths = import('./warm-up.mjs').then(({ warmBoxPaths }) => warmBoxPaths(host));
      warmedPaths.catch(() => {
        if (warmedHost === host) warmedHost = null;
      });
    }
    await warmedPaths;
    return true;
  })();
  // A warm-up that started nothing does not replace the one a worker thread may be offered.
  if (!onlyIfUsed || !warming) warming = current;
  return current;
}

/** `warmUp(options)`'s one option, checked: a plain object with no key but `onlyIfUsed`, read once. */
function warmUpOnlyIfUsed(options) {
  if (options === undefined) return false;
  const refused = (got) =>
    sandboxError(
      'SANDBOX_INVALID_ARGUMENT',
      `warmUp(options) takes no options or { onlyIfUsed?: boolean } (got ${got})`,
    );
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw refused(options === null ? 'null' : Array.isArray(options) ? 'an array' : `a ${typeof options}`);
  let keys;
  let onlyIfUsed;
  try {
    const prototype = Object.getPrototypeOf(options);
    if (prototype !== Object.prototype && prototype !== null) throw refused('an object that is not a plain object');
    keys = Reflect.ownKeys(options);
    onlyIfUsed = options.onlyIfUsed;
  } catch (error) {
    if (error?.name === 'SandboxError') throw error;
    throw refused(`options that could not be read: ${error?.message ?? error}`);
  }
  const unknown = keys.find((key) => key !== 'onlyIfUsed');
  if (unknown !== undefined)
    throw refused(`the unknown key ${typeof unknown === 'symbol' ? 'a symbol' : JSON.stringify(unknown)}`);
  if (onlyIfUsed !== undefined && typeof onlyIfUsed !== 'boolean')
    throw refused(`onlyIfUsed: ${onlyIfUsed === null ? 'null' : typeof onlyIfUsed}`);
  return onlyIfUsed === true;
}

/**
 * Stops the in-process local Box host, if one was started (every Box it holds is stopped), after
 * closing the warm pools' Boxes (`closeWarmPools()`; a failure there does not keep the host up).
 */
export async function closeLocalBoxHost() {
  await api.closeWarmPools().catch(() => {});
  const host = localHost;
  localHost = null;
  wasm.forgetLocalBoxHost();
  if (host) await host.close();
}

/** Kept for symmetry with the browser entry: the wasm is already instantiated here. */
export const initSandbox = async () => {};
