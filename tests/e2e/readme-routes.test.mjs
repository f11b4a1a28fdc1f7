// The README's server routes type-check as written (issue 8, item 6): every ```ts block of
// README.md that starts with `// server/api/<file>.ts` and the route of "A first Definition" are
// written into a fresh app with the packed tarball, TypeScript and zod installed from npm, the way
// a user's CI does it on a fresh clone: `vite-hub-sandbox types` writes .vite-hub/sandbox/sandbox.d.ts
// without Vite, then `tsc --noEmit`. A schema whose output is not the Definition's payload is a
// type error at its line, so the check has teeth.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeDir, repoRoot } from '../support/vite-app.mjs';
import { installTarballApp, readmeFirstDefinition, repoVersion } from '../support/tarball-app.mjs';

const run = promisify(execFile);
let app;
let packDir;
let bin;

/** The route blocks of README.md and docs/: `{ 'server/api/x.post.ts': source }`, from ```ts blocks whose first line names the file. */
function readmeRoutes() {
  const pages = [
    'README.md',
    ...readdirSync(join(repoRoot, 'docs'), { recursive: true })
      .filter((name) => name.endsWith('.md'))
      .map((name) => join('docs', name)),
  ];
  const routes = {};
  for (const page of pages) {
    for (const [, block] of readFileSync(join(repoRoot, page), 'utf8').matchAll(/```ts\n([\s\S]*?)\n```/g)) {
      const file = /^\/\/ (server\/api\/\S+\.ts)\b/.exec(block)?.[1];
      if (!file) continue;
      assert.ok(!(file in routes), `${page}: route ${file} is shown twice with different code`);
      routes[file] = `${block}\n`;
    }
  }
  return routes;
}

const routes = readmeRoutes();
const firstDefinition = readmeFirstDefinition();

/** Runs a command of the app; resolves to `{ code, stdout, stderr }` (never rejects on a non-zero exit). */
async function exec(file, args) {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: app, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: error.code, stdout: error.stdout ?? '', stderr: error.stderr ?? '' };
  }
}

/** `tsc --noEmit` of the app's own TypeScript over the generated types and `files`. */
function tsc(files) {
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'bundler',
        lib: ['ES2022', 'DOM'],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
      },
      include: ['.vite-hub/sandbox/sandbox.d.ts', ...files],
    }),
  );
  return exec(process.execPath, [join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
}

before(async () => {
  ({ app, packDir, bin } = await installTarballApp('routes', {
    files: { ...firstDefinition, ...routes },
    dependencies: { typescript: repoVersion('typescript'), zod: repoVersion('zod') },
  }));
  // The pnpm-workspace Definition needs its own `pnpm install` to type-check (tests/e2e/vite-types.test.mjs
  // covers it); these routes do not use it.
  rmSync(join(app, 'server/sandboxes/order-summary'), { recursive: true, force: true });
});
after(() => {
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

test('the README has the routes this test checks', () => {
  assert.ok(Object.keys(routes).length >= 2, `route blocks of README.md and docs/: ${Object.keys(routes)}`);
  assert.ok(firstDefinition['server/api/hello.post.ts'], 'the first Definition has its route');
  for (const source of [...Object.values(routes), firstDefinition['server/api/hello.post.ts']]) {
    assert.doesNotMatch(
      source,
      /event\.req\.json\(\)/,
      'routes read the payload with readRequestPayload/readValidatedPayload',
    );
  }
});

test('vite-hub-sandbox types writes the generated types without Vite, then the README routes pass tsc --noEmit', async () => {
  assert.equal(existsSync(join(app, '.vite-hub')), false, 'a fresh clone has no generated types');
  const types = await exec(bin('vite-hub-sandbox'), ['types']);
  assert.equal(types.code, 0, types.stderr);
  assert.match(
    types.stdout,
    /^Wrote .*\.vite-hub\/sandbox\/sandbox\.d\.ts \(\d+ Definitions: .*\bhello\b.*\brelease-notes\b/,
  );
  const generated = readFileSync(join(app, '.vite-hub/sandbox/sandbox.d.ts'), 'utf8');
  assert.match(generated, /"hello": \{ payload: SandboxPayloadOf</);
  assert.equal(readFileSync(join(app, '.vite-hub/.gitignore'), 'utf8'), '*\n');
  // A second run finds nothing to change.
  assert.match((await exec(bin('vite-hub-sandbox'), ['types', '.'])).stdout, /^Up to date: /);

  const files = [...Object.keys(routes), 'server/api/hello.post.ts'];
  const { code, stdout, stderr } = await tsc(files);
  assert.equal(code, 0, `${stdout}${stderr}`);
});

test('a schema whose output is not the Definition payload fails tsc at its line', async () => {
  const wrong = 'server/api/hello-wrong.post.ts';
  mkdirSync(join(app, 'server/api'), { recursive: true });
  writeFileSync(
    join(app, wrong),
    [
      "import { defineHandler } from 'nitro/h3'",
      "import { z } from 'zod'",
      "import { readValidatedPayload, runSandbox, type SandboxPayload } from '@vite-hub/sandbox'",
      "export default defineHandler(async (event) => runSandbox('hello', await readValidatedPayload(event, z.object({ name: z.number() }))))",
      "export const unchecked: SandboxPayload<'hello'> = { name: 42 }",
      '',
    ].join('\n'),
  );
  const { code, stdout } = await tsc([wrong]);
  assert.notEqual(code, 0);
  const errors = stdout.split('\n').filter((line) => /error TS\d+/.test(line));
  assert.equal(errors.length, 2, stdout);
  assert.match(errors[0], /^server\/api\/hello-wrong\.post\.ts\(4,\d+\): error TS2345: .*number.*string/);
  assert.match(
    errors[1],
    /^server\/api\/hello-wrong\.post\.ts\(5,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/,
  );
  rmSync(join(app, wrong));
});

test('vite-hub-sandbox types: a folder discovery refuses is reported (exit 1), a bad root is a usage error (exit 2)', async () => {
  const broken = join(app, 'server/sandboxes/broken');
  mkdirSync(broken, { recursive: true });
  writeFileSync(join(broken, 'package.json'), '{"name":"broken","type":"module"}');
  const result = await exec(bin('vite-hub-sandbox'), ['types']);
  rmSync(broken, { recursive: true });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^vite-hub-sandbox: SANDBOX_INVALID_ARGUMENT: .*server\/sandboxes\/broken.*entrypoint/m);
  assert.match(result.stdout, /\bhello\b/, 'the other Definitions are still typed');
  const missing = await exec(bin('vite-hub-sandbox'), ['types', 'no-such-dir']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /"no-such-dir" is not a directory/);
});
