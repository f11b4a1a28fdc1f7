// What a developer sees (issue 8, item 9), in an app with the packed tarball installed:
// - `vite-hub-sandbox run <name>` from the app root finds Definitions like the plugin (a folder and
//   a free-form file), answers an unknown name with the closest names, an invalid one with its error;
// - an install that lasts over a second prints one line (manager, package count, duration), in the
//   CLI and in `vite dev`; a quick Run prints none;
// - in `vite dev` each problem prints once: a save of another file does not repeat it, a changed
//   problem prints its new text once, a fix says so.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeDir, stopChild, freePort, postJson, eventually } from '../support/vite-app.mjs';
import { installTarballApp } from '../support/tarball-app.mjs';

const exec = promisify(execFile);
let app;
let packDir;
let bin;
let server;
let base;
let output = '';
/**
 * Each side (the CLI, vite dev) keeps its prepared projects in a cache folder of its own
 * (`XDG_CACHE_HOME`, see README "Prepared projects"): an earlier Run, or the other side, must not
 * have prepared `slow-install` already, or there is no install to report.
 */
let cliCache;
let devCache;

/** A Definition whose install takes over a second: one cached npm package and a 1.3 s postinstall. */
const SLOW_INSTALL = {
  'server/sandboxes/slow-install/package.json': JSON.stringify({
    name: 'slow-install',
    private: true,
    type: 'module',
    scripts: { postinstall: 'node -e "setTimeout(() => {}, 1300)"' },
    dependencies: { slugify: '1.6.9' },
  }),
  'server/sandboxes/slow-install/index.mjs':
    "import slugify from 'slugify';\nexport default (payload) => ({ slug: slugify(String(payload?.title ?? ''), { lower: true }) });\n",
  'server/sandboxes/broken-one/package.json': JSON.stringify({ name: 'broken-one', type: 'module' }),
  'server/sandboxes/broken-one/index.ts': 'export default () => 1;\n',
  'server/api/run.post.ts':
    "import { defineHandler } from 'nitro/h3';\nimport { runSandbox } from '@vite-hub/sandbox';\n" +
    'export default defineHandler(async (event) => { const { name, payload } = await event.req.json(); return runSandbox(name as never, payload as never); });\n',
};

/** Runs the app's `vite-hub-sandbox` in the app root; resolves to `{ code, stdout, stderr }`. */
async function cli(...args) {
  try {
    const env = { ...process.env, XDG_CACHE_HOME: cliCache };
    const { stdout, stderr } = await exec(bin('vite-hub-sandbox'), args, { cwd: app, env, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: error.code, stdout: error.stdout ?? '', stderr: error.stderr ?? '' };
  }
}

before(async () => {
  ({ app, packDir, bin } = await installTarballApp('output', { files: SLOW_INSTALL }));
  cliCache = mkdtempSync(join(tmpdir(), 'vhs-cli-cache-'));
  devCache = mkdtempSync(join(tmpdir(), 'vhs-dev-cache-'));
});
after(async () => {
  await stopChild(server);
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
  for (const dir of [cliCache, devCache]) if (dir) removeDir(dir);
});

test('run <name> from the app root: a folder Definition and a free-form one, as the plugin finds them', async () => {
  const folder = await cli('run', 'release-notes', '--payload', '{"notes":"- ship it"}');
  assert.equal(folder.code, 0, folder.stderr);
  assert.match(folder.stdout, /^HTTP\/1\.1 200\n/);
  assert.match(folder.stdout, /\{"summary":"1 change: ship it","items":\["ship it"\]\}\n$/);
  const freeForm = await cli('run', 'word-count', '--payload', '{"text":"a b a"}');
  assert.equal(freeForm.code, 0, freeForm.stderr);
  assert.match(freeForm.stdout, /"words":3/);
  // A quick Run (nothing installed) prints no install line.
  assert.doesNotMatch(`${folder.stderr}${freeForm.stderr}`, /installed/);
});

test('run <name>: an unknown name proposes the closest ones; an invalid one says why', async () => {
  const typo = await cli('run', 'release-notse');
  assert.equal(typo.code, 1);
  assert.match(typo.stdout, /^HTTP\/1\.1 500\n/);
  assert.match(typo.stdout, /"code":"SANDBOX_NOT_FOUND".*Did you mean \\"release-notes\\"\?/);
  mkdirSync(join(app, 'server/sandboxes/empty'), { recursive: true });
  writeFileSync(join(app, 'server/sandboxes/empty/package.json'), '{"name":"empty","type":"module"}');
  const invalid = await cli('run', 'empty');
  removeDir(join(app, 'server/sandboxes/empty'));
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /^vite-hub-sandbox: SANDBOX_INVALID_ARGUMENT: .*server\/sandboxes\/empty.*entrypoint/);
});

