// The package as a user gets it: `npm pack` of the built dist/ and `npm install` of that tarball
// into a fresh app outside the repository (no symlink, no workspace link), so Vite sees
// `@vite-hub/sandbox` in the app's node_modules exactly as it would in a user's project.
//
// One tarball and one installed app per test file: `installTarballApp()` is called once in
// `before()`; the install uses the npm cache (`--prefer-offline`) and the vite and nitro versions
// of this repository's lockfile, so it needs the registry only for what the cache lacks.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './vite-app.mjs';

const run = promisify(execFile);

/** The exact version of a package installed in this repository (so the temp app matches the lockfile). */
export function repoVersion(name) {
  return JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/**
 * The package's dependencies that only its build steps import (the `./vite` entry, the CLI's
 * build commands, readDefinitionDirectory): every dependency of dist/package.json but the runtime's
 * (modern-tar, the local Box host's tar reader). A deployed server must not carry them.
 */
export function buildOnlyDependencies() {
  const { dependencies = {} } = JSON.parse(readFileSync(join(repoRoot, 'dist', 'package.json'), 'utf8'));
  return Object.keys(dependencies).filter(
    (name) => !RUNTIME_DEPENDENCIES.includes(name) && !MCP_DEPENDENCIES.includes(name),
  );
}

/**
 * The dependencies only `@vite-hub/sandbox/mcp`, `vite-hub-sandbox mcp` and the Definition tools
 * import. The official MCP SDK is an optional peer dependency (an app that serves MCP installs it).
 */
export const MCP_DEPENDENCIES = ['@cfworker/json-schema'];

/**
 * The dependencies the runtime entries import: modern-tar (the local Box host's tar reader) and
 * ws (its interactive terminals' WebSocket server, imported when a terminal opens).
 */
export const RUNTIME_DEPENDENCIES = ['modern-tar', 'ws'];

/** Packs dist/ into a fresh directory; resolves to `{ tarball, files }` (`files`: the packed paths). */
export async function packDist() {
  const out = mkdtempSync(join(tmpdir(), 'vite-hub-pack-'));
  const { stdout } = await run(
    'npm',
    ['pack', join(repoRoot, 'dist'), '--pack-destination', out, '--json', '--silent'],
    { cwd: out, maxBuffer: 16 * 1024 * 1024 },
  );
  const [info] = JSON.parse(stdout);
  return { tarball: join(out, info.filename), files: info.files.map((file) => file.path).sort(), dir: out };
}

/**
 * Creates an app directory in the temp directory and installs the packed package into it.
 * @param {string} prefix names the directory
 * @param {{ example?: boolean, dependencies?: Record<string, string>, files?: Record<string, string> }} [options]
 *   `example` (default true): copy examples/app (without generated or built output);
 *   `dependencies`: more dependencies (vite and nitro at the repository's versions are always there);
 *   `files`: more files, by app-relative path.
 * @returns {Promise<{ app: string, tarball: string, packDir: string, bin: (name: string) => string }>}
 */
export async function installTarballApp(prefix, { example = true, dependencies = {}, files = {} } = {}) {
  const { tarball, dir: packDir } = await packDist();
  const app = mkdtempSync(join(tmpdir(), `vite-hub-app-${prefix}-`));
  if (example) {
    cpSync(join(repoRoot, 'examples', 'app'), app, {
      recursive: true,
      filter: (source) => !/[\\/](\.output|\.nitro|\.vite-hub|node_modules)$/.test(source),
    });
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(app, path)), { recursive: true });
    writeFileSync(join(app, path), content);
  }
  const manifest = {
    name: `tarball-app-${prefix}`,
    private: true,
    type: 'module',
    // Nothing else: the package brings its build steps' libraries, and uses the app's Vite.
    dependencies: {
      '@vite-hub/sandbox': `file:${tarball}`,
      vite: repoVersion('vite'),
      nitro: repoVersion('nitro'),
      ...dependencies,
    },
  };
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: app,
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return { app, tarball, packDir, bin: (name) => join(app, 'node_modules', '.bin', name) };
}

/** The app's own copy of a package's file (e.g. `vite/bin/vite.js`), never the repository's. */
export function appModule(app, path) {
  return join(app, 'node_modules', path);
}

/**
 * The files of the README's "A first Definition" (section "Use it in your app"), as written there:
 * each line of that code block is `<path>  <content>`, indented lines continue the file above.
 * Tests write them into an installed app so the README stays true.
 */
export function readmeFirstDefinition() {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('**A first Definition.**');
  const block = readme.slice(
    readme.indexOf('```\n', start) + 4,
    readme.indexOf('\n```', readme.indexOf('```\n', start) + 4),
  );
  const files = {};
  let current;
  for (const line of block.split('\n')) {
    const match = /^(\S+)\s+(.*)$/.exec(line);
    if (match) {
      current = match[1];
      files[current] = `${match[2]}\n`;
    } else if (current && line.trim()) {
      files[current] += `${line.trim()}\n`;
    }
  }
  return files;
}
