// The real `Sandbox` Durable Object of `@cloudflare/sandbox` 0.12.10 in workerd (miniflare) against
// the local Box host (DESIGN.md §8): a test-only subclass installs a fake `ctx.container` before the
// base constructor looks at it (protocol note §5.1), whose port-3000 fetch is the forwarder the
// Worker side uses: `http://container/api/...` → `<hostUrl>/cloudflare/<DO id>/api/...` with the
// host's bearer token, and `destroy()` → `DELETE <hostUrl>/cloudflare/<DO id>`.
// Both paths are covered: the DO's RPC methods (exec, writeFile, …) and `stub.fetch()` straight to the
// container API (sessionless execute with env, cwd and timeoutMs → 124), which the `cloudflare` provider uses.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Miniflare } from 'miniflare';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { bundleWorker } from '../fixtures/cloudflare/bundle-worker.mjs';

const WORKER = `
import { Sandbox as RealSandbox, getSandbox, parseSSEStream } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

async function caught(promise) {
  try { await promise; return null; } catch (err) { return { name: err.name, message: err.message }; }
}

export default {
  async fetch(request, env) {
    const name = new URL(request.url).searchParams.get('name');
    const sb = getSandbox(env.Sandbox, name);
    const out = {};
    if (new URL(request.url).pathname === '/processes') {
      // Background processes (§4.3, §4.4): start, stream, logs, get, wait, kill, list, kill-all.
      // After each tick the process waits for this reader's answer (a file /workspace/ack-<i>),
      // giving up after 60 s: a stream held back until the end would never be answered, and
      // its stderr would say so. Live, not a duration: no clock is read.
      const ticking = await sb.startProcess('for i in 1 2 3; do echo "tick $i"; n=0; while [ ! -e /workspace/ack-$i ]; do n=$((n+1)); if [ $n -gt 1200 ]; then echo "no ack $i" >&2; exit 1; fi; sleep 0.05; done; done; echo bye >&2; exit 5', { env: { X: '1' } });
      out.started = { id: ticking.id, status: ticking.status, command: ticking.command, hasPid: typeof ticking.pid === 'number' };
      out.events = [];
      for await (const event of parseSSEStream(await sb.streamProcessLogs(ticking.id))) {
        out.events.push({ type: event.type, data: event.data, exitCode: event.exitCode });
        const tick = event.type === 'stdout' && /^tick (\\d)\\n$/.exec(event.data);
        if (tick) await sb.writeFile('/workspace/ack-' + tick[1], '');
      }
      out.logs = await sb.getProcessLogs(ticking.id);
      const got = await sb.getProcess(ticking.id);
      out.got = { status: got.status, exitCode: got.exitCode, hasEnd: got.endTime instanceof Date };
      out.waited = await ticking.waitForExit();
      const sleeper = await sb.startProcess('sleep 60', { processId: 'sleeper-1' });
      out.sleeperId = sleeper.id;
      out.listed = (await sb.listProcesses()).map((p) => [p.id, p.status]);
      await sb.killProcess('sleeper-1');
      out.killedExit = await sleeper.waitForExit();
      out.killedStatus = (await sb.getProcess('sleeper-1')).status;
      await sb.startProcess('sleep 60', { processId: 'sleeper-2' });
      out.killedAll = await sb.killAllProcesses();
      out.missing = await sb.getProcess('no-such-process');
      await sb.destroy();
      return Response.json(out);
    }
    out.exec = await sb.exec('echo hi');
    out.failing = await sb.exec('echo out; echo err >&2; exit 3');
    out.envCwd = await sb.exec('echo "$GREETING"; pwd', { env: { GREETING: 'hé' }, cwd: '/tmp' });
    out.write = await sb.writeFile('/workspace/notes/a.txt', 'hello é€\\n');
    out.read = await sb.readFile('/workspace/notes/a.txt');
    out.writeBytes = await sb.writeFile('/workspace/b.bin', 'AAH/gA==', { encoding: 'base64' });
    out.readBytes = await sb.readFile('/workspace/b.bin');
    out.exists = await sb.exists('/workspace/notes/a.txt');
    out.mkdir = await sb.mkdir('/workspace/x/y', { recursive: true });
    out.deleted = await sb.deleteFile('/workspace/notes/a.txt');
    out.missing = await caught(sb.readFile('/workspace/nope.txt'));
    out.escape = await caught(sb.readFile('../../etc/passwd'));
    out.timeout = await caught(sb.exec('sleep 5', { timeout: 200 }));
    out.stream = await new Response(await sb.execStream('echo one; sleep 0.3; echo two')).text();
    // The cloudflare provider's path: stub.fetch to the container API, sessionless (§3.1).
    const post = (route, body) => sb.fetch(new Request('http://localhost' + route, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
    }));
    const raw = await post('/api/execute', { command: 'echo "$A"; pwd; sleep 5', sessionId: '__DISABLE_SESSION__', env: { A: 'raw' }, cwd: '/tmp', timeoutMs: 300 });
    out.rawExec = { status: raw.status, body: await raw.json() };
    const rawStream = await post('/api/execute/stream', { command: 'printf "x\\r\\ny"', sessionId: '__DISABLE_SESSION__' });
    out.rawStream = { status: rawStream.status, type: rawStream.headers.get('content-type'), text: await rawStream.text() };
    const rawMissing = await post('/api/read', { path: '/workspace/nope.txt' });
    out.rawMissing = { status: rawMissing.status, body: await rawMissing.json() };
    out.state = await sb.getState();
    await sb.destroy();
    out.stateAfterDestroy = await sb.getState();
    out.afterDestroy = await sb.exists('/workspace/b.bin');
    await sb.destroy();
    return Response.json(out);
  },
};
`;

