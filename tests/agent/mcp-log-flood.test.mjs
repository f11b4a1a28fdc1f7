// A handler that prints a flood of lines over `vite-hub-sandbox mcp` (stdio). One notification per
// line queued 60,000 writes on the transport and the server answered nothing for many seconds
// after the call (the fresh-user trial of issue 36). Lines now travel gathered, one notification
// at a time, and a call relays at most 4 MiB of them, then says how many it did not.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot, removeDir } from '../support/vite-app.mjs';

const CLI = join(repoRoot, 'dist', 'cli.mjs');
/** The servers' own cache folders (XDG_CACHE_HOME), removed after the file's tests. */
const caches = [];
const cacheDir = () => {
  caches.push(mkdtempSync(join(tmpdir(), 'mcp-cache-')));
  return caches.at(-1);
};
const MAX_RELAYED_BYTES = 4 * 1024 * 1024;
let app;
let client;
const logs = [];

before(async () => {
  app = mkdtempSync(join(tmpdir(), 'mcp-flood-'));
  writeFileSync(join(app, 'package.json'), '{ "name": "mcp-flood", "private": true, "type": "module" }\n');
  const dir = join(app, 'server', 'sandboxes', 'chatty');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "name": "chatty", "private": true, "type": "module" }\n');
  writeFileSync(
    join(dir, 'index.mjs'),
    `export default function chatty({ lines, width = 10 }) {
  for (let i = 0; i < lines; i++) console.log(String(i).padStart(width, '.'));
  return { printed: lines };
}
`,
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--root', app],
    stderr: 'pipe',
    env: { ...process.env, XDG_CACHE_HOME: cacheDir() },
  });
  client = new Client({ name: 'mcp-flood-test', version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(transport);
});
after(async () => {
  await client?.close();
  removeDir(app);
  for (const dir of caches) removeDir(dir);
});

test('60,000 lines reach the client gathered, in order, and the server answers the next request', async () => {
  const result = await client.callTool({ name: 'chatty', arguments: { lines: 60_000 } });
  assert.deepEqual(result.structuredContent, { printed: 60_000 });
  // The lines gathered before the result came before it; the rest follow within moments.
  const received = () => logs.flatMap((entry) => String(entry.data).split('\n'));
  for (let i = 0; i < 100 && received().length < 60_000; i++) await new Promise((r) => setTimeout(r, 100));
  const lines = received();
  assert.equal(lines.length, 60_000);
  assert.equal(lines[0], '.........0');
  assert.equal(lines.at(-1), '.....59999');
  assert.ok(logs.length < 60_000 / 10, `${logs.length} notifications for 60,000 lines`);
  // Not starved by its own notifications.
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['chatty'],
  );
});

test('past 4 MiB of lines a call relays no more, and says how many it did not', async () => {
  logs.length = 0;
  // 2,000 lines of 4,096 characters: 8 MiB.
  const result = await client.callTool({ name: 'chatty', arguments: { lines: 2000, width: 4096 } });
  assert.deepEqual(result.structuredContent, { printed: 2000 });
  const notice = () => logs.find((entry) => /more lines were not relayed/.test(String(entry.data)));
  for (let i = 0; i < 100 && !notice(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.match(
    String(notice()?.data),
    /\[vite-hub-sandbox\] \d+ more lines were not relayed: a call relays at most 4194304 bytes/,
  );
  const relayed = logs.filter((entry) => entry !== notice()).reduce((sum, entry) => sum + String(entry.data).length, 0);
  assert.ok(relayed <= MAX_RELAYED_BYTES + 2000, `${relayed} bytes relayed`);
  assert.ok(relayed >= MAX_RELAYED_BYTES - 2 * 4096, `${relayed} bytes relayed`);
});
