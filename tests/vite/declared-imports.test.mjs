// Imports checked where they are written (issue 8, item 7): a folder Definition whose reachable
// code imports a package its package.json does not declare (dependencies, peerDependencies,
// optionalDependencies) is refused when it is read — by readDefinitionDirectory and by
// `vite-hub-sandbox inspect` — naming the import's file:line:column and the install command, instead
// of failing inside the Box at run time. Node built-ins and type-only imports need no entry.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readDefinitionDirectory } from '@vite-hub/sandbox';
import { repoRoot } from '../support/vite-app.mjs';

const run = promisify(execFile);
const temporary = [];
after(() => {
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

function makeTree(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-declared-'));
  temporary.push(root);
  for (const [relative, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true });
    fs.writeFileSync(path.join(root, relative), text);
  }
  return root;
}

const SOURCE = [
  "import { readFile } from 'node:fs/promises';",
  "import path from 'path';",
  "import type { Options } from 'types-only-pkg';",
  "import { format } from './lib/format.ts';",
  '',
  'export default async (payload: Options) => format(path.basename(String(payload)), readFile);',
  '',
].join('\n');
const LIB = [
  '// helper',
  'export const format = (value: string, _read: unknown) => {',
  '  return value;',
  '};',
  "export const later = () => import('date-fns/format');",
  '',
].join('\n');

test('an undeclared package imported in reachable code is refused at its file:line:column with the fix', async () => {
  const root = makeTree({
    'report/package.json':
      '{"name":"report","type":"module","dependencies":{"slugify":"^1.6.6"},"devDependencies":{"tsx":"^4"}}',
    'report/index.ts': SOURCE,
    'report/lib/format.ts': LIB,
  });
  await assert.rejects(readDefinitionDirectory(path.join(root, 'report')), (error) => {
    assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(error.status, 400);
    assert.equal(
      error.message,
      'Sandbox "report": lib/format.ts:5:35 imports "date-fns/format", but package.json does not list "date-fns" in "dependencies" (R0032). Run `npm i date-fns` in the Definition\'s folder, so it is installed in the Box.',
    );
    return true;
  });
});

test('declared packages (dependencies, peer, optional), built-ins and type-only imports pass', async () => {
  const root = makeTree({
    'report/package.json':
      '{"name":"report","type":"module","dependencies":{"slugify":"^1.6.6"},"peerDependencies":{"date-fns":"^4"}}',
    'report/index.ts': SOURCE,
    'report/lib/format.ts': LIB,
  });
  const { files } = await readDefinitionDirectory(path.join(root, 'report'));
  assert.ok(files.some((file) => file.path === 'lib/format.ts.mjs'));
});

test('a devDependency-only import is refused with "move it to dependencies"; pnpm folders get pnpm add', async () => {
  const root = makeTree({
    'tool/package.json': '{"name":"tool","type":"module","devDependencies":{"zod":"^4"}}',
    'tool/pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
    'tool/index.mjs': "export default () => 1;\n\nimport { z } from 'zod';\n",
  });
  await assert.rejects(readDefinitionDirectory(path.join(root, 'tool')), {
    message:
      'Sandbox "tool": index.mjs:3:19 imports "zod", but package.json lists "zod" only in "devDependencies", which are not for the Run (R0032). Move it to "dependencies": run `pnpm add zod` in the Definition\'s folder.',
  });
});

test('vite-hub-sandbox inspect reports it for the folder (exit 1)', async () => {
  const root = makeTree({
    'package.json': '{"name":"app","private":true,"type":"module"}',
    'server/sandboxes/report/package.json': '{"name":"report","type":"module"}',
    'server/sandboxes/report/index.mjs': "import slugify from 'slugify';\nexport default (text) => slugify(text);\n",
  });
  const error = await run(process.execPath, [path.join(repoRoot, 'dist/cli.mjs'), 'inspect', root]).then(
    () => assert.fail('inspect should exit 1'),
    (failure) => failure,
  );
  assert.equal(error.code, 1);
  assert.match(
    error.stderr,
    /^vite-hub-sandbox: SANDBOX_INVALID_ARGUMENT: server\/sandboxes\/report: Sandbox "report": index\.mjs:1:21 imports "slugify", but package\.json does not list "slugify" in "dependencies" \(R0032\)\. Run `npm i slugify` in the Definition's folder/m,
  );
});
