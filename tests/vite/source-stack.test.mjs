// How a handler error's stack maps back to the Definition's sources (vite/source-stack.mjs),
// from what `vite dev` generates for examples/app: the facts stay on the host (never in a
// generated Definition, so never shipped into a Box), frames in shipped files map to the source
// file, line and column, every other frame (the harness, installed packages) stays as it was.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LEAST_UPPER_BOUND, TraceMap, generatedPositionFor, originalPositionFor } from '@jridgewell/trace-mapping';
import { generateSandboxArtifacts } from '@vite-hub/sandbox/vite';
import { mapSandboxStack } from '../../dist/vite/source-stack.mjs';
import { copyExampleApp, removeDir } from '../support/vite-app.mjs';

const app = copyExampleApp('source-stack');
after(() => removeDir(app));
const traceMapping = { TraceMap, originalPositionFor };

/** The Box frame (1-based line and column) of `line` of `source` in the compiled file `shipped`. */
function boxFrame(sources, shipped, source, line) {
  const generated = generatedPositionFor(new TraceMap(sources[shipped]), {
    source,
    line,
    column: 0,
    bias: LEAST_UPPER_BOUND,
  });
  assert.notEqual(generated.line, null, `${source}:${line} is in ${shipped}`);
  return `file:///vercel/sandbox/project/${shipped}:${generated.line}:${generated.column + 1}`;
}

test("dev writes each Definition's stack facts beside the registry, app-relative, and none into a Definition", async () => {
  const { dir } = await generateSandboxArtifacts({ root: app, mode: 'dev' });
  const facts = JSON.parse(readFileSync(join(dir, 'source-maps.json'), 'utf8'));
  const notes = facts['release-notes'];
  assert.deepEqual(notes['index.ts.mjs'].sources, ['server/sandboxes/release-notes/index.ts']);
  assert.deepEqual(notes['parse.ts.mjs'].sources, ['server/sandboxes/release-notes/parse.ts']);
  const words = facts['word-count']['.vite-hub-sandbox/definition.mjs'];
  assert.ok(words.sources.includes('src/word-count.sandbox.ts'), JSON.stringify(words.sources));
  assert.ok(words.sources.includes('<vite-hub-sandbox entry>'), JSON.stringify(words.sources));
  assert.ok(!('sourcesContent' in words), 'no source text is kept');
  for (const file of readdirSync(join(dir, 'definitions'))) {
    assert.doesNotMatch(readFileSync(join(dir, 'definitions', file), 'utf8'), /"mappings"|sourceMappingURL/, file);
  }

  const stack = [
    'Error: no notes',
    `    at parseNotes (${boxFrame(notes, 'parse.ts.mjs', 'server/sandboxes/release-notes/parse.ts', 6)})`,
    `    at Module.default (${boxFrame(notes, 'index.ts.mjs', 'server/sandboxes/release-notes/index.ts', 14)})`,
    '    at helper (file:///vercel/sandbox/project/node_modules/dep/index.mjs:4:2)',
    '    at callEntry (file:///vercel/sandbox/.vite-hub/harness.mjs:327:22)',
  ].join('\n');
  const lines = mapSandboxStack(stack, notes, traceMapping).split('\n');
  assert.equal(lines[0], 'Error: no notes');
  assert.match(lines[1], /^ {4}at parseNotes \(server\/sandboxes\/release-notes\/parse\.ts:6:\d+\)$/);
  assert.match(lines[2], /^ {4}at Module\.default \(server\/sandboxes\/release-notes\/index\.ts:14:\d+\)$/);
  assert.equal(lines[3], '    at helper (file:///vercel/sandbox/project/node_modules/dep/index.mjs:4:2)');
  assert.equal(lines[4], '    at callEntry (file:///vercel/sandbox/.vite-hub/harness.mjs:327:22)');
});

test('a file shipped as written maps to its own path, line and column unchanged', () => {
  const sources = {
    'index.mjs': 'server/sandboxes/plain/index.mjs',
    'lib/util.mjs': 'server/sandboxes/plain/lib/util.mjs',
  };
  const stack =
    'TypeError: x\n    at f (file:///workspace/.vite-hub-runs/abc/project/lib/util.mjs:7:3)\n    at file:///workspace/.vite-hub-runs/abc/project/index.mjs:2:10';
  assert.equal(
    mapSandboxStack(stack, sources, traceMapping),
    'TypeError: x\n    at f (server/sandboxes/plain/lib/util.mjs:7:3)\n    at server/sandboxes/plain/index.mjs:2:10',
  );
});
