// What `npm pack` of dist/ puts in the tarball users install: the package's files, its README and
// LICENSE, and nothing else (no tests, sources or build leftovers).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { removeDir } from '../support/vite-app.mjs';
import { packDist } from '../support/tarball-app.mjs';

const run = promisify(execFile);
let packDir;
after(() => packDir && removeDir(packDir));

test('the tarball holds README.md, LICENSE, CHANGELOG.md and the package folders only', async () => {
  const packed = await packDist();
  packDir = packed.dir;
  const { files } = packed;
  for (const file of [
    'README.md',
    'LICENSE',
    'CHANGELOG.md',
    'package.json',
    'cli.mjs',
    'runtime/index.node.mjs',
    'runtime/index.d.ts',
    'runtime/index.node.d.ts',
    'vite/vite.mjs',
    'box-host/index.mjs',
    'agent/index.mjs',
    'agent/index.d.ts',
    'mcp/index.mjs',
    'mcp/index.d.ts',
    'wasm/vite_hub_sandbox_bg.wasm',
    'wasm/vite_hub_sandbox_tooling_bg.wasm',
  ]) {
    assert.ok(files.includes(file), `${file} in ${files.join(', ')}`);
  }
  const topLevel = [...new Set(files.map((file) => file.split('/')[0]))].sort();
  assert.deepEqual(topLevel, [
    'CHANGELOG.md',
    'LICENSE',
    'README.md',
    'agent',
    'box-host',
    'cli.mjs',
    'mcp',
    'package.json',
    'runtime',
    'vite',
    'wasm',
  ]);
  const { stdout } = await run('tar', ['-xOzf', packed.tarball, 'package/LICENSE']);
  assert.match(stdout, /^MIT License\n\nCopyright \(c\) \d{4} vite-hub contributors\n/);
  const readme = (await run('tar', ['-xOzf', packed.tarball, 'package/README.md'])).stdout;
  assert.match(readme, /^# @vite-hub\/sandbox\n/);
  assert.ok(
    readme.indexOf('## Use it in your app') > 0 &&
      readme.indexOf('## Use it in your app') === readme.indexOf('\n## ') + 1,
    'the first section is "Use it in your app"',
  );
});
