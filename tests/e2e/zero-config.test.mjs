// Zero-config install (issue 23 item 5), slow lane: a fresh app outside the repository with only
// `vite`, `nitro` and the packed package installed (no esbuild, acorn, yaml, …: the package brings
// its build steps' libraries and uses the app's Vite), `hubSandbox()` in its Vite config. For
// Vite 7 (nitro 3.0.0) and Vite 8 (a nitro build whose peer range names Vite 8; nitro 3.0.0's says
// `^7`): `vite build`, start the built Node server, and POST to routes that run a package
// Definition (TypeScript, release-notes) and a free-form one (`src/word-count.sandbox.ts`, with a
// local helper) in local Boxes, from a copy of `.output` alone (as deployed). What that server
// carries: Nitro's traced `.output/server/node_modules` holds none of the build steps' libraries
// nor Vite, and is ≤ 3 MB.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeDir, repoRoot, stopChild, freePort, postJson, eventually } from '../support/vite-app.mjs';
import {
  RUNTIME_DEPENDENCIES,
  buildOnlyDependencies,
  installTarballApp,
  repoVersion,
} from '../support/tarball-app.mjs';

const run = promisify(execFile);
/** The ceiling of issue 12 for what a server that only runs Definitions carries. */
const RUNTIME_BYTES_MAX = 3_000_000;
/** Libraries the package's build steps used before (optional peers then): never installed here. */
const FORMER_PEERS = [
  'esbuild',
  'acorn',
  'eslint-scope',
  'yaml',
  '@jridgewell/trace-mapping',
  'smol-toml',
  'jsonc-parser',
];

/** The Vite majors: the app's vite and nitro versions. */
const MAJORS = [
  { name: 'Vite 7 + nitro 3.0.0', vite: repoVersion('vite'), nitro: repoVersion('nitro') },
  // The newest nitro whose peerDependencies name Vite 8 (`npm view nitro@3.0.260610-beta peerDependencies`).
  // Its option is `serverDir`: it still reads the example's `srcDir` (with a deprecation warning)
  // but then scans no routes from it.
  {
    name: 'Vite 8 + nitro 3.0.260610-beta',
    vite: '8.4.0',
    nitro: '3.0.260610-beta',
    files: {
      'vite.config.mjs': readFileSync(join(repoRoot, 'examples/app/vite.config.mjs'), 'utf8').replace(
        "nitro: { srcDir: 'server' }",
        "nitro: { serverDir: 'server' }",
      ),
    },
  },
];

const cleanups = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The top-level package names of a node_modules folder (`@scope/name` for scoped ones). */
function packagesIn(modules) {
  if (!existsSync(modules)) return [];
  return readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name],
    );
}

for (const major of MAJORS) {
  test(`${major.name}: only vite, nitro and the package installed; the built server runs a package and a free-form Definition`, async () => {
    const { app, packDir } = await installTarballApp(`zero-config-vite${major.vite.split('.')[0]}`, {
      dependencies: { vite: major.vite, nitro: major.nitro },
      files: major.files,
    });
    cleanups.push(
      () => removeDir(app),
      () => removeDir(packDir),
    );
    const installed = packagesIn(join(app, 'node_modules'));
    assert.equal(JSON.parse(readFileSync(join(app, 'node_modules/vite/package.json'), 'utf8')).version, major.vite);
    for (const name of FORMER_PEERS.filter((name) => !buildOnlyDependencies().includes(name))) {
      // esbuild comes with Vite 7 (its dependency), never with the package or Vite 8.
      if (name === 'esbuild' && major.vite.startsWith('7.')) continue;
      assert.ok(!installed.includes(name), `${name} is installed (${installed.join(', ')})`);
    }

    await run(process.execPath, [join(app, 'node_modules/vite/bin/vite.js'), 'build'], {
      cwd: app,
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });

    // What the deployed server carries.
    const traced = join(app, '.output/server/node_modules');
    const carried = packagesIn(traced);
    const { stdout: du } = await run('du', ['-sb', traced]);
    const bytes = Number(du.split('\t')[0]);
    console.log(`${major.name}: .output/server/node_modules is ${bytes} bytes: ${carried.join(', ')}`);
    assert.ok(carried.includes('@vite-hub/sandbox'), carried.join(', '));
    for (const name of RUNTIME_DEPENDENCIES)
      assert.ok(carried.includes(name), `${name} (a runtime dependency) was not traced: ${carried.join(', ')}`);
    for (const name of [...buildOnlyDependencies(), 'vite', 'esbuild', 'rollup', 'rolldown']) {
      assert.ok(!carried.includes(name), `${name} was traced into the server: ${carried.join(', ')}`);
    }
    assert.ok(!existsSync(join(traced, '@vite-hub/sandbox/build')), 'the build steps were traced into the server');
    assert.ok(
      bytes <= RUNTIME_BYTES_MAX,
      `.output/server/node_modules is ${bytes} bytes (ceiling ${RUNTIME_BYTES_MAX})`,
    );

    // The server as deployed: its .output alone, away from the app and its node_modules.
    const deployed = mkdtempSync(join(tmpdir(), 'vite-hub-deployed-'));
    cleanups.push(() => removeDir(deployed));
    cpSync(join(app, '.output'), join(deployed, '.output'), { recursive: true });
    const port = await freePort();
    const server = spawn(process.execPath, ['.output/server/index.mjs'], {
      cwd: deployed,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SANDBOX_PROVIDER: 'local' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => stopChild(server));
    let output = '';
    server.stdout.on('data', (chunk) => (output += chunk));
    server.stderr.on('data', (chunk) => (output += chunk));
    const base = `http://127.0.0.1:${port}`;
    await eventually(() => fetch(base).then(() => true), 30_000, `the output server (${output})`);

    const notes = await postJson(`${base}/api/release-notes`, { notes: '# v3\n- ship the plugin\n- fix dev reload' });
    assert.equal(notes.status, 200, `${notes.text}\n${output}`);
    assert.deepEqual(notes.json, {
      summary: '2 changes: ship the plugin; fix dev reload',
      items: ['ship the plugin', 'fix dev reload'],
    });
    const words = await postJson(`${base}/api/word-count`, { text: 'the cat and the hat and the bat', top: 2 });
    assert.equal(words.status, 200, `${words.text}\n${output}`);
    assert.deepEqual(words.json, {
      words: 8,
      top: [
        { word: 'the', count: 3 },
        { word: 'and', count: 2 },
      ],
    });
    await stopChild(server);
  });
}
