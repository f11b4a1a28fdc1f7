// readRequestPayload / readValidatedPayload (issue 8, item 6): the JSON body of a Web Request, of an
// h3 v2 event (a real h3 2.x app, as Nitro v3 runs it) and of an h3 v1 event (a real h3 1.x app
// behind a Node http server, as Nitro v2 / Nuxt 3 run it), checked by real zod schemas (Standard
// Schema v1) and by functions. Bad input is a SandboxError with status 400 (413 past the limit),
// which h3 answers with that status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { z } from 'zod';
import { H3 } from 'h3';
import * as h3v1 from 'h3-v1';
import { readRequestPayload, readValidatedPayload } from '@vite-hub/sandbox';

const post = (body, headers = {}) => new Request('http://app.test/api', { method: 'POST', body, headers });

async function rejectsWith(promise, code, status, pattern) {
  const error = await promise.then(
    () => assert.fail('expected a rejection'),
    (reason) => reason,
  );
  assert.equal(error.name, 'SandboxError', error.stack);
  assert.equal(error.code, code);
  assert.equal(error.status, status);
  if (pattern) assert.match(error.message, pattern);
  return error;
}

test('a Web Request: JSON body, empty body, any content type', async () => {
  assert.deepEqual(
    await readRequestPayload(post('{"name":"Ada","tags":["a"]}', { 'content-type': 'application/json' })),
    { name: 'Ada', tags: ['a'] },
  );
  // curl -d without -H sends application/x-www-form-urlencoded: the bytes decide.
  assert.deepEqual(
    await readRequestPayload(post('[1,2]', { 'content-type': 'application/x-www-form-urlencoded' })),
    [1, 2],
  );
  assert.equal(await readRequestPayload(post('')), undefined);
  assert.equal(await readRequestPayload(new Request('http://app.test/api')), undefined);
  assert.equal(await readRequestPayload(post('  \n')), undefined);
});

test('bad JSON, bad UTF-8, an already-read body and a non-request are SANDBOX_INVALID_ARGUMENT (400)', async () => {
  await rejectsWith(
    readRequestPayload(post('{"name":')),
    'SANDBOX_INVALID_ARGUMENT',
    400,
    /^the request body is not valid JSON \(.+\); send the payload as JSON$/,
  );
  await rejectsWith(
    readRequestPayload(post(new Uint8Array([0x22, 0xff, 0x22]))),
    'SANDBOX_INVALID_ARGUMENT',
    400,
    /not UTF-8/,
  );
  const used = post('{}');
  await used.text();
  await rejectsWith(readRequestPayload(used), 'SANDBOX_INVALID_ARGUMENT', 400, /already read/);
  await rejectsWith(
    readRequestPayload({ body: '{}' }),
    'SANDBOX_INVALID_ARGUMENT',
    400,
    /expects a Web Request, an h3 v2 event/,
  );
  await rejectsWith(readRequestPayload(post('{}'), { maxBytes: -1 }), 'SANDBOX_INVALID_ARGUMENT', 400, /maxBytes/);
});

test('a body past maxBytes is SANDBOX_TRANSFER_LIMIT (413), also when streamed without a length', async () => {
  const error = await rejectsWith(
    readRequestPayload(post('{"a":"0123456789"}'), { maxBytes: 8 }),
    'SANDBOX_TRANSFER_LIMIT',
    413,
    /larger than 8 bytes, the limit of readRequestPayload \(options\.maxBytes, default 4194304: the default transfer\.maxInputBytes\)/,
  );
  assert.deepEqual(error.details, { limit: 'maxBytes', value: 18, maximum: 8 });
  const stream = new ReadableStream({
    pull(controller) {
      controller.enqueue(new TextEncoder().encode('"xxxxxxxxxxxxxxxx'));
    },
  });
  const endless = new Request('http://app.test/api', { method: 'POST', body: stream, duplex: 'half' });
  await rejectsWith(readRequestPayload(endless, { maxBytes: 1000 }), 'SANDBOX_TRANSFER_LIMIT', 413);
  // The default is the default transfer.maxInputBytes (4 MiB).
  const big = `"${'x'.repeat(4 * 1024 * 1024)}"`;
  await rejectsWith(readRequestPayload(post(big)), 'SANDBOX_TRANSFER_LIMIT', 413, /larger than 4194304 bytes/);
});

test('a Standard Schema (zod) checks the payload: its output, or every issue by path', async () => {
  const Order = z.object({ id: z.string(), items: z.array(z.object({ qty: z.number().int() })) });
  assert.deepEqual(await readValidatedPayload(post('{"id":"o1","items":[{"qty":2}],"extra":true}'), Order), {
    id: 'o1',
    items: [{ qty: 2 }],
  });
  const error = await rejectsWith(
    readValidatedPayload(post('{"id":7,"items":[{"qty":1},{"qty":"2"}]}'), Order),
    'SANDBOX_INVALID_ARGUMENT',
    400,
    /^the request payload does not match the schema \(zod\): payload\.id: .*string.*; payload\.items\[1\]\.qty: .*number/,
  );
  assert.equal(error.issues.length, 2);
  assert.deepEqual(error.issues[1].path, ['items', 1, 'qty']);
  // An async schema (zod refine with a promise) goes through ~standard.validate as well.
  const Slow = z.string().refine(async (value) => value.length > 3, 'too short');
  await rejectsWith(readValidatedPayload(post('"ab"'), Slow), 'SANDBOX_INVALID_ARGUMENT', 400, /payload: too short/);
});

