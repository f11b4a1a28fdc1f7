// createSandboxMcpHandler (`@vite-hub/sandbox/mcp`) mounted in a plain Node HTTP server, driven by
// the official MCP SDK client over Streamable HTTP (`StreamableHTTPClientTransport`): tools/list,
// tools/call with its log notifications on the call's SSE stream, a dropped connection stopping
// the Run's Box; and who may call: loopback only without authorize, Origin checks, authorize, and
// no start in production without authorize.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { readDefinitionDirectory, registerSandbox, unregisterSandbox } from '@vite-hub/sandbox';
import { createSandboxMcpHandler } from '@vite-hub/sandbox/mcp';
import { repoRoot } from '../support/vite-app.mjs';
import { defineTestSandbox, processesMatching, until, useLocalHost } from '../support/local-host.mjs';

const FIXTURE = join(repoRoot, 'tests', 'fixtures', 'mcp-app', 'server', 'sandboxes');
let host;
const servers = [];

/** Serves `handler` on 127.0.0.1 the way a fetch server does: Node request → Request, Response → Node response. */
async function serve(handler) {
  const server = createServer(async (req, res) => {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Readable.toWeb(req),
      duplex: 'half',
      signal: controller.signal,
    });
    const response = await handler(request, { remoteAddress: req.socket.remoteAddress });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return res.end();
    const reader = response.body.getReader();
    res.on('close', () => reader.cancel().catch(() => {}));
    for (
      let next = await reader.read().catch(() => ({ done: true }));
      !next.done;
      next = await reader.read().catch(() => ({ done: true }))
    )
      res.write(next.value);
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${server.address().port}/mcp`;
}

async function connect(url, headers = {}) {
  const logs = [];
  const client = new Client({ name: 'mcp-http-test', version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return { client, logs };
}

/** One JSON-RPC POST as a raw fetch, for the refusals. */
const post = (url, headers = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

before(async () => {
  host = await useLocalHost();
  for (const name of ['echo', 'fail', 'wait']) {
    const read = await readDefinitionDirectory(join(FIXTURE, name));
    registerSandbox(name, read);
  }
});
after(async () => {
  for (const server of servers) server.close();
  await host.close();
});

test('Streamable HTTP: tools/list and tools/call, with the handler lines on the call stream', async () => {
  const url = await serve(createSandboxMcpHandler({ definitions: ['echo', 'fail', 'wait'], production: false }));
  const { client, logs } = await connect(url);
  try {
    assert.deepEqual(
      (await client.listTools()).tools.map((tool) => tool.name),
      ['echo', 'fail', 'wait'],
    );
    const result = await client.callTool({ name: 'echo', arguments: { text: 'ab' } });
    assert.deepEqual(result.structuredContent, { echoed: 'ab', length: 2 });
    assert.ok(
      logs.some((entry) => entry.logger === 'echo' && entry.data === 'echo: ab'),
      JSON.stringify(logs),
    );
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    assert.equal(failed.isError, true);
    assert.equal(failed.content[0].text, 'SANDBOX_HANDLER_ERROR: fail was asked to fail');
  } finally {
    await client.close();
  }
});

test('Streamable HTTP: a client that drops the call stops its Run and the Box', async () => {
  const url = await serve(createSandboxMcpHandler({ definitions: ['wait'], production: false }));
  const { client, logs } = await connect(url);
  const marker = `mcp-http-cancel-${randomUUID()}`;
  const call = client.callTool({ name: 'wait', arguments: { marker } }, undefined, { timeout: 120_000 });
  call.catch(() => {});
  assert.ok(await until(() => logs.some((entry) => entry.data === `started ${marker}`), 60_000), 'no start line');
  assert.ok((await processesMatching(marker)).length > 0, 'the Box process is on the machine');
  await client.close();
  assert.ok(
    await until(async () => (await processesMatching(marker)).length === 0, 30_000),
    `still running: ${(await processesMatching(marker)).join('\n')}`,
  );
});

test('without authorize: loopback only; a forwarded remote client is refused with 403', async () => {
  const handler = createSandboxMcpHandler({ definitions: ['echo'], production: false });
  const url = await serve(handler);
  assert.equal((await post(url)).status, 200);
  const forwarded = await post(url, { 'x-forwarded-for': '203.0.113.9' });
  assert.equal(forwarded.status, 403);
  assert.match((await forwarded.json()).error.message, /only this machine \(loopback\)/);
  // RFC 7239's header too (the fresh-user trial of issue 36: it passed), and loopback in it does.
  for (const [value, status] of [
    ['for=8.8.8.8', 403],
    ['for="[2001:db8::1]:4711";proto=http', 403],
    ['for=127.0.0.1, for=203.0.113.9', 403],
    ['for="127.0.0.1:5000"', 200],
    ['for="[::1]"', 200],
  ])
    assert.equal((await post(url, { forwarded: value })).status, status, value);
  // A peer address the server reports (not loopback), or a public host name.
  const request = (target) =>
    new Request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
  assert.equal((await handler(request('http://127.0.0.1/mcp'), { remoteAddress: '192.0.2.4' })).status, 403);
  assert.equal((await handler(request('http://mcp.example/mcp'))).status, 403);
  assert.equal((await handler(request('http://localhost/mcp'), { remoteAddress: '::ffff:127.0.0.1' })).status, 200);
});

test('Origin: a foreign page is refused (DNS rebinding); the same origin, a loopback page and allowedOrigins pass', async () => {
  const url = await serve(createSandboxMcpHandler({ definitions: ['echo'], production: false }));
  assert.equal((await post(url, { origin: 'http://evil.example' })).status, 403);
  assert.equal((await post(url, { origin: new URL(url).origin })).status, 200);
  assert.equal((await post(url, { origin: 'http://localhost:6274' })).status, 200);
  const guarded = await serve(
    createSandboxMcpHandler({
      definitions: ['echo'],
      authorize: () => true,
      allowedOrigins: ['https://app.example'],
    }),
  );
  assert.equal((await post(guarded, { origin: 'https://app.example' })).status, 200);
  // With authorize, a loopback page is no longer trusted by default.
  assert.equal((await post(guarded, { origin: 'http://localhost:6274' })).status, 403);
});

test('authorize decides for every request, loopback or not', async () => {
  const token = randomUUID();
  const url = await serve(
    createSandboxMcpHandler({
      definitions: ['echo'],
      authorize: (request) => request.headers.get('authorization') === `Bearer ${token}`,
    }),
  );
  assert.equal((await post(url)).status, 401);
  assert.equal((await post(url, { authorization: 'Bearer wrong' })).status, 401);
  assert.equal((await post(url, { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' })).status, 200);
  const { client } = await connect(url, { authorization: `Bearer ${token}` });
  try {
    assert.deepEqual((await client.callTool({ name: 'echo', arguments: { text: 'x' } })).structuredContent, {
      echoed: 'x',
      length: 1,
    });
  } finally {
    await client.close();
  }
});

test('in production the handler refuses to start without authorize', () => {
  const saved = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    assert.throws(
      () => createSandboxMcpHandler({}),
      (error) =>
        error.code === 'SANDBOX_INVALID_ARGUMENT' && /needs options\.authorize in production/.test(error.message),
    );
    assert.equal(typeof createSandboxMcpHandler({ authorize: () => true }), 'function');
  } finally {
    if (saved === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = saved;
  }
  assert.throws(() => createSandboxMcpHandler({ production: true }), /needs options\.authorize in production/);
});

test('sessions: notifications/cancelled aborts the Run it names and stops its Box', async () => {
  const url = await serve(createSandboxMcpHandler({ definitions: ['wait'], production: false, sessions: true }));
  const { client, logs } = await connect(url);
  try {
    const marker = `mcp-session-cancel-${randomUUID()}`;
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: { marker } }, undefined, {
      signal: controller.signal,
      timeout: 120_000,
    });
    call.catch(() => {});
    assert.ok(await until(() => logs.some((entry) => entry.data === `started ${marker}`), 60_000), 'no start line');
    assert.ok((await processesMatching(marker)).length > 0, 'the Box process is on the machine');
    controller.abort(new Error('the test cancels'));
    await assert.rejects(call, /the test cancels/);
    assert.ok(
      await until(async () => (await processesMatching(marker)).length === 0, 30_000),
      `still running: ${(await processesMatching(marker)).join('\n')}`,
    );
    // The session goes on.
    assert.deepEqual(
      (await client.listTools()).tools.map((tool) => tool.name),
      ['wait'],
    );
  } finally {
    await client.close();
  }
});

test('sessions: tools/list_changed when a Definition is added or removed', async () => {
  const url = await serve(createSandboxMcpHandler({ production: false, sessions: true }));
  const { client } = await connect(url);
  const changes = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes.push(Date.now()));
  try {
    // The session's GET stream is open once the client has listened for a moment; the store
    // reads the tool list every second.
    const before = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(!before.includes('http/added'));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    defineTestSandbox('http/added', 'export default () => 1;');
    assert.ok(await until(() => changes.length > 0, 20_000), 'no tools/list_changed after an addition');
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'http/added'));
    const seen = changes.length;
    unregisterSandbox('http/added');
    assert.ok(await until(() => changes.length > seen, 20_000), 'no tools/list_changed after a removal');
    assert.ok(!(await client.listTools()).tools.some((tool) => tool.name === 'http/added'));
  } finally {
    await client.close();
  }
});

test('sessions: a request naming an unknown session is answered 404', async () => {
  const url = await serve(createSandboxMcpHandler({ production: false, sessions: true }));
  assert.equal((await post(url, { 'mcp-session-id': randomUUID() })).status, 404);
});
