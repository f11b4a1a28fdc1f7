// The `cloudflare` provider in real workerd (miniflare): a Worker bundle of the package (`workerd`
// conditions, the wasm as a compiled module) that also exports the real `Sandbox` Durable Object of
// `@cloudflare/sandbox` 0.12.10, whose container is a Box of the local Box host (DESIGN.md §4, §8).
// The provider reaches it only through `env.SANDBOX` — stub.fetch to the container API, RPC
// configure/destroy — as in a deployed Worker; the test-only subclass installs a fake
// `ctx.container` that forwards port 3000 to `<host>/cloudflare/<DO id>/…` (protocol note §5.1,
// docs/internals/box-host.md "The Cloudflare container control API").
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { until } from '../support/local-host.mjs';

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox, resolveSandboxRunner, runSandbox } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

const files = (source) => [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: source },
];
registerSandbox('cf/echo', { files: files('export default (payload) => ({ echo: payload, cwd: process.cwd() });') });
registerSandbox('cf/fails', { files: files('export default () => { throw new Error("no luck in the Box"); };') });
registerSandbox('cf/slow', { files: files('export default () => new Promise((resolve) => setTimeout(resolve, 30000));'), timeout: 1500 });
// Appends its label to a file of the kept Box (outside its own Run directory) and says what it found.
registerSandbox('cf/turn', {
  files: files(\`import fs from 'node:fs';
export default async (label) => {
  const shared = process.cwd() + '/../../../turns.txt';
  const start = Date.now();
  const seen = fs.existsSync(shared) ? fs.readFileSync(shared, 'utf8') : '';
  fs.appendFileSync(shared, label + '\\\\n');
  await new Promise((resolve) => setTimeout(resolve, 400));
  return { label, start, end: Date.now(), seen };
};\`),
});

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/destroy') {
      await env.SANDBOX.get(env.SANDBOX.idFromName(url.searchParams.get('id'))).destroy();
      return new Response('destroyed');
    }
    const { name, payload, cloudflare, localHost, options, authority } = await request.json();
    // The Worker idiom: the provider gets the Worker env, whose SANDBOX binding it drives.
    // localHost: local development, an env with SANDBOX_LOCAL_URL/TOKEN (as .dev.vars gives) and
    // no binding at all.
    const workerEnv = localHost ? { SANDBOX_LOCAL_URL: env.BOX_HOST_URL, SANDBOX_LOCAL_TOKEN: env.BOX_HOST_TOKEN } : env;
    configureSandbox({ provider: 'cloudflare', cloudflare, env: workerEnv });
    if (authority) return Response.json((await resolveSandboxRunner(name)).executionAuthority);
    return runSandbox(name, payload, options);
  },
};
`;

let host;
let boxRoot;
let miniflare;
let worker;

before(async () => {
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-provider');
  ({ host, boxRoot, miniflare } = worker);
});

after(async () => {
  await worker?.close();
});

async function run(name, payload, cloudflare = {}, localHost = false, options = undefined) {
  const response = await miniflare.dispatchFetch('http://worker.test/run', {
    method: 'POST',
    body: JSON.stringify({ name, payload, cloudflare, localHost, options }),
  });
  const text = await response.text();
  assert.ok(response.headers.get('content-type')?.includes('json') || !text, `${response.status} ${text}`);
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    timing: response.headers.get('server-timing'),
  };
}

/** Box directories the host still holds. */
const boxes = () => fs.readdirSync(boxRoot).filter((n) => n.startsWith('vite-hub-box-'));

/** Whether every Run directory of the kept Box is gone (its last Run gave the Box back). */
const runsCleared = () =>
  boxes().every((box) => {
    const runs = path.join(boxRoot, box, 'workspace', '.vite-hub-runs');
    return !fs.existsSync(runs) || fs.readdirSync(runs).length === 0;
  });

test('a Run through the Sandbox Durable Object answers with the entry result, and its Box is gone after', async () => {
  const { status, body, timing } = await run('cf/echo', { hello: 'wörld' });
  assert.equal(status, 200, JSON.stringify(body));
  assert.deepEqual(body, { echo: { hello: 'wörld' }, cwd: '/workspace/project' });
  assert.match(timing, /box;dur=/);
  assert.ok(await until(() => boxes().length === 0), 'the unique Box was destroyed');
});

test('a handler error is SANDBOX_HANDLER_ERROR with its message', async () => {
  const { status, body } = await run('cf/fails');
  assert.equal(status, 500);
  assert.equal(body.error.code, 'SANDBOX_HANDLER_ERROR');
  assert.match(body.error.message, /no luck in the Box/);
  assert.equal(body.error.details?.provider ?? 'cloudflare', 'cloudflare');
});

// cf/slow resolves after 30 s: a Run that missed its 1.5 s timeout answers 200 then, not 504.
test('a Run over its timeout is a 504 SANDBOX_TIMEOUT, and its Box is gone', { timeout: 120_000 }, async () => {
  const { status, body } = await run('cf/slow');
  assert.equal(status, 504, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_TIMEOUT');
  assert.ok(await until(() => boxes().length === 0), 'the Box was destroyed');
});

test('two concurrent Runs on one sandboxId share the Box one after the other', async () => {
  const cloudflare = { sandboxId: 'cf-shared' };
  const [a, b] = await Promise.all([run('cf/turn', 'a', cloudflare), run('cf/turn', 'b', cloudflare)]);
  assert.equal(a.status, 200, JSON.stringify(a.body));
  assert.equal(b.status, 200, JSON.stringify(b.body));
  const [first, second] = [a.body, b.body].sort((x, y) => x.start - y.start);
  assert.ok(first.end <= second.start, `serialized: ${JSON.stringify([first, second])}`);
  assert.equal(first.seen, '');
  assert.equal(second.seen, `${first.label}\n`, "the same Box: the second Run sees the first one's file");
  assert.equal(boxes().length, 1, 'the kept Box stays');
  // Its Run directories are deleted (after each Response); only the shared file is left.
  assert.ok(await until(runsCleared), 'the Run directories are deleted');
  assert.equal(boxes().length, 1, 'the kept Box stays');
  const destroyed = await miniflare.dispatchFetch('http://worker.test/destroy?id=cf-shared');
  assert.equal(await destroyed.text(), 'destroyed');
  assert.ok(await until(() => boxes().length === 0), 'no Box left running');
});

test('a missing binding is SANDBOX_PROVIDER_REQUIRED naming it and the wrangler lines', async () => {
  const { status, body } = await run('cf/echo', null, { binding: 'BOXES' });
  assert.equal(status, 500);
  assert.equal(body.error.code, 'SANDBOX_PROVIDER_REQUIRED');
  assert.match(body.error.message, /binding "BOXES"/);
  assert.match(body.error.message, /\[\[durable_objects\.bindings\]\] name = "BOXES" class_name = "Sandbox"/);
});

test("executionAuthority is the Box that runs: container through the binding, the local host's own report with SANDBOX_LOCAL_URL", async () => {
  const ask = async (localHost) => {
    const response = await miniflare.dispatchFetch('http://worker.test/run', {
      method: 'POST',
      body: JSON.stringify({ name: 'cf/echo', localHost, authority: true }),
    });
    assert.equal(response.status, 200);
    return response.json();
  };
  assert.equal((await ask(false)).isolation, 'container');
  // A Worker in development whose Boxes run on a local host reports that host's isolation and
  // network (it said 'container' whatever the host was started with).
  assert.deepEqual(await ask(true), host.executionAuthority);
});

test('with SANDBOX_LOCAL_URL and SANDBOX_LOCAL_TOKEN the container traffic goes straight to the local Box host', async () => {
  const counters = () =>
    fetch(`${host.baseUrl}/_vite-hub/counters`, { headers: { authorization: `Bearer ${host.token}` } }).then((r) =>
      r.json(),
    );
  await fetch(`${host.baseUrl}/_vite-hub/counters/reset`, {
    method: 'POST',
    headers: { authorization: `Bearer ${host.token}` },
  });
  const { status, body } = await run('cf/echo', [1, 2], {}, true);
  assert.equal(status, 200, JSON.stringify(body));
  assert.deepEqual(body.echo, [1, 2]);
  const { requests } = await counters();
  // One command, the harness (streamed: the default Definition timeout is over the 240 s that
  // /api/execute may stay silent).
  assert.equal(
    (requests['cloudflare/execute'] ?? 0) + (requests['cloudflare/execute/stream'] ?? 0),
    1,
    JSON.stringify(requests),
  );
  assert.equal(requests['cloudflare/root'] ?? 0, 0, 'no Durable Object start probes: the binding was not used');
  assert.ok(
    await until(async () => (await counters()).requests['cloudflare/destroy'] === 1),
    'destroyed after the Response',
  );
  assert.ok(await until(() => boxes().length === 0));
});

test("runSandbox's own sandboxId keeps a Box across Runs; one the SDK would refuse is a 400 before any request", async () => {
  const first = await run('cf/turn', 'one', {}, false, { sandboxId: 'cf-per-run' });
  const second = await run('cf/turn', 'two', {}, false, { sandboxId: 'cf-per-run' });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(second.body.seen, 'one\n');
  assert.ok(await until(runsCleared), 'the second Run gave the Box back');
  await miniflare.dispatchFetch('http://worker.test/destroy?id=cf-per-run');
  assert.ok(await until(() => boxes().length === 0));
  const bad = await run('cf/echo', null, {}, false, { sandboxId: '-bad' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.match(bad.body.error.message, /sandboxId/);
  assert.deepEqual(boxes(), []);
});
