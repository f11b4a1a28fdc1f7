// The public API over an initialised wasm module. Runtime entry points (index.node.mjs,
// index.workerd.mjs, index.browser.mjs) only load the wasm and hand it here; every decision is in
// the Rust core.
import { SANDBOX_ENV_NAMES } from './facts.mjs';
import { sessionApi } from './session.mjs';
import { startRun } from './run-handle.mjs';
import { sandboxError } from './sandbox-error.mjs';

/** Environment variable names the core reads (generated from crates/tooling/src/facts.rs). Nothing else crosses over. */
export { SANDBOX_ENV_NAMES };

/** Picks the names of SANDBOX_ENV_NAMES from an env object (string values only). */
export function pickSandboxEnv(env) {
  const picked = {};
  for (const name of SANDBOX_ENV_NAMES) {
    if (typeof env?.[name] === 'string') picked[name] = env[name];
  }
  return picked;
}

/** Whether two picks of pickSandboxEnv hold the same names and values. */
function sameEnv(a, b) {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => a[name] === b[name]);
}

/** Whether `value` is an object and no array (what configureSandbox's config and its env must be). */
function isRecord(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What a value that should have been an object is, for messages: `null`, `an array` or its typeof. */
function describe(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/**
 * Declares a free-form Definition (`<path>.sandbox.ts`): `export default defineSandbox({ run,
 * timeout?, project? })`. The identity at run time; the options are read statically when the file
 * is prepared (see free-form.mjs), so they must be literals.
 */
export function defineSandbox(definition) {
  return definition;
}

/**
 * Binds the public functions to a wasm module.
 * @param {typeof import('../wasm/vite_hub_sandbox.js')} wasm the wasm-bindgen exports
 * @param {() => Record<string, unknown>} readEnv the runtime's environment (only SANDBOX_ENV_NAMES are
 *   kept; a Worker's env also holds bindings)
 * @param {(work: Promise<unknown>) => void} [keepAlive] keeps the runtime alive for the work after a
 *   Response (a Worker's `waitUntil`); Node and browsers need none
 */
export function createApi(wasm, readEnv, keepAlive) {
  /** `configureSandbox({ onLog })`: every Run's onLog unless the call passes its own (default: none). */
  let defaultOnLog;
  /**
   * The last config that named no `env`, and the pick of the runtime's env it was resolved with:
   * that env is read again before each call that may reach a provider, and a change (a refreshed
   * VERCEL_OIDC_TOKEN, a token set after import) resolves the config again. `null` when the
   * config named its `env` (a Worker's): the app owns that snapshot.
   */
  let implicitEnv = null;
  const refreshEnv = () => {
    if (!implicitEnv) return;
    const env = readEnv();
    const picked = pickSandboxEnv(env);
    if (sameEnv(picked, implicitEnv.picked)) return;
    wasm.configureSandbox({ ...implicitEnv.config, env: picked }, env);
    implicitEnv.picked = picked;
  };
  const configureSandbox = (config = {}) => {
    if (!isRecord(config)) {
      throw sandboxError(
        'SANDBOX_INVALID_ARGUMENT',
        `configureSandbox(config) expects an object, got ${describe(config)}`,
      );
    }
    if (config.env !== undefined && !isRecord(config.env)) {
      throw sandboxError(
        'SANDBOX_INVALID_ARGUMENT',
        `configureSandbox config.env must be an object (process.env or a Worker's env), got ${describe(config.env)}`,
      );
    }
    const env = config.env ?? readEnv();
    // The whole env goes along as a JS value: a Worker's env holds the Durable Object binding.
    // The core checks onLog (a function or absent) and keeps it out of its config.
    const { onLog } = config;
    const picked = pickSandboxEnv(env);
    wasm.configureSandbox({ ...config, onLog, env: picked }, env);
    defaultOnLog = onLog;
    implicitEnv = config.env === undefined ? { config: { ...config }, picked } : null;
  };
  // Every Run (startSandbox, runSandbox, a runner's run) hands the work after its Response to it.
  if (keepAlive) wasm.setSandboxKeepAlive(keepAlive);
  const startSandbox = (name, payload, options) => {
    refreshEnv();
    return startRun(wasm, name, payload, options, defaultOnLog);
  };
  // Only the Response leaves runSandbox: its handle keeps none of the entry's output.
  const runSandbox = (name, payload, options) => {
    refreshEnv();
    return startRun(wasm, name, payload, options, defaultOnLog, { keepLogs: false }).response();
  };
  return {
    configureSandbox,
    registerSandbox: (name, definition) => wasm.registerSandbox(name, definition),
    unregisterSandbox: (name) => wasm.unregisterSandbox(name),
    listSandboxes: () => wasm.listSandboxes(),
    startSandbox,
    runSandbox,
    closeSandbox: (sandboxId, options) => {
      refreshEnv();
      return wasm.closeSandbox(sandboxId, options);
    },
    setSandboxDefinitionLoader: (loader, describe) => wasm.setSandboxDefinitionLoader(loader ?? null, describe ?? null),
    listPreparedProjects: () => wasm.listPreparedProjects(),
    dropPreparedProject: (digest) => wasm.dropPreparedProject(digest),
    closeWarmPools: () => wasm.closeWarmPools(),
    listWarmPools: () => wasm.listWarmPools(),
    ...sessionApi(wasm, () => defaultOnLog, refreshEnv),
  };
}
