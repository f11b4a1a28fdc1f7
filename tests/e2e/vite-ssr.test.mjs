// `vite dev` without Nitro, with the packed package installed from its tarball: server code loaded
// through Vite's SSR paths — `ssrLoadModule`, the `ssr` environment's module runner and a custom
// server environment of the environment API — resolves `@vite-hub/sandbox` through the plugin
// (the generated registry), also when the app's config externalizes the package explicitly.
// Each scenario runs in its own Node process (a script in the app), as a user's server would.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { removeDir } from '../support/vite-app.mjs';
import { installTarballApp } from '../support/tarball-app.mjs';
import { NO_BWRAP } from '../support/local-host.mjs';

const run = promisify(execFile);

// The server module every scenario loads through Vite: it runs one Definition and returns what
// the Response says.
const SERVER = `import { runSandbox } from '@vite-hub/sandbox';
export async function answer(name, payload) {
  const response = await runSandbox(name, payload);
  return { status: response.status, body: await response.json() };
}
`;

// Loads server.mjs through the Vite path named by argv[2] and prints the answer as JSON.
const SCRIPT = `import { createServer, createServerModuleRunner } from 'vite';
import { hubSandbox } from '@vite-hub/sandbox/vite';
const [how, name, external, plugin] = process.argv.slice(2);
const server = await createServer({
  configFile: false,
  logLevel: 'error',
  plugins: plugin === 'without-plugin' ? [] : [hubSandbox({ provider: 'local', ...(plugin === 'parked-off' ? { local: { parked: { size: 0 } } } : {}) })],
  server: { middlewareMode: true, hmr: false, watch: null },
  appType: 'custom',
  ssr: external === 'external' ? { external: ['@vite-hub/sandbox'] } : external === 'all' ? { external: true } : external === 'none' ? { noExternal: true } : undefined,
  environments: { custom: { consumer: 'server' } },
});
try {
  let mod;
  if (how === 'ssrLoadModule') mod = await server.ssrLoadModule('/server.mjs');
  else if (how === 'runner') mod = await server.environments.ssr.runner.import('/server.mjs');
  else mod = await createServerModuleRunner(server.environments.custom, { hmr: false }).import('/server.mjs');
  const result = await mod.answer(name, { text: 'hi' });
  // Whether Vite ran the package's runtime itself (inlined) instead of leaving it to Node.
  const graph = server.environments[how === 'custom' ? 'custom' : 'ssr'].moduleGraph;
  const inlined = [...graph.idToModuleMap.keys()].filter((id) => id.includes('/@vite-hub/sandbox/')).map((id) => id.slice(id.indexOf('@vite-hub/sandbox/')));
  console.log(JSON.stringify({ ...result, inlined }));
} finally {
  await server.close();
  const { closeLocalBoxHost } = await import('@vite-hub/sandbox');
  await closeLocalBoxHost();
}
`;

const DEFINITION_MANIFEST = JSON.stringify({ name: 'shout', private: true, type: 'module' });
const DEFINITION_ENTRY = 'export default (payload) => ({ shout: String(payload.text).toUpperCase() });\n';

let app;
let packDir;

before(async () => {
  ({ app, packDir } = await installTarballApp('ssr', {
    example: false,
    files: {
      'server.mjs': SERVER,
      'load.mjs': SCRIPT,
      'server/sandboxes/shout/package.json': DEFINITION_MANIFEST,
      'server/sandboxes/shout/index.mjs': DEFINITION_ENTRY,
      // Whether the Run's process is a parked one (parked-node.mjs): its command line says so.
      'server/sandboxes/parked/package.json': JSON.stringify({ name: 'parked', private: true, type: 'module' }),
      'server/sandboxes/parked/index.mjs':
        "import fs from 'node:fs';\nexport default () => ({ parked: fs.readFileSync('/proc/self/cmdline', 'utf8').includes('parked-node.mjs') });\n",
    },
  }));
});

after(() => {
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

async function answer(how, name = 'shout', external = '', plugin = '') {
  const { stdout } = await run(process.execPath, ['load.mjs', how, name, external, plugin], {
    cwd: app,
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop());
}

for (const how of ['ssrLoadModule', 'runner', 'custom']) {
  test(`${how}: runSandbox resolves a Definition of the generated registry`, async () => {
    // The generated facade went through the plugin; the runtime it imports was left to Node.
    assert.deepEqual(await answer(how), { status: 200, body: { shout: 'HI' }, inlined: [] });
  });
}

for (const external of ['external', 'all', 'none']) {
  test(`ssr ${external === 'external' ? "external: ['@vite-hub/sandbox']" : external === 'all' ? 'external: true' : 'noExternal: true'} in the app's config does not take the package around the plugin`, async () => {
    const { inlined, ...result } = await answer('ssrLoadModule', 'shout', external);
    assert.deepEqual(result, { status: 200, body: { shout: 'HI' } });
    // With \`external: true\` the runtime cannot be listed as external by id (the lists merge to
    // \`true\`), so Vite runs it: it works, as a linked package does.
    if (external !== 'all') assert.deepEqual(inlined, []);
  });
}

test('without the plugin, SANDBOX_NOT_FOUND says there is no registry and names the fix', async () => {
  const { status, body } = await answer('ssrLoadModule', 'shout', '', 'without-plugin');
  assert.equal(status, 500);
  assert.equal(body.error.code, 'SANDBOX_NOT_FOUND');
  assert.match(
    body.error.message,
    /no registry is installed\. With Vite, add hubSandbox\(\) from '@vite-hub\/sandbox\/vite' to the plugins/,
  );
});

test('a typo in plain Vite SSR proposes the registered name', async () => {
  const { status, body } = await answer('runner', 'shot');
  assert.equal(status, 500);
  assert.equal(
    body.error.message,
    'Sandbox "shot" was not found. Did you mean "shout"? Registered: "parked", "shout".',
  );
});

test("the plugin's local options reach the in-process host its dev server warms up: parked processes by default, none with local.parked { size: 0 }", {
  skip: NO_BWRAP,
}, async () => {
  assert.deepEqual((await answer('ssrLoadModule', 'parked')).body, { parked: true });
  assert.deepEqual((await answer('ssrLoadModule', 'parked', '', 'parked-off')).body, { parked: false });
});
