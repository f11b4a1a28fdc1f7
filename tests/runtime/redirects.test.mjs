// A provider request carries the provider's bearer token, which must reach no URL but the
// configured base URL (issue 32, item 6): a redirect is never followed, and the Run answers
// 502 SANDBOX_TRANSPORT_ERROR naming it. Before, Node's fetch followed a 307/308 (it drops
// `Authorization` only across origins) and workerd's fetch followed it with `Authorization` to
// another origin. A stand-in server answers every request with a redirect to a second server
// (another origin) that records what reaches it; in Node (the local provider, its token in
// `local.token`) and in workerd (the Cloudflare provider's local Box host path, its token in
// SANDBOX_LOCAL_TOKEN).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox } from '../support/local-host.mjs';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';

const TOKEN = 'tok-5f2a9c71e04b83d6a1c9e7f20b4d8a63';

let recorder;
let redirector;
/** What reached the recorder: `{ method, url, authorization }`. */
let recorded = [];
/** The redirect status the redirector answers, and where to (a URL of the recorder, or the redirector's own path). */
let status = 307;
let sameOrigin = false;

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const close = async (server) => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
};

before(async () => {
  recorder = http.createServer((req, res) => {
    recorded.push({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null });
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
  });
  await listen(recorder);
  redirector = http.createServer((req, res) => {
    req.resume();
    const target = sameOrigin ? `/moved${req.url}` : `http://127.0.0.1:${recorder.address().port}${req.url}`;
    res.writeHead(status, { location: target }).end();
  });
  await listen(redirector);
});
after(async () => {
  configureSandbox({});
  await close(redirector);
  await close(recorder);
});

const redirectorUrl = () => `http://127.0.0.1:${redirector.address().port}`;

/** The Run's answer is 502 SANDBOX_TRANSPORT_ERROR naming the redirect, without the token. */
function assertRefused(answer, code) {
  assert.equal(answer.status, 502, JSON.stringify(answer.body));
  assert.equal(answer.body.error.code, 'SANDBOX_TRANSPORT_ERROR');
  assert.match(answer.body.error.message, new RegExp(`redirect \\(HTTP ${code}\\), which is not followed`));
  assert.ok(!JSON.stringify(answer.body).includes(TOKEN), 'the token is not in the answer');
}

describe('Node: the local provider', () => {
  for (const [code, same] of [
    [307, false],
    [308, false],
    [302, false],
    [307, true],
  ]) {
    test(`a ${code} to ${same ? 'the same' : 'another'} origin is not followed: SANDBOX_TRANSPORT_ERROR, the token never leaves`, {
      timeout: 60_000,
    }, async () => {
      [status, sameOrigin, recorded] = [code, same, []];
      configureSandbox({ provider: 'local', local: { baseUrl: redirectorUrl(), token: TOKEN } });
      defineTestSandbox('redirect/echo', 'export default (payload) => ({ echoed: payload });');
      const response = await runSandbox('redirect/echo', { n: code });
      assertRefused({ status: response.status, body: await response.json() }, code);
      assert.deepEqual(recorded, [], 'nothing reached the other origin');
    });
  }
});

describe('workerd: the Cloudflare provider on a local Box host (SANDBOX_LOCAL_TOKEN)', () => {
  const WORKER = `
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
export { Sandbox } from '@cloudflare/sandbox';
registerSandbox('cfr/one', { files: [{ path: 'package.json', content: '{"type":"module"}' }, { path: 'index.mjs', content: 'export default () => 1;' }] });
export default {
  async fetch(request, env) {
    configureSandbox({ provider: 'cloudflare', env: { ...env, SANDBOX_LOCAL_URL: env.REDIRECTOR_URL, SANDBOX_LOCAL_TOKEN: env.REDIRECT_TOKEN } });
    const response = await runSandbox('cfr/one');
    return Response.json({ status: response.status, body: await response.json() });
  },
};
`;
  let worker;
  before(async () => {
    worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-redirects', {
      bindings: { REDIRECTOR_URL: redirectorUrl(), REDIRECT_TOKEN: TOKEN },
    });
  });
  after(async () => {
    await worker?.close();
  });

  test('a 307 to another origin is not followed: SANDBOX_TRANSPORT_ERROR, no Authorization reaches it', {
    timeout: 60_000,
  }, async () => {
    [status, sameOrigin, recorded] = [307, false, []];
    const answer = await (await worker.miniflare.dispatchFetch('http://worker.test/')).json();
    assertRefused(answer, 307);
    assert.deepEqual(
      recorded.filter((request) => request.authorization !== null),
      [],
      'no Authorization reached the other origin',
    );
    assert.deepEqual(recorded, [], 'nothing reached the other origin');
  });
});
