// Handler output and handler errors as a developer sees them (issue 8, item 4), in an app with the
// packed tarball installed:
// - `vite dev` (Nitro) and `vite-hub-sandbox run` print each line a handler writes, live, as
//   `[<name>] <line>`: stdout lines on stdout, stderr lines on stderr, once each, never the result;
// - there, a handler error's Response carries its `name` and a stack naming the Definition's own
//   source files and lines (a folder Definition's TypeScript, a free-form file and its local
//   import), not the compiled files in the Box;
// - the built server (production) prints nothing of the handler's and keeps no stack.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeDir, stopChild, freePort, postJson, eventually } from '../support/vite-app.mjs';
import { installTarballApp } from '../support/tarball-app.mjs';

const exec = promisify(execFile);
let app;
let packDir;
let bin;
const children = [];

const FILES = {
  'server/sandboxes/chatty/package.json': JSON.stringify({ name: 'chatty', private: true, type: 'module' }),
  'server/sandboxes/chatty/index.ts':
    "export default (payload: { fail?: boolean } = {}) => {\n  console.log('hello'); console.error('chatty to stderr');\n  if (payload.fail) throw new RangeError('chatty failed');\n  return { said: 'result-not-a-line' };\n};\n",
  'src/lib/explode.ts': 'export function explode(what: string): never {\n  throw new Error(`exploded ${what}`);\n}\n',
  'src/boom.sandbox.ts':
    "import { defineSandbox } from '@vite-hub/sandbox';\nimport { explode } from './lib/explode';\n\nexport default defineSandbox({\n  run() {\n    return explode('here');\n  },\n});\n",
  'server/api/run.post.ts':
    "import { defineHandler } from 'nitro/h3';\nimport { runSandbox } from '@vite-hub/sandbox';\n" +
    'export default defineHandler(async (event) => { const { name, payload } = await event.req.json(); return runSandbox(name as never, payload as never); });\n',
};

