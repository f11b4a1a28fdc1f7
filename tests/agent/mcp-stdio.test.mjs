// `vite-hub-sandbox mcp` (stdio) driven by the official MCP SDK client (`Client` +
// `StdioClientTransport`) against the fixture app tests/fixtures/mcp-app (copied to a temp dir):
// tools/list, tools/call results (JSON → structuredContent, binary → embedded resource, an error
// Response → isError with its SANDBOX_* code), handler lines as log notifications, a cancelled
// call stopping its Box (the Box's processes leave the machine's process list), and
// tools/list_changed when a Definition folder is added, edited or removed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { repoRoot, removeDir } from '../support/vite-app.mjs';
import { processesMatching, until } from '../support/local-host.mjs';

const CLI = join(repoRoot, 'dist', 'cli.mjs');
/** The servers' own cache folders (XDG_CACHE_HOME), removed after the file's tests. */
const caches = [];
const cacheDir = () => {
  caches.push(mkdtempSync(join(tmpdir(), 'mcp-cache-')));
  return caches.at(-1);
};
let app;
let client;
let stderr = '';
const logs = [];
const listChanges = [];

/** Connects the SDK client to `vite-hub-sandbox mcp` over stdio. */
async function connect(root, extraArgs = []) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--root', root, ...extraArgs],
    stderr: 'pipe',
    env: { ...process.env, XDG_CACHE_HOME: cacheDir() },
  });
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const connected = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  connected.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  connected.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanges.push(Date.now()));
  await connected.connect(transport);
  return connected;
}

before(async () => {
  app = mkdtempSync(join(tmpdir(), 'mcp-app-'));
  cpSync(join(repoRoot, 'tests', 'fixtures', 'mcp-app'), app, { recursive: true });
  client = await connect(app, ['--commands', 'node']);
});
after(async () => {
  await client?.close();
  removeDir(app);
  for (const dir of caches) removeDir(dir);
});

test('tools/list: one tool per Definition of the app, then sandbox_exec with its allowlist', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['bytes', 'echo', 'fail', 'wait', 'sandbox_exec'],
  );
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.equal(typeof tool.description, 'string', tool.name);
  }
  assert.deepEqual(tools.at(-1).inputSchema.properties.command.enum, ['node']);
});

test('tools/call: a JSON result is structuredContent and its text; handler lines are log notifications', async () => {
  const result = await client.callTool({ name: 'echo', arguments: { text: 'hi', times: 2 } });
  assert.equal(result.isError, undefined);
  assert.deepEqual(result.structuredContent, { echoed: 'hihi', length: 2 });
  assert.deepEqual(JSON.parse(result.content[0].text), { echoed: 'hihi', length: 2 });
  assert.ok(
    await until(() => logs.some((entry) => entry.logger === 'echo' && entry.data === 'echo: hi')),
    JSON.stringify(logs),
  );
  assert.equal(logs.find((entry) => entry.data === 'echo: hi').level, 'info');
});

test('tools/call: an error Response is isError with its SANDBOX_* code and message', async () => {
  const result = await client.callTool({ name: 'fail', arguments: {} });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent, undefined);
  assert.equal(result.content[0].text, 'SANDBOX_HANDLER_ERROR: fail was asked to fail');
  assert.equal(result._meta['vite-hub/sandbox'].error.code, 'SANDBOX_HANDLER_ERROR');
});

test('tools/call: a binary result is an embedded resource', async () => {
  const result = await client.callTool({ name: 'bytes', arguments: {} });
  const [block] = result.content;
  assert.equal(block.type, 'resource');
  assert.equal(block.resource.uri, 'sandbox://bytes/result');
  assert.equal(block.resource.mimeType, 'application/octet-stream');
  assert.deepEqual([...Buffer.from(block.resource.blob, 'base64')], [1, 2, 255]);
});

test('tools/call: an unknown tool is a JSON-RPC error, not a result', async () => {
  await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), /Unknown tool "nope"/);
});

