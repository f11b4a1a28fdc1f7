// Project resolution against real folders (tests/fixtures/project/…): readDefinitionDirectory
// with an app root, the files it ships, packagePath, and the install plan the core derives
// (listSandboxes, the path `inspect` shows); pnpm workspace Definitions run on the local Box.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import {
  readDefinitionDirectory,
  registerSandbox,
  unregisterSandbox,
  listSandboxes,
  runSandbox,
  registerSandboxDirectory,
  closeLocalBoxHost,
} from '@vite-hub/sandbox';

/** An install plan without its digest (checked to be 64 hex chars). */
const planOf = ({ digest, ...plan }) => {
  assert.match(digest, /^[0-9a-f]{64}$/);
  return plan;
};

const repo = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = `${repo}/tests/fixtures/project`;
const run = promisify(execFile);

after(() => closeLocalBoxHost());

/** Reads a fixture Definition and returns what registerSandbox/listSandboxes make of it. */
async function resolveFixture(app, dir, name = 'fixture') {
  const definition = await readDefinitionDirectory(`${fixtures}/${app}/${dir}`, { appRoot: `${fixtures}/${app}` });
  registerSandbox(name, definition);
  const listed = listSandboxes().find((item) => item.name === name);
  unregisterSandbox(name);
  return { paths: definition.files.map((file) => file.path), packagePath: definition.packagePath, listed };
}

test('a package inside the app-root pnpm workspace ships the root files and its workspace: closure', async () => {
  const { paths, packagePath, listed } = await resolveFixture('workspace-app', 'server/sandboxes/report');
  assert.equal(packagePath, 'server/sandboxes/report');
  assert.deepEqual(paths, [
    'package.json',
    'packages/core/index.js',
    'packages/core/package.json',
    'packages/util/index.js',
    'packages/util/package.json',
    'pnpm-lock.yaml',
    'pnpm-workspace.yaml',
    'server/sandboxes/report/index.mjs',
    'server/sandboxes/report/package.json',
  ]);
  assert.equal(listed.packagePath, 'server/sandboxes/report');
  assert.equal(listed.entry, 'index.mjs');
  assert.equal(listed.packageManager, 'pnpm');
  assert.deepEqual(planOf(listed.install), { command: 'pnpm', args: ['install', '--frozen-lockfile'], cwd: '.' });
});

test('without an app root only the folder itself is read', async () => {
  const definition = await readDefinitionDirectory(`${fixtures}/workspace-app/server/sandboxes/report`);
  assert.equal(definition.packagePath, '');
  assert.deepEqual(
    definition.files.map((file) => file.path),
    ['index.mjs', 'package.json'],
  );
});

test('inline [..] globs with a negation, a devDependencies workspace: link and patch files', async () => {
  const { paths, packagePath, listed } = await resolveFixture('inline-globs', 'sandboxes/x');
  assert.equal(packagePath, 'sandboxes/x');
  // libs/private-b is excluded by '!libs/private-*'; patches/unused.patch is named by nothing.
  assert.deepEqual(paths, [
    'libs/a/index.js',
    'libs/a/package.json',
    'package.json',
    'patches/is-odd@3.0.1.patch',
    'patches/left-pad@1.3.0.patch',
    'pnpm-lock.yaml',
    'pnpm-workspace.yaml',
    'sandboxes/x/index.ts',
    'sandboxes/x/index.ts.mjs',
    'sandboxes/x/package.json',
  ]);
  assert.equal(listed.entry, 'index.ts');
  assert.deepEqual(planOf(listed.install), { command: 'pnpm', args: ['install', '--frozen-lockfile'], cwd: '.' });
});

test('a missing workspace dependency names the manifest that references it', async () => {
  await assert.rejects(
    readDefinitionDirectory(`${fixtures}/missing-dependency/sandboxes/x`, {
      appRoot: `${fixtures}/missing-dependency`,
    }),
    (error) => {
      assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
      assert.equal(
        error.message,
        'packages/a/package.json references missing pnpm workspace dependency "@md/gone" ("@md/gone": "workspace:~"); ' +
          'add a package with that name under a "packages" pattern of pnpm-workspace.yaml or remove the dependency.',
      );
      return true;
    },
  );
});

test('an ancestor workspace that does not list the package, or a non-pnpm packageManager, is not inherited', async () => {
  const plain = await resolveFixture('outside-workspace', 'server/sandboxes/plain');
  assert.equal(plain.packagePath, '');
  assert.deepEqual(plain.paths, ['index.mjs', 'package.json']);
  assert.deepEqual(
    planOf(plain.listed.install),
    { command: 'npm', args: ['install', '--no-audit', '--no-fund'], cwd: '.' },
    'the ancestor package-lock.json is not used',
  );
  const npm = await resolveFixture('outside-workspace', 'server/sandboxes/npm-managed');
  assert.equal(npm.packagePath, '');
  assert.deepEqual(npm.paths, ['index.mjs', 'package-lock.json', 'package.json']);
  assert.deepEqual(planOf(npm.listed.install), { command: 'npm', args: ['ci', '--no-audit', '--no-fund'], cwd: '.' });
});