let host;
let boxRoot;
let miniflare;

before(async () => {
  boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-test-cf-sdk-'));
  host = await startBoxHost({ boxRoot });
  const script = await bundleWorker(WORKER);
  miniflare = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2025-05-06',
    compatibilityFlags: ['nodejs_compat'],
    durableObjects: { Sandbox: { className: 'Sandbox', useSQLite: true } },
    // SANDBOX_LOG_LEVEL: the DO logs every exec at 'info' otherwise.
    bindings: { BOX_HOST_URL: host.baseUrl, BOX_HOST_TOKEN: host.token, SANDBOX_LOG_LEVEL: 'error' },
  });
});

after(async () => {
  await miniflare?.dispose();
  await host?.close();
  if (boxRoot) {
    assert.deepEqual(fs.readdirSync(boxRoot), []);
    fs.rmSync(boxRoot, { recursive: true, force: true });
  }
});

test('the real Sandbox Durable Object drives a Box of the local Box host', async () => {
  const response = await miniflare.dispatchFetch('http://worker.test/?name=conformance-box');
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const out = JSON.parse(text);

  assert.deepEqual(
    [out.exec.success, out.exec.exitCode, out.exec.stdout, out.exec.stderr, out.exec.command],
    [true, 0, 'hi\n', '', 'echo hi'],
  );
  assert.equal(out.exec.sessionId, 'sandbox-conformance-box');
  assert.deepEqual(
    [out.failing.success, out.failing.exitCode, out.failing.stdout, out.failing.stderr],
    [false, 3, 'out\n', 'err\n'],
  );
  const [greeting, cwd] = out.envCwd.stdout.split('\n');
  assert.equal(greeting, 'hé');
  assert.match(cwd, /\/tmp$/);

  assert.equal(out.write.success, true);
  assert.deepEqual(
    [out.read.content, out.read.encoding, out.read.isBinary, out.read.size],
    ['hello é€\n', 'utf-8', false, Buffer.byteLength('hello é€\n')],
  );
  assert.deepEqual(
    [out.readBytes.content, out.readBytes.encoding, out.readBytes.isBinary],
    ['AAH/gA==', 'base64', true],
  );
  assert.equal(out.exists.exists, true);
  assert.deepEqual([out.mkdir.success, out.mkdir.recursive], [true, true]);
  assert.equal(out.deleted.success, true);

  assert.match(out.missing.message, /^FileNotFoundError: File not found: \/workspace\/nope\.txt/);
  assert.match(out.escape.message, /^PermissionDeniedError: /);
  assert.match(out.timeout.message, /^CommandError: .*Command timeout after 200ms/);

  const events = out.stream
    .split('\n\n')
    .filter(Boolean)
    .map((block) => JSON.parse(block.replace(/^data: /, '')));
  assert.deepEqual(
    events.map((e) => e.type),
    ['start', 'stdout', 'stdout', 'complete'],
  );
  assert.equal(
    events
      .filter((e) => e.type === 'stdout')
      .map((e) => e.data)
      .join(''),
    'one\ntwo\n',
  );
  assert.equal(events.at(-1).exitCode, 0);

  assert.equal(out.rawExec.status, 200);
  assert.deepEqual(
    [out.rawExec.body.exitCode, out.rawExec.body.success, 'sessionId' in out.rawExec.body],
    [124, false, false],
  );
  assert.match(out.rawExec.body.stdout, /^raw\n.*\/tmp\n$/);
  assert.match(out.rawExec.body.stderr, /Command timed out after 300ms\n$/);
  assert.deepEqual([out.rawStream.status, out.rawStream.type], [200, 'text/event-stream']);
  const rawEvents = out.rawStream.text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => JSON.parse(block.replace(/^data: /, '')));
  assert.equal(
    rawEvents
      .filter((e) => e.type === 'stdout')
      .map((e) => e.data)
      .join(''),
    'x\r\ny',
  );
  assert.deepEqual(
    [out.rawMissing.status, out.rawMissing.body.code, out.rawMissing.body.httpStatus],
    [404, 'FILE_NOT_FOUND', 404],
  );

  assert.equal(out.state.status, 'healthy');
  assert.notEqual(out.stateAfterDestroy.status, 'healthy');
  assert.equal(out.afterDestroy.exists, false, 'a destroyed container comes back empty');

  const { requests } = host.counters();
  assert.ok(requests['cloudflare/root'] >= 1, JSON.stringify(requests));
  assert.ok(requests['cloudflare/session/create'] >= 1, JSON.stringify(requests));
  assert.ok(requests['cloudflare/destroy'] >= 2, JSON.stringify(requests));
  assert.equal(requests.unknown, undefined);
});

