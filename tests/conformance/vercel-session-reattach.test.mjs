// Issue 35, reattaching on the Vercel protocol: the official @vercel/sandbox 3.5.0 SDK against
// the local Box host (`Sandbox.get`, `Sandbox.list`, a detached `runCommand` picked up again with
// `getCommand` from a second SDK client), and our Vercel client's `openSandboxSession({ id })` and
// `listSandboxSessions()` send the SDK's requests, recorded by a proxy in front of the host.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Sandbox } from '@vercel/sandbox';
import { configureSandbox, listSandboxSessions, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { startRecordingProxy, vercelSdkParams } from '../support/recording-proxy.mjs';

let host;
let proxy;
let proxyUrl;
/** Requests through the proxy: `{ method, path }`, ids replaced by `:sid` / `:cid` / `:name`. */
let recorded = [];

before(async () => {
  host = await startBoxHost();
  proxy = await startRecordingProxy(host.baseUrl, (req, url, body) => {
    recorded.push({
      method: req.method,
      path: url.pathname
        .replace(/\/sessions\/[^/]+/, '/sessions/:sid')
        .replace(/\/cmd\/[^/]+/, '/cmd/:cid')
        .replace(/^\/v2\/sandboxes\/sbx_[^/]+$/, '/v2/sandboxes/:name'),
      query: [...url.searchParams.keys()].filter((key) => key !== 'teamId').sort(),
    });
  });
  proxyUrl = proxy.url;
});

after(async () => {
  await proxy.close();
  await host.close();
});

const sdkParams = () => vercelSdkParams(host, proxyUrl);

const of = (...routes) => recorded.filter((r) => routes.includes(`${r.method} ${r.path}`));
const GET = 'GET /v2/sandboxes/:name';
const LIST = 'GET /v2/sandboxes';

test('Sandbox.get, Sandbox.list and getCommand against the local host; our client sends the same requests', async () => {
  recorded = [];
  const first = await Sandbox.create(sdkParams());
  let sdk;
  try {
    const cmd = await first.runCommand({ cmd: 'sh', args: ['-c', 'echo detached; echo done'], detached: true });
    // A second client, as another process would have: only the name and the command id.
    const again = await Sandbox.get({ ...sdkParams(), name: first.name });
    assert.equal(again.name, first.name);
    assert.equal(again.status, 'running');
    const picked = await again.getCommand(cmd.cmdId);
    assert.equal((await picked.wait()).exitCode, 0);
    assert.equal(await picked.stdout(), 'detached\ndone\n');
    const listed = await (await Sandbox.list(sdkParams())).toArray();
    const mine = listed.find((sandbox) => sandbox.name === first.name);
    assert.equal(mine?.status, 'running');
    assert.equal(mine.currentSessionId, first.currentSession().sessionId);
    sdk = of(GET, LIST);
  } finally {
    await first.stop();
  }
  const stopped = await Sandbox.get({ ...sdkParams(), name: first.name });
  assert.equal(stopped.status, 'stopped');
  await assert.rejects(Sandbox.get({ ...sdkParams(), name: 'sbx_nothere' }), (error) => error.response?.status === 404);

  recorded = [];
  configureSandbox({
    provider: 'vercel',
    vercel: { token: host.token, teamId: 'team_local', projectId: 'prj_local', baseUrl: proxyUrl },
  });
  const session = await openSandboxSession({ provider: 'vercel' });
  let ours;
  try {
    const spawned = await session.spawn('sh', ['-c', 'echo detached; echo done']);
    const again = await openSandboxSession({ id: session.id });
    assert.equal(again.id, session.id);
    const picked = await again.command(spawned.id);
    let stdout = '';
    for await (const entry of picked.logs()) stdout += entry.data;
    assert.equal(stdout, 'detached\ndone\n');
    const listed = await listSandboxSessions();
    assert.equal(listed.find((entry) => entry.id === session.id)?.status, 'running');
    ours = of(GET, LIST);
  } finally {
    await session.close();
  }
  await assert.rejects(openSandboxSession({ id: session.id }), { code: 'SANDBOX_INVALID_STATE' });
  assert.deepEqual(
    sdk.map(({ method, path }) => ({ method, path })),
    [
      { method: 'GET', path: '/v2/sandboxes/:name' },
      { method: 'GET', path: '/v2/sandboxes' },
    ],
  );
  assert.deepEqual(sdk[0].query, ['projectId']);
  assert.deepEqual(
    ours.map(({ method, path }) => ({ method, path })),
    sdk.map(({ method, path }) => ({ method, path })),
  );
  assert.deepEqual(ours[0].query, sdk[0].query);
  // The SDK sends `project` (plus the paginator's keys when given); ours asks for one page of 100, newest first.
  assert.ok(sdk[1].query.includes('project') && ours[1].query.includes('project'));
});
