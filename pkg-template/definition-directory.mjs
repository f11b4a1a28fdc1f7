// Reads a Definition folder into memory, then compiles its local TypeScript and checks its module
// graph (definition-modules.mjs). Node only. Contract: docs/internals.md, "TypeScript".
import fs from 'node:fs/promises';
import path from 'node:path';
import { compileTypeScriptFiles } from './definition-modules.mjs';

export { compileTypeScriptFiles };

const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git']);

function invalidArgument(message) {
  const error = new Error(message);
  error.code = 'SANDBOX_INVALID_ARGUMENT';
  return error;
}

function isSkippedFile(name) {
  return name === '.env' || name === '.envrc' || name.startsWith('.env.') || name === '.npmrc' || name === 'bun.lockb';
}

function isInside(root, target) {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

/**
 * Reads every file of a Definition folder (see the exclusions above) and adds the compiled
 * `.ts.mjs` / `.mts.mjs` siblings of its TypeScript files, after checking the module graph
 * (see `compileTypeScriptFiles`; messages name the Definition by the folder name).
 * @param {string} dir
 * @throws {Error} `code: 'SANDBOX_INVALID_ARGUMENT'` for a broken or escaping symlink, a symlink
 *   loop, a TypeScript compile error or a broken module-graph rule.
 * @returns {Promise<{ name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }> }>}
 */
export async function readDefinitionDirectory(dir) {
  const absolute = path.resolve(dir);
  const root = await fs.realpath(absolute);
  const files = [];

  async function walk(realDir, relativeDir, chain) {
    const entries = await fs.readdir(realDir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      let target = path.join(realDir, entry.name);
      let stat;
      if (entry.isSymbolicLink()) {
        let resolved;
        try {
          resolved = await fs.realpath(target);
        } catch {
          throw invalidArgument(`Definition file "${relative}" is a broken symlink.`);
        }
        if (!isInside(root, resolved)) {
          throw invalidArgument(`Definition file "${relative}" is a symlink that escapes the Definition directory.`);
        }
        target = resolved;
        stat = await fs.stat(target);
      } else {
        stat = await fs.lstat(target);
      }
      if (stat.isDirectory()) {
        if (SKIPPED_DIRECTORIES.has(entry.name)) continue;
        if (chain.includes(target)) {
          throw invalidArgument(`Definition directory "${relative}" is a symlink loop.`);
        }
        await walk(target, relative, [...chain, target]);
      } else if (stat.isFile()) {
        if (isSkippedFile(entry.name)) continue;
        const file = { path: relative, content: new Uint8Array(await fs.readFile(target)) };
        if (stat.mode & 0o111) file.mode = stat.mode & 0o777;
        files.push(file);
      }
    }
  }

  await walk(root, '', [root]);
  const name = path.basename(absolute);
  return { name, files: await compileTypeScriptFiles(files, { name }) };
}
