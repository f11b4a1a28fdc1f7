// Issue 35 row `openInteractive`, Vercel protocol: the official @vercel/sandbox 3.5.0 SDK against
// the local Box host, its socket driven as the official Sandbox CLI drives it (vercel/sandbox
// packages/sandbox/src/interactive-shell/interactive-shell.ts: `?token=` on the URL, a `start`
// message with `env` as "K=V" strings, stdin as binary, `resize`, output as binary, `exit`), and
// our Vercel client's request recorded by a proxy in front of the host and compared with the SDK's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Sandbox } from '@vercel/sandbox';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { startRecordingProxy, vercelSdkParams } from '../support/recording-proxy.mjs';
import { connectTerminal, outputMatching, type } from '../support/terminal-client.mjs';

let host;
let proxy;
let proxyUrl;
/** Requests through the proxy: `{ method, path, body }`, the session id replaced by `:sid`. */
let recorded = [];

before(async () => {
  host = await startBoxHost();
  proxy = await startRecordingProxy(host.baseUrl, (req, url, body) => {
    const isJson = (req.headers['content-type'] ?? '').startsWith('application/json') && body.length > 0;
    recorded.push({
      method: req.method,
      path: url.pathname.replace(/\/sessions\/[^/]+/, '/sessions/:sid'),
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

const interactive = () => recorded.filter((r) => r.path === '/v2/sandboxes/sessions/:sid/interactive');

test("the SDK's openInteractive against the local host, its socket driven as the Vercel CLI does", async () => {
  recorded = [];
  const sandbox = await Sandbox.create(sdkParams());
  let sdk;
  try {
    const { url, token } = await sandbox.openInteractive();
    sdk = interactive();
    const terminal = await connectTerminal(url, token, { queryToken: true });
    terminal.ws.send(
      JSON.stringify({
        type: 'start',
        command: 'bash',
        args: ['--norc'],
        env: ['TERM=xterm-256color', 'GREETING=hi there'],
        cwd: sandbox.cwd,
        cols: 80,
        rows: 24,
      }),
    );
    type(terminal, 'echo "$GREETING"; tty; pwd\n');
    await outputMatching(terminal, /[\r\n]hi there\r\n\/dev\/pts\/\d+\r\n\/vercel\/sandbox\r\n/);
    terminal.ws.send(JSON.stringify({ type: 'resize', cols: 132, rows: 50 }));
    let size;
    for (let i = 0; i < 50 && size !== '50 132'; i += 1) {
      terminal.output = '';
      type(terminal, 'stty size\n');
      size = (await outputMatching(terminal, /[\r\n](\d+ \d+)\r\n/))[1];
    }
    assert.equal(size, '50 132');
    type(terminal, 'exit 5\n');
    assert.equal((await terminal.closed).code, 1000);
    assert.deepEqual(terminal.exit, { type: 'exit', code: 5 });
  } finally {
    await sandbox.stop();
  }
  assert.deepEqual(sdk, [{ method: 'POST', path: '/v2/sandboxes/sessions/:sid/interactive', body: {} }]);

  // Our Vercel client sends the SDK's request, and refuses a fixed command or size without a
  // request (Vercel takes them in `start`).
  configureSandbox({
    provider: 'vercel',
    vercel: { token: host.token, teamId: 'team_local', projectId: 'prj_local', baseUrl: proxyUrl },
  });
  const session = await openSandboxSession({ provider: 'vercel' });
  try {
    recorded = [];
    const { url, token } = await session.openInteractive();
    assert.match(url, /^ws:\/\//);
    assert.equal(typeof token, 'string');
    await assert.rejects(session.openInteractive({ command: 'sh' }), (error) => {
      assert.equal(error.code, 'SANDBOX_NOT_SUPPORTED');
      assert.equal(error.provider, 'vercel');
      assert.equal(error.operation, 'openInteractive');
      return true;
    });
  } finally {
    await session.close();
  }
  assert.deepEqual(interactive(), sdk);
});

test('a stale token is refused once the SDK stopped the sandbox', async () => {
  const sandbox = await Sandbox.create(sdkParams());
  const { url, token } = await sandbox.openInteractive();
  await sandbox.stop();
  await assert.rejects(connectTerminal(url, token, { queryToken: true }), (error) => error.status === 410);
});
