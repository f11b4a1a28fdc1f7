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
 * @param {object} wasm the wasm-bindgen exports
 * @param {() => Record<string, string>} readEnv the runtime's environment (only SANDBOX_ENV_NAMES are kept)
 * @param {(work: Promise<unknown>) => void} [keepAlive] keeps the runtime alive for the work after a
 *   Response (a Worker's `waitUntil`); Node and browsers need none
 */
export function createApi(wasm, readEnv, keepAlive) {
  /** `configureSandbox({ onLog })`: every Run's onLog unless the call passes its own (default: none). */
  let defaultOnLog;
  const configureSandbox = (config = {}) => {
    if (!isRecord(config)) {
      throw sandboxError('SANDBOX_INVALID_ARGUMENT', `configureSandbox(config) expects an object, got ${describe(config)}`);
    }
    if (config.env !== undefined && !isRecord(config.env)) {
      throw sandboxError('SANDBOX_INVALID_ARGUMENT', `configureSandbox config.env must be an object (process.env or a Worker's env), got ${describe(config.env)}`);
    }
    const env = config.env ?? readEnv();
    // The whole env goes along as a JS value: a Worker's env holds the Durable Object binding.
    // The core checks onLog (a function or absent) and keeps it out of its config.
    const { onLog } = config;
    wasm.configureSandbox({ ...config, onLog, env: pickSandboxEnv(env) }, env);
    defaultOnLog = onLog;
  };
  // Every Run (startSandbox, runSandbox, a runner's run) hands the work after its Response to it.
  if (keepAlive) wasm.setSandboxKeepAlive(keepAlive);
  const startSandbox = (name, payload, options) => startRun(wasm, name, payload, options, defaultOnLog);
  return {
    configureSandbox,
    registerSandbox: (name, definition) => wasm.registerSandbox(name, definition),
    unregisterSandbox: (name) => wasm.unregisterSandbox(name),
    listSandboxes: () => wasm.listSandboxes(),
    startSandbox,
    runSandbox: (name, payload, options) => startSandbox(name, payload, options).response(),
    closeSandbox: (sandboxId, options) => wasm.closeSandbox(sandboxId, options),
    setSandboxDefinitionLoader: (loader, describe) => wasm.setSandboxDefinitionLoader(loader ?? null, describe ?? null),
    listPreparedProjects: () => wasm.listPreparedProjects(),
    dropPreparedProject: (digest) => wasm.dropPreparedProject(digest),
    ...sessionApi(wasm, () => defaultOnLog),
  };
}