/** Starts `node <args>` in the app, collecting stdout and stderr apart; resolves once `ready` (a pattern of the output, or a check) holds. */
async function startServer(args, env, ready) {
  const child = spawn(process.execPath, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const seen = { stdout: '', stderr: '', child };
  child.stdout.on('data', (chunk) => (seen.stdout += chunk));
  child.stderr.on('data', (chunk) => (seen.stderr += chunk));
  const check = ready instanceof RegExp ? () => ready.test(seen.stdout + seen.stderr) : ready;
  await eventually(check, 60_000, `the server to start (${seen.stdout}${seen.stderr})`);
  return seen;
}

/** Runs the app's `vite-hub-sandbox`; resolves to `{ code, stdout, stderr }`. */
async function cli(...args) {
  try {
    const { stdout, stderr } = await exec(bin('vite-hub-sandbox'), args, { cwd: app, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: error.code, stdout: error.stdout ?? '', stderr: error.stderr ?? '' };
  }
}

const count = (text, line) => text.split('\n').filter((item) => item === line).length;

before(async () => {
  ({ app, packDir, bin } = await installTarballApp('logs', { files: FILES }));
});
after(async () => {
  for (const child of children) await stopChild(child);
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

test("vite dev: handler lines live as [<name>] <line>, stderr on stderr, once; a handler error's stack names the sources", async () => {
  const port = await freePort();
  const env = { ...process.env };
  delete env.SANDBOX_PROVIDER;
  const dev = await startServer(
    [join(app, 'node_modules/vite/bin/vite.js'), 'dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
    env,
    /ready in/,
  );
  const base = `http://127.0.0.1:${port}`;

  const ok = await postJson(`${base}/api/run`, { name: 'chatty', payload: {} });
  assert.equal(ok.status, 200, ok.text);
  await eventually(
    () => dev.stdout.includes('[chatty] hello\n') && dev.stderr.includes('[chatty] chatty to stderr\n'),
    10_000,
    `the handler's lines (${dev.stdout}${dev.stderr})`,
  );
  assert.equal(count(dev.stdout, '[chatty] hello'), 1, dev.stdout);
  assert.equal(count(dev.stderr, '[chatty] chatty to stderr'), 1, dev.stderr);
  assert.doesNotMatch(dev.stdout, /chatty to stderr/);
  assert.doesNotMatch(dev.stderr, /\[chatty\] hello/);
  assert.doesNotMatch(dev.stdout + dev.stderr, /result-not-a-line/, 'the result frame is not printed');

  const failed = await postJson(`${base}/api/run`, { name: 'chatty', payload: { fail: true } });
  assert.equal(failed.status, 500, failed.text);
  const { error } = failed.json;
  assert.equal(error.code, 'SANDBOX_HANDLER_ERROR');
  assert.equal(error.details.name, 'RangeError');
  assert.match(
    error.details.stack,
    /^RangeError: chatty failed\n\s+at .*\(server\/sandboxes\/chatty\/index\.ts:3:\d+\)/,
  );
  assert.doesNotMatch(error.details.stack, /index\.ts\.mjs/);
  // The same mapped stack in the terminal, on stderr.
  await eventually(() => dev.stderr.includes('[chatty]     at '), 10_000, `the stack on stderr (${dev.stderr})`);
  assert.match(
    dev.stderr,
    /\[chatty\] RangeError: chatty failed\n\[chatty\]\s+at .*server\/sandboxes\/chatty\/index\.ts:3:/,
  );

  const freeForm = await postJson(`${base}/api/run`, { name: 'boom', payload: {} });
  assert.equal(freeForm.status, 500, freeForm.text);
  assert.match(
    freeForm.json.error.details.stack,
    /at explode \(src\/lib\/explode\.ts:2:\d+\)\n\s+at .*\(src\/boom\.sandbox\.ts:6:\d+\)/,
  );
  assert.doesNotMatch(freeForm.json.error.details.stack, /definition\.mjs/);
  await stopChild(dev.child);
});

test('vite-hub-sandbox run: the same lines on the same streams, and the mapped stack in the printed Response', async () => {
  const ok = await cli('run', 'chatty');
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(count(ok.stdout, '[chatty] hello'), 1, ok.stdout);
  assert.equal(count(ok.stderr, '[chatty] chatty to stderr'), 1, ok.stderr);
  assert.doesNotMatch(ok.stdout, /chatty to stderr/);
  assert.match(ok.stdout, /\n\{"said":"result-not-a-line"\}\n$/);
  assert.equal(ok.stdout.match(/result-not-a-line/g).length, 1, 'the result is printed once, as the body');

  const failed = await cli('run', 'server/sandboxes/chatty', '--payload', '{"fail":true}');
  assert.equal(failed.code, 1);
  const { error } = JSON.parse(failed.stdout.slice(failed.stdout.indexOf('\n\n') + 2));
  assert.equal(error.details.name, 'RangeError');
  assert.match(error.details.stack, /\(server\/sandboxes\/chatty\/index\.ts:3:\d+\)/);

  const freeForm = await cli('run', 'boom');
  assert.equal(freeForm.code, 1);
  const body = JSON.parse(freeForm.stdout.slice(freeForm.stdout.indexOf('\n\n') + 2));
  assert.match(body.error.details.stack, /at explode \(src\/lib\/explode\.ts:2:\d+\)/);
});

test('the built server (production): no handler lines printed, the error keeps message and name, no stack', async () => {
  await exec(process.execPath, [join(app, 'node_modules/vite/bin/vite.js'), 'build'], {
    cwd: app,
    timeout: 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SANDBOX_PROVIDER: 'local',
    NODE_ENV: 'production',
  };
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer(['.output/server/index.mjs'], env, () =>
    fetch(base).then(
      () => true,
      () => false,
    ),
  );
  const ok = await postJson(`${base}/api/run`, { name: 'chatty', payload: {} });
  assert.equal(ok.status, 200, ok.text);
  const failed = await postJson(`${base}/api/run`, { name: 'chatty', payload: { fail: true } });
  assert.equal(failed.status, 500, failed.text);
  assert.equal(failed.json.error.message, 'chatty failed');
  assert.equal(failed.json.error.details.name, 'RangeError');
  assert.equal(failed.json.error.details.stack, undefined);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.doesNotMatch(server.stdout + server.stderr, /\[chatty\]/);
  await stopChild(server.child);
});