test('a folder outside the app root is refused', async () => {
  await assert.rejects(
    readDefinitionDirectory(`${fixtures}/workspace-app/server/sandboxes/report`, {
      appRoot: `${fixtures}/inline-globs`,
    }),
    (error) => {
      assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
      assert.match(error.message, /is outside the app root/);
      return true;
    },
  );
});

test('order-summary (a pnpm workspace root Definition) runs with its workspace packages linked by pnpm', async () => {
  const sandboxes = `${repo}/examples/app/server/sandboxes`;
  const definition = await readDefinitionDirectory(`${sandboxes}/order-summary`, { appRoot: `${repo}/examples/app` });
  assert.equal(definition.packagePath, '');
  assert.ok(definition.files.some((file) => file.path === 'packages/money/index.js'));
  assert.equal(
    await registerSandboxDirectory(`${sandboxes}/order-summary`, undefined, { appRoot: `${repo}/examples/app` }),
    'order-summary',
  );
  const response = await runSandbox('order-summary', {
    items: [
      { sku: 'tea', quantity: 2, unitCents: 450 },
      { sku: 'mug', quantity: 1, unitCents: 1200 },
    ],
    taxRate: 0.2,
  });
  assert.equal(response.status, 200, await response.clone().text());
  assert.match(response.headers.get('server-timing'), /install;desc="(fresh|prepared|fresh-fallback)";dur=/);
  assert.deepEqual(await response.json(), {
    lines: [
      { sku: 'tea', quantity: 2, totalCents: 900 },
      { sku: 'mug', quantity: 1, totalCents: 1200 },
    ],
    subtotalCents: 2100,
    taxCents: 420,
    totalCents: 2520,
    total: '€25.20',
  });
});

test('a package inside a workspace runs at project/<packagePath> with its closure installed', async () => {
  const app = `${fixtures}/workspace-app`;
  await registerSandboxDirectory(`${app}/server/sandboxes/report`, 'fx-report', { appRoot: app });
  const response = await runSandbox('fx-report', { values: [1, 2, 3] });
  assert.equal(response.status, 200, await response.clone().text());
  // `own` is read from ./package.json: the handler's cwd is the package directory.
  assert.deepEqual(await response.json(), { own: '@fx/report', text: '3 values, sum 6' });
});

test('the CLI runs a package inside a workspace with --app-root (and says what is wrong without it)', async () => {
  const app = `${fixtures}/workspace-app`;
  const cli = [`${repo}/dist/cli.mjs`, 'run', `${app}/server/sandboxes/report`, '--payload', '{"values":[4,5]}'];
  const { stdout } = await run('node', [...cli, '--app-root', app]);
  assert.match(stdout, /^HTTP\/1\.1 200\n/);
  assert.match(stdout, /\{"own":"@fx\/report","text":"2 values, sum 9"\}\n$/);
  // Without it the folder alone is the project: its workspace: dependency cannot be installed.
  const alone = await run('node', cli).catch((error) => error);
  assert.equal(alone.code, 1);
  assert.match(alone.stdout, /^HTTP\/1\.1 500\n/);
  assert.match(alone.stdout, /SANDBOX_EXECUTION_ERROR/);
  await assert.rejects(run('node', [...cli, '--app-root', `${app}/missing`]), {
    code: 2,
    stderr: /--app-root ".*\/missing" is not a directory/,
  });
});

test('inspect lists the workspace Definition, not its internal packages, with its install plan', async () => {
  const { stdout } = await run('node', [`${repo}/dist/cli.mjs`, 'inspect', `${repo}/examples/app`, '--json']);
  const rows = JSON.parse(stdout);
  assert.ok(!rows.some((row) => row.path.includes('order-summary/packages')), stdout);
  const row = rows.find((item) => item.name === 'order-summary');
  assert.deepEqual(
    { ...row, digest: row.digest.length, install: { ...row.install, digest: row.install.digest.length } },
    {
      name: 'order-summary',
      kind: 'package',
      path: 'server/sandboxes/order-summary',
      entry: 'server/sandboxes/order-summary/index.ts',
      packageManager: 'pnpm',
      timeoutMs: 60000,
      digest: 64,
      packagePath: '',
      install: { command: 'pnpm', args: ['install', '--frozen-lockfile'], cwd: '.', digest: 64 },
    },
  );
  const { stdout: fixture } = await run('node', [
    `${repo}/dist/cli.mjs`,
    'inspect',
    `${fixtures}/workspace-app`,
    '--json',
  ]);
  const [report] = JSON.parse(fixture);
  assert.equal(report.name, 'report');
  assert.equal(report.packagePath, 'server/sandboxes/report');
});

