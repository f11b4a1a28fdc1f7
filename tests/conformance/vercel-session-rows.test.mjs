// Issue 35 rows, Vercel protocol: the official @vercel/sandbox 3.5.0 SDK and our Vercel client
// against the local Box host, their requests recorded by a proxy in front of it. `getCommand`
// and `extendTimeout` must send what the SDK sends. The SDK 3.5.0 (the newest on npm) has no
// stdin: our stdin requests are checked against the REST page ("Write to command stdin":
// `attachStdin` on the command, `POST …/cmd/{cmdId}/stdin` with `data`, `close`, `offset`).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Sandbox } from '@vercel/sandbox';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { startRecordingProxy, vercelSdkParams } from '../support/recording-proxy.mjs';

let host;
let proxy;
let proxyUrl;
/** Requests through the proxy: `{ method, path, body }`, ids replaced by `:sid` / `:cid`. */
let recorded = [];

before(async () => {
  host = await startBoxHost();
  proxy = await startRecordingProxy(host.baseUrl, (req, url, body) => {
    const isJson = (req.headers['content-type'] ?? '').startsWith('application/json') && body.length > 0;
    recorded.push({
      method: req.method,
      path: url.pathname.replace(/\/sessions\/[^/]+/, '/sessions/:sid').replace(/\/cmd\/[^/]+/, '/cmd/:cid'),
      body: isJson ? JSON.parse(body.toString('utf8')) : undefined,
    });
  });
  proxyUrl = proxy.url;
});

after(async () => {
  await proxy.close();
  await host.close();
});

const sdkParams = () => vercelSdkParams(host, proxyUrl);

/** The recorded requests of `routes` (`'METHOD path'`), in order, with their bodies. */
const of = (...routes) => recorded.filter((r) => routes.includes(`${r.method} ${r.path}`));

test('getCommand and extendTimeout: the SDK against the local host, and our client sends the same requests', async () => {
  recorded = [];
  const sandbox = await Sandbox.create(sdkParams());
  let sdk;
  try {
    const cmd = await sandbox.runCommand({ cmd: 'sh', args: ['-c', 'echo picked up'], detached: true });
    await cmd.wait();
    recorded = [];
    const again = await sandbox.getCommand(cmd.cmdId);
    assert.equal(await again.stdout(), 'picked up\n');
    const before = sandbox.expiresAt?.getTime();
    await sandbox.extendTimeout(60_000);
    if (before !== undefined) assert.ok(sandbox.expiresAt.getTime() >= before + 60_000);
    sdk = of('GET /v2/sandboxes/sessions/:sid/cmd/:cid', 'POST /v2/sandboxes/sessions/:sid/extend-timeout');
  } finally {
    await sandbox.stop();
  }

  configureSandbox({
    provider: 'vercel',
    vercel: { token: host.token, teamId: 'team_local', projectId: 'prj_local', baseUrl: proxyUrl },
  });
  const session = await openSandboxSession({ provider: 'vercel' });
  let ours;
  try {
    const spawned = await session.spawn('sh', ['-c', 'echo picked up']);
    await spawned.wait();
    recorded = [];
    const again = await session.command(spawned.id);
    let stdout = '';
    for await (const entry of again.logs()) stdout += entry.data;
    assert.equal(stdout, 'picked up\n');
    await session.extendTimeout(60_000);
    ours = of('GET /v2/sandboxes/sessions/:sid/cmd/:cid', 'POST /v2/sandboxes/sessions/:sid/extend-timeout');
  } finally {
    await session.close();
  }
  assert.deepEqual(sdk, [
    { method: 'GET', path: '/v2/sandboxes/sessions/:sid/cmd/:cid', body: undefined },
    { method: 'POST', path: '/v2/sandboxes/sessions/:sid/extend-timeout', body: { duration: 60_000 } },
  ]);
  assert.deepEqual(ours, sdk);
});

test('stdin: our client starts the command with attachStdin and writes base64 data in order, then close', async () => {
  configureSandbox({
    provider: 'vercel',
    vercel: { token: host.token, teamId: 'team_local', projectId: 'prj_local', baseUrl: proxyUrl },
  });
  const session = await openSandboxSession({ provider: 'vercel' });
  try {
    recorded = [];
    const cat = await session.spawn('cat', [], { stdin: true });
    await cat.writeStdin('hello\n');
    await cat.closeStdin();
    assert.deepEqual(await cat.wait(), { exitCode: 0, ok: true });
    let stdout = '';
    for await (const entry of cat.logs()) stdout += entry.data;
    assert.equal(stdout, 'hello\n');
  } finally {
    await session.close();
  }
  assert.deepEqual(of('POST /v2/sandboxes/sessions/:sid/cmd', 'POST /v2/sandboxes/sessions/:sid/cmd/:cid/stdin'), [
    {
      method: 'POST',
      path: '/v2/sandboxes/sessions/:sid/cmd',
      body: { command: 'cat', args: [], env: {}, sudo: false, attachStdin: true },
    },
    {
      method: 'POST',
      path: '/v2/sandboxes/sessions/:sid/cmd/:cid/stdin',
      body: { data: Buffer.from('hello\n').toString('base64') },
    },
    { method: 'POST', path: '/v2/sandboxes/sessions/:sid/cmd/:cid/stdin', body: { close: true } },
  ]);
});
