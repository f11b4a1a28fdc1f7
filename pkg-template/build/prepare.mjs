// Turns one discovered Definition into the prepared object the registry carries (Node only).
// The one place that dispatches on the Definition kind; see docs/internals.md "Vite plugin".
import path from 'node:path';
import { readDefinitionDirectory } from './definition-directory.mjs';
import { prepareFreeFormDefinition } from './free-form.mjs';

/**
 * Prepares a Definition found by `discoverDefinitions(appRoot)`.
 * @param {string} appRoot absolute app root
 * @param {{ name: string, kind: 'package' | 'free-form', dir: string, entry: string }} discovered
 * @returns {Promise<{ definition: { name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, packagePath?: string, entry?: string, timeout?: number }, inputs: string[] }>}
 *   `definition`: exactly the fields `registerSandbox` reads; `inputs`: the source files outside
 *   the Definition's folder that it was built from (free-form local imports), relative to
 *   `appRoot`, so a watcher knows what to react to.
 * @throws Error `SANDBOX_INVALID_ARGUMENT` from reading, compiling, checking or bundling (the
 *   message names the file, and the line when there is one).
 */
export async function prepareDefinition(appRoot, discovered) {
  if (discovered.kind === 'package') {
    const { files, packagePath } = await readDefinitionDirectory(path.join(appRoot, discovered.dir), { appRoot });
    return { definition: { name: discovered.name, files, packagePath }, inputs: [] };
  }
  const { files, entry, timeout, inputs } = await prepareFreeFormDefinition(appRoot, discovered);
  const definition = { name: discovered.name, files, entry };
  if (timeout !== undefined) definition.timeout = timeout;
  return { definition, inputs };
}
