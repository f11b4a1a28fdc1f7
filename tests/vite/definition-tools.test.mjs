// Every Definition as a tool (issue 36): the tool facts the plugin writes at `vite build` and
// `vite dev` (description, inputSchema from a Standard Schema, from the TypeScript payload type, or
// untyped with one warning), read back by `definitionTools()` of `@vite-hub/sandbox/agent` in the
// app's server code (through the generated facade), checked by the real `ai` package (asSchema,
// generateText with its mock model), a refused payload's code and key, and a real Run in a Box.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, createLogger, createServer } from 'vite';
import { asSchema, generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { hubSandbox } from '@vite-hub/sandbox/vite';
import { copyExampleApp, removeDir } from '../support/vite-app.mjs';
import { NO_BWRAP } from '../support/local-host.mjs';

const apps = [];
after(() => apps.forEach(removeDir));

const FILES = {
  // A package Definition typed by a TypeScript interface, with a declared result type.
  'server/sandboxes/typed-notes/package.json': JSON.stringify({
    name: 'typed-notes',
    private: true,
    type: 'module',
    description: 'Splits release notes into lines',
  }),
  'server/sandboxes/typed-notes/index.ts': `export interface NotesPayload {
  /** The release notes, one item per line. */
  notes: string;
  /** At most this many lines. */
  limit?: number;
}
export interface NotesResult { lines: string[]; count: number }
export default function typedNotes(payload: NotesPayload): NotesResult {
  const lines = payload.notes.split('\\n').filter(Boolean).slice(0, payload.limit ?? 100);
  return { lines, count: lines.length };
}
`,
  // A free-form Definition declaring a Standard Schema (zod 4) and a description.
  'src/word-stats.sandbox.ts': `import { defineSandbox } from '@vite-hub/sandbox';
import { z } from 'zod';
export default defineSandbox({
  description: 'Counts the words of a text',
  input: z.object({ text: z.string().min(1), top: z.number().int().optional() }),
  run(payload: { text: string; top?: number }) {
    return { words: payload.text.split(/\\s+/).length };
  },
});
`,
  // An untyped JavaScript Definition.
  'server/sandboxes/untyped/package.json': JSON.stringify({ name: 'untyped', private: true, type: 'module' }),
  'server/sandboxes/untyped/index.mjs': 'export default (payload) => ({ got: payload });\n',
  // Server code of the app: what it gets from definitionTools() (through the plugin's facade).
  'tools.mjs': `import { definitionTools } from '@vite-hub/sandbox/agent';
export { definitionTools };
`,
};

function fixtureApp(prefix) {
  const app = copyExampleApp(prefix);
  apps.push(app);
  for (const [file, content] of Object.entries(FILES)) {
    mkdirSync(join(app, file, '..'), { recursive: true });
    writeFileSync(join(app, file), content);
  }
  // The free-form Definition imports zod: the app declares it (the repo's node_modules has it).
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  manifest.dependencies.zod = '^4.2.0';
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest));
  return app;
}

/** A Vite logger that keeps every warning. */
function recordingLogger() {
  const logger = createLogger('silent');
  const warnings = [];
  logger.warn = (message) => warnings.push(message);
  return { logger, warnings };
}

/** The facts every mode must give for the fixture's three Definitions. */
function assertFacts(facts) {
  assert.deepEqual(facts['typed-notes'], {
    description: 'Splits release notes into lines',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        notes: { type: 'string', description: 'The release notes, one item per line.' },
        limit: { type: 'number', description: 'At most this many lines.' },
      },
      required: ['notes'],
    },
    outputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { lines: { type: 'array', items: { type: 'string' } }, count: { type: 'number' } },
      required: ['lines', 'count'],
    },
    schema: 'typescript',
  });
  const stats = facts['word-stats'];
  assert.equal(stats.description, 'Counts the words of a text');
  assert.equal(stats.schema, 'standard');
  assert.equal(stats.inputSchema.type, 'object');
  assert.deepEqual(stats.inputSchema.required, ['text']);
  assert.deepEqual(Object.keys(stats.inputSchema.properties), ['text', 'top']);
  assert.equal(stats.inputSchema.properties.text.minLength, 1);
  assert.equal(stats.inputSchema.properties.top.type, 'integer');
  // Its result type is inferred (run declares none).
  assert.deepEqual(stats.outputSchema, {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { words: { type: 'number' } },
    required: ['words'],
  });
  const { warning, ...untyped } = facts.untyped;
  assert.deepEqual(untyped, { inputSchema: { type: 'object' }, schema: 'none' });
  assert.match(
    warning,
    /^\[sandbox\] "untyped" has no payload schema: its entry is JavaScript, not TypeScript; its tool takes any object/,
  );
}

/** Runs `list` and keeps what it prints with console.warn. */
async function consoleWarnings(list) {
  const warnings = [];
  const warn = console.warn;
  console.warn = (message) => warnings.push(String(message));
  try {
    return { value: await list(), warnings };
  } finally {
    console.warn = warn;
  }
}

