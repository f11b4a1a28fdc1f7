// The local Box host's `ports` on create, by the Vercel protocol as any client sends it (v2 and
// v3): the checks, the `routes` of the create, session and sandbox answers, the proxy's end with
// the Box, and the forwarder's end with the host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { processesMatching } from '../support/local-host.mjs';

/** The port forwarders of this process's Boxes: their directories are `vite-hub-box-<ns>-<pid>-…/.vite-hub-ports`. */
const OWN_FORWARDERS = new RegExp(`vite-hub-box-\\d+-${process.pid}-[^/ ]+/\\.vite-hub-ports`);

let host;
before(async () => {
  host = await startBoxHost({});
});
after(async () => {
  await host?.close();
});

function call(method, path, body) {
  return fetch(`${host.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

test('ports on v2 and v3 creates: routes in every answer, [] once stopped; the proxy closes with the Box', async () => {
  for (const version of ['v2', 'v3']) {
    const created = await call('POST', `/${version}/sandboxes`, {
      projectId: 'p',
      ports: [3000, 8080],
      ...(version === 'v2' ? { runtime: 'node22' } : {}),
    });
    assert.equal(created.status, 200);
    const { routes, session, sandbox } = await created.json();
    assert.deepEqual(
      routes.map((route) => route.port),
      [3000, 8080],
    );
    for (const route of routes) {
      assert.deepEqual(Object.keys(route).sort(), ['port', 'subdomain', 'url']);
      assert.match(route.url, /^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}$/);
      assert.match(route.subdomain, /^[a-z0-9-]+$/);
      assert.doesNotMatch(route.subdomain, new RegExp(new URL(route.url).pathname.slice(1)));
    }
    assert.deepEqual((await (await call('GET', `/v2/sandboxes/sessions/${session.id}`)).json()).routes, routes);
    assert.deepEqual((await (await call('GET', `/v2/sandboxes/${sandbox.name}`)).json()).routes, routes);
    assert.equal((await call('POST', `/v2/sandboxes/sessions/${session.id}/stop`)).status, 200);
    assert.deepEqual((await (await call('GET', `/v2/sandboxes/${sandbox.name}`)).json()).routes, []);
    for (const route of routes) await assert.rejects(fetch(route.url), (error) => error.cause?.code === 'ECONNREFUSED');
  }
  // Without ports: `routes: []`, as before.
  const plain = await (await call('POST', '/v3/sandboxes', { projectId: 'p', ports: [] })).json();
  assert.deepEqual(plain.routes, []);
  await call('POST', `/v2/sandboxes/sessions/${plain.session.id}/stop`);
});

test('bad ports and ports under deny-all are 400', async () => {
  for (const [body, message] of [
    [{ ports: [0] }, /integers from 1 to 65535/],
    [{ ports: [3000, 3000] }, /distinct/],
    [{ ports: '3000' }, /array/],
    [{ ports: Array.from({ length: 16 }, (_, i) => 3000 + i) }, /at most 15/],
    [{ ports: [3000], networkPolicy: { mode: 'deny-all' } }, /deny-all/],
  ]) {
    const response = await call('POST', '/v3/sandboxes', { projectId: 'p', ...body });
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.match(JSON.stringify(await response.json()), message);
  }
});

test("closing the host stops the Boxes' proxies and forwarders", async () => {
  const own = await startBoxHost({});
  const created = await fetch(`${own.baseUrl}/v3/sandboxes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${own.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ projectId: 'p', ports: [3000] }),
  });
  const { routes, session } = await created.json();
  assert.equal(
    session.executionAuthority.network === 'restricted',
    (await processesMatching(OWN_FORWARDERS)).length === 1,
  );
  await own.close();
  await assert.rejects(fetch(routes[0].url), (error) => error.cause?.code === 'ECONNREFUSED');
  assert.deepEqual(await processesMatching(OWN_FORWARDERS), []);
});
