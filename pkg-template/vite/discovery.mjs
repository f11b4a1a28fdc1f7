// Finds the Definitions of an app (Node only): walks the app root and hands the file list to the
// Rust core, which owns every discovery rule (crates/core/src/definition/discovery.rs), through the tooling wasm module.
import fs from 'node:fs/promises';
import path from 'node:path';
import * as wasm from './tooling-wasm.mjs';
import { invalidArgument } from './sandbox-error.mjs';

/** Directory names never walked (build output, dependencies, VCS); dot-directories are skipped too. */
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', 'dist', '.vite-hub']);

/** Whether discovery (and the dev watcher) ignores a directory of this name. */
export function isSkippedDirectory(name) {
  return SKIPPED_DIRECTORIES.has(name) || name.startsWith('.');
}

/**
 * Lists the files under `root` as relative POSIX paths, with the directories that hold a
 * `package.json` or a `pnpm-workspace.yaml` (`''` = the root). Symlinked directories are not
 * followed; a symlink to a file counts as a file.
 * @param {string} root an absolute directory
 */
async function walkAppRoot(root) {
  const files = [];
  const packageDirs = [];
  const workspaceDirs = [];
  async function walk(dir, relativeDir) {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        isFile = await fs.stat(path.join(dir, entry.name)).then(
          (stat) => stat.isFile(),
          () => false,
        );
      }
      if (entry.isDirectory()) {
        if (!isSkippedDirectory(entry.name)) await walk(path.join(dir, entry.name), relative);
      } else if (isFile) {
        files.push(relative);
        if (entry.name === 'package.json') packageDirs.push(relativeDir);
        if (entry.name === 'pnpm-workspace.yaml') workspaceDirs.push(relativeDir);
      }
    }
  }
  await walk(root, '');
  return { files, packageDirs, workspaceDirs };
}

async function walkRoot(root) {
  const absolute = path.resolve(root);
  const stat = await fs.stat(absolute).catch(() => null);
  if (!stat?.isDirectory()) throw invalidArgument(`App root "${root}" is not a directory.`);
  return walkAppRoot(absolute);
}

/**
 * Finds the Definitions under an app root: package projects in `server/sandboxes/<path>/` and
 * free-form `<path>.sandbox.{ts,mts,cts,js,mjs,cjs}` files, sorted by name.
 * @param {string} root the app root (relative to the cwd or absolute)
 * @returns {Promise<Array<{ name: string, kind: 'package' | 'free-form', dir: string, entry: string }>>}
 *   `dir` (the package project) and `entry` are relative to `root`, `/`-separated.
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` for the first folder or file that breaks a rule.
 */
export async function discoverDefinitions(root) {
  return wasm.discoverDefinitions(await walkRoot(root));
}

/**
 * `discoverDefinitions` that keeps going: the valid Definitions and, instead of throwing, every
 * folder or file that breaks a rule (`name` when it has a valid one). For `vite dev` and `inspect`,
 * where one folder being created must not hide the others.
 * @param {string} root the app root
 * @returns {Promise<{ definitions: Array<{ name: string, kind: 'package' | 'free-form', dir: string, entry: string }>, problems: Array<{ name: string | null, origin: string, code: string, message: string }> }>}
 *   `origin`: the folder or file (relative to `root`; a duplicated name joins both with " and ").
 */
export async function discoverDefinitionsAndProblems(root) {
  return wasm.discoverDefinitionsAndProblems(await walkRoot(root));
}
