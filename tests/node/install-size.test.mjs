// A server that only runs Definitions installs the package alone: `npm i --omit=dev <tarball>` in an
// empty directory. The build steps' libraries are optional peer dependencies (issue 12 item 6), so
// that install stays ≤ 3 MB, still runs a Definition on the in-process local Box host, and a build
// step called there fails naming the missing package and its install line.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeDir } from './vite-app.mjs';
import { buildPeers, packDist } from './tarball-app.mjs';

const run = promisify(execFile);
/** The ceiling of issue 12: 3 MB (decimal) of node_modules for a production install. */
const INSTALL_BYTES_MAX = 3_000_000;

let packDir;
let app;
after(() => {
  if (packDir) removeDir(packDir);
  if (app) removeDir(app);
});

test('a production install of the packed package alone is ≤ 3 MB and runs a Definition', async () => {
  const packed = await packDist();
  packDir = packed.dir;
  app = mkdtempSync(join(tmpdir(), 'vite-hub-app-install-size-'));
  writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'install-size', private: true, type: 'module' })}\n`);
  await run('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', packed.tarball], {
    cwd: app,
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });

  for (const name of buildPeers()) assert.equal(existsSync(join(app, 'node_modules', name)), false, `${name} was installed`);
  const { stdout: du } = await run('du', ['-sb', join(app, 'node_modules')]);
  const bytes = Number(du.split('\t')[0]);
  assert.ok(bytes > 0 && bytes <= INSTALL_BYTES_MAX, `node_modules is ${bytes} bytes (ceiling ${INSTALL_BYTES_MAX})`);

  // The runtime works without the build libraries (the local Box host unpacks the Box files).
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmpdir() };
  const runScript = `
    import { registerSandbox, runSandbox, closeLocalBoxHost } from '@vite-hub/sandbox';
    registerSandbox('trivial', { files: [
      { path: 'package.json', content: '{"type":"module"}' },
      { path: 'index.mjs', content: 'export default (payload) => ({ sum: payload.a + payload.b })' },
    ] });
    const response = await runSandbox('trivial', { a: 2, b: 3 });
    console.log(JSON.stringify({ status: response.status, body: await response.json() }));
    await closeLocalBoxHost();
  `;
  const ran = await run(process.execPath, ['--input-type=module', '-e', runScript], { cwd: app, env, timeout: 60_000 });
  assert.deepEqual(JSON.parse(ran.stdout), { status: 200, body: { sum: 5 } });

  // A build step names the peer it lacks and how to install it.
  const definition = join(app, 'definition');
  mkdirSync(definition);
  writeFileSync(join(definition, 'package.json'), '{"name":"d","type":"module"}');
  writeFileSync(join(definition, 'index.mjs'), 'export default () => 1;\n');
  const buildScript = `
    import { readDefinitionDirectory } from '@vite-hub/sandbox';
    try {
      await readDefinitionDirectory(${JSON.stringify(definition)});
      console.log(JSON.stringify({ ok: true }));
    } catch (error) {
      console.log(JSON.stringify({ code: error.code, message: error.message }));
    }
  `;
  const built = JSON.parse((await run(process.execPath, ['--input-type=module', '-e', buildScript], { cwd: app, env, timeout: 60_000 })).stdout);
  assert.equal(built.code, 'SANDBOX_NOT_SUPPORTED', JSON.stringify(built));
  assert.match(built.message, /needs the package "acorn", which is not installed/);
  // One install line for every peer the app lacks (here all of them), the one asked for first.
  const line = /npm i -D (.+)$/.exec(built.message)?.[1].split(' ');
  assert.equal(line?.[0], 'acorn', built.message);
  assert.deepEqual([...line].sort(), [...buildPeers()].sort(), built.message);
});