test('an install over a second prints one line in the CLI: manager, package count, duration', async () => {
  const result = await cli('run', 'slow-install', '--payload', '{"title":"Slow Install"}');
  assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
  assert.match(result.stdout, /\{"slug":"slow-install"\}/);
  const lines = result.stderr.split('\n').filter((line) => line.includes('installed'));
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0], /^vite-hub-sandbox: slow-install: installed 1 package with npm in the Box in \d+\.\d s$/);
  // The CLI waits for the Box to be kept as the prepared project before it exits: the next
  // `run` starts from it and installs nothing (found by the fresh-user trial: every CLI run installed).
  const again = await cli('run', 'slow-install', '--payload', '{"title":"Again"}');
  assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
  assert.match(again.stdout, /install;desc="prepared"/);
  assert.doesNotMatch(again.stderr, /installed/);
});

test('vite dev: the install line, and each problem printed once', async () => {
  const port = await freePort();
  const env = { ...process.env, XDG_CACHE_HOME: devCache };
  delete env.SANDBOX_PROVIDER;
  server = spawn(
    process.execPath,
    [join(app, 'node_modules/vite/bin/vite.js'), 'dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
    { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  base = `http://127.0.0.1:${port}`;
  await eventually(() => output.includes('ready in'), 30_000, `vite dev to start (${output})`);

  const slow = await postJson(`${base}/api/run`, { name: 'slow-install', payload: { title: 'In Dev' } });
  assert.equal(slow.status, 200, slow.text);
  await eventually(
    () => /\[sandbox\] slow-install: installed 1 package with npm in the Box in \d+\.\d s/.test(output),
    10_000,
    `the install line (${output})`,
  );
  const quick = await postJson(`${base}/api/release-notes`, { notes: '- x' });
  assert.equal(quick.status, 200, quick.text);
  assert.equal(output.match(/installed \d+ package/g).length, 1, output);

  const broken = join(app, 'server/sandboxes/broken-one/index.ts');
  const count = (pattern) => output.match(pattern)?.length ?? 0;
  writeFileSync(broken, 'export default (\n');
  await eventually(
    () => count(/Unexpected end of file \(keeping the last good version of "broken-one"\)/g) === 1,
    40_000,
    `the problem (${output})`,
  );
  // Saves of other files regenerate, and the unchanged problem is not printed again.
  const other = join(app, 'server/sandboxes/release-notes/index.ts');
  for (const mark of ['// one', '// two']) {
    const before = count(/\[sandbox\] regenerated/g);
    writeFileSync(other, `${readFileSync(other, 'utf8')}${mark}\n`);
    await eventually(() => count(/\[sandbox\] regenerated/g) > before, 40_000, `the regeneration (${output})`);
  }
  // Saving the broken file again with the same problem does not repeat it either.
  writeFileSync(broken, 'export default (\n');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(count(/Unexpected end of file \(keeping the last good version of "broken-one"\)/g), 1, output);
  // A different problem prints its own line once; the fix is announced.
  writeFileSync(broken, "export default () => require('node:fs');\n");
  await eventually(
    () => count(/require\(\).*\(keeping the last good version of "broken-one"\)/g) === 1,
    40_000,
    `the changed problem (${output})`,
  );
  writeFileSync(broken, 'export default () => 1;\n');
  await eventually(() => output.includes('[sandbox] every Definition is valid again'), 40_000, `the fix (${output})`);
  assert.equal(count(/Unexpected end of file \(keeping the last good version of "broken-one"\)/g), 1, output);
  assert.equal(count(/require\(\).*\(keeping the last good version of "broken-one"\)/g), 1, output);
});

test('a Run that failed after a long install never reads as a finished install', async () => {
  const { installNotice } = await import('../../pkg-template/vite/install-notice.mjs');
  const response = (status) =>
    new Response(null, { status, headers: { 'server-timing': 'install;desc="fresh";dur=70900' } });
  assert.equal(
    installNotice('pad', response(200), { manager: 'npm', packages: 1 }),
    '[sandbox] pad: installed 1 package with npm in the Box in 70.9 s',
  );
  assert.equal(
    installNotice('pad', response(500), { manager: 'npm', packages: 1 }),
    '[sandbox] pad: the install of 1 package with npm in the Box took 70.9 s and the Run failed (see its error)',
  );
});