test('a function schema returns the payload or throws; a non-schema is a TypeError', async () => {
  const parse = (value) => {
    if (typeof value?.n !== 'number') throw new Error('n must be a number');
    return { n: value.n * 2 };
  };
  assert.deepEqual(await readValidatedPayload(post('{"n":21}'), parse), { n: 42 });
  const error = await rejectsWith(
    readValidatedPayload(post('{"n":"x"}'), parse),
    'SANDBOX_INVALID_ARGUMENT',
    400,
    /^the request payload was refused: n must be a number$/,
  );
  assert.equal(error.cause.message, 'n must be a number');
  await assert.rejects(readValidatedPayload(post('{}'), { parse }), TypeError);
  await assert.rejects(
    readValidatedPayload(post('{}'), { '~standard': { version: 2, validate() {} } }),
    /not Standard Schema v1/,
  );
});

test('an h3 v2 event (event.req): the payload, and h3 answers a bad body with 400', async () => {
  const Hello = z.object({ name: z.string() });
  const app = new H3()
    .post('/raw', async (event) => ({ got: await readRequestPayload(event) }))
    .post('/checked', async (event) => ({ got: await readValidatedPayload(event, Hello) }));
  const raw = await app.fetch(new Request('http://app.test/raw', { method: 'POST', body: '{"name":"Ada"}' }));
  assert.equal(raw.status, 200);
  assert.deepEqual(await raw.json(), { got: { name: 'Ada' } });
  const bad = await app.fetch(new Request('http://app.test/checked', { method: 'POST', body: '{"name":1}' }));
  assert.equal(bad.status, 400);
  const badJson = await app.fetch(new Request('http://app.test/raw', { method: 'POST', body: '{' }));
  assert.equal(badJson.status, 400);
  // As h3's own HTTP error: not "unhandled" (logged as a crash, its message hidden), but our code
  // and message, which Nitro's error handler shows too (`message`, `data`).
  const answer = await badJson.json();
  assert.equal(answer.unhandled, undefined, JSON.stringify(answer));
  assert.match(answer.message, /the request body is not valid JSON/);
  assert.deepEqual(answer.data, { code: 'SANDBOX_INVALID_ARGUMENT', message: answer.message });
  assert.equal((await bad.json()).data.code, 'SANDBOX_INVALID_ARGUMENT');
  // The error a route catches still has the SandboxError's code and status.
  const caught = await readRequestPayload({
    req: new Request('http://app.test/', { method: 'POST', body: '{' }),
  }).catch((error) => error);
  assert.equal(caught.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.equal(caught.status, 400);
  assert.equal(caught.cause.name, 'SandboxError');
});

test('an h3 v1 event (event.node.req): the payload, and h3 readBody still works after it', async (t) => {
  const app = h3v1.createApp();
  const router = h3v1.createRouter();
  router.post(
    '/both',
    h3v1.eventHandler(async (event) => {
      const ours = await readRequestPayload(event);
      const theirs = await h3v1.readBody(event);
      return { ours, theirs };
    }),
  );
  router.post(
    '/after-readBody',
    h3v1.eventHandler(async (event) => {
      const theirs = await h3v1.readBody(event);
      return { ours: await readRequestPayload(event), theirs };
    }),
  );
  router.post(
    '/checked',
    h3v1.eventHandler(async (event) => readValidatedPayload(event, z.object({ n: z.number() }))),
  );
  router.post(
    '/limited',
    h3v1.eventHandler(async (event) => readRequestPayload(event, { maxBytes: 4 })),
  );
  app.use(router);
  const server = createServer(h3v1.toNodeListener(app)).listen(0, '127.0.0.1');
  t.after(() => server.close());
  await once(server, 'listening');
  const base = `http://127.0.0.1:${server.address().port}`;
  const send = (path, body) =>
    fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  const both = await send('/both', '{"a":[1,2]}');
  assert.equal(both.status, 200);
  assert.deepEqual(await both.json(), { ours: { a: [1, 2] }, theirs: { a: [1, 2] } });
  const after = await send('/after-readBody', '{"b":true}');
  assert.deepEqual(await after.json(), { ours: { b: true }, theirs: { b: true } });
  const checked = await send('/checked', '{"n":"1"}');
  // h3 answers with the error's status, and with its code and message as h3's own error's data.
  assert.equal(checked.status, 400);
  const answer = await checked.json();
  assert.equal(answer.data.code, 'SANDBOX_INVALID_ARGUMENT', JSON.stringify(answer));
  assert.match(answer.data.message, /payload\.n: /);
  assert.equal((await send('/checked', '{"n":1}')).status, 200);
  assert.equal((await send('/limited', '"too long"')).status, 413);
});
