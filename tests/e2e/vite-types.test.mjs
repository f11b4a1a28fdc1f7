// Type test: tsc --noEmit over consumer files (tests/types/) against the sandbox.d.ts generated
// for examples/app, with the packed package installed from its tarball (its .d.ts files resolved
// from the app's node_modules, as a user's tsc sees them). A right payload compiles; a wrong one,
// or a required one left out, is a type error at its line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { removeDir, repoRoot } from '../support/vite-app.mjs';
import { installTarballApp } from '../support/tarball-app.mjs';

const run = promisify(execFile);
let app;
let packDir;

before(async () => {
  // A zero-argument Definition: its payload type is `unknown` (right-payload.ts passes a number);
  // one whose payload is required, as a folder and as a free-form file (missing-payload.ts leaves it out).
  ({ app, packDir } = await installTarballApp('types', {
    files: {
      'server/sandboxes/no-arguments/package.json': '{"name":"no-arguments","type":"module"}',
      'server/sandboxes/no-arguments/index.ts': 'export default async () => 42;\n',
      'server/sandboxes/required/package.json': '{"name":"required","type":"module"}',
      'server/sandboxes/required/index.ts': 'export default (payload: { name: string }) => payload.name.length;\n',
      'src/needs-text.sandbox.ts':
        "import { defineSandbox } from '@vite-hub/sandbox';\nexport default defineSandbox({ run(payload: { text: string }) { return payload.text.length; } });\n",
    },
  }));
  const { generateSandboxArtifacts } = await import(
    pathToFileURL(join(app, 'node_modules/@vite-hub/sandbox/vite/vite.mjs')).href
  );
  // What a developer has after `pnpm install` in the pnpm-workspace Definition: its workspace
  // packages linked (no registry access needed: the lockfile has only workspace links).
  await run('pnpm', ['install', '--frozen-lockfile', '--offline'], {
    cwd: join(app, 'server/sandboxes/order-summary'),
  });
  await generateSandboxArtifacts({ root: app, mode: 'build' });
  for (const file of ['right-payload.ts', 'wrong-payload.ts', 'missing-payload.ts', 'untyped.ts'])
    copyFileSync(join(repoRoot, 'tests/types', file), join(app, file));
});
after(() => {
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

/** Runs tsc over the generated declarations and one consumer file; resolves to { code, output }. */
async function tsc(consumer, generated = true) {
  const config = join(app, `tsconfig.${consumer}.json`);
  const files = generated ? ['.vite-hub/sandbox/sandbox.d.ts', consumer] : [consumer];
  writeFileSync(config, JSON.stringify({ extends: join(repoRoot, 'tests/types/tsconfig.json'), files }));
  try {
    const { stdout } = await run(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', config], {
      cwd: app,
    });
    return { code: 0, output: stdout };
  } catch (error) {
    return { code: error.code, output: `${error.stdout}${error.stderr}` };
  }
}

test('a right payload passes tsc --noEmit', async () => {
  const { code, output } = await tsc('right-payload.ts');
  assert.equal(code, 0, output);
});

test('a wrong payload fails with the expected error at its line', async () => {
  const { code, output } = await tsc('wrong-payload.ts');
  assert.notEqual(code, 0);
  const errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
  assert.equal(errors.length, 1, output);
  assert.match(
    errors[0],
    /^wrong-payload\.ts\(4,\d+\): error TS2322: Type 'number' is not assignable to type 'string'\./,
  );
});

test('a required payload left out fails at its line (a folder and a free-form Definition)', async () => {
  const { code, output } = await tsc('missing-payload.ts');
  assert.notEqual(code, 0);
  const errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
  assert.equal(errors.length, 2, output);
  assert.match(errors[0], /^missing-payload\.ts\(4,\d+\): error TS2554: Expected 2-3 arguments, but got 1\./);
  assert.match(errors[1], /^missing-payload\.ts\(5,\d+\): error TS2554: Expected 2-3 arguments, but got 1\./);
});

test('without the generated declarations runSandbox takes any name and payload', async () => {
  const { code, output } = await tsc('untyped.ts', false);
  assert.equal(code, 0, output);
  const typed = await tsc('untyped.ts');
  assert.notEqual(typed.code, 0, 'with the registry an unknown name is a type error');
  assert.match(typed.output, /untyped\.ts\(4,\d+\): error TS2345: Argument of type '"not-generated"'/);
});
