// Turns one discovered Definition into the prepared object the registry carries (Node only).
// The one place that dispatches on the Definition kind; see docs/internals/build-steps.md "Vite plugin".
import path from 'node:path';
import { readDefinitionProject } from './definition-directory.mjs';
import { prepareFreeFormDefinition } from './free-form.mjs';
import { stackSources } from './source-stack.mjs';
import { definitionToolFacts } from './tool-facts.mjs';

/**
 * Prepares a Definition found by `discoverDefinitions(appRoot)`.
 * @param {string} appRoot absolute app root
 * @param {{ name: string, kind: 'package', dir: string, entry: string } | { name: string, kind: 'free-form', dir: string, entry: string }} discovered
 * @param {{ tool?: boolean }} [options] `tool`: also read its tool facts (the generated registry does; a CLI Run does not)
 * @returns {Promise<{ definition: { name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, packagePath?: string, entry?: string, timeout?: number }, inputs: string[], sources: Record<string, string | object>, tool?: { facts: object, warning?: string } }>}
 *   `definition`: exactly the fields `registerSandbox` reads; `inputs`: the source files outside
 *   the Definition's folder that it was built from (free-form local imports), relative to
 *   `appRoot`, so a watcher knows what to react to; `sources`: how a stack maps back to the
 *   source files, paths relative to `appRoot` (source-stack.mjs `stackSources`; never shipped);
 *   `tool` (with `options.tool`): its tool facts and the dev warning of an untyped payload (tool-facts.mjs).
 * @throws Error `SANDBOX_INVALID_ARGUMENT` from reading, compiling, checking or bundling (the
 *   message names the file, and the line when there is one).
 */
export async function prepareDefinition(appRoot, discovered, { tool: withTool = false } = {}) {
  if (discovered.kind === 'package') {
    const { files, packagePath, installRoot, maps } = await readDefinitionProject(path.join(appRoot, discovered.dir), {
      appRoot,
    });
    const sources = stackSources({ files, installRoot, maps }, path.resolve(appRoot));
    const tool = withTool ? await definitionToolFacts(path.resolve(appRoot), discovered) : undefined;
    return { definition: { name: discovered.name, files, packagePath }, inputs: [], sources, tool };
  }
  const { files, entry, timeout, inputs, sourceMap, description, input } = await prepareFreeFormDefinition(
    appRoot,
    discovered,
  );
  const bundleCode = files.find((file) => file.path === entry).content;
  const tool = withTool
    ? await definitionToolFacts(path.resolve(appRoot), discovered, { description, input, bundleCode })
    : undefined;
  const definition = { name: discovered.name, files, entry };
  if (timeout !== undefined) definition.timeout = timeout;
  const root = path.resolve(appRoot);
  const sources = stackSources(
    { files, installRoot: path.join(root, discovered.dir), maps: new Map([[entry, sourceMap]]), mapRoot: root },
    root,
  );
  return { definition, inputs, sources, tool };
}
