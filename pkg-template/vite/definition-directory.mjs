// Reads a Definition's project into memory (definition-project.mjs), then compiles its local
// TypeScript and checks its module graph (definition-modules.mjs). Node only.
// Contract: docs/internals/build-steps.md, "TypeScript" and "Project resolution".
import path from 'node:path';
import { compileTypeScriptFiles } from './definition-modules.mjs';
import { readProjectFiles } from './definition-project.mjs';

export { compileTypeScriptFiles };

/**
 * Reads a Definition's project (the folder alone, or the parts of an enclosing pnpm workspace,
 * see definition-project.mjs) and adds the compiled `.ts.mjs` / `.mts.mjs` siblings of every
 * shipped TypeScript file (a shipped workspace is compiled whole), after checking the module
 * graph of the package (messages name the Definition by the folder name).
 * @param {string} dir
 * @param {{ appRoot?: string }} [options] `appRoot`: search pnpm workspaces upwards up to it
 * @throws {Error} `code: 'SANDBOX_INVALID_ARGUMENT'` for a broken or escaping symlink, a symlink
 *   loop, a bad workspace, a TypeScript compile error or a broken module-graph rule.
 * @returns {Promise<{ name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, packagePath: string }>}
 */
export async function readDefinitionDirectory(dir, options = {}) {
  const { name, files, packagePath } = await readDefinitionProject(dir, options);
  return { name, files, packagePath };
}

/**
 * {@link readDefinitionDirectory}, plus what maps a stack back to the sources (source-stack.mjs;
 * host side only, never shipped): `installRoot`, the absolute folder `files` are relative to, and
 * `maps`, the source map of each compiled file by its path.
 * @returns {Promise<{ name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, packagePath: string, installRoot: string, maps: Map<string, object> }>}
 */
export async function readDefinitionProject(dir, options = {}) {
  const absolute = path.resolve(dir);
  const name = path.basename(absolute);
  const { files, packagePath } = await readProjectFiles(absolute, options);
  const maps = new Map();
  const compiled = await compileTypeScriptFiles(files, { name, packagePath, sourceMaps: maps });
  const installRoot = packagePath ? path.resolve(absolute, ...packagePath.split('/').map(() => '..')) : absolute;
  return { name, files: compiled, packagePath, installRoot, maps };
}