/** Vite itself says nothing of tools: an app that never lists them is not warned. */
function assertNoToolWarning(warnings) {
  assert.ok(!warnings.some((line) => line.includes('payload schema')), warnings.join('\n'));
}

test('vite build: the registry carries each Definition tool facts; Vite itself warns of none', async () => {
  const app = fixtureApp('tools-build');
  const { logger, warnings } = recordingLogger();
  await build({
    root: app,
    configFile: false,
    customLogger: logger,
    plugins: [hubSandbox({ provider: 'local' })],
    build: { ssr: 'tools.mjs', write: false },
  });
  const registry = await import(pathToFileURL(join(app, '.vite-hub/sandbox/build/registry.mjs')).href);
  assertFacts(registry.listToolFacts());
  assertNoToolWarning(warnings);
});

test('vite dev: definitionTools() lists the same facts, refuses a payload by key, and runs a Definition', async () => {
  const app = fixtureApp('tools-dev');
  const { logger, warnings } = recordingLogger();
  const server = await createServer({
    root: app,
    configFile: false,
    customLogger: logger,
    plugins: [hubSandbox({ provider: 'local' })],
    server: { middlewareMode: true, hmr: false, watch: null },
    appType: 'custom',
  });
  try {
    const { definitionTools } = await server.ssrLoadModule('/tools.mjs');
    const registry = await import(pathToFileURL(join(app, '.vite-hub/sandbox/dev/registry.mjs')).href);
    assertFacts(await registry.listToolFacts());
    assertNoToolWarning(warnings);

    // Listing the tools tells why one is untyped, once per process.
    const listed = await consoleWarnings(() =>
      definitionTools({ definitions: ['typed-notes', 'word-stats', 'untyped'] }),
    );
    const again = await consoleWarnings(() => definitionTools({ definitions: ['untyped'] }));
    assert.equal(listed.warnings.length, 1, listed.warnings.join('\n'));
    assert.match(listed.warnings[0], /^\[sandbox\] "untyped" has no payload schema/);
    assert.deepEqual(again.warnings, []);
    const tools = listed.value;
    assert.deepEqual(Object.keys(tools), ['typed-notes', 'word-stats', 'untyped']);
    assert.equal(tools['typed-notes'].description, 'Splits release notes into lines');
    assert.equal(tools.untyped.description, 'Runs the Sandbox Definition "untyped".');
    // What the AI SDK makes of the input schema (draft-07, as it asks).
    const schema = await asSchema(tools['typed-notes'].inputSchema).jsonSchema;
    assert.deepEqual(schema.required, ['notes']);
    assert.deepEqual(Object.keys(schema.properties), ['notes', 'limit']);
    assert.deepEqual((await asSchema(tools['word-stats'].inputSchema).jsonSchema).required, ['text']);

    // A refused payload: SANDBOX_INVALID_ARGUMENT naming the key, before any Box opens.
    for (const [name, input, key, message] of [
      ['typed-notes', { limit: 2 }, 'notes', /payload\.notes: is required/],
      ['typed-notes', { notes: 'a', limit: 'two' }, 'limit', /payload\.limit: /],
      ['word-stats', { text: '' }, 'text', /payload\.text: /],
      ['word-stats', { text: 'a b', top: 1.5 }, 'top', /payload\.top: /],
    ]) {
      await assert.rejects(tools[name].execute(input, {}), (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
        assert.equal(error.details.key, key);
        assert.match(error.message, message);
        return true;
      });
    }
    await assert.rejects(definitionTools({ definitions: ['nope'] }), { code: 'SANDBOX_NOT_FOUND' });

    // The AI SDK's own loop: a refused payload reaches the model as a tool error, not a throw.
    const calls = [];
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        calls.push(1);
        return calls.length > 1
          ? {
              content: [{ type: 'text', text: 'done' }],
              finishReason: { unified: 'stop', raw: undefined },
              usage: usage(),
              warnings: [],
            }
          : {
              content: [
                { type: 'tool-call', toolCallId: 'c1', toolName: 'typed-notes', input: JSON.stringify({ limit: 1 }) },
              ],
              finishReason: { unified: 'tool-calls', raw: undefined },
              usage: usage(),
              warnings: [],
            };
      },
    });
    const result = await generateText({ model, tools, prompt: 'split', stopWhen: stepCountIs(2) });
    const toolError = result.steps[0].content.find((part) => part.type === 'tool-error');
    assert.ok(toolError, JSON.stringify(result.steps[0].content));
    assert.match(String(toolError.error?.message ?? toolError.error), /notes/);

    if (!NO_BWRAP) {
      // A real Run in a Box: the decoded JSON result.
      const answer = await tools['typed-notes'].execute({ notes: 'a\nb\nc', limit: 2 }, {});
      assert.deepEqual(answer, { lines: ['a', 'b'], count: 2 });
    }
  } finally {
    await server.close();
    const { closeLocalBoxHost } = await import('@vite-hub/sandbox');
    await closeLocalBoxHost();
  }
});

function usage() {
  return {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
}