test('background processes: start, live SSE stream, logs, status, wait, kill, list and kill-all as the SDK expects', async () => {
  const response = await miniflare.dispatchFetch('http://worker.test/processes?name=conformance-processes');
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const out = JSON.parse(text);
  assert.deepEqual([out.started.status, out.started.hasPid], ['running', true]);
  assert.match(out.started.id, /^proc_\d+_[0-9a-f]{6}$/);
  const types = out.events.map((e) => e.type);
  assert.equal(types[0], 'process_info');
  assert.equal(types.at(-1), 'exit');
  assert.equal(
    out.events
      .filter((e) => e.type === 'stdout')
      .map((e) => e.data)
      .join(''),
    'tick 1\ntick 2\ntick 3\n',
  );
  assert.equal(
    out.events
      .filter((e) => e.type === 'stderr')
      .map((e) => e.data)
      .join(''),
    'bye\n',
  );
  assert.equal(out.events.at(-1).exitCode, 5);
  assert.deepEqual(
    [out.logs.stdout, out.logs.stderr, out.logs.processId],
    ['tick 1\ntick 2\ntick 3\n', 'bye\n', out.started.id],
  );
  assert.deepEqual(out.got, { status: 'failed', exitCode: 5, hasEnd: true });
  assert.deepEqual(out.waited, { exitCode: 5 });
  assert.equal(out.sleeperId, 'sleeper-1');
  assert.deepEqual(out.listed, [
    [out.started.id, 'failed'],
    ['sleeper-1', 'running'],
  ]);
  assert.deepEqual(out.killedExit, { exitCode: 143 });
  assert.equal(out.killedStatus, 'killed');
  assert.equal(out.killedAll, 1);
  assert.equal(out.missing, null, 'PROCESS_NOT_FOUND is null for getProcess');
  const { requests } = host.counters();
  for (const route of ['start', 'stream', 'logs', 'get', 'list', 'kill', 'kill-all']) {
    assert.ok(requests[`cloudflare/process/${route}`] >= 1, `${route}: ${JSON.stringify(requests)}`);
  }
});
