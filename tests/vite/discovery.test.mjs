// discoverDefinitions against real folders (the walk in JS, the rules in Rust), and
// `vite-hub-sandbox inspect` on the example app.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { discoverDefinitions } from '@vite-hub/sandbox';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** Temporary folders made here; removed when the file's tests end. */
const temporary = [];
after(() => {
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

/** An app root in a temp dir holding `files` (path → text). */
function makeApp(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-discovery-'));
  temporary.push(root);
  for (const [relative, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), text);
  }
  return root;
}

const PKG = '{"type":"module"}';
const ENTRY = 'export default () => 1;\n';

async function rejectsWith(root, message) {
  await assert.rejects(discoverDefinitions(root), (error) => {
    assert.equal(error.name, 'SandboxError');
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(error.message, message);
    return true;
  });
}

test('package projects, nested helper packages, free-form files, sorted by name', async () => {
  const root = makeApp({
    'package.json': PKG,
    'server/sandboxes/readme.md': 'loose files are ignored',
    'server/sandboxes/loose.sandbox.ts': ENTRY,
    'server/sandboxes/billing/package.json': PKG,
    'server/sandboxes/billing/index.ts': ENTRY,
    'server/sandboxes/billing/lib/helper/package.json': PKG,
    'server/sandboxes/billing/lib/helper/index.mjs': ENTRY,
    'server/sandboxes/billing/node_modules/dep/package.json': PKG,
    'server/sandboxes/tools/image-optimizer/package.json': PKG,
    'server/sandboxes/tools/image-optimizer/index.mjs': ENTRY,
    'server/sandboxes/mono/package.json': PKG,
    'server/sandboxes/mono/pnpm-workspace.yaml': 'packages:\n  - packages/*\n',
    'server/sandboxes/mono/index.js': ENTRY,
    'server/sandboxes/mono/packages/shared/package.json': PKG,
    'src/release-notes.sandbox.ts': ENTRY,
    'src/content/summary.sandbox.mts': ENTRY,
    'packages/jobs/package.json': PKG,
    'packages/jobs/nightly.sandbox.js': ENTRY,
    'node_modules/dep/x.sandbox.ts': ENTRY,
    'dist/built.sandbox.mjs': ENTRY,
    '.vite-hub/cache.sandbox.mjs': ENTRY,
    '.cache/hidden.sandbox.mjs': ENTRY,
  });
  assert.deepEqual(await discoverDefinitions(root), [
    { name: 'billing', kind: 'package', dir: 'server/sandboxes/billing', entry: 'server/sandboxes/billing/index.ts' },
    { name: 'content/summary', kind: 'free-form', dir: '', entry: 'src/content/summary.sandbox.mts' },
    { name: 'mono', kind: 'package', dir: 'server/sandboxes/mono', entry: 'server/sandboxes/mono/index.js' },
    {
      name: 'packages/jobs/nightly',
      kind: 'free-form',
      dir: 'packages/jobs',
      entry: 'packages/jobs/nightly.sandbox.js',
    },
    { name: 'release-notes', kind: 'free-form', dir: '', entry: 'src/release-notes.sandbox.ts' },
    {
      name: 'tools/image-optimizer',
      kind: 'package',
      dir: 'server/sandboxes/tools/image-optimizer',
      entry: 'server/sandboxes/tools/image-optimizer/index.mjs',
    },
  ]);
});

test('a manifest without an entry names the folder', async () => {
  const root = makeApp({ 'server/sandboxes/content/package.json': PKG, 'server/sandboxes/content/main.ts': ENTRY });
  await rejectsWith(
    root,
    'Sandbox package "server/sandboxes/content" requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs).',
  );
});

test('several entries name the folder and the files', async () => {
  const root = makeApp({
    'server/sandboxes/content/package.json': PKG,
    'server/sandboxes/content/index.ts': ENTRY,
    'server/sandboxes/content/index.mjs': ENTRY,
  });
  await rejectsWith(root, 'Sandbox package "server/sandboxes/content" has multiple entrypoints: index.ts, index.mjs.');
});

test('a duplicate name names both origins', async () => {
  const root = makeApp({
    'package.json': PKG,
    'src/release-notes.sandbox.ts': ENTRY,
    'server/sandboxes/release-notes/package.json': PKG,
    'server/sandboxes/release-notes/index.ts': ENTRY,
  });
  await rejectsWith(
    root,
    'Duplicate sandbox name "release-notes": server/sandboxes/release-notes and src/release-notes.sandbox.ts.',
  );
});

test('a free-form file without a package.json up to the root', async () => {
  const root = makeApp({ 'lib/x.sandbox.ts': ENTRY });
  await rejectsWith(
    root,
    'Sandbox file "lib/x.sandbox.ts" requires a package.json between its directory and the app root.',
  );
});

test('an app root that is not a directory', async () => {
  const missing = path.join(os.tmpdir(), 'vhs-discovery-missing-root');
  await rejectsWith(missing, `App root "${missing}" is not a directory.`);
  // The CLI's usage error (exit code 2), as `types` and `run --app-root` give it.
  await assert.rejects(run('node', [`${repo}/dist/cli.mjs`, 'inspect', missing]), {
    code: 2,
    stderr: /is not a directory: give the app root/,
  });
});

test("inspect labels both digests: the table's INSTALL DIGEST is the install digest dropPreparedProject takes", async () => {
  const { stdout: json } = await run('node', [`${repo}/dist/cli.mjs`, 'inspect', `${repo}/examples/app`, '--json']);
  const row = JSON.parse(json).find((item) => item.name === 'slugify-title');
  const { stdout } = await run('node', [`${repo}/dist/cli.mjs`, 'inspect', `${repo}/examples/app`]);
  const [header, ...lines] = stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.split(/ {2,}/));
  const line = lines.find((cells) => cells[0] === 'slugify-title');
  assert.equal(line[header.indexOf('DEFINITION DIGEST')], row.digest);
  assert.equal(line[header.indexOf('INSTALL DIGEST')], row.install.digest);
  assert.notEqual(row.digest, row.install.digest);
  assert.ok(!header.includes('DIGEST'), 'no unlabelled DIGEST column');
});

