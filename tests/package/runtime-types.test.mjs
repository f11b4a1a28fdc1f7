// Each runtime's declarations (pkg-template/runtime/index.d.ts, and index.node.d.ts for Node),
// checked with tsc against the built package as the package's `exports` conditions route them:
// Node (`moduleResolution: nodenext`) and a runtime-less `bundler` resolution see the Node
// additions; a `workerd` one does not (tests/types/runtimes/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
const COMMON = ['--noEmit', '--strict', '--skipLibCheck', 'false', '--target', 'es2022', '--lib', 'es2022,dom'];

/** tsc over one file of tests/types/runtimes/ with `options`: `{ code, output }`. */
async function check(file, options) {
  try {
    const { stdout } = await run(process.execPath, [tsc, ...COMMON, ...options, `tests/types/runtimes/${file}`], {
      cwd: root,
    });
    return { code: 0, output: stdout };
  } catch (error) {
    return { code: error.code, output: `${error.stdout}${error.stderr}` };
  }
}

for (const [label, options] of [
  ['Node (nodenext)', ['--module', 'nodenext', '--moduleResolution', 'nodenext']],
  ['no runtime named (bundler)', ['--module', 'esnext', '--moduleResolution', 'bundler']],
]) {
  test(`${label}: the Node additions and every runtime's functions are declared`, { timeout: 120_000 }, async () => {
    const { code, output } = await check('node-additions.ts', options);
    assert.equal(code, 0, output);
  });
}

test("workerd: every runtime's functions, not the Node additions", { timeout: 120_000 }, async () => {
  const { code, output } = await check('portable.ts', [
    '--module',
    'esnext',
    '--moduleResolution',
    'bundler',
    '--customConditions',
    'workerd',
  ]);
  assert.equal(code, 0, output);
});

test('control: without the workerd condition the Node additions are there (the expected error is missing)', {
  timeout: 120_000,
}, async () => {
  const { code, output } = await check('portable.ts', ['--module', 'esnext', '--moduleResolution', 'bundler']);
  assert.notEqual(code, 0);
  assert.match(output, /portable\.ts\(4,1\): error TS2578: Unused '@ts-expect-error' directive/);
});
