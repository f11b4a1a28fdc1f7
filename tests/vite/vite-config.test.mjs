// hubSandbox() config: options < Vite config key `sandbox` < env SANDBOX_PROVIDER, credentials
// rejected, unknown options rejected with the core's message; checked through Vite's own
// resolveConfig and against the generated facade.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConfig, build } from 'vite';
import { hubSandbox, resolveSandboxPluginConfig, isSandboxInput } from '@vite-hub/sandbox/vite';
import { copyExampleApp, removeDir } from '../support/vite-app.mjs';

const apps = [];
after(() => apps.forEach(removeDir));

/** Resolves a Vite config with hubSandbox(options) and returns the plugin's resolved config. */
async function resolved(options, viteKey, env) {
  const saved = process.env.SANDBOX_PROVIDER;
  if (env === undefined) delete process.env.SANDBOX_PROVIDER;
  else process.env.SANDBOX_PROVIDER = env;
  try {
    const app = copyExampleApp('config');
    apps.push(app);
    await resolveConfig(
      { root: app, configFile: false, logLevel: 'silent', plugins: [hubSandbox(options)], sandbox: viteKey },
      'build',
    );
    return resolveSandboxPluginConfig(options, viteKey, process.env);
  } finally {
    if (saved === undefined) delete process.env.SANDBOX_PROVIDER;
    else process.env.SANDBOX_PROVIDER = saved;
  }
}

test('the Vite config key `sandbox` overrides plugin options, deeply', async () => {
  const result = await resolved(
    { provider: 'local', transfer: { maxDepth: 8 } },
    { provider: 'vercel', transfer: { maxSidecars: 4 } },
  );
  assert.equal(result.provider, 'vercel');
  assert.deepEqual(result.config, { provider: 'vercel', transfer: { maxDepth: 8, maxSidecars: 4 } });
});

test('env SANDBOX_PROVIDER names the provider when no layer does; an explicit one wins', async () => {
  assert.equal((await resolved({ transfer: { maxDepth: 8 } }, undefined, 'vercel')).provider, 'vercel');
  assert.equal((await resolved({ provider: 'local' }, undefined, 'vercel')).provider, 'local');
  const none = await resolved(undefined, undefined, undefined);
  assert.equal(none.provider, null);
  assert.equal(none.devProvider, 'local');
  await assert.rejects(resolved(undefined, undefined, 'docker'), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message: /SANDBOX_PROVIDER is "docker"/,
  });
});

test('credentials are rejected: the message names the env variable to use at runtime, not the secret', async () => {
  await assert.rejects(resolved({ vercel: { token: 'tok_secret' } }), (error) => {
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.match(error.message, /hubSandbox\(options\) sets `vercel.token`.*VERCEL_TOKEN/);
    assert.doesNotMatch(error.message, /tok_secret/);
    return true;
  });
  await assert.rejects(resolved(undefined, { vercel: { projectId: 'prj' } }), {
    message: /Vite config key `sandbox` sets `vercel.projectId`.*VERCEL_PROJECT_ID/,
  });
  await assert.rejects(resolved({ local: { token: 't' } }), { code: 'SANDBOX_INVALID_ARGUMENT' });
  await assert.rejects(resolved({ fetch: async () => new Response() }), {
    message: /hubSandbox\(options\) sets `fetch`.*configureSandbox\(\{ fetch \}\) at runtime/,
  });
  await assert.rejects(resolved({ local: { baseUrl: 'http://me:pw_secret@127.0.0.1:1/' } }), (error) => {
    assert.match(error.message, /`local.baseUrl` with user info or a query string/);
    assert.doesNotMatch(error.message, /pw_secret/);
    return true;
  });
});

test('unknown options are rejected with the core config message', async () => {
  await assert.rejects(resolved({ provder: 'vercel' }), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message: /^invalid sandbox options in hubSandbox\(options\): unknown field `provder`, expected one of/,
  });
  await assert.rejects(resolved({ transfer: { maxDepth: 0 } }), { code: 'SANDBOX_INVALID_ARGUMENT' });
});

test('the merged config (never a credential) is what the generated facade configures', async () => {
  const app = copyExampleApp('facade');
  apps.push(app);
  await build({
    root: app,
    configFile: false,
    logLevel: 'silent',
    plugins: [hubSandbox({ provider: 'local', transfer: { maxDepth: 8 } })],
    sandbox: { transfer: { maxSidecars: 4 } },
    build: { ssr: 'server/sandboxes/release-notes/parse.ts', write: false },
  });
  const facade = readFileSync(join(app, '.vite-hub/sandbox/build/sandbox.mjs'), 'utf8');
  assert.match(facade, /configureSandbox\(\{"provider":"local","transfer":\{"maxDepth":8,"maxSidecars":4\}\}\);/);
});

test('hubSandbox(false) is disabled', () => {
  const plugin = hubSandbox(false);
  assert.equal(plugin.apply(), false);
});

