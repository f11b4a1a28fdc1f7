// The tool facts in real workerd (miniflare): a Worker bundled with the workerd conditions from a
// `vite build` registry (generateSandboxArtifacts) lists the Definitions as tools and refuses a
// payload by key with @cfworker/json-schema (no code generation, which workerd forbids), with no
// TypeScript or generator at run time.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { generateSandboxArtifacts } from '@vite-hub/sandbox/vite';
import { copyExampleApp, removeDir, repoRoot } from '../support/vite-app.mjs';

const dirs = [];
after(() => dirs.forEach(removeDir));

test('workerd: listDefinitionTools and validateToolInput over a built registry', async () => {
  const app = copyExampleApp('tools-workerd');
  dirs.push(app);
  mkdirSync(join(app, 'server/sandboxes/typed-notes'), { recursive: true });
  writeFileSync(
    join(app, 'server/sandboxes/typed-notes/package.json'),
    JSON.stringify({ name: 'typed-notes', private: true, type: 'module', description: 'Splits notes' }),
  );
  writeFileSync(
    join(app, 'server/sandboxes/typed-notes/index.ts'),
    'export default function notes(payload: { notes: string; limit?: number }) {\n  return payload.notes.split("\\n").slice(0, payload.limit);\n}\n',
  );
  await generateSandboxArtifacts({ root: app, mode: 'build' });

  const out = mkdtempSync(join(tmpdir(), 'vite-hub-tools-workerd-'));
  dirs.push(out);
  const worker = `import { listToolFacts } from ${JSON.stringify(join(app, '.vite-hub/sandbox/build/registry.mjs'))};
import { listDefinitionTools, setDefinitionToolFacts, validateToolInput } from ${JSON.stringify(join(repoRoot, 'dist/mcp/definition-tools.mjs'))};
setDefinitionToolFacts(listToolFacts);
export default {
  async fetch() {
    const tools = await listDefinitionTools({ definitions: ['typed-notes', 'release-notes'] });
    const refused = await validateToolInput('typed-notes', { limit: 1 }).then(
      () => null,
      (error) => ({ code: error.code, key: error.details?.key, message: error.message }),
    );
    const accepted = await validateToolInput('typed-notes', { notes: 'a' });
    return Response.json({ tools, refused, accepted });
  },
};
`;
  await build({
    stdin: { contents: worker, resolveDir: repoRoot },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker'],
    mainFields: ['module', 'main'],
    loader: { '.wasm': 'copy' },
    external: ['cloudflare:*', 'node:*'],
    outfile: join(out, 'index.mjs'),
    logLevel: 'silent',
  });
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(out, 'index.mjs'),
    modulesRoot: out,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2025-09-01',
    compatibilityFlags: ['nodejs_compat'],
  });
  try {
    const answer = await (await mf.dispatchFetch('http://worker/')).json();
    assert.deepEqual(answer.tools[0], {
      name: 'typed-notes',
      description: 'Splits notes',
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { notes: { type: 'string' }, limit: { type: 'number' } },
        required: ['notes'],
      },
    });
    assert.equal(answer.tools[1].name, 'release-notes');
    assert.deepEqual(answer.refused, {
      code: 'SANDBOX_INVALID_ARGUMENT',
      key: 'notes',
      message: 'the payload of "typed-notes" does not match its inputSchema: payload.notes: is required',
    });
    assert.deepEqual(answer.accepted, { notes: 'a' });
  } finally {
    await mf.dispose();
  }
});
