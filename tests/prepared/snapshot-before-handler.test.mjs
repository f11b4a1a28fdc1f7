// Snapshot before the handler (issue 34 item 2): the prepared project of a digest is the Box as
// its install left it, taken before the first Run's handler runs. Neither what that handler
// writes into its node_modules nor a process it leaves running after its Response reaches the
// Runs that start from it. Real local Box host (Vercel protocol), real `npm ci` of slugify.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineSlugifySandbox } from '../support/local-host.mjs';

/**
 * Reports what it sees of slugify's files. With `tamper`, then rewrites them during the handler.
 * With `linger`, answers with a streamed Response whose head goes out at once, and starts a
 * detached process (daemon.cjs) that rewrites them after that; the body ends once it has.
 */
const INDEX = `import fs from 'node:fs';
import { spawn } from 'node:child_process';
const FILE = 'node_modules/slugify/slugify.js';
export default function (payload = {}) {
  const seen = { tampered: fs.readFileSync(FILE, 'utf8').includes('TAMPERED'), extra: fs.existsSync('node_modules/extra.txt') };
  if (payload.tamper) {
    fs.appendFileSync(FILE, '\\n// TAMPERED');
    fs.writeFileSync('node_modules/extra.txt', 'x');
  }
  if (!payload.linger) return seen;
  const body = new ReadableStream({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode(JSON.stringify(seen)));
      // The Response's head is out: the caller holds it while this runs.
      await new Promise((resolve) => setTimeout(resolve, 50));
      spawn(process.execPath, ['daemon.cjs'], { detached: true, stdio: 'ignore' }).unref();
      while (!fs.existsSync('node_modules/extra.txt')) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'application/json' } });
}`;

/** The process the handler leaves behind: rewrites slugify and adds a file in node_modules. */
const DAEMON = `const fs = require('fs');
fs.appendFileSync('node_modules/slugify/slugify.js', '\\n// TAMPERED');
fs.writeFileSync('node_modules/extra.txt', 'x');`;

/** Registers `name` (its own package name: its own install digest) with slugify 1.6.9. */
const define = (name) => defineSlugifySandbox(name, INDEX, [{ path: 'daemon.cjs', content: DAEMON }]);

const hosts = [];
let stateDir;

before(() => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-snapshot-before-'));
});

after(async () => {
  for (const host of hosts) await host.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** A host on its own state dir, configured as the provider. */
async function useHost(options = {}) {
  const host = await startBoxHost({ stateDir: fs.mkdtempSync(path.join(stateDir, 'host-')), ...options });
  hosts.push(host);
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  return host;
}

/** One Run: `{ status, body, install, requestsAtResponse }` (`install`: the install phase's desc). */
async function run(host, name, payload = {}) {
  const response = await runSandbox(name, payload);
  const requestsAtResponse = { ...host.counters().requests };
  const install = /install;desc="([^"]+)"/.exec(response.headers.get('server-timing') ?? '')?.[1];
  return { status: response.status, body: await response.json(), install, requestsAtResponse };
}

async function snapshotCount(host) {
  const response = await fetch(`${host.baseUrl}/v2/sandboxes/snapshots`, {
    headers: { authorization: `Bearer ${host.token}` },
  });
  return (await response.json()).snapshots.length;
}

/** Waits until every Box created since the counters were reset is stopped (by a stop or a snapshot). */
async function untilAllEnded(host) {
  const deadline = Date.now() + 40_000;
  for (;;) {
    const { create = 0, stop = 0, snapshot = 0 } = host.counters().requests;
    if (create > 0 && stop + snapshot >= create) return;
    assert.ok(Date.now() < deadline, `Boxes still running: ${JSON.stringify(host.counters().requests)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until `host` keeps one snapshot (the prepared project). */
async function untilKept(host) {
  const deadline = Date.now() + 30_000;
  while ((await snapshotCount(host)) < 1) {
    assert.ok(Date.now() < deadline, 'the prepared project was kept');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a handler that writes into its node_modules: the next Run still starts prepared, from the tree the install left', async () => {
  const host = await useHost();
  define('before/tamper');
  host.resetCounters();
  const first = await run(host, 'before/tamper', { tamper: true });
  assert.deepEqual([first.status, first.install, first.body], [200, 'fresh', { tampered: false, extra: false }]);
  // Before its Response: list, create, write, install (+ clean-up), snapshot, create from it,
  // write, exec. The snapshot is there before any handler ran; the Run's own Box is stopped after.
  // (A plain JSON result is answered at its frame: the stop may already be counted then.)
  const { stop: _stop, ...beforeResponse } = first.requestsAtResponse;
  assert.deepEqual(beforeResponse, {
    'snapshots/list': 1,
    create: 2,
    'fs/write': 2,
    cmd: 2,
    snapshot: 1,
  });
  assert.equal(await snapshotCount(host), 1);
  await untilAllEnded(host);
  assert.equal(host.counters().requests.stop, 1);
  const second = await run(host, 'before/tamper');
  assert.deepEqual([second.install, second.body], ['prepared', { tampered: false, extra: false }]);
});

test('a process the handler leaves behind that rewrites node_modules after the Response: later Runs start prepared, from the tree the install left', async () => {
  const host = await useHost();
  define('before/linger');
  const response = await runSandbox('before/linger', { linger: true });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('server-timing') ?? '', /install;desc="fresh"/);
  assert.deepEqual(await response.json(), { tampered: false, extra: false });
  await untilKept(host);
  for (let i = 0; i < 2; i += 1) {
    const next = await run(host, 'before/linger');
    assert.deepEqual([next.install, next.body], ['prepared', { tampered: false, extra: false }]);
  }
});
