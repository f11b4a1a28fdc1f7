// A Cloudflare container that stops answering (issue 9, item 1: every provider request has a
// deadline). Real workerd (miniflare) runs the real `Sandbox` Durable Object, whose container
// traffic goes through a proxy in this process to a local Box host; the proxy holds one route:
// it never answers it (`headers`), or answers its head and then sends nothing more (`body`).
// The Durable Object's own `configure` RPC is held the same way (its fetch to the proxy stalls).
// The Run must answer the Definition timeout's SANDBOX_TIMEOUT (504) instead of hanging, and a
// caller's abort (at 300 ms, before that 1.5 s timeout) must end it with its reason, through the
// Durable Object binding and through the local-development path (SANDBOX_LOCAL_URL). How long
// that takes is the bench's business (DESIGN §8): each test's `timeout` only catches a hang. A
// container that answers "starting" until the timeout is a 504 that says it never started.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { proxyTo } from '../support/cloudflare-worker.mjs';

const TIMEOUT_MS = 1500;
/** A test-level deadline that only catches a hang: far above the timeout, far below a socket's. */
const HANG_MS = 120_000;

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';

// configure() first asks the proxy's gate, which the configure test holds: a Durable Object
// whose RPC never answers (its own fetch is what stalls, so workerd sees real I/O pending).
export const Sandbox = class extends sandboxOnBoxHost(RealSandbox) {
  constructor(ctx, env) {
    super(ctx, env);
    this.gate = env.BOX_HOST_URL + '/configure-gate';
  }
  async configure(options) {
    await fetch(this.gate);
    return super.configure(options);
  }
};

registerSandbox('stall/echo', {
  files: [
    { path: 'package.json', content: '{"type":"module"}' },
    { path: 'index.mjs', content: 'export default (payload) => ({ echo: payload });' },
  ],
  timeout: ${TIMEOUT_MS},
});

export default {
  async fetch(request, env) {
    const { abortAfterMs, localHost } = await request.json();
    const workerEnv = localHost ? { SANDBOX_LOCAL_URL: env.BOX_HOST_URL, SANDBOX_LOCAL_TOKEN: env.BOX_HOST_TOKEN } : env;
    configureSandbox({ provider: 'cloudflare', env: workerEnv });
    const controller = new AbortController();
    if (abortAfterMs) setTimeout(() => controller.abort(new Error('caller gave up')), abortAfterMs);
    try {
      const response = await runSandbox('stall/echo', 1, { signal: controller.signal });
      return Response.json({ status: response.status, body: await response.text() });
    } catch (error) {
      return Response.json({ rejected: String(error?.message ?? error) });
    }
  },
};
`;

let worker;
let proxy;
/** `{ route, mode }`: the container route the proxy holds, or null. */
let stall = null;
const held = new Set();

before(async () => {
  let target;
  proxy = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    if (req.url === '/configure-gate' && stall?.route !== 'configure') return res.end();
    const route =
      req.url === '/configure-gate'
        ? 'configure'
        : /^\/cloudflare\/[^/]+(\/api\/.*)$/.exec(new URL(req.url, 'http://proxy').pathname)?.[1];
    if (stall?.mode === 'starting' && route === stall.route) {
      // The answer of a container that is still starting (protocol note §3): retried, never done.
      res.writeHead(503, { 'content-type': 'application/json' });
      return res.end(
        JSON.stringify({
          code: 'INTERNAL_ERROR',
          message: 'Container is starting. Please retry in a moment.',
          httpStatus: 503,
        }),
      );
    }
    if (stall && route === stall.route) {
      held.add(res);
      res.on('close', () => held.delete(res));
      if (stall.mode === 'body') {
        const sse = route.endsWith('/stream');
        res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/json' });
        res.write(sse ? 'data: {"type":"start"' : '{"success":');
      }
      return;
    }
    await proxyTo(target, req, res, Buffer.concat(chunks));
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-stalled', {
    bindings: { BOX_HOST_URL: `http://127.0.0.1:${proxy.address().port}` },
  });
  target = worker.host.baseUrl;
});

after(async () => {
  for (const res of held) res.destroy();
  await worker?.close();
  await new Promise((resolve) => proxy.close(resolve));
});

/** One Run through the Worker: `{ status, body } | { rejected }`. */
async function run(options = {}) {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/', {
    method: 'POST',
    body: JSON.stringify(options),
  });
  return response.json();
}

for (const localHost of [false, true]) {
  const path = localHost ? 'the local-development path' : 'the Durable Object binding';
  // A Run sends no /api/mkdir: its staged archive's write is its first container request (the
  // one that waits for the container to start), then its one command.
  for (const [phase, route] of [
    ...(localHost ? [] : [['configure RPC', 'configure']]),
    ['stage', '/api/write'],
    ['exec', '/api/execute/stream'],
  ]) {
    // The gate's answer head is all configure waits for: only its never-answered case.
    for (const mode of route === 'configure' ? ['headers'] : ['headers', 'body']) {
      test(`${path}: a ${phase} (${route}) whose ${mode} never come(s) ends at the Definition timeout with 504; an abort ends it with its reason`, {
        timeout: HANG_MS,
      }, async () => {
        stall = { route, mode };
        try {
          const bounded = await run({ localHost });
          assert.equal(bounded.status, 504, JSON.stringify(bounded));
          assert.equal(JSON.parse(bounded.body).error.code, 'SANDBOX_TIMEOUT');

          const aborted = await run({ localHost, abortAfterMs: 300 });
          assert.equal(aborted.rejected, 'caller gave up', JSON.stringify(aborted));
        } finally {
          stall = null;
          for (const res of held) res.destroy();
        }
        // No check that every Box is gone here: a Run that gave up while its request was still on
        // its way inside the Durable Object (an abort during the start, on a loaded machine) has
        // sent its destroy, and the Durable Object may then start the container for that request
        // anyway; such a container sleeps after \`sleepAfter\`. cloudflare-provider.test.mjs checks
        // that Boxes are gone after Runs that answer and Runs that time out.
      });
    }
  }
}

for (const localHost of [false, true]) {
  const path = localHost ? 'the local-development path' : 'the Durable Object binding';
  test(`${path}: a container still starting at the Definition timeout is a 504 that says the container never started`, {
    timeout: HANG_MS,
  }, async () => {
    stall = { route: '/api/write', mode: 'starting' };
    try {
      const bounded = await run({ localHost });
      assert.equal(bounded.status, 504, JSON.stringify(bounded));
      const { error } = JSON.parse(bounded.body);
      assert.equal(error.code, 'SANDBOX_TIMEOUT');
      assert.match(
        error.message,
        /^Sandbox "stall\/echo" timed out after 1500ms: the container never started \(write was still waiting for it after \d+ attempts: status 503: Container is starting/,
        error.message,
      );
    } finally {
      stall = null;
    }
  });
}

test('with nothing held, the same Worker answers 200 (the proxy forwards faithfully)', async () => {
  const outcome = await run({});
  assert.equal(outcome.status, 200, JSON.stringify(outcome));
  assert.deepEqual(JSON.parse(outcome.body), { echo: 1 });
});
