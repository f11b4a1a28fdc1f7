// Reads the files of a Definition's project (Node only): the Definition folder alone, or — when
// it is a pnpm workspace root or a package inside one — the parts of the workspace the Rust core
// says to ship (crates/core/src/definition/workspace.rs). Walking, reading and YAML parsing happen here; every
// decision is made in Rust. Contract: docs/internals/build-steps.md, "Project resolution".
import fs from 'node:fs/promises';
import path from 'node:path';
import * as wasm from './tooling-wasm.mjs';
import { parse as parseYaml } from 'yaml';
import { invalidArgument } from './sandbox-error.mjs';

const WORKSPACE_FILE = 'pnpm-workspace.yaml';

function isInside(root, target) {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

function toPosix(relative) {
  return relative.split(path.sep).join('/');
}

function join(...parts) {
  return parts.filter((part) => part !== '').join('/');
}

async function isFile(target) {
  return fs.stat(target).then(
    (stat) => stat.isFile(),
    () => false,
  );
}

/**
 * Reads every file below `root` (real path) into `into` (a Map keyed by path), prefixing paths
 * with `prefix`; `label` names the walked folder in messages. Every entry's path (with `prefix`,
 * i.e. relative to the install root) is checked with the core's exclusion rule (`isExcludedPath`,
 * crates/core/src/definition.rs: node_modules/.git trees, dotenv files, `.npmrc`, root `bun.lockb`) before
 * anything else, so an excluded link is skipped even when it points outside `root`. A symlink
 * whose target (relative to `root`, with `prefix`) is excluded is skipped too, so `config.txt ->
 * .env` never ships the secret. Other symlinks must stay inside `root`; executable modes are kept.
 */
async function walkFiles(root, prefix, label, into) {
  async function walk(realDir, relativeDir, chain) {
    const entries = await fs.readdir(realDir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      const shown = join(prefix, relative);
      if (wasm.isExcludedPath(shown)) continue;
      let target = path.join(realDir, entry.name);
      let stat;
      if (entry.isSymbolicLink()) {
        let resolved;
        try {
          resolved = await fs.realpath(target);
        } catch {
          throw invalidArgument(
            `Definition file "${shown}" is a broken symlink; point it at an existing file in the folder or remove it.`,
          );
        }
        if (!isInside(root, resolved)) {
          const pointsTo = await fs.readlink(target);
          throw invalidArgument(
            `Definition file "${shown}" is a symlink to "${pointsTo}", outside the Definition folder "${label}"; ` +
              'copy the file into the folder or remove the link.',
          );
        }
        if (wasm.isExcludedPath(join(prefix, toPosix(path.relative(root, resolved))))) continue;
        target = resolved;
        stat = await fs.stat(target);
      } else {
        stat = await fs.lstat(target);
      }
      if (stat.isDirectory()) {
        if (chain.includes(target)) throw invalidArgument(`Definition directory "${shown}" is a symlink loop.`);
        await walk(target, relative, [...chain, target]);
      } else if (stat.isFile()) {
        into.set(shown, await readOne(target, shown, stat));
      }
    }
  }
  await walk(root, '', [root]);
}

async function readOne(target, relative, stat) {
  const file = { path: relative, content: new Uint8Array(await fs.readFile(target)) };
  if (stat.mode & 0o111) file.mode = stat.mode & 0o777;
  return file;
}

/**
 * The nearest directory holding `pnpm-workspace.yaml`: `packageRoot` itself, then (only with an
 * `appRoot`) each parent up to and including `appRoot`. Null when there is none.
 */
async function findWorkspaceRoot(packageRoot, appRoot) {
  if (await isFile(path.join(packageRoot, WORKSPACE_FILE))) return packageRoot;
  if (appRoot === null) return null;
  let current = packageRoot;
  while (current !== appRoot) {
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
    if (await isFile(path.join(current, WORKSPACE_FILE))) return current;
  }
  return null;
}

/** `packages` and `patchedDependencies` of a `pnpm-workspace.yaml` (parsed with npm `yaml`). */
async function readWorkspaceFile(file, shown) {
  const text = await fs.readFile(file, 'utf8');
  let document;
  try {
    document = parseYaml(text) ?? {};
  } catch (error) {
    const where = error.linePos?.[0] ? `${shown}:${error.linePos[0].line}:${error.linePos[0].col}` : shown;
    throw invalidArgument(`Cannot parse ${where}: ${error.message.split('\n')[0]}`, error);
  }
  if (typeof document !== 'object' || Array.isArray(document)) {
    throw invalidArgument(`${shown} must be a YAML mapping with a "packages" list.`);
  }
  const packages = document.packages ?? [];
  if (!Array.isArray(packages) || packages.some((item) => typeof item !== 'string')) {
    throw invalidArgument(`${shown} "packages" must be a list of glob strings, e.g. packages: ['packages/*'].`);
  }
  return { globs: packages, patchedDependencies: document.patchedDependencies ?? null };
}

/** Every `package.json` below the workspace root (not in node_modules, .git or dot-directories). */
async function listManifests(root) {
  const manifests = [];
  async function walk(dir, relativeDir) {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (entry.isDirectory()) {
        if (wasm.isExcludedPath(join(relativeDir, entry.name)) || entry.name.startsWith('.')) continue;
        await walk(path.join(dir, entry.name), join(relativeDir, entry.name));
      } else if (entry.name === 'package.json' && entry.isFile()) {
        manifests.push({ dir: relativeDir, text: await fs.readFile(path.join(dir, entry.name), 'utf8') });
      }
    }
  }
  await walk(root, '');
  return manifests.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
}