test('tools/call: sandbox_exec runs an allowed command', async () => {
  const result = await client.callTool({
    name: 'sandbox_exec',
    arguments: { command: 'node', args: ['-e', 'console.log(6 * 7)'] },
  });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.stdout, '42\n');
});

test('a cancelled call aborts its Run: the Box and its processes are stopped', async () => {
  const marker = `mcp-cancel-${randomUUID()}`;
  const controller = new AbortController();
  const call = client.callTool({ name: 'wait', arguments: { marker } }, undefined, {
    signal: controller.signal,
    timeout: 120_000,
  });
  call.catch(() => {});
  // The handler said it started its child: the Box is running it.
  assert.ok(
    await until(() => logs.some((entry) => entry.data === `started ${marker}`), 60_000),
    `no start line; stderr: ${stderr}`,
  );
  assert.ok((await processesMatching(marker)).length > 0, 'the Box process is on the machine');
  controller.abort(new Error('the test cancels'));
  await assert.rejects(call, /the test cancels/);
  // notifications/cancelled reached the server; the Run's abort stops the Box and kills the child.
  assert.ok(
    await until(async () => (await processesMatching(marker)).length === 0, 30_000),
    `still running: ${(await processesMatching(marker)).join('\n')}`,
  );
  // The server still answers afterwards.
  const { tools } = await client.listTools();
  assert.ok(tools.length > 0);
});

test('tools/list_changed when a Definition is added, edited or removed', async () => {
  const folder = join(app, 'server', 'sandboxes', 'added');
  const seen = listChanges.length;
  mkdirSync(folder);
  writeFileSync(join(folder, 'package.json'), '{ "name": "added", "private": true, "type": "module" }\n');
  writeFileSync(join(folder, 'index.mjs'), 'export default () => ({ version: 1 });\n');
  assert.ok(await until(() => listChanges.length > seen, 20_000), `no list_changed; stderr: ${stderr}`);
  assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'added'));
  assert.deepEqual((await client.callTool({ name: 'added', arguments: {} })).structuredContent, { version: 1 });

  const afterAdd = listChanges.length;
  writeFileSync(join(folder, 'index.mjs'), 'export default () => ({ version: 2 });\n');
  assert.ok(await until(() => listChanges.length > afterAdd, 20_000), 'no list_changed after an edit');
  assert.deepEqual((await client.callTool({ name: 'added', arguments: {} })).structuredContent, { version: 2 });

  const afterEdit = listChanges.length;
  rmSync(folder, { recursive: true });
  assert.ok(await until(() => listChanges.length > afterEdit, 20_000), 'no list_changed after a removal');
  assert.ok(!(await client.listTools()).tools.some((tool) => tool.name === 'added'));
});

test('--definitions offers only the named Definitions; no sandbox_exec without --commands', async () => {
  const only = await connect(app, ['--definitions', 'echo,fail']);
  try {
    assert.deepEqual(
      (await only.listTools()).tools.map((tool) => tool.name),
      ['echo', 'fail'],
    );
  } finally {
    await only.close();
  }
});

test('a payload the input schema refuses is isError with SANDBOX_INVALID_ARGUMENT and the failing key', async () => {
  const echo = (await client.listTools()).tools.find((tool) => tool.name === 'echo');
  assert.deepEqual(echo.inputSchema.required, ['text']);
  assert.equal(echo.inputSchema.properties.text.type, 'string');
  assert.equal(echo.description, 'Echoes its payload with a greeting.');
  const result = await client.callTool({ name: 'echo', arguments: { times: 2 } });
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /^SANDBOX_INVALID_ARGUMENT: .*payload\.text: is required/);
  assert.equal(result._meta['vite-hub/sandbox'].error.details.key, 'text');
  assert.deepEqual(result._meta['vite-hub/sandbox'].error.details.issues[0].path, ['text']);
});