test('watched inputs: Definition folders, .sandbox files and manifests, never generated files', () => {
  assert.equal(isSandboxInput('server/sandboxes/a/index.ts'), true);
  assert.equal(isSandboxInput('src/x.sandbox.ts'), true);
  assert.equal(isSandboxInput('packages/lib/package.json'), true);
  assert.equal(isSandboxInput('.vite-hub/sandbox/dev/sandbox.mjs'), false);
  // Build output next to a running vite dev (Nitro writes .output/server/package.json) is not an input.
  assert.equal(isSandboxInput('.output/server/package.json'), false);
  assert.equal(isSandboxInput('dist/package.json'), false);
  assert.equal(isSandboxInput('node_modules/x/package.json'), false);
  assert.equal(isSandboxInput('server/api/run.post.ts'), false);
});

test('every server environment keeps the package going through the plugin; only Node dev environments list the runtime as external', async () => {
  const config = await resolveConfig(
    {
      configFile: false,
      logLevel: 'silent',
      plugins: [hubSandbox({ provider: 'local' })],
      ssr: { external: ['@vite-hub/sandbox', 'left-alone'] },
      environments: {
        custom: { consumer: 'server' },
        edge: { consumer: 'server', resolve: { conditions: ['workerd', 'worker'] } },
      },
    },
    'serve',
  );
  const { client, ssr, custom, edge } = config.environments;
  assert.ok(!client.resolve.noExternal?.includes?.('@vite-hub/sandbox'), 'the client is left alone');
  assert.ok(!client.resolve.external?.includes?.('@vite-hub/sandbox/runtime'));
  for (const environment of [ssr, custom, edge])
    assert.ok(environment.resolve.noExternal.includes('@vite-hub/sandbox'));
  // The app's explicit external entry for the package is dropped (it would win over noExternal); others stay.
  assert.deepEqual(ssr.resolve.external, ['left-alone', '@vite-hub/sandbox/runtime']);
  assert.deepEqual(custom.resolve.external, ['@vite-hub/sandbox/runtime']);
  assert.ok(!edge.resolve.external.includes('@vite-hub/sandbox/runtime'), 'a Worker environment bundles the runtime');
  const built = await resolveConfig(
    { configFile: false, logLevel: 'silent', plugins: [hubSandbox({ provider: 'local' })], environments: { ssr: {} } },
    'build',
  );
  assert.ok(built.environments.ssr.resolve.noExternal.includes('@vite-hub/sandbox'));
  assert.ok(
    !built.environments.ssr.resolve.external.includes('@vite-hub/sandbox/runtime'),
    'in build, resolveId keeps the runtime external',
  );
});

test('the Nitro warm-up plugin: added where Runs may go to the in-process host, on a long-lived Node server only', async () => {
  const saved = process.env.SANDBOX_PROVIDER;
  delete process.env.SANDBOX_PROVIDER;
  /** The Nitro plugins that hubSandbox(options)'s `config` hook adds to a Nitro with `nitroOptions`. */
  const nitroPlugins = async (options, command, nitroOptions) => {
    const hooked = await hubSandbox(options).config(
      {},
      { command, mode: command === 'serve' ? 'development' : 'production' },
    );
    const modules = hooked?.nitro?.modules ?? [];
    const nitro = { options: { plugins: [], dev: command === 'serve', ...nitroOptions } };
    for (const module of modules) await module.setup?.(nitro);
    return nitro.options.plugins.map((file) => file.split('/').slice(-2).join('/'));
  };
  const entry = (preset) => `/app/node_modules/nitro/dist/presets/${preset}`;
  try {
    const warmUp = ['vite/nitro-warm-up.mjs'];
    assert.deepEqual(
      await nitroPlugins(undefined, 'build', { entry: entry('node/runtime/node-server') }),
      warmUp,
      'provider left to the env, node-server',
    );
    assert.deepEqual(
      await nitroPlugins({ provider: 'local' }, 'build', { entry: entry('node/runtime/node-cluster') }),
      warmUp,
      'provider local, node-cluster',
    );
    assert.deepEqual(
      await nitroPlugins(undefined, 'build', { entry: entry('vercel/runtime/vercel') }),
      [],
      'a serverless preset',
    );
    assert.deepEqual(
      await nitroPlugins(undefined, 'build', { entry: entry('cloudflare/runtime/cloudflare-module'), node: false }),
      [],
      'a Worker preset',
    );
    assert.deepEqual(
      await nitroPlugins({ provider: 'vercel' }, 'build', { entry: entry('node/runtime/node-server') }),
      [],
      'provider vercel',
    );
    assert.deepEqual(
      await nitroPlugins({ provider: 'local', local: { baseUrl: 'http://127.0.0.1:9' } }, 'build', {
        entry: entry('node/runtime/node-server'),
      }),
      [],
      'a configured host',
    );
    assert.deepEqual(await nitroPlugins(undefined, 'serve', {}), warmUp, 'vite dev on the local provider');
    assert.deepEqual(await nitroPlugins({ provider: 'vercel' }, 'serve', {}), [], 'vite dev on vercel');
  } finally {
    if (saved !== undefined) process.env.SANDBOX_PROVIDER = saved;
  }
});
