// The example Definitions through the Node entry's in-process local Box host, and the CLI.
import { createServer } from 'node:net';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, mkdirSync, writeFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runSandbox, registerSandboxDirectory, closeLocalBoxHost } from '@vite-hub/sandbox';

const root = fileURLToPath(new URL('../..', import.meta.url));
const sandboxes = `${root}/examples/app/server/sandboxes`;
const run = promisify(execFile);

after(() => closeLocalBoxHost());

test('release-notes (local TypeScript modules) turns notes into a summary', async () => {
  assert.equal(await registerSandboxDirectory(`${sandboxes}/release-notes`), 'release-notes');
  const response = await runSandbox('release-notes', { notes: '# v2\n- ship it\n* fix the login bug\n\n1. tidy up' });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    summary: '3 changes: ship it; fix the login bug; tidy up',
    items: ['ship it', 'fix the login bug', 'tidy up'],
  });
  const empty = await runSandbox('release-notes');
  assert.deepEqual(await empty.json(), { summary: 'No notes', items: [] });
});

test('slugify-title installs its npm dependency in the Box (npm ci with the lockfile)', async () => {
  await registerSandboxDirectory(`${sandboxes}/slugify-title`);
  const response = await runSandbox('slugify-title', { title: 'Hello, Wörld & Friends!' });
  assert.equal(response.status, 200, await response.clone().text());
  assert.deepEqual(await response.json(), { slug: 'hello-world-and-friends' });
  // Installed by this Run, or started from the prepared project an earlier Run left (README "Prepared projects").
  assert.match(response.headers.get('server-timing'), /install;desc="(fresh|prepared|fresh-fallback)";dur=/);
});

test('word-count, a free-form src/*.sandbox.ts with a bundled helper, counts words', async () => {
  const { discoverDefinitions, prepareFreeFormDefinition, registerSandbox } = await import('@vite-hub/sandbox');
  const app = `${root}/examples/app`;
  const discovered = (await discoverDefinitions(app)).find((item) => item.name === 'word-count');
  const prepared = await prepareFreeFormDefinition(app, discovered);
  assert.deepEqual(prepared.inputs, ['src/text/top-words.ts', 'src/word-count.sandbox.ts']);
  registerSandbox(prepared.name, prepared);
  const response = await runSandbox('word-count', { text: 'the cat and the hat and the bat', top: 2 });
  assert.equal(response.status, 200, await response.clone().text());
  assert.deepEqual(await response.json(), {
    words: 8,
    top: [
      { word: 'the', count: 3 },
      { word: 'and', count: 2 },
    ],
  });
});

test('a failing install gives 500 SANDBOX_EXECUTION_ERROR with the exit code', async () => {
  const { registerSandbox } = await import('@vite-hub/sandbox');
  registerSandbox('broken-install', {
    files: [
      {
        path: 'package.json',
        content: JSON.stringify({ name: 'broken-install', type: 'module', dependencies: { 'left-pad': '99.99.99' } }),
      },
      { path: 'index.mjs', content: 'export default () => 1;' },
    ],
  });
  const response = await runSandbox('broken-install');
  assert.equal(response.status, 500);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_EXECUTION_ERROR');
  assert.equal(body.error.details.operation, 'install');
  assert.match(
    `${body.error.details.stderr ?? ''}${body.error.details.stdout ?? ''}`,
    /left-pad/,
    'the failed install explains itself',
  );
  assert.ok(body.error.details.exitCode > 0);
});

test('the CLI prints the Response like curl -i', async () => {
  const { stdout } = await run('node', [
    `${root}/dist/cli.mjs`,
    'run',
    `${sandboxes}/release-notes`,
    '--payload',
    '{"notes":"- ship it"}',
  ]);
  const [head, body] = stdout.split('\n\n');
  const lines = head.split('\n');
  assert.equal(lines[0], 'HTTP/1.1 200');
  assert.ok(lines.includes('content-type: application/json'), head);
  // The CLI starts the in-process Box host for this run: its start and first request come first.
  assert.ok(
    lines.some((line) => /^server-timing: host;dur=[\d.]+, connect;dur=[\d.]+, box;dur=/.test(line)),
    head,
  );
  assert.deepEqual(JSON.parse(body), { summary: '1 change: ship it', items: ['ship it'] });
});

