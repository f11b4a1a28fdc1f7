// How many container requests a Cloudflare Run makes (issue 12, item 2): its files travel as one
// archive in one `/api/write`, and the Run's first Command unpacks it in its own `bash -c` line,
// so a cold Run sends two container requests before its Response (the write, the command) and the
// destroy after it. Real workerd (miniflare), the real `Sandbox` Durable Object of
// @cloudflare/sandbox 0.12.10 (and the local-development path without it), its container a Box of
// the local Box host, whose per-route counters (`GET /_vite-hub/counters`) are what is asserted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { SLUGIFY_LOCK, until } from '../support/local-host.mjs';

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox, startSandbox } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

/** The last Run's handle: GET /closed answers once it has closed (its Box destroyed or cleaned). */
let lastRun = null;

registerSandbox('cfr/tree', {
  files: [
    { path: 'package.json', content: '{"type":"module"}' },
    { path: 'index.mjs', content: \`import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { word } from './lib/deep/nested/util.mjs';
const mode = (p) => (fs.statSync(p).mode & 0o777).toString(8);
export default () => ({
  word,
  text: fs.readFileSync('data/a/b/c/d.txt', 'utf8'),
  tool: execFileSync('./bin/tool.sh').toString().trim(),
  modes: { tool: mode('bin/tool.sh'), index: mode('index.mjs'), util: mode('lib/deep/nested/util.mjs') },
  left: fs.readdirSync('..').filter((n) => n.startsWith('.vite-hub-stage')),
});\` },
    { path: 'lib/deep/nested/util.mjs', content: "export const word = 'nested';" },
    { path: 'data/a/b/c/d.txt', content: 'deep text' },
    { path: 'bin/tool.sh', content: '#!/bin/sh\\necho tool-ran\\n', mode: 0o755 },
  ],
});
// 'clash' as a file and as a directory: the Box cannot unpack both.
registerSandbox('cfr/clash', {
  files: [
    { path: 'package.json', content: '{"type":"module"}' },
    { path: 'index.mjs', content: 'export default () => 1;' },
    { path: 'clash', content: 'a file' },
    { path: 'clash/inner.txt', content: 'below a file' },
  ],
});

// A Definition with dependencies: with the SDK's own class there is no store of prepared projects.
registerSandbox('cfr/deps', {
  files: [
    { path: 'package.json', content: '{"type":"module","dependencies":{"slugify":"1.6.9"}}' },
    { path: 'package-lock.json', content: ${JSON.stringify(JSON.stringify(SLUGIFY_LOCK))} },
    { path: 'index.mjs', content: "import slugify from 'slugify'; export default () => slugify('Two Words');" },
  ],
});
/** What the Runs of cfr/deps gave their onLog. */
const logs = [];

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/logs') return Response.json(logs.splice(0));
    if (url.pathname === '/closed') {
      await lastRun.closed();
      return new Response('closed');
    }
    if (url.pathname === '/destroy') {
      await env.SANDBOX.get(env.SANDBOX.idFromName(url.searchParams.get('id'))).destroy();
      return new Response('destroyed');
    }
    const { name, localHost, options } = await request.json();
    const workerEnv = localHost ? { SANDBOX_LOCAL_URL: env.BOX_HOST_URL, SANDBOX_LOCAL_TOKEN: env.BOX_HOST_TOKEN } : env;
    configureSandbox({ provider: 'cloudflare', env: workerEnv });
    const onLog = name === 'cfr/deps' ? { onLog: (entry) => logs.push(entry.line) } : {};
    lastRun = startSandbox(name, null, { ...options, ...onLog });
    return lastRun.response();
  },
};
`;

let worker;

before(async () => {
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-requests');
});

after(async () => {
  await worker?.close();
});

/** The Box host's request counters by route (`cloudflare/<route>`, ...). */
const counters = () => worker.host.counters().requests;
const resetCounters = () => worker.host.resetCounters();

/**
 * The Run's container requests among `requests` (`cloudflare/<route>`): without the Durable
 * Object's own (its start probes, `cloudflare/root`, and its version check, `cloudflare/version`)
 * and the destroy (after the Response).
 */
const containerRequests = (requests) =>
  Object.fromEntries(
    Object.entries(requests).filter(
      ([name]) =>
        name.startsWith('cloudflare/') &&
        !['cloudflare/root', 'cloudflare/version', 'cloudflare/destroy'].includes(name),
    ),
  );

/** Resolves once the last Run has closed: after that it sends nothing (an event, not a wait). */
async function closed() {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/closed');
  assert.equal(await response.text(), 'closed');
}

async function run(name, localHost, options) {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/', {
    method: 'POST',
    body: JSON.stringify({ name, localHost, options }),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) };
}

for (const localHost of [false, true]) {
  const path = localHost ? 'the local-development path' : 'the Durable Object binding';
  test(`${path}: a cold Run sends one write and one command before its Response, the destroy after; nested files and modes arrive`, async () => {
    await resetCounters();
    const { status, body } = await run('cfr/tree', localHost);
    const before = containerRequests(await counters());
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(before, { 'cloudflare/write': 1, 'cloudflare/execute/stream': 1 });
    assert.deepEqual(body, {
      word: 'nested',
      text: 'deep text',
      tool: 'tool-ran',
      modes: { tool: '755', index: '644', util: '644' },
      left: [],
    });
    await closed();
    assert.equal((await counters())['cloudflare/destroy'], 1, JSON.stringify(await counters()));
    assert.deepEqual(containerRequests(await counters()), before, 'nothing more after the Response but the destroy');
  });

  test(`${path}: files the Box cannot unpack are SANDBOX_EXECUTION_ERROR (stage) with the unpacker's message`, async () => {
    await resetCounters();
    const { status, body } = await run('cfr/clash', localHost);
    assert.equal(status, 500, JSON.stringify(body));
    assert.equal(body.error.code, 'SANDBOX_EXECUTION_ERROR', JSON.stringify(body));
    assert.equal(body.error.details?.operation, 'stage', JSON.stringify(body));
    assert.match(body.error.message, /could not be unpacked in the Box: .*clash/s);
    // The write, the command whose unpacking failed, and the read of its errors.
    assert.deepEqual(containerRequests(await counters()), {
      'cloudflare/write': 1,
      'cloudflare/execute/stream': 1,
      'cloudflare/read': 1,
    });
    assert.ok(
      await until(async () => (await counters())['cloudflare/destroy'] === 1),
      JSON.stringify(await counters()),
    );
  });
}

test('a warm Run on a kept Box (sandboxId) sends one write and one command before its Response', async () => {
  const options = { sandboxId: 'cf-requests-kept' };
  assert.equal((await run('cfr/tree', false, options)).status, 200);
  await closed();
  await resetCounters();
  const { status, body } = await run('cfr/tree', false, options);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.modes.tool, '755');
  // The write and the Run's command (streamed); after the Response the Run directory's removal
  // (one buffered command), no destroy: counted once the Run has closed.
  await closed();
  assert.deepEqual(containerRequests(await counters()), {
    'cloudflare/write': 1,
    'cloudflare/execute/stream': 1,
    'cloudflare/execute': 1,
  });
  assert.equal((await counters())['cloudflare/destroy'], undefined);
  const destroyed = await worker.miniflare.dispatchFetch('http://worker.test/destroy?id=cf-requests-kept');
  assert.equal(await destroyed.text(), 'destroyed');
});

test("with the SDK's own Sandbox class every Run installs, and the first one says once that prepared projects need @vite-hub/sandbox/cloudflare's", async () => {
  const said = [];
  for (const title of ['first', 'second']) {
    const response = await worker.miniflare.dispatchFetch('http://worker.test/', {
      method: 'POST',
      body: JSON.stringify({ name: 'cfr/deps', localHost: false }),
    });
    const text = await response.text();
    assert.equal(response.status, 200, `${title}: ${text}`);
    assert.equal(JSON.parse(text), 'Two-Words');
    assert.match(response.headers.get('server-timing') ?? '', /install;desc="fresh"/, title);
    await closed();
    const logs = await (await worker.miniflare.dispatchFetch('http://worker.test/logs')).json();
    said.push(logs.filter((line) => line.includes("export { Sandbox } from '@vite-hub/sandbox/cloudflare'")).length);
  }
  assert.deepEqual(said, [1, 0]);
});
