// A provider that accepts connections and never answers (issue 9, item 1): a raw TCP server
// that reads requests and writes nothing. Configured as the local host URL, as the Vercel base
// URL, or for one phase only (an injected fetch sends that route there and the rest to a real
// Box host), runSandbox must end within the Definition timeout plus a small bound, and the
// caller's abort must end it at once in every phase.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox } from '../support/local-host.mjs';

const TIMEOUT_MS = 1500;
/** What a bounded phase may take beyond the Definition timeout (scheduling on a loaded machine). */
const SLACK_MS = 2500;

let silent;
let silentUrl;
let host;
const sockets = new Set();

before(async () => {
  silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${silent.address().port}`;
  host = await startBoxHost({});
  defineTestSandbox('stalled/echo', 'export default (payload) => ({ echoed: payload });', {
    manifest: { vitehub: { sandbox: { timeout: TIMEOUT_MS } } },
  });
});

after(async () => {
  configureSandbox({});
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await host.close();
});

function routeOf(request) {
  const path = new URL(request.url).pathname;
  if (/^\/v[23]\/sandboxes$/.test(path)) return 'create';
  return path.split('/').slice(5).join('/');
}

/** A fetch that sends `stalledRoute` to the silent server and everything else to the real host. */
function stallOn(stalledRoute) {
  return (request) => {
    if (routeOf(request) !== stalledRoute) return fetch(request);
    const url = new URL(request.url);
    // The forwarded Request follows `request`'s signal only while it is alive (undici drops the
    // link when a following Request is collected): hold it until the fetch settles, or a GC
    // between the send and the abort leaves the fetch to Node's 300 s headers timeout.
    const forwarded = new Request(`${silentUrl}${url.pathname}${url.search}`, request);
    return fetch(forwarded).finally(() => forwarded);
  };
}

async function timed(promise) {
  const started = performance.now();
  try {
    return { value: await promise, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

for (const [label, config] of [
  ['the local Box host URL', () => ({ provider: 'local', local: { baseUrl: silentUrl, token: 'unused-token' } })],
  ['the Vercel base URL', () => ({ provider: 'vercel', vercel: { baseUrl: silentUrl, token: 'unused-token', teamId: 't', projectId: 'p' } })],
]) {
  test(`a create that is never answered at ${label} ends at the Definition timeout with 504`, async () => {
    configureSandbox(config());
    const { value: response, ms } = await timed(runSandbox('stalled/echo', 1));
    assert.ok(ms < TIMEOUT_MS + SLACK_MS, `took ${Math.round(ms)} ms`);
    assert.equal(response.status, 504);
    const body = await response.json();
    assert.equal(body.error.code, 'SANDBOX_TIMEOUT');
  });

  test(`an abort during a create that is never answered at ${label} rejects at once`, async () => {
    configureSandbox(config());
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 200);
    const { error, ms } = await timed(runSandbox('stalled/echo', 1, { signal: controller.signal }));
    assert.equal(error, reason);
    assert.ok(ms < 200 + SLACK_MS, `took ${Math.round(ms)} ms`);
  });
}

for (const phase of ['fs/write', 'cmd']) {
  test(`a ${phase} that is never answered ends at the Definition timeout; an abort ends it at once`, async () => {
    const name = 'stalled/echo';
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch: stallOn(phase) });
    const bounded = await timed(runSandbox(name, 1));
    assert.ok(bounded.ms < TIMEOUT_MS + SLACK_MS, `took ${Math.round(bounded.ms)} ms`);
    assert.equal(bounded.value.status, 504);
    assert.equal((await bounded.value.json()).error.code, 'SANDBOX_TIMEOUT');

    const controller = new AbortController();
    const reason = new Error(`abort during ${phase}`);
    setTimeout(() => controller.abort(reason), 300);
    const aborted = await timed(runSandbox(name, 1, { signal: controller.signal }));
    assert.equal(aborted.error, reason);
    assert.ok(aborted.ms < 300 + SLACK_MS, `took ${Math.round(aborted.ms)} ms`);
  });
}

test('a stop that is never answered is bounded (15 s), not held until the socket times out', async () => {
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch: stallOn('stop') });
  const { value: response, ms } = await timed(runSandbox('stalled/echo', 1));
  assert.ok(ms < 15_000 + SLACK_MS + 2000, `took ${Math.round(ms)} ms`);
  if (response.status !== 200) {
    const body = await response.json();
    assert.equal(body.error.details.operation, 'stop');
    assert.match(body.error.message, /15000ms/);
  }
});
