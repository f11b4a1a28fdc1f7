// `vite dev` of a copy of examples/app with the packed package installed from its tarball (as a
// user installs it: Vite and Nitro externalize what lives in node_modules): Definitions edited,
// broken and added while the server runs are picked up without a restart; a broken edit keeps
// the last good state.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, stopChild, freePort, postJson, eventually } from '../support/vite-app.mjs';
import { installTarballApp, readmeFirstDefinition } from '../support/tarball-app.mjs';

let app;
let packDir;
let server;
let base;
let output = '';

const releaseNotes = () => join(app, 'server/sandboxes/release-notes');
const runAny = (name, payload) => postJson(`${base}/api/run`, { name, payload });

/** Starts `vite dev` on a free port in the app copy (no SANDBOX_PROVIDER), resolves when ready. */
async function startDev() {
  const port = await freePort();
  const env = { ...process.env };
  delete env.SANDBOX_PROVIDER;
  server = spawn(
    process.execPath,
    [join(app, 'node_modules/vite/bin/vite.js'), 'dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
    {
      cwd: app,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  base = `http://127.0.0.1:${port}`;
  await eventually(() => output.includes('ready in'), 30_000, `vite dev to start (${output})`);
}

before(async () => {
  ({ app, packDir } = await installTarballApp('dev', { files: readmeFirstDefinition() }));
  // A test-only route that runs any Definition by name, so added Definitions need no new route.
  writeFileSync(
    join(app, 'server/api/run.post.ts'),
    "import { defineHandler } from 'nitro/h3';\nimport { runSandbox } from '@vite-hub/sandbox';\n" +
      'export default defineHandler(async (event) => { const { name, payload } = await event.req.json(); return runSandbox(name as never, payload as never); });\n',
  );
  await startDev();
});

after(async () => {
  await stopChild(server);
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

test('dev runs on the local provider and says so once', async () => {
  const { status, json, text, headers } = await postJson(`${base}/api/release-notes`, { notes: '- first' });
  assert.equal(status, 200, text);
  assert.deepEqual(json, { summary: '1 change: first', items: ['first'] });
  // Nitro's dev worker borrowed the host and made its first connection when it started
  // (vite/nitro-warm-up.mjs), or this Run waited on that warm-up: either way the first
  // request pays no `host` or `connect` phase. Without the warm-up it pays both.
  const timing = headers.get('server-timing') ?? '';
  assert.match(timing, /\bbox;dur=/, timing);
  assert.doesNotMatch(timing, /\b(host|connect);dur=/, timing);
  assert.equal(
    output.match(/no provider configured: vite dev runs Definitions on the "local" provider/g)?.length,
    1,
    output,
  );
});

test("the README's first Definition answers in dev", async () => {
  const { status, json, text } = await postJson(`${base}/api/hello`, { name: 'Ada' });
  assert.equal(status, 200, text);
  assert.deepEqual(json, { greeting: 'Hello, Ada' });
});

test('an edited Definition returns the new result without a restart', async () => {
  const file = join(releaseNotes(), 'index.ts');
  writeFileSync(file, readFileSync(file, 'utf8').replace("'No notes'", "'Nothing noted'"));
  const { json } = await eventually(
    async () => {
      const answer = await postJson(`${base}/api/release-notes`, {});
      return answer.json?.summary === 'Nothing noted' && answer;
    },
    20_000,
    'the edited result',
  );
  assert.deepEqual(json, { summary: 'Nothing noted', items: [] });
});

test('a broken edit logs the core error and keeps serving the last good Definition', async () => {
  const manifest = join(releaseNotes(), 'package.json');
  const good = readFileSync(manifest, 'utf8');
  const before = output.length;
  writeFileSync(manifest, JSON.stringify({ name: 'release-notes', private: true }));
  await eventually(
    () =>
      /\[sandbox\] SANDBOX_INVALID_ARGUMENT: .*"type": "module".*keeping the last good version of "release-notes"/s.test(
        output.slice(before),
      ),
    20_000,
    'the error in the log',
  );
  const { status, json } = await postJson(`${base}/api/release-notes`, {});
  assert.equal(status, 200);
  assert.deepEqual(json, { summary: 'Nothing noted', items: [] });
  // The other Definitions are not frozen by the broken one: an edit to slugify-title is served.
  const slugify = join(app, 'server/sandboxes/slugify-title/index.mjs');
  writeFileSync(slugify, readFileSync(slugify, 'utf8').replace('return { slug:', 'return { edited: true, slug:'));
  const edited = await eventually(
    async () => {
      const answer = await postJson(`${base}/api/slugify`, { title: 'Two Words' });
      return answer.json?.edited === true && answer;
    },
    30_000,
    'the edit of another Definition while one is broken',
  );
  assert.deepEqual(edited.json, { edited: true, slug: 'two-words' });
  const restored = output.length;
  writeFileSync(manifest, good);
  await eventually(
    () => output.slice(restored).includes('[sandbox] every Definition is valid again'),
    20_000,
    'the recovery in the log',
  );
});

test('an added Definition is picked up', async () => {
  const dir = join(app, 'server/sandboxes/shout');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'index.mjs'),
    'export default (payload) => ({ shout: String(payload.text).toUpperCase() });\n',
  );
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'shout', type: 'module' }));
  const { status, json } = await eventually(
    async () => {
      const answer = await runAny('shout', { text: 'hi' });
      return answer.status === 200 && answer;
    },
    20_000,
    'the added Definition',
  );
  assert.equal(status, 200);
  assert.deepEqual(json, { shout: 'HI' });
  assert.match(readFileSync(join(app, '.vite-hub/sandbox/sandbox.d.ts'), 'utf8'), /"shout": \{ payload:/);
});

test('a new Definition that is broken stays out of the registry and says why', async () => {
  const dir = join(app, 'server/sandboxes/broken-new');
  mkdirSync(dir);
  const before = output.length;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'broken-new', type: 'module' }));
  writeFileSync(join(dir, 'index.mjs'), "const fs = require('node:fs');\nexport default () => 1;\n");
  await eventually(
    () =>
      /broken-new.*index\.mjs:1:12.*require\(\).*keeping "broken-new" out of the registry until it is fixed/s.test(
        output.slice(before),
      ),
    20_000,
    'the error in the log',
  );
  const { status, json } = await runAny('broken-new', {});
  assert.equal(status, 500);
  assert.equal(json.error.code, 'SANDBOX_NOT_FOUND');
  // The miss says why: the reason the dev registry refused it, with app-relative paths only.
  assert.match(
    json.error.message,
    /^Sandbox "broken-new" was not found: its Definition is invalid, so it is not in the registry: SANDBOX_INVALID_ARGUMENT: .*index\.mjs:1:12.*require\(\)/s,
  );
  assert.ok(!json.error.message.includes(app), json.error.message);
  rmSync(dir, { recursive: true });
});

