// The Provider Output's file side (pkg-template/vite/provider-output.mjs): wrangler.toml,
// wrangler.jsonc and wrangler.json are read, merged by the core and written; errors name the file
// and the key. The merge rules themselves are unit-tested in Rust (crates/tooling/src/provider_output.rs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const { findWranglerConfig, parseWranglerConfig, writeCloudflareProviderOutput, isCloudflareWorkerPreset } =
  await import(`${dist}vite/provider-output.mjs`);
const { repoRoot } = await import('../support/vite-app.mjs');
const SANDBOX_VERSION = JSON.parse(
  readFileSync(join(repoRoot, 'node_modules/@cloudflare/sandbox/package.json'), 'utf8'),
).version;

/** An app directory inside the repo (so @cloudflare/sandbox is found in its node_modules). */
function appDir() {
  return mkdtempSync(join(repoRoot, 'target', 'cloudflare-output-'));
}

test('a wrangler.toml is merged: its own entries kept, the Sandbox entries added, a Dockerfile beside', async () => {
  const root = appDir();
  try {
    writeFileSync(
      join(root, 'wrangler.toml'),
      `# my worker
name = "app"
main = "src/index.js"
compatibility_date = "2025-09-01"

[vars]
GREETING = "hi"

[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"

[[migrations]]
tag = "c1"
new_sqlite_classes = ["Counter"]
`,
    );
    const configFile = findWranglerConfig(root);
    assert.equal(configFile, join(root, 'wrangler.toml'));
    const out = join(root, 'out/wrangler.json');
    const { config, added } = await writeCloudflareProviderOutput({ root, configFile, outFile: out });
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), config);
    assert.equal(config.main, 'src/index.js');
    assert.deepEqual(config.vars, { GREETING: 'hi' });
    assert.equal(config.compatibility_date, '2025-09-01');
    assert.deepEqual(
      config.durable_objects.bindings.map((b) => b.name),
      ['COUNTER', 'SANDBOX'],
    );
    assert.deepEqual(
      config.migrations.map((m) => m.tag),
      ['c1', 'v1'],
    );
    assert.equal(config.containers[0].image, `docker.io/cloudflare/sandbox:${SANDBOX_VERSION}`);
    assert.equal(added.length, 4, added.join('; '));
    assert.match(readFileSync(join(root, 'out/Dockerfile'), 'utf8'), /^FROM docker\.io\/cloudflare\/sandbox:/m);
    assert.match(readFileSync(join(root, 'wrangler.toml'), 'utf8'), /^# my worker/, 'the app file is not rewritten');
    // The merge is idempotent: a second pass over the output adds nothing.
    assert.deepEqual((await writeCloudflareProviderOutput({ root, configFile: out, outFile: out })).added, []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('wrangler.jsonc with comments and trailing commas, and a custom binding', async () => {
  const root = appDir();
  try {
    writeFileSync(
      join(root, 'wrangler.jsonc'),
      '// comment\n{ "name": "app", /* inline */ "compatibility_flags": ["nodejs_compat"], }\n',
    );
    const { config } = await writeCloudflareProviderOutput({
      root,
      configFile: findWranglerConfig(root),
      outFile: join(root, 'o/wrangler.json'),
      binding: 'BOXES',
    });
    assert.deepEqual(config.compatibility_flags, ['nodejs_compat']);
    assert.deepEqual(config.durable_objects.bindings, [{ name: 'BOXES', class_name: 'Sandbox' }]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a reused migration tag, a taken binding and a syntax error name the file (and the key)', async () => {
  const root = appDir();
  try {
    writeFileSync(join(root, 'wrangler.toml'), '[[migrations]]\ntag = "v1"\nnew_sqlite_classes = ["Counter"]\n');
    await assert.rejects(
      writeCloudflareProviderOutput({
        root,
        configFile: join(root, 'wrangler.toml'),
        outFile: join(root, 'o/wrangler.json'),
      }),
      (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
        assert.match(
          error.message,
          /^wrangler\.toml: migrations: the tag "v1" is already used with other content.*tag = "v2" new_sqlite_classes = \["Sandbox"\]/,
        );
        return true;
      },
    );
    writeFileSync(
      join(root, 'wrangler.toml'),
      '[[durable_objects.bindings]]\nname = "SANDBOX"\nclass_name = "Other"\nscript_name = "elsewhere"\n',
    );
    await assert.rejects(
      writeCloudflareProviderOutput({
        root,
        configFile: join(root, 'wrangler.toml'),
        outFile: join(root, 'o/wrangler.json'),
      }),
      /wrangler\.toml: durable_objects\.bindings: the binding name "SANDBOX" is already taken by class "Other" of script "elsewhere"/,
    );
    assert.throws(
      () => parseWranglerConfig('{ "a": }', '/x/wrangler.json', 'wrangler.json'),
      /wrangler\.json:1:8: ValueExpected/,
    );
    assert.throws(() => parseWranglerConfig('name = ', '/x/wrangler.toml', 'wrangler.toml'), /wrangler\.toml: /);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('only Nitro presets that build a module Worker get the Provider Output', () => {
  assert.ok(isCloudflareWorkerPreset('cloudflare-module'));
  assert.ok(isCloudflareWorkerPreset('cloudflare_module'));
  assert.ok(isCloudflareWorkerPreset('cloudflare-durable'));
  assert.ok(!isCloudflareWorkerPreset('cloudflare-pages'));
  assert.ok(!isCloudflareWorkerPreset('node-server'));
});
