// The build steps' libraries (esbuild, acorn, eslint-scope, yaml, @jridgewell/trace-mapping,
// smol-toml, jsonc-parser) are optional peer dependencies of the package (package.json
// `peerDependenciesMeta`): a server that only runs Definitions never needs them, and an app's Vite
// brings some (Vite 7 depends on esbuild). Each is loaded from the app's node_modules on the first
// call of the step that needs it; a missing one fails that step with its name and one install line
// for every peer the app misses (so a user installs them once, not one message at a time).
import { createRequire } from 'node:module';
import { sandboxError } from './sandbox-error.mjs';

const require = createRequire(import.meta.url);
const loaded = new Map();

/**
 * The module `name`, loaded once. `purpose` says which build step needs it (for the message).
 * @param {'esbuild' | 'acorn' | 'eslint-scope' | 'yaml' | '@jridgewell/trace-mapping' | 'smol-toml' | 'jsonc-parser'} name
 * @param {string} purpose e.g. 'compiling TypeScript'
 * @returns {any} the module's exports
 * @throws {SandboxError} `SANDBOX_NOT_SUPPORTED` (501) when `name` is not installed where the app
 *   resolves it, naming the package and `npm i -D <every optional peer not installed>`.
 */
export function peer(name, purpose) {
  const cached = loaded.get(name);
  if (cached) return cached;
  let module;
  try {
    module = require(name);
  } catch (error) {
    if (!isMissing(error, name)) throw error;
    const missing = missingPeers(name);
    throw sandboxError(
      'SANDBOX_NOT_SUPPORTED',
      `${purpose} needs the package "${name}", which is not installed: it is an optional peer dependency of @vite-hub/sandbox, used only by its build steps. Install it${missing.length > 1 ? ' and the other build-step peers your app lacks' : ''} in your app: npm i -D ${missing.join(' ')}`,
      error,
    );
  }
  loaded.set(name, module);
  return module;
}

/**
 * `name` and every other optional peer that does not resolve from here (the app's node_modules).
 * The peers are those of the package's own package.json (their one list), read only on a failure.
 */
function missingPeers(name) {
  const peers = Object.keys(require('../package.json').peerDependencies);
  return [name, ...peers.filter((peerName) => peerName !== name && !resolves(peerName))];
}

function resolves(name) {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** Whether `error` says that `name` itself (not something it imports) could not be found. */
function isMissing(error, name) {
  if (error?.code !== 'MODULE_NOT_FOUND' && error?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  return String(error.message).includes(`'${name}'`);
}
