// Fault injection between the Rust Vercel client and a real local Box host: an injected `fetch`
// that answers some requests itself (429/5xx with Retry-After) or reshapes the real stream
// (1-byte chunks with raw multi-byte UTF-8, a stream cut mid-line). Each test asserts the exact outcome.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox, startSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox } from '../support/local-host.mjs';

let host;
let seen;
let fault;

function routeOf(request) {
  const path = new URL(request.url).pathname;
  if (/^\/v[23]\/sandboxes$/.test(path)) return 'create';
  return path.split('/').slice(5).join('/');
}

async function faultyFetch(request) {
  const route = routeOf(request);
  seen.push(route);
  const injected = await fault(route, request);
  return injected ?? fetch(request);
}

before(async () => {
  host = await startBoxHost({});
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch: faultyFetch });
  defineTestSandbox('faults/echo', 'export default (payload) => ({ echoed: payload, text: "é€𝄞" });');
});
after(async () => {
  configureSandbox({});
  await host.close();
});
beforeEach(() => {
  seen = [];
  fault = async () => undefined;
});

/** runSandbox, then waits until the Box was given back (its stop comes after the Response). */
async function runAndClose(name, payload) {
  const run = startSandbox(name, payload);
  const response = await run.response();
  await run.closed();
  return response;
}

const json = (status, body, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

test('5xx on create is retried with backoff, then the run succeeds', async () => {
  let failures = 2;
  fault = async (route) =>
    route === 'create' && failures-- > 0 ? json(503, { error: { code: 'busy', message: 'busy' } }) : undefined;
  const response = await runAndClose('faults/echo', 1);
  assert.equal(response.status, 200);
  assert.deepEqual(seen, ['create', 'create', 'create', 'fs/write', 'cmd', 'stop']);
});

test('a 429 asking for more than 20 s is not waited for: 503 SANDBOX_PROVIDER_UNAVAILABLE with Retry-After', async () => {
  fault = async (route) =>
    route === 'create' ? json(429, { error: { message: 'slow down' } }, { 'retry-after': '30' }) : undefined;
  const response = await runSandbox('faults/echo', 1);
  assert.equal(response.status, 503);
  assert.equal(response.headers.get('retry-after'), '30');
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
  assert.deepEqual(body.error.details, { operation: 'create', provider: 'local', status: 429 });
  assert.deepEqual(seen, ['create']);
});

test('a 5xx on the command POST is never re-sent: 502 SANDBOX_TRANSPORT_ERROR and the Box is stopped', async () => {
  fault = async (route) => (route === 'cmd' ? json(500, { error: { message: 'exploded' } }) : undefined);
  const response = await runAndClose('faults/echo', 1);
  assert.equal(response.status, 502);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_TRANSPORT_ERROR');
  assert.deepEqual(body.error.details, { operation: 'exec', provider: 'local', status: 500 });
  assert.match(body.error.message, /exploded/);
  assert.deepEqual(seen, ['create', 'fs/write', 'cmd', 'stop']);
});

function reshapeStream(response, transform) {
  return (async () => {
    const text = await response.text();
    return new Response(transform(text), { status: response.status, headers: response.headers });
  })();
}

function oneByteChunks(bytes) {
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      if (index < bytes.length) controller.enqueue(bytes.slice(index, ++index));
      else controller.close();
    },
  });
}

test('NDJSON with raw multi-byte UTF-8 split into 1-byte chunks decodes exactly', async () => {
  fault = async (route, request) => {
    if (route !== 'cmd') return undefined;
    const real = await fetch(request);
    return reshapeStream(real, (text) => {
      // Re-encode every line without \u escapes, so characters are raw UTF-8 and get split.
      const raw =
        text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.stringify(JSON.parse(line)))
          .join('\n') + '\n';
      assert.ok(/[^\p{ASCII}]/u.test(raw), 'the stream carries raw non-ASCII');
      return oneByteChunks(new TextEncoder().encode(raw));
    });
  };
  const response = await runSandbox('faults/echo', { s: 'héllo € 𝄞 漢字' });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { echoed: { s: 'héllo € 𝄞 漢字' }, text: 'é€𝄞' });
});