test("an edit to a free-form Definition's local import (outside any Definition folder) is picked up", async () => {
  const helper = join(app, 'src/text/top-words.ts');
  writeFileSync(helper, readFileSync(helper, 'utf8').replace('.slice(0, Math.max(0, limit))', '.slice(0, 1)'));
  const { json } = await eventually(
    async () => {
      const answer = await postJson(`${base}/api/word-count`, { text: 'a b a b c', top: 3 });
      return answer.json?.top?.length === 1 && answer;
    },
    20_000,
    'the result of the edited helper',
  );
  assert.deepEqual(json, { words: 5, top: [{ word: 'a', count: 2 }] });
});

test("a free-form Definition's local import broken, then fixed, or deleted, then written again, is followed", async () => {
  const helper = join(app, 'src/text/top-words.ts');
  const good = readFileSync(helper, 'utf8');
  const topLength = async (length, what) =>
    eventually(
      async () => {
        const answer = await postJson(`${base}/api/word-count`, { text: 'a b a b c', top: 3 });
        return answer.json?.top?.length === length && answer;
      },
      20_000,
      what,
    );
  // Broken: the bundle fails, so the Definition has no inputs of its own to watch until it is fixed.
  let mark = output.length;
  writeFileSync(helper, `${good}\nconst broken = ;\n`);
  await eventually(
    () =>
      /Cannot bundle src\/word-count\.sandbox\.ts: src\/text\/top-words\.ts:\d+:\d+.*keeping the last good version of "word-count"/.test(
        output.slice(mark),
      ),
    20_000,
    `the broken helper reported (${output.slice(mark)})`,
  );
  mark = output.length;
  writeFileSync(helper, good.replace('.slice(0, 1)', '.slice(0, 2)'));
  await topLength(2, 'the result of the fixed helper');
  await eventually(
    () => output.slice(mark).includes('every Definition is valid again'),
    20_000,
    'the recovery reported',
  );
  // Deleted (the import cannot resolve), then written again.
  mark = output.length;
  rmSync(helper);
  await eventually(
    () => /Cannot bundle .*top-words.*keeping the last good version of "word-count"/s.test(output.slice(mark)),
    20_000,
    `the missing helper reported (${output.slice(mark)})`,
  );
  writeFileSync(helper, good);
  await topLength(1, 'the result of the helper written again');
});

