// A provider that accepts connections and never answers (issue 9, item 1): a raw TCP server
// that reads requests and writes nothing. Configured as the local host URL, as the Vercel base
// URL, or for one phase only (an injected fetch sends that route there and the rest to a real
// Box host), runSandbox must end with the Definition timeout's 504 (not hang until a socket gives
// up: Node's headers timeout is 300 s), and the caller's abort must end it with its reason before
// that 504 in every phase. How long a bounded phase takes is the bench's business (DESIGN §8);
// each test's `timeout` is a deadline far above it that only catches a hang.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox, startSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox } from '../support/local-host.mjs';

const TIMEOUT_MS = 1500;
/** A test-level deadline that only catches a hang: far above every bound, far below 300 s. */
const HANG_MS = 120_000;

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

/** `{ value }` or `{ error }` of a settled promise. */
async function settled(promise) {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

for (const [label, config] of [
  ['the local Box host URL', () => ({ provider: 'local', local: { baseUrl: silentUrl, token: 'unused-token' } })],
  [
    'the Vercel base URL',
    () => ({ provider: 'vercel', vercel: { baseUrl: silentUrl, token: 'unused-token', teamId: 't', projectId: 'p' } }),
  ],
]) {
  test(`a create that is never answered at ${label} ends at the Definition timeout with 504`, {
    timeout: HANG_MS,
  }, async () => {
    configureSandbox(config());
    const { value: response } = await settled(runSandbox('stalled/echo', 1));
    assert.equal(response.status, 504);
    const body = await response.json();
    assert.equal(body.error.code, 'SANDBOX_TIMEOUT');
  });

  test(`an abort during a create that is never answered at ${label} rejects with its reason, before the timeout`, {
    timeout: HANG_MS,
  }, async () => {
    configureSandbox(config());
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 200);
    // Aborted at 200 ms, before the 1.5 s timeout: a Run that ignored the abort would resolve to
    // that timeout's 504 instead of rejecting with the reason.
    const { error } = await settled(runSandbox('stalled/echo', 1, { signal: controller.signal }));
    assert.equal(error, reason);
  });
}

for (const phase of ['fs/write', 'cmd']) {
  test(`a ${phase} that is never answered ends at the Definition timeout; an abort ends it with its reason`, {
    timeout: HANG_MS,
  }, async () => {
    const name = 'stalled/echo';
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch: stallOn(phase) });
    const bounded = await settled(runSandbox(name, 1));
    assert.equal(bounded.value.status, 504);
    assert.equal((await bounded.value.json()).error.code, 'SANDBOX_TIMEOUT');

    const controller = new AbortController();
    const reason = new Error(`abort during ${phase}`);
    setTimeout(() => controller.abort(reason), 300);
    const aborted = await settled(runSandbox(name, 1, { signal: controller.signal }));
    assert.equal(aborted.error, reason);
  });
}

test('a stop that is never answered is bounded (15 s), not held until the socket times out', {
  timeout: HANG_MS,
}, async () => {
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch: stallOn('stop') });
  const { value: response } = await settled(runSandbox('stalled/echo', 1));
  if (response.status !== 200) {
    const body = await response.json();
    assert.equal(body.error.details.operation, 'stop');
    assert.match(body.error.message, /15000ms/);
  }
});

test('a Box that cannot be given back makes closed() reject with a SandboxError carrying the code of the failure', {
  timeout: HANG_MS,
}, async () => {
  const refuseStop = (request) =>
    routeOf(request) === 'stop' ? Promise.reject(new TypeError('the test refuses every stop')) : fetch(request);
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch: refuseStop });
  const run = startSandbox('stalled/echo', 1);
  assert.equal((await run.response()).status, 200);
  const error = await run.closed().then(
    () => assert.fail('closed() resolved'),
    (reason) => reason,
  );
  assert.equal(error.name, 'SandboxError', error.stack);
  assert.equal(error.code, 'SANDBOX_TRANSPORT_ERROR');
  assert.equal(error.status, 502);
  assert.match(
    error.message,
    /The clean-up after a Run of Sandbox "stalled\/echo" failed: stop request to the local provider failed: .*the test refuses every stop/,
  );
});

/**
 * A fetch whose command streams (Vercel's `POST …/cmd` NDJSON, Cloudflare's `POST
 * /api/execute/stream` SSE) pass every line on but `keep(line)` false ones, and then stay open
 * without a byte more: a connection gone silent, not closed. The lines held back go to `withheld`.
 */
function silentAfter(keep, withheld = []) {
  return async (request) => {
    const answer = await fetch(request);
    const path = new URL(request.url).pathname;
    if (!(routeOf(request) === 'cmd' || path.endsWith('/api/execute/stream')) || !answer.body) return answer;
    const decoder = new TextDecoder();
    let pending = '';
    const silentTail = new TransformStream({
      transform(chunk, controller) {
        const lines = (pending + decoder.decode(chunk, { stream: true })).split('\n');
        pending = lines.pop();
        for (const line of lines) {
          if (keep(line)) controller.enqueue(new TextEncoder().encode(`${line}\n`));
          else withheld.push(line);
        }
      },
      flush: () => new Promise(() => {}),
    });
    return new Response(answer.body.pipeThrough(silentTail), answer);
  };
}

// The line that reports the command's exit never comes, and the stream stays open: only the
// Box's close would end it. Vercel's protocol (the local host) ends a command's NDJSON with its
// exit code; Cloudflare's (the local host in Worker development) ends its SSE with `complete`.
for (const [label, config, exitLine] of [
  ['local', () => ({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } }), /"exitCode":\d/],
  [
    'cloudflare',
    () => ({ provider: 'cloudflare', env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token } }),
    /"type":"complete"/,
  ],
]) {
  test(`a ${label} command stream that stays open after the result frame is let go within seconds, and the Run answers its result`, {
    timeout: HANG_MS,
  }, async () => {
    // A binary result, recovered once the command has ended (a plain JSON one is answered at its
    // frame, before the exit line: run/follow.rs), so the Run waits for the stream to be let go.
    defineTestSandbox('stalled/open', 'export default (payload) => new Uint8Array([payload]);', {
      manifest: { vitehub: { sandbox: { timeout: 60_000 } } },
    });
    const withheld = [];
    configureSandbox({ ...config(), fetch: silentAfter((line) => !exitLine.test(line), withheld) });
    const started = Date.now();
    const response = await runSandbox('stalled/open', 7);
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual([...new Uint8Array(await response.arrayBuffer())], [7]);
    assert.ok(Date.now() - started < 30_000, `answered after ${Date.now() - started} ms, not at its 60 s timeout`);
    assert.equal(withheld.length, 1, 'the exit line was held back');
  });
}

test('a Run cut by its timeout keeps the output it had received in its 504', { timeout: HANG_MS }, async () => {
  defineTestSandbox(
    'stalled/chatty',
    `export default async () => { console.log('reached step 1'); console.error('warned at step 1'); await new Promise(() => setInterval(() => {}, 1000)); };`,
    {
      manifest: { vitehub: { sandbox: { timeout: TIMEOUT_MS } } },
    },
  );
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  const response = await runSandbox('stalled/chatty');
  const body = await response.json();
  assert.equal(response.status, 504, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_TIMEOUT');
  assert.match(body.error.details.stdout, /reached step 1/);
  assert.match(body.error.details.stderr, /warned at step 1/);
});
