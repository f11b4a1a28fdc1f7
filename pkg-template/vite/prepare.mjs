// Turns one discovered Definition into the prepared object the registry carries (Node only).
// The one place that dispatches on the Definition kind; see docs/internals/build-steps.md "Vite plugin".
import path from 'node:path';
import { readDefinitionProject } from './definition-directory.mjs';
import { prepareFreeFormDefinition } from './free-form.mjs';
import { stackSources } from './source-stack.mjs';

/**
 * Prepares a Definition found by `discoverDefinitions(appRoot)`.
 * @param {string} appRoot absolute app root
 * @param {{ name: string, kind: 'package', dir: string, entry: string } | { name: string, kind: 'free-form', dir: string, entry: string }} discovered
 * @returns {Promise<{ definition: { name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, packagePath?: string, entry?: string, timeout?: number }, inputs: string[], sources: Record<string, string | object> }>}
 *   `definition`: exactly the fields `registerSandbox` reads; `inputs`: the source files outside
 *   the Definition's folder that it was built from (free-form local imports), relative to
 *   `appRoot`, so a watcher knows what to react to; `sources`: how a stack maps back to the
 *   source files, paths relative to `appRoot` (source-stack.mjs `stackSources`; never shipped).
 * @throws Error `SANDBOX_INVALID_ARGUMENT` from reading, compiling, checking or bundling (the
 *   message names the file, and the line when there is one).
 */
export async function prepareDefinition(appRoot, discovered) {
  if (discovered.kind === 'package') {
    const { files, packagePath, installRoot, maps } = await readDefinitionProject(path.join(appRoot, discovered.dir), {
      appRoot,
    });
    const sources = stackSources({ files, installRoot, maps }, path.resolve(appRoot));
    return { definition: { name: discovered.name, files, packagePath }, inputs: [], sources };
  }
  const { files, entry, timeout, inputs, sourceMap } = await prepareFreeFormDefinition(appRoot, discovered);
  const definition = { name: discovered.name, files, entry };
  if (timeout !== undefined) definition.timeout = timeout;
  const root = path.resolve(appRoot);
  const sources = stackSources(
    { files, installRoot: path.join(root, discovered.dir), maps: new Map([[entry, sourceMap]]), mapRoot: root },
    root,
  );
  return { definition, inputs, sources };
}