test('registerSandbox takes packagePath, an explicit entry and a timeout override', async () => {
  registerSandbox('explicit', {
    files: [
      { path: 'package.json', content: '{"name":"root","private":true}' },
      { path: 'tools/report/package.json', content: '{"type":"module","vitehub":{"sandbox":{"timeout":9000}}}' },
      {
        path: 'tools/report/.vite-hub-sandbox/definition.mjs',
        content: 'export default (p) => ({ doubled: p * 2, cwd: process.cwd().endsWith("/project/tools/report") })',
      },
    ],
    packagePath: 'tools/report',
    entry: '.vite-hub-sandbox/definition.mjs',
    timeout: 20000,
  });
  const listed = listSandboxes().find((item) => item.name === 'explicit');
  assert.deepEqual(
    { entry: listed.entry, packagePath: listed.packagePath, timeoutMs: listed.timeoutMs, install: listed.install },
    { entry: '.vite-hub-sandbox/definition.mjs', packagePath: 'tools/report', timeoutMs: 20000, install: null },
  );
  const response = await runSandbox('explicit', 21);
  assert.equal(response.status, 200, await response.clone().text());
  assert.deepEqual(await response.json(), { doubled: 42, cwd: true });
  unregisterSandbox('explicit');
  for (const [timeout, shown] of [
    ['1000', '"1000"'],
    [0, '0'],
    [1.5, '1.5'],
  ]) {
    assert.throws(
      () =>
        registerSandbox('bad-timeout', {
          files: [
            { path: 'package.json', content: '{"type":"module"}' },
            { path: 'index.mjs', content: '' },
          ],
          timeout,
        }),
      {
        code: 'SANDBOX_INVALID_ARGUMENT',
        message: `Sandbox "bad-timeout" timeout must be a positive integer <= 2147483647 (milliseconds), got ${shown}.`,
      },
    );
  }
  assert.throws(() => registerSandbox('bad-path', { files: [], packagePath: 3 }), {
    code: 'SANDBOX_INVALID_ARGUMENT',
    message: /packagePath must be a string/,
  });
});

// Imported workspace packages must expose runtime JavaScript (contract §4.4, R0018–R0020):
// tests/fixtures/project/workspace-runtime has built and unbuilt packages side by side.
const BUILD_FIX =
  'Build the workspace package to JavaScript before Sandbox execution (point its exports/main at the built .js).';

async function rejectsRuntime(dir, detail) {
  const root = `${fixtures}/workspace-runtime`;
  await assert.rejects(readDefinitionDirectory(`${root}/sandboxes/${dir}`, { appRoot: root }), (error) => {
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(error.message, `Sandbox "${dir}": ${detail} ${BUILD_FIX}`);
    return true;
  });
}

test('an imported workspace package whose "exports" is TypeScript is refused at the import (R0018)', async () => {
  await rejectsRuntime(
    'ts-export',
    'sandboxes/ts-export/index.ts:1:26 imports "@ws/ts-lib", which workspace package "@ws/ts-lib" resolves through its "exports" to "packages/ts-lib/src/index.ts", a TypeScript file (R0018).',
  );
});

test('a subpath pattern of "exports" that maps to TypeScript is refused (R0018)', async () => {
  await rejectsRuntime(
    'pattern',
    'sandboxes/pattern/index.ts:3:21 imports "@ws/pattern/source/raw", which workspace package "@ws/pattern" resolves through its "exports" to "packages/pattern/src/raw.ts", a TypeScript file (R0018).',
  );
});

test('a TypeScript "main" behind a built workspace package is reported in the built module (R0019)', async () => {
  await rejectsRuntime(
    'transitive',
    'packages/js-lib/dist/index.js:2:23 imports "@ws/money", which workspace package "@ws/money" resolves through its "main" to "packages/money/index.ts", a TypeScript file (R0019).',
  );
});

test('a workspace package without exports, main or index.js is refused (R0020)', async () => {
  await rejectsRuntime(
    'default-index',
    'sandboxes/default-index/index.mjs:1:23 imports "@ws/no-entry", which workspace package "@ws/no-entry" resolves through the default entry ./index.js (its package.json has neither "exports" nor "main") to "packages/no-entry/index.js", which is not a shipped file (R0020).',
  );
});

test('built workspace packages pass; an unused TypeScript devDependency is shipped but not checked', async () => {
  const root = `${fixtures}/workspace-runtime`;
  const { files, packagePath } = await readDefinitionDirectory(`${root}/sandboxes/fine`, { appRoot: root });
  assert.equal(packagePath, 'sandboxes/fine');
  const paths = files.map((file) => file.path);
  assert.ok(paths.includes('packages/unused/src/index.ts'), paths.join(' '));
  assert.ok(paths.includes('packages/pattern/dist/features/a.js'), paths.join(' '));
  assert.ok(!paths.some((path) => path.startsWith('packages/ts-lib/')), paths.join(' '));
});
