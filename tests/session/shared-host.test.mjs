// A dev server in a worker thread (Nitro v3's) borrows the local Box host its process offers
// (runtime/shared-host.mjs, what the Vite plugin does in `vite dev`) instead of starting a second
// one; a worker of a process that offers nothing starts its own. The offered host here is a real
// one whose request counters show which host the worker's Run went to.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { offerLocalBoxHost, setOfferedHost } from '../../dist/runtime/shared-host.mjs';

const host = await startBoxHost({});
after(() => host.close());

const ENTRY = new URL('../../dist/runtime/index.node.mjs', import.meta.url).href;
const WORKER = `
import { parentPort } from 'node:worker_threads';
import { registerSandbox, runSandbox, closeLocalBoxHost } from '${ENTRY}';
registerSandbox('trivial', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: 'export default (payload) => ({ sum: payload.a + payload.b })' },
] });
const response = await runSandbox('trivial', { a: 2, b: 5 });
parentPort.postMessage({ status: response.status, body: await response.json() });
await closeLocalBoxHost();
`;

/** Runs WORKER in a worker thread with `env`; resolves to what it posted. */
function runInWorker(env) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER)}`), { env });
    let result;
    worker.once('message', (message) => {
      result = message;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve(result) : reject(new Error(`worker exited ${code}`))));
  });
}

test('a worker thread runs on the host its process offers, and on its own when none is offered', async () => {
  const { VITE_HUB_SANDBOX_LOCAL_HOST_OFFERED: _unmarked, ...plainEnv } = process.env;
  host.resetCounters();
  assert.deepEqual(await runInWorker(plainEnv), { status: 200, body: { sum: 7 } });
  assert.equal(host.counters().total, 0, 'without an offer the worker started a host of its own');

  let asked = 0;
  setOfferedHost(async () => {
    asked += 1;
    return { baseUrl: host.baseUrl, token: host.token };
  });
  await offerLocalBoxHost();
  assert.equal(process.env.VITE_HUB_SANDBOX_LOCAL_HOST_OFFERED, String(process.pid));
  assert.deepEqual(await runInWorker(process.env), { status: 200, body: { sum: 7 } });
  assert.equal(asked, 1);
  assert.ok(host.counters().requests.create >= 1, JSON.stringify(host.counters()));
});
