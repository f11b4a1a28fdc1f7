// A Cloudflare container that dies while its command's stream stays open (issue 32, item 8a): the
// Run must notice the death and answer an error that says the container ended before the result,
// instead of holding the request until the Definition timeout (60 s here). Real workerd
// (miniflare) runs the real `Sandbox` Durable Object, whose container traffic goes through a proxy
// in this process to a local Box host. In "die" mode the proxy answers the command stream's head
// and its `start` event, marks the answer so the stand-in container (box-host-container.mjs) dies
// (its monitor() ends, as workerd's does when the container exits), and then sends nothing more.
// The test's `timeout`, far below the Definition timeout, is what catches a hang.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { proxyTo } from '../support/cloudflare-worker.mjs';

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

registerSandbox('died/echo', {
  files: [
    { path: 'package.json', content: '{"type":"module"}' },
    { path: 'index.mjs', content: 'export default (payload) => ({ echo: payload });' },
  ],
  timeout: 60000,
});

export default {
  async fetch(request, env) {
    configureSandbox({ provider: 'cloudflare', env });
    const response = await runSandbox('died/echo', 1);
    return Response.json({ status: response.status, body: await response.text() });
  },
};
`;

let worker;
let proxy;
/** Whether the proxy makes the container die under the next command stream. */
let die = false;
const held = new Set();

before(async () => {
  let target;
  proxy = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    if (die && req.url.endsWith('/api/execute/stream')) {
      die = false;
      held.add(res);
      res.on('close', () => held.delete(res));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-test-container-died': '1' });
      res.write(`data: ${JSON.stringify({ type: 'start', timestamp: new Date().toISOString(), command: 'node' })}\n\n`);
      return;
    }
    await proxyTo(target, req, res, Buffer.concat(chunks));
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-died', {
    bindings: { BOX_HOST_URL: `http://127.0.0.1:${proxy.address().port}` },
  });
  target = worker.host.baseUrl;
});

after(async () => {
  for (const res of held) res.destroy();
  await worker?.close();
  await new Promise((resolve) => proxy.close(resolve));
});

async function run() {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/', { method: 'POST' });
  return response.json();
}

test('a container that dies while its command stream stays open answers a runtime error, not the Definition timeout', {
  timeout: 30_000,
}, async () => {
  die = true;
  const outcome = await run();
  assert.equal(outcome.status, 500, JSON.stringify(outcome));
  const { error } = JSON.parse(outcome.body);
  assert.equal(error.code, 'SANDBOX_RUNTIME_ERROR', JSON.stringify(error));
  assert.deepEqual(error.details, { operation: 'exec', provider: 'cloudflare' });
  // monitor() ended: the Durable Object records `stopped_with_code` (exit 0), then its stop hook may record `stopped`.
  assert.match(
    error.message,
    /^the container stopped before the command finished \(container state stopped(_with_code, exit code 0)?\)$/,
    error.message,
  );
});

test('with nothing injected, the same Worker answers 200 (the proxy forwards faithfully)', {
  timeout: 30_000,
}, async () => {
  const outcome = await run();
  assert.equal(outcome.status, 200, JSON.stringify(outcome));
  assert.deepEqual(JSON.parse(outcome.body), { echo: 1 });
});