test('inspect --json on the example app: entry, package manager, timeout and digest', async () => {
  const { stdout } = await run('node', [`${repo}/dist/cli.mjs`, 'inspect', `${repo}/examples/app`, '--json']);
  const rows = Object.fromEntries(JSON.parse(stdout).map((row) => [row.name, row]));
  const hex = (value) => value.replace(/^[0-9a-f]{64}$/, '<sha256>');
  const digest = (row) => ({
    ...row,
    digest: hex(row.digest),
    install: row.install && { ...row.install, digest: hex(row.install.digest) },
  });
  assert.deepEqual(digest(rows['release-notes']), {
    name: 'release-notes',
    kind: 'package',
    path: 'server/sandboxes/release-notes',
    entry: 'server/sandboxes/release-notes/index.ts',
    packageManager: 'npm',
    timeoutMs: 30000,
    digest: '<sha256>',
    packagePath: '',
    install: null,
  });
  assert.deepEqual(digest(rows['slugify-title']), {
    name: 'slugify-title',
    kind: 'package',
    path: 'server/sandboxes/slugify-title',
    entry: 'server/sandboxes/slugify-title/index.mjs',
    packageManager: 'npm',
    timeoutMs: 300000,
    digest: '<sha256>',
    packagePath: '',
    install: { command: 'npm', args: ['ci', '--no-audit', '--no-fund'], cwd: '.', digest: '<sha256>' },
  });
  assert.deepEqual(digest(rows['word-count']), {
    name: 'word-count',
    kind: 'free-form',
    path: '',
    entry: 'src/word-count.sandbox.ts',
    packageManager: 'npm',
    timeoutMs: 10000,
    digest: '<sha256>',
    packagePath: '',
    install: null,
  });
});

test('inspect prepares free-form files and fails with file and line on a broken one', async () => {
  const root = makeApp({
    'package.json': PKG,
    'src/ok.sandbox.mjs': 'export default defineSandbox({ project: true, run: () => 1 });\n',
  });
  const { stdout } = await run('node', [`${repo}/dist/cli.mjs`, 'inspect', root, '--json']);
  assert.deepEqual(
    JSON.parse(stdout).map((row) => [row.name, row.kind, row.timeoutMs]),
    [['ok', 'free-form', 300000]],
  );
  fs.writeFileSync(
    path.join(root, 'src/ok.sandbox.mjs'),
    '\nexport default defineSandbox({ run: () => 1, timeout: 0 });\n',
  );
  await assert.rejects(run('node', [`${repo}/dist/cli.mjs`, 'inspect', root]), (error) => {
    assert.equal(error.code, 1);
    assert.equal(
      error.stderr,
      'vite-hub-sandbox: SANDBOX_INVALID_ARGUMENT: src/ok.sandbox.mjs:2: defineSandbox() option "timeout" must be a positive integer <= 2147483647 (milliseconds).\n',
    );
    return true;
  });
});