test('the CLI prints the package version', async () => {
  const { version } = JSON.parse(readFileSync(`${root}/dist/package.json`, 'utf8'));
  for (const flag of ['--version', '-v'])
    assert.equal((await run('node', [`${root}/dist/cli.mjs`, flag])).stdout, `${version}\n`);
});

test('the CLI rejects bad input with a clear message', async () => {
  await assert.rejects(
    run('node', [`${root}/dist/cli.mjs`, 'run', `${sandboxes}/release-notes`, '--payload', '{nope']),
    (error) => {
      assert.equal(error.code, 2);
      assert.match(error.stderr, /--payload is not valid JSON/);
      return true;
    },
  );
  await assert.rejects(run('node', [`${root}/dist/cli.mjs`, 'run', `${root}/examples/app`]), (error) => {
    assert.equal(error.code, 1);
    assert.match(error.stderr, /SANDBOX_INVALID_ARGUMENT: .*entrypoint/);
    return true;
  });
  // A folder that is not there, or a file given for a folder, is named plainly (no raw ENOENT).
  await assert.rejects(run('node', [`${root}/dist/cli.mjs`, 'run', `${sandboxes}/release-notse`]), (error) => {
    assert.equal(error.code, 2);
    assert.match(error.stderr, /release-notse" does not exist: give the Definition's folder/);
    assert.doesNotMatch(error.stderr, /ENOENT/);
    return true;
  });
  await assert.rejects(run('node', [`${root}/dist/cli.mjs`, 'run', `${sandboxes}/release-notes/index.ts`]), {
    code: 2,
    stderr: /is not a folder/,
  });
  await assert.rejects(run('node', [`${root}/dist/cli.mjs`]), { code: 2, stderr: /a command is required/ });
  // A usage error is exit code 2; a failure of a well-formed command (a taken port) is 1.
  await assert.rejects(run('node', [`${root}/dist/cli.mjs`, 'host', '--bogus']), {
    code: 2,
    stderr: /Unknown option '--bogus'/,
  });
  // A command's --help is the usage (exit 0), not an unknown option.
  for (const command of ['host', 'run']) {
    const { stdout } = await run('node', [`${root}/dist/cli.mjs`, command, '--help']);
    assert.match(stdout, /vite-hub-sandbox host/);
  }
  const taken = createServer();
  await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    await assert.rejects(run('node', [`${root}/dist/cli.mjs`, 'host', '--port', String(taken.address().port)]), {
      code: 1,
      stderr: /EADDRINUSE/,
    });
  } finally {
    taken.close();
  }
});

test('Ctrl-C during `run` stops the Box and leaves no Box directory behind', async () => {
  const scratch = mkdtempSync(`${tmpdir()}/vite-hub-cli-sigint-`);
  // The Box root (TMPDIR below) must be reachable by the Box users of a root host (box-user.mjs).
  chmodSync(scratch, 0o701);
  const boxes = `${scratch}/boxes`;
  const definition = `${scratch}/forever`;
  mkdirSync(boxes);
  mkdirSync(definition);
  writeFileSync(`${definition}/package.json`, JSON.stringify({ name: 'forever', type: 'module' }));
  writeFileSync(`${definition}/index.mjs`, 'export default () => new Promise(() => setInterval(() => {}, 1000));');
  try {
    const child = spawn('node', [`${root}/dist/cli.mjs`, 'run', definition], {
      env: { ...process.env, TMPDIR: boxes },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 15000;
    while (readdirSync(boxes).length === 0) {
      assert.ok(Date.now() < deadline, 'no Box directory appeared');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGINT');
    assert.equal(await exited, 130);
    assert.deepEqual(readdirSync(boxes), []);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
