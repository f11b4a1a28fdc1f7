// A server that only runs Definitions installs the package alone: `npm i --omit=dev <tarball>` in an
// empty directory. Its runtime part (the package without its build steps, and the runtime's own
// dependencies) stays ≤ 3 MB (issue 12 item 6); the build steps' libraries are regular
// dependencies (issue 23 item 5), imported only by the build entries, and counted apart. It still
// runs a Definition on the in-process local Box host, and a build step called there fails naming
// its one missing peer, Vite, and the install line. What Nitro copies into a deployed server is
// measured by zero-config.test.mjs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeDir } from '../support/vite-app.mjs';
import { MCP_DEPENDENCIES, RUNTIME_DEPENDENCIES, buildOnlyDependencies, packDist } from '../support/tarball-app.mjs';

const run = promisify(execFile);
/** The ceiling of issue 12: 3 MB (decimal) for the runtime part of a production install. */
const INSTALL_BYTES_MAX = 3_000_000;

/** Bytes of `paths` (apparent sizes, `du -sb`), 0 for none. */
async function bytesOf(paths) {
  if (paths.length === 0) return 0;
  const { stdout } = await run('du', ['-sbc', ...paths]);
  return Number(stdout.trim().split('\n').at(-1).split('\t')[0]);
}

/** `names` and every package they depend on, transitively, in a flat npm node_modules. */
function closure(modules, names) {
  const seen = new Set();
  const stack = [...names];
  while (stack.length) {
    const name = stack.pop();
    if (seen.has(name) || !existsSync(join(modules, name, 'package.json'))) continue;
    seen.add(name);
    stack.push(
      ...Object.keys(JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).dependencies ?? {}),
    );
  }
  return seen;
}

let packDir;
let app;
after(() => {
  if (packDir) removeDir(packDir);
  if (app) removeDir(app);
});

test('a production install of the packed package alone: its runtime part is ≤ 3 MB and runs a Definition', async () => {
  const packed = await packDist();
  packDir = packed.dir;
  app = mkdtempSync(join(tmpdir(), 'vite-hub-app-install-size-'));
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'install-size', private: true, type: 'module' })}\n`,
  );
  await run(
    'npm',
    ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', packed.tarball],
    {
      cwd: app,
      timeout: 300_000,
      maxBuffer: 16 * 1024 * 1024,
    },
  );

  const modules = join(app, 'node_modules');
  assert.equal(existsSync(join(modules, 'vite')), false, 'vite (an optional peer) was installed');
  // The runtime part: the package and all but its build steps' libraries (those no runtime
  // dependency also needs).
  const runtime = closure(modules, RUNTIME_DEPENDENCIES);
  const buildOnly = [...closure(modules, buildOnlyDependencies())].filter((name) => !runtime.has(name));
  // The MCP server's libraries (the official SDK and what it brings), counted apart too: only an
  // app that serves its Definitions over MCP imports them.
  const mcpOnly = [...closure(modules, MCP_DEPENDENCIES)].filter(
    (name) => !runtime.has(name) && !buildOnly.includes(name),
  );
  const total = await bytesOf([modules]);
  const buildBytes = await bytesOf(buildOnly.map((name) => join(modules, name)));
  const mcpBytes = await bytesOf(mcpOnly.map((name) => join(modules, name)));
  const bytes = total - buildBytes - mcpBytes;
  console.log(
    `install: ${total} bytes in all; runtime part ${bytes}; build steps' libraries ${buildBytes} (${buildOnly.sort().join(', ')}); MCP libraries ${mcpBytes} (${mcpOnly.length} packages)`,
  );
  assert.ok(
    bytes > 0 && bytes <= INSTALL_BYTES_MAX,
    `the runtime part is ${bytes} bytes (ceiling ${INSTALL_BYTES_MAX})`,
  );

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

  // A build step names the peer it lacks (Vite: its TypeScript transform and parser) and how to install it.
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
  const built = JSON.parse(
    (await run(process.execPath, ['--input-type=module', '-e', buildScript], { cwd: app, env, timeout: 60_000 }))
      .stdout,
  );
  assert.equal(built.code, 'SANDBOX_NOT_SUPPORTED', JSON.stringify(built));
  assert.match(built.message, /needs the package "vite", which is not installed/);
  assert.match(built.message, /npm i -D vite$/, built.message);
});