test('inspect prints an aligned table, and fails with the folder on a broken Definition', async () => {
  const root = makeApp({
    'package.json': PKG,
    'server/sandboxes/a/package.json': '{"type":"module","vitehub":{"sandbox":{"timeout":1000}}}',
    'server/sandboxes/a/index.mjs': ENTRY,
    'server/sandboxes/long-name/package.json': PKG,
    'server/sandboxes/long-name/index.mjs': ENTRY,
  });
  const { stdout } = await run('node', [`${repo}/dist/cli.mjs`, 'inspect', root]);
  const lines = stdout.trimEnd().split('\n');
  // Aligned: every column starts at the same offset on every line.
  const starts = (line) => [...line.matchAll(/(?:^| {2})(\S)/g)].map((match) => match.index + match[0].length - 1);
  assert.deepEqual(starts(lines[1]), starts(lines[0]).slice(0, starts(lines[1]).length));
  assert.deepEqual(
    lines.map((line) => line.split(/ {2,}/).map((cell) => cell.replace(/^[0-9a-f]{64}$/, '<sha256>'))),
    [
      ['NAME', 'PATH', 'ENTRY', 'PACKAGE MANAGER', 'TIMEOUT MS', 'DEFINITION DIGEST', 'INSTALL DIGEST'],
      ['a', 'server/sandboxes/a', 'server/sandboxes/a/index.mjs', 'npm', '1000', '<sha256>', '-'],
      [
        'long-name',
        'server/sandboxes/long-name',
        'server/sandboxes/long-name/index.mjs',
        'npm',
        '300000',
        '<sha256>',
        '-',
      ],
    ],
  );

  // Every Definition is listed; each invalid one is reported on stderr (not only the first), exit code 1.
  fs.writeFileSync(path.join(root, 'server/sandboxes/a/package.json'), '{"name":"a"}');
  fs.writeFileSync(path.join(root, 'server/sandboxes/long-name/index.mjs'), 'module.exports = 1;\n');
  await assert.rejects(run('node', [`${repo}/dist/cli.mjs`, 'inspect', root]), (error) => {
    assert.equal(error.code, 1);
    const lines = error.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, error.stderr);
    assert.match(
      lines[0],
      /^vite-hub-sandbox: SANDBOX_INVALID_ARGUMENT: server\/sandboxes\/a: Sandbox "a" must be an ES module package/,
    );
    assert.match(
      lines[1],
      /^vite-hub-sandbox: SANDBOX_INVALID_ARGUMENT: server\/sandboxes\/long-name: Sandbox "long-name": index.mjs:1:1 uses CommonJS module.exports/,
    );
    assert.match(error.stdout, /^a +server\/sandboxes\/a +server\/sandboxes\/a\/index.mjs +- +- +- +-$/m);
    return true;
  });
  const json = await run('node', [`${repo}/dist/cli.mjs`, 'inspect', root, '--json']).catch((error) => error);
  assert.equal(json.code, 1);
  assert.deepEqual(
    JSON.parse(json.stdout).map((row) => [row.name, row.error?.code]),
    [
      ['a', 'SANDBOX_INVALID_ARGUMENT'],
      ['long-name', 'SANDBOX_INVALID_ARGUMENT'],
    ],
  );
  fs.writeFileSync(path.join(root, 'server/sandboxes/long-name/index.mjs'), ENTRY);
  fs.writeFileSync(path.join(root, 'server/sandboxes/a/index.ts'), ENTRY);
  await assert.rejects(run('node', [`${repo}/dist/cli.mjs`, 'inspect', root, '--json']), (error) => {
    assert.equal(error.code, 1);
    assert.equal(
      error.stderr,
      'vite-hub-sandbox: SANDBOX_INVALID_ARGUMENT: Sandbox package "server/sandboxes/a" has multiple entrypoints: index.ts, index.mjs.\n',
    );
    // The folder discovery refused does not hide the others.
    const rows = JSON.parse(error.stdout);
    assert.deepEqual(
      rows.map((row) => [row.name, row.path, row.error?.code ?? null, row.timeoutMs]),
      [
        ['long-name', 'server/sandboxes/long-name', null, 300000],
        ['a', 'server/sandboxes/a', 'SANDBOX_INVALID_ARGUMENT', null],
      ],
    );
    return true;
  });
});

test('a pnpm workspace rooted at server/sandboxes/ itself: its entry-less packages are internals, inspect lists its Definitions', async () => {
  const root = makeApp({
    'package.json': '{"name":"app","private":true,"type":"module"}',
    'server/sandboxes/package.json': '{"name":"sandboxes","private":true}',
    'server/sandboxes/pnpm-workspace.yaml': 'packages:\n  - packages/*\n  - report\n',
    'server/sandboxes/report/package.json': JSON.stringify({
      name: 'report',
      private: true,
      type: 'module',
      dependencies: { helper: 'workspace:*' },
    }),
    'server/sandboxes/report/index.ts':
      "import { twice } from 'helper';\nexport default (p: { n?: number } = {}) => ({ value: twice(p.n ?? 1) });\n",
    'server/sandboxes/packages/helper/package.json': JSON.stringify({
      name: 'helper',
      private: true,
      type: 'module',
      exports: './lib.js',
    }),
    'server/sandboxes/packages/helper/lib.js': 'export const twice = (n) => n * 2;\n',
  });
  assert.deepEqual(
    (await discoverDefinitions(root)).map((d) => d.name),
    ['report'],
  );
  const { stdout } = await run(process.execPath, [path.join(repo, 'dist/cli.mjs'), 'inspect', root, '--json']);
  const [report] = JSON.parse(stdout);
  // The Definition joins the workspace: pnpm installs at server/sandboxes/, the handler runs in report/.
  assert.equal(report.name, 'report');
  assert.equal(report.packagePath, 'report');
  assert.equal(report.packageManager, 'pnpm');
});