test('a removed Definition is SANDBOX_NOT_FOUND', async () => {
  rmSync(join(app, 'server/sandboxes/shout'), { recursive: true });
  const { status, json } = await eventually(
    async () => {
      const answer = await runAny('shout', { text: 'hi' });
      return answer.status !== 200 && answer;
    },
    20_000,
    'the removal',
  );
  assert.equal(status, 500);
  assert.equal(json.error.code, 'SANDBOX_NOT_FOUND');
  assert.match(
    json.error.message,
    /^Sandbox "shout" was not found\. Registered: "hello", "order-summary", "release-notes", "slugify-title", "word-count"\.$/,
  );
});

test('a typo is SANDBOX_NOT_FOUND with the closest names', async () => {
  const { status, json } = await runAny('release-note', {});
  assert.equal(status, 500);
  assert.equal(json.error.code, 'SANDBOX_NOT_FOUND');
  assert.match(json.error.message, /Did you mean "release-notes"\? Registered: /);
});

test('the generated directory is ignored by git', () => {
  assert.equal(readFileSync(join(app, '.vite-hub/.gitignore'), 'utf8'), '*\n');
});

test('the generated directory deleted while vite dev runs is written again without a request', async () => {
  // Renamed away first, then removed: the watcher regenerates as soon as the files go, and a
  // recursive rm of the live directory raced those writes (ENOTEMPTY on a loaded machine).
  const gone = join(app, '.vite-hub-deleted');
  renameSync(join(app, '.vite-hub'), gone);
  rmSync(gone, { recursive: true });
  // No request in between: the watcher alone writes the generation again.
  // sandbox.d.ts is the last file a generation writes.
  await eventually(
    () => existsSync(join(app, '.vite-hub/sandbox/sandbox.d.ts')),
    20_000,
    'the dev generation written again',
  );
  const { status, json } = await postJson(`${base}/api/release-notes`, { notes: '- back' });
  assert.equal(status, 200, JSON.stringify(json));
  assert.deepEqual(json, { summary: '1 change: back', items: ['back'] });
});

test('vite dev started with a broken Definition logs it and serves the last good generation', async () => {
  await stopChild(server);
  const manifest = join(releaseNotes(), 'package.json');
  writeFileSync(manifest, JSON.stringify({ name: 'release-notes', private: true }));
  output = '';
  await startDev();
  assert.match(
    output,
    /\[sandbox\] SANDBOX_INVALID_ARGUMENT: .*"type": "module".*keeping the last good version of "release-notes"/s,
  );
  const { status, json } = await postJson(`${base}/api/release-notes`, {});
  assert.equal(status, 200);
  assert.deepEqual(json, { summary: 'Nothing noted', items: [] });
});