test('a command stream cut mid-line is a transport error, and the Box is still stopped', async () => {
  fault = async (route, request) => {
    if (route !== 'cmd') return undefined;
    const real = await fetch(request);
    return reshapeStream(real, (text) => text.slice(0, text.indexOf('\n') + 10));
  };
  const response = await runAndClose('faults/echo', 1);
  assert.equal(response.status, 502);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_TRANSPORT_ERROR');
  assert.equal(body.error.details.operation, 'exec');
  assert.equal(seen.at(-1), 'stop');
});

test('the host token never appears in an error body', async () => {
  fault = async (route) =>
    route === 'create' ? json(400, { error: { message: `bad token ${host.token}` } }) : undefined;
  const response = await runSandbox('faults/echo', 1);
  assert.equal(response.status, 502);
  const text = await response.text();
  assert.ok(!text.includes(host.token), text);
  assert.match(text, /\[redacted\]/);
});

test('a malformed stream line is skipped and counted: the framed result still comes back', async () => {
  fault = async (route, request) => {
    if (route !== 'cmd') return undefined;
    const real = await fetch(request);
    return reshapeStream(real, (text) => `{"stream":"stdout","data":"ok"}\nnot json at all {{{ secret-ish\n${text}`);
  };
  const response = await runSandbox('faults/echo', 5);
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { echoed: 5, text: 'é€𝄞' });
});

test('a stream that ends early names the malformed lines by number, never their content', async () => {
  fault = async (route, request) => {
    if (route !== 'cmd') return undefined;
    await (await fetch(request)).text();
    return new Response('{"stream":"stdout","data":"x"}\nthis line leaks nothing\n', {
      headers: { 'content-type': 'application/x-ndjson' },
    });
  };
  const response = await runSandbox('faults/echo', 1);
  assert.equal(response.status, 502);
  const { error } = await response.json();
  assert.match(error.message, /1 malformed line\(s\) skipped, the first at line 2/);
  assert.doesNotMatch(error.message, /leaks/);
});

test('the NDJSON media type is compared without case and parameters', async () => {
  fault = async (route, request) => {
    if (route !== 'cmd') return undefined;
    const real = await fetch(request);
    return new Response(real.body, {
      status: real.status,
      headers: { 'content-type': 'Application/X-NDJSON; charset=utf-8' },
    });
  };
  const response = await runSandbox('faults/echo', 2);
  assert.equal(response.status, 200);
});

test('the host token is redacted in every form a provider may echo it', async () => {
  const forms = {
    plain: host.token,
    'URL-encoded': encodeURIComponent(`${host.token}`),
    'upper-cased': host.token.toUpperCase(),
    base64: Buffer.from(host.token).toString('base64'),
    'a 12-character prefix': host.token.slice(0, 12),
  };
  for (const [label, echoed] of Object.entries(forms)) {
    fault = async (route) =>
      route === 'create' ? json(400, { error: { message: `bad token ${echoed} here` } }) : undefined;
    const response = await runSandbox('faults/echo', 1);
    assert.equal(response.status, 502, label);
    const text = await response.text();
    assert.ok(!text.includes(echoed), `${label}: ${text}`);
    assert.match(text, /bad token \[redacted\] here/, label);
  }
});

test('a networkPolicy string is sent in the SDK object shape', async () => {
  let body;
  fault = async (route, request) => {
    if (route === 'create') body = await request.clone().json();
    return undefined;
  };
  configureSandbox({
    provider: 'local',
    local: { baseUrl: host.baseUrl, token: host.token, networkPolicy: 'deny-all' },
    fetch: faultyFetch,
  });
  try {
    const response = await runSandbox('faults/echo', 3);
    assert.equal(response.status, 200);
    assert.deepEqual(body.networkPolicy, { mode: 'deny-all' });
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch: faultyFetch });
  }
});
