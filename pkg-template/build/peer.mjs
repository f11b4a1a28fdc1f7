// The build steps' libraries (esbuild, acorn, eslint-scope, yaml, @jridgewell/trace-mapping,
// smol-toml, jsonc-parser) are optional peer dependencies of the package (package.json
// `peerDependenciesMeta`): a server that only runs Definitions never needs them, and an app's Vite
// brings some (Vite 7 depends on esbuild). Each is loaded from the app's node_modules on the first
// call of the step that needs it; a missing one fails that step with its name and the install line.
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
 *   resolves it, naming the package and `npm i -D <name>`.
 */
export function peer(name, purpose) {
  const cached = loaded.get(name);
  if (cached) return cached;
  let module;
  try {
    module = require(name);
  } catch (error) {
    if (!isMissing(error, name)) throw error;
    throw sandboxError(
      'SANDBOX_NOT_SUPPORTED',
      `${purpose} needs the package "${name}", which is not installed: it is an optional peer dependency of @vite-hub/sandbox, used only by its build steps. Install it in your app: npm i -D ${name}`,
      error,
    );
  }
  loaded.set(name, module);
  return module;
}

/** Whether `error` says that `name` itself (not something it imports) could not be found. */
function isMissing(error, name) {
  if (error?.code !== 'MODULE_NOT_FOUND' && error?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  return String(error.message).includes(`'${name}'`);
}
