// createSandboxMcpHandler (`@vite-hub/sandbox/mcp`) in workerd: a Worker bundled for the workerd
// condition mounts it, run in miniflare with the real @cloudflare/sandbox Durable Object on a
// local Box host; the official MCP SDK client lists and calls a Definition over Streamable HTTP.
// A Worker without NODE_ENV is production: the handler refuses to start without authorize.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';

const TOKEN = 'mcp-worker-test-token';
const WORKER = `
import { Sandbox as SdkSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox } from '@vite-hub/sandbox';
import { createSandboxMcpHandler } from '@vite-hub/sandbox/mcp';

export const Sandbox = sandboxOnBoxHost(SdkSandbox);

registerSandbox('wecho', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: 'export default (payload) => { console.log("wecho " + payload.text); return { echoed: payload.text }; };' },
] });

const mcp = createSandboxMcpHandler({
  authorize: (request) => request.headers.get('authorization') === 'Bearer ${TOKEN}',
});

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === '/without-authorize') {
      try {
        createSandboxMcpHandler({});
        return new Response('created');
      } catch (error) {
        return new Response(error.code + ': ' + error.message, { status: 500 });
      }
    }
    configureSandbox({ provider: 'cloudflare', env });
    return mcp(request);
  },
};
`;

let worker;
let base;
before(async () => {
  worker = await sandboxWorkerOnBoxHost(WORKER, 'mcp-worker');
  base = await worker.miniflare.ready;
});
after(async () => {
  await worker?.close();
});

test('workerd: the SDK client lists and calls a Definition through the handler', async () => {
  const client = new Client({ name: 'mcp-worker-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', base), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  try {
    assert.deepEqual(
      (await client.listTools()).tools.map((tool) => tool.name),
      ['wecho'],
    );
    const result = await client.callTool({ name: 'wecho', arguments: { text: 'from workerd' } });
    assert.deepEqual(result.structuredContent, { echoed: 'from workerd' }, JSON.stringify(result));
  } finally {
    await client.close();
  }
  const refused = await fetch(new URL('/mcp', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  assert.equal(refused.status, 401);
});

test('workerd without NODE_ENV is production: no handler without authorize', async () => {
  const response = await fetch(new URL('/without-authorize', base));
  assert.equal(response.status, 500);
  assert.match(
    await response.text(),
    /^SANDBOX_INVALID_ARGUMENT: createSandboxMcpHandler needs options\.authorize in production/,
  );
});
