// Issue 35, updateNetworkPolicy on the Vercel protocol: the official @vercel/sandbox 3.5.0 SDK
// against the local Box host (its `updateNetworkPolicy` answer passes the SDK's checks, and a
// command after deny-all cannot connect out), and our Vercel client sends the SDK's request,
// recorded by a proxy in front of the host.
import assert from 'node:assert/strict';
import net from 'node:net';
import os from 'node:os';
import { after, before, test } from 'node:test';
import { Sandbox } from '@vercel/sandbox';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { startRecordingProxy, vercelSdkParams } from '../support/recording-proxy.mjs';
import { NO_BWRAP } from '../support/local-host.mjs';

let host;
let proxy;
let proxyUrl;
let listener;
/** Requests through the proxy: `{ method, path, body }`, session ids replaced by `:sid`. */
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
  listener = net.createServer((socket) => socket.end('hello\n'));
  await new Promise((resolve) => listener.listen(0, '0.0.0.0', resolve));
});

after(async () => {
  await new Promise((resolve) => listener.close(resolve));
  await proxy.close();
  await host.close();
});

const sdkParams = () => vercelSdkParams(host, proxyUrl);

const of = (route) => recorded.filter((r) => `${r.method} ${r.path}` === route);
const ROUTE = 'POST /v2/sandboxes/sessions/:sid/network-policy';

/** This machine's non-loopback IPv4 address (what the Box network reaches), or undefined. */
const outside = () =>
  Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

const connect = (address) =>
  `const s=require('net').connect(${listener.address().port},${JSON.stringify(address)});` +
  `s.setTimeout(10000,()=>{console.log('ETIMEDOUT');process.exit(3)});` +
  `s.on('data',()=>{console.log('connected');process.exit(0)});` +
  `s.on('error',(e)=>{console.log(e.code);process.exit(3)})`;

test('updateNetworkPolicy: the SDK against the local host, and our client sends the same requests', {
  skip: NO_BWRAP,
}, async (t) => {
  const address = outside();
  if (!address) return t.skip('this machine has no non-loopback IPv4 address');
  recorded = [];
  const sandbox = await Sandbox.create(sdkParams());
  try {
    const open = await sandbox.runCommand('node', ['-e', connect(address)]);
    assert.equal((await open.stdout()).trim(), 'connected');
    assert.equal(await sandbox.updateNetworkPolicy('deny-all'), 'deny-all');
    const cut = await sandbox.runCommand('node', ['-e', connect(address)]);
    assert.equal(cut.exitCode, 3);
    assert.equal(await sandbox.updateNetworkPolicy('allow-all'), 'allow-all');
    const back = await sandbox.runCommand('node', ['-e', connect(address)]);
    assert.equal((await back.stdout()).trim(), 'connected');
  } finally {
    await sandbox.stop();
  }
  const sdk = of(ROUTE);

  recorded = [];
  configureSandbox({
    provider: 'vercel',
    vercel: { token: host.token, teamId: 'team_local', projectId: 'prj_local', baseUrl: proxyUrl },
  });
  const session = await openSandboxSession({ provider: 'vercel' });
  try {
    assert.equal(session.executionAuthority.network, 'unrestricted');
    await session.updateNetworkPolicy('deny-all');
    assert.equal(session.executionAuthority.network, 'none');
    const cut = await session.exec('node', ['-e', connect(address)]);
    assert.equal(cut.exitCode, 3);
    await session.updateNetworkPolicy('allow-all');
    assert.equal(session.executionAuthority.network, 'unrestricted');
  } finally {
    await session.close();
  }
  assert.deepEqual(sdk, [
    { method: 'POST', path: '/v2/sandboxes/sessions/:sid/network-policy', body: { mode: 'deny-all' } },
    { method: 'POST', path: '/v2/sandboxes/sessions/:sid/network-policy', body: { mode: 'allow-all' } },
  ]);
  assert.deepEqual(of(ROUTE), sdk);
});

test('an allow list: the local host refuses it with 400, as at create', async () => {
  const sandbox = await Sandbox.create(sdkParams());
  try {
    await assert.rejects(sandbox.updateNetworkPolicy({ allow: ['example.com'] }), (error) => {
      assert.equal(error.response?.status, 400);
      return true;
    });
    assert.equal(sandbox.networkPolicy ?? 'allow-all', 'allow-all');
  } finally {
    await sandbox.stop();
  }
});
