// Issue 35, ports and preview URLs, Vercel protocol: the official @vercel/sandbox 3.5.0 SDK
// against the local Box host (`Sandbox.create({ ports })`, its `routes` and `domain(port)`, a
// fetch through the route), and our Vercel client recorded against the same host: it must send
// `ports` on create as the SDK does and answer `domain(port)` from the create answer's routes.
//
// The SDK's `domain(p)` is `https://${route.subdomain}.vercel.run` whatever the route's `url`
// (protocol note §6.3): against the local host that name reaches nothing, so the SDK's user reads
// `sandbox.routes` (`url`), which is what our `session.domain(port)` answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Sandbox } from '@vercel/sandbox';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { startRecordingProxy, vercelSdkParams } from '../support/recording-proxy.mjs';

const SERVER = "require('node:http').createServer((req, res) => res.end('preview ' + req.url)).listen(3000)";
let host;
let proxy;
let proxyUrl;
/** Create requests through the recording proxy: their JSON bodies. */
let creates = [];

before(async () => {
  host = await startBoxHost();
  proxy = await startRecordingProxy(host.baseUrl, (req, url, body) => {
    if (req.method === 'POST' && /^\/v[23]\/sandboxes$/.test(url.pathname))
      creates.push(JSON.parse(body.toString('utf8')));
  });
  proxyUrl = proxy.url;
});

after(async () => {
  await proxy.close();
  await host.close();
});

const sdkParams = () => vercelSdkParams(host, proxyUrl);

/** Fetches `url` until the server the Box just started answers (it starts in the background). */
async function fetchWhenUp(url) {
  for (let attempt = 0; ; attempt += 1) {
    const response = await fetch(url);
    if (response.status !== 502 || attempt === 100) return response;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('the SDK: Sandbox.create({ ports: [3000] }), its routes and domain(3000), and a fetch through the route', async () => {
  creates = [];
  const sandbox = await Sandbox.create({ ...sdkParams(), ports: [3000] });
  try {
    assert.equal(sandbox.routes.length, 1);
    const [route] = sandbox.routes;
    assert.equal(route.port, 3000);
    assert.equal(sandbox.domain(3000), `https://${route.subdomain}.vercel.run`);
    assert.throws(() => sandbox.domain(3001), /No route for port 3001/);
    await sandbox.runCommand({ cmd: 'node', args: ['-e', SERVER], detached: true });
    const response = await fetchWhenUp(`${route.url}/from-sdk`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'preview /from-sdk');
    // Sandbox.get answers the same routes (GET /v2/sandboxes/{name}).
    const again = await Sandbox.get({ ...sdkParams(), name: sandbox.name });
    assert.deepEqual(again.routes, sandbox.routes);
  } finally {
    await sandbox.stop();
  }
  assert.deepEqual(
    creates.map((body) => body.ports),
    [[3000]],
  );
});

test('our Vercel client sends ports on create as the SDK does and answers domain(port) from the routes', async () => {
  creates = [];
  const sdk = await Sandbox.create({ ...sdkParams(), ports: [3000, 5173] });
  await sdk.stop();
  configureSandbox({
    provider: 'vercel',
    vercel: { token: host.token, teamId: 'team_local', projectId: 'prj_local', baseUrl: proxyUrl },
  });
  const session = await openSandboxSession({ provider: 'vercel', ports: [3000, 5173] });
  try {
    const answer = await fetch(`${host.baseUrl}/v2/sandboxes/sessions/${session.id}`, {
      headers: { authorization: `Bearer ${host.token}` },
    });
    const { routes } = await answer.json();
    assert.deepEqual(
      [session.domain(3000), session.domain(5173)],
      [3000, 5173].map((port) => routes.find((route) => route.port === port).url),
    );
    await session.spawn('node', ['-e', SERVER]);
    const response = await fetchWhenUp(`${session.domain(3000)}/from-ours`);
    assert.equal(await response.text(), 'preview /from-ours');
    assert.throws(
      () => session.domain(8080),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT',
    );
  } finally {
    await session.close();
  }
  const [sdkBody, ourBody] = creates;
  assert.deepEqual(ourBody.ports, sdkBody.ports);
  assert.deepEqual(ourBody.ports, [3000, 5173]);
  // Without ports both send `ports: []` (the SDK always sends it).
  creates = [];
  const plain = await openSandboxSession({ provider: 'vercel' });
  await plain.close();
  assert.deepEqual(creates[0].ports, []);
});
