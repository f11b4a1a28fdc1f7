// Turns one discovered Definition into the prepared object the registry carries (Node only).
// The one place that dispatches on the Definition kind; see docs/internals.md "Vite plugin".
import path from 'node:path';
import { readDefinitionDirectory } from './definition-directory.mjs';

/**
 * Prepares a Definition found by `discoverDefinitions(appRoot)`.
 * @param {string} appRoot absolute app root
 * @param {{ name: string, kind: 'package' | 'free-form', dir: string, entry: string }} discovered
 * @returns {Promise<{ name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, [key: string]: unknown }>}
 *   the object `registerSandbox` takes; every field is carried into the generated module unchanged.
 * @throws Error `SANDBOX_INVALID_ARGUMENT` from reading/compiling the package (names the file);
 *   `SANDBOX_NOT_SUPPORTED` for free-form `.sandbox.*` files (not bundled in this build).
 */
export async function prepareDefinition(appRoot, discovered) {
  if (discovered.kind === 'package') {
    const prepared = await readDefinitionDirectory(path.join(appRoot, discovered.dir), { appRoot });
    return { ...prepared, name: discovered.name };
  }
  const error = new Error(
    `Free-form Definition ${discovered.entry} ("${discovered.name}") cannot be prepared yet: bundling of .sandbox.* files is not available in this build; move it to server/sandboxes/${discovered.name}/ as a package (package.json + index.ts).`,
  );
  error.name = 'SandboxError';
  error.code = 'SANDBOX_NOT_SUPPORTED';
  throw error;
}
