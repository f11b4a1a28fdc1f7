// requestSignal(event) aborts when a route's client leaves, and only then. Under srvx 0.8 (the
// Node adapter of nitro 3.0.0 and h3 2.0.1-rc) `event.req.signal` aborts as soon as the body has
// been read, so passing it to runSandbox failed every Run; requestSignal follows the Node response.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { H3, readBody, toNodeHandler } from 'h3';
import { readRequestPayload, requestSignal } from '@vite-hub/sandbox';

/**
 * An h3 v2 app on node:http whose route reads the body with `read` (h3's own `readBody` goes
 * through `event.req.json()`, which ties srvx's signal to the Node request), then reports its
 * signal after `holdMs`.
 */
async function serve(t, holdMs, read = readRequestPayload) {
  const seen = [];
  const app = new H3().post('/run', async (event) => {
    const payload = await read(event);
    const signal = requestSignal(event);
    assert.equal(requestSignal(event), signal, 'one signal per event');
    const outcome = await new Promise((resolve) => {
      if (signal.aborted) return resolve(`aborted at once: ${signal.reason?.name}`);
      const timer = setTimeout(() => resolve('held'), holdMs);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(`aborted: ${signal.reason.name}`);
      });
    });
    seen.push({ payload, outcome, srvxSignalAborted: event.req.signal.aborted });
    return { outcome };
  });
  const server = http.createServer(toNodeHandler(app));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { url: `http://127.0.0.1:${server.address().port}/run`, seen };
}

for (const read of [readRequestPayload, readBody]) {
  test(`a client that stays: requestSignal stays open after ${read.name} read the body`, async (t) => {
    const { url, seen } = await serve(t, 300, read);
    const response = await fetch(url, { method: 'POST', body: JSON.stringify({ n: 1 }) });
    assert.deepEqual(await response.json(), { outcome: 'held' });
    assert.deepEqual(seen[0].payload, { n: 1 });
    assert.equal(seen[0].outcome, 'held');
  });
}

test('a client that leaves: requestSignal aborts with an AbortError', async (t) => {
  const { url, seen } = await serve(t, 10_000);
  const controller = new AbortController();
  const answered = fetch(url, { method: 'POST', body: '{"n":2}', signal: controller.signal }).then(
    () => 'answered',
    (error) => error.name,
  );
  // Left once the route holds the body (it waits 10 s unless its signal aborts).
  setTimeout(() => controller.abort(), 200);
  assert.equal(await answered, 'AbortError');
  while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(seen[0].outcome, 'aborted: AbortError');
});

test('a Web Request: its own signal', () => {
  const controller = new AbortController();
  const request = new Request('http://x/', { signal: controller.signal });
  const signal = requestSignal(request);
  assert.equal(signal.aborted, false);
  controller.abort();
  assert.equal(signal.aborted, true);
  assert.throws(() => requestSignal({}), TypeError);
});