/**
 * Reads a Definition's project files.
 * @param {string} dir the Definition folder
 * @param {{ appRoot?: string }} [options] `appRoot`: search enclosing pnpm workspaces up to it
 * @returns {Promise<{ files: Array<{ path: string, content: Uint8Array, mode?: number }>, packagePath: string }>}
 *   `files` relative to the install root (the workspace root when a pnpm workspace applies), the
 *   package at `packagePath` below it (`''` otherwise).
 * @throws Error with `code: 'SANDBOX_INVALID_ARGUMENT'`: symlinks leaving a shipped folder, an
 *   unreadable `pnpm-workspace.yaml`, a missing patch file, `dir` outside `appRoot`, or the core's
 *   workspace errors (e.g. "references missing pnpm workspace dependency").
 */
export async function readProjectFiles(dir, options = {}) {
  const packageRoot = await fs.realpath(path.resolve(dir));
  const appRoot = options.appRoot === undefined ? null : await fs.realpath(path.resolve(options.appRoot));
  if (appRoot !== null && !isInside(appRoot, packageRoot)) {
    throw invalidArgument(`Definition directory "${dir}" is outside the app root "${options.appRoot}".`);
  }
  const files = new Map();
  const workspaceRoot = await findWorkspaceRoot(packageRoot, appRoot);
  const plan = workspaceRoot === null ? null : await planWorkspace(workspaceRoot, packageRoot, appRoot);
  if (plan === null) {
    await walkFiles(packageRoot, '', dir, files);
    return { files: [...files.values()], packagePath: '' };
  }
  for (const shipped of plan.dirs) {
    await walkFiles(path.join(workspaceRoot, shipped), shipped, join(plan.rootLabel, shipped) || '.', files);
  }
  for (const name of [WORKSPACE_FILE, 'package.json', 'pnpm-lock.yaml', ...plan.patchFiles]) {
    if (files.has(name)) continue;
    const target = path.join(workspaceRoot, name);
    const stat = await fs.stat(target).catch(() => null);
    if (stat?.isFile()) {
      const real = await fs.realpath(target);
      if (!isInside(workspaceRoot, real))
        throw invalidArgument(`Workspace file "${name}" is a symlink that escapes the workspace root.`);
      files.set(name, await readOne(real, name, stat));
    } else if (plan.patchFiles.includes(name)) {
      throw invalidArgument(
        `Patch file "${name}" named by the pnpm workspace at "${plan.rootLabel || '.'}" does not exist; create it or drop the patchedDependencies entry.`,
      );
    }
  }
  const sorted = [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files: sorted, packagePath: plan.packagePath };
}

/** Reads the workspace facts and asks the core (`resolvePnpmWorkspace`); null when it does not apply. */
async function planWorkspace(workspaceRoot, packageRoot, appRoot) {
  const rootLabel = appRoot === null ? '' : toPosix(path.relative(appRoot, workspaceRoot));
  const { globs, patchedDependencies } = await readWorkspaceFile(
    path.join(workspaceRoot, WORKSPACE_FILE),
    join(rootLabel, WORKSPACE_FILE),
  );
  const plan = wasm.resolvePnpmWorkspace({
    rootLabel,
    packagePath: toPosix(path.relative(workspaceRoot, packageRoot)),
    globs,
    patchedDependencies,
    manifests: await listManifests(workspaceRoot),
  });
  return plan === null ? null : { ...plan, rootLabel };
}
