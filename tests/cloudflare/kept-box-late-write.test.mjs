// A Run on a kept Cloudflare Box (a `sandboxId`) cut during its staging write (issue 32, item
// 8e): its clean-up removes the Run's folder `/workspace/.vite-hub-runs/<32 hex>`, but the write
// is still on its way and, arriving afterwards, creates the folder again (the container's
// `/api/write` creates parent directories). The next Run on that Box in the isolate removes it
// when it gives the Box back. Real workerd (miniflare) runs the real `Sandbox` Durable Object,
// whose container traffic goes through a proxy in this process to a local Box host; the proxy
// holds the first Run's `/api/write` until that Run has closed, then delivers it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { forwardRequest, proxyTo } from '../support/cloudflare-worker.mjs';

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox, startSandbox } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

registerSandbox('late/echo', {
  files: [
    { path: 'package.json', content: '{"type":"module"}' },
    { path: 'index.mjs', content: 'export default (payload) => ({ echo: payload });' },
  ],
  timeout: 1500,
});

// One Run on the kept Box: its answer (or rejection) and how its clean-up ended.
export default {
  async fetch(request, env) {
    const { abortAfterMs, localHost, sandboxId } = await request.json();
    const workerEnv = localHost ? { SANDBOX_LOCAL_URL: env.BOX_HOST_URL, SANDBOX_LOCAL_TOKEN: env.BOX_HOST_TOKEN } : env;
    configureSandbox({ provider: 'cloudflare', env: workerEnv });
    const controller = new AbortController();
    if (abortAfterMs) setTimeout(() => controller.abort(new Error('caller gave up')), abortAfterMs);
    const run = startSandbox('late/echo', 1, { signal: controller.signal, sandboxId });
    const outcome = await run.response().then(
      async (response) => ({ status: response.status, body: await response.text() }),
      (error) => ({ rejected: String(error?.message ?? error) }),
    );
    outcome.closed = await run.closed().then(() => 'ok', (error) => String(error?.message ?? error));
    return Response.json(outcome);
  },
};
`;

let worker;
let proxy;
/** Whether the proxy holds the next `/api/write`. */
let holdWrite = false;
/** The held write: `deliver()` sends it to the Box host; resolves when the host answered. */
let held = null;

before(async () => {
  let target;
  proxy = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    if (holdWrite && req.url.endsWith('/api/write')) {
      holdWrite = false;
      // The request is in; its answer never comes. Delivered later, after the Run has closed.
      held = {
        deliver: () =>
          forwardRequest(target, req, body).then((upstream) =>
            upstream.text().then((text) => ({ status: upstream.status, text })),
          ),
      };
      return;
    }
    await proxyTo(target, req, res, body);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-late-write', {
    bindings: { BOX_HOST_URL: `http://127.0.0.1:${proxy.address().port}` },
  });
  target = worker.host.baseUrl;
});

after(async () => {
  proxy?.closeAllConnections?.();
  await worker?.close();
  await new Promise((resolve) => proxy.close(resolve));
});

/** One Run through the Worker: `{ status, body, closed } | { rejected, closed }`. */
async function run(options) {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/', {
    method: 'POST',
    body: JSON.stringify(options),
  });
  return response.json();
}

/** The Run folders left in every Box under the host's Box root (`.vite-hub-runs/*`). */
function runFolders() {
  const found = [];
  const walk = (dir, depth) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.isSymbolicLink()) continue;
      const full = path.join(dir, entry.name);
      if (entry.name === '.vite-hub-runs') found.push(...fs.readdirSync(full).map((name) => path.join(full, name)));
      else if (depth > 0) walk(full, depth - 1);
    }
  };
  walk(worker.boxRoot, 4);
  return found;
}

for (const localHost of [false, true]) {
  const route = localHost ? 'the local-development path' : 'the Durable Object binding';
  test(`${route}: a staging write that arrives after its Run was cut is removed by the next Run on the kept Box`, {
    timeout: 120_000,
  }, async () => {
    const sandboxId = `late-write-${localHost ? 'local' : 'do'}`;
    const before = new Set(runFolders());
    const since = () => runFolders().filter((folder) => !before.has(folder));
    holdWrite = true;
    held = null;
    const cut = await run({ localHost, sandboxId, abortAfterMs: 300 });
    assert.equal(cut.rejected, 'caller gave up', JSON.stringify(cut));
    assert.ok(held, 'the proxy held no staging write');
    // Its clean-up runs rm from /workspace: the Run's folder does not exist yet, and that is no failure.
    assert.equal(cut.closed, 'ok');

    // The cut Run's write arrives now and creates the Run's folder again (with the archive in it).
    const late = await held.deliver();
    assert.equal(late.status, 200, late.text);
    const left = since();
    assert.equal(left.length, 1, `one Run folder after the late write: ${left.join(', ')}`);
    assert.ok(fs.existsSync(path.join(left[0], '.vite-hub-stage.tgz')), `the late write's archive in ${left[0]}`);

    // The next Run on that Box gives it back with no Run folder left, its own or the cut one's.
    const next = await run({ localHost, sandboxId });
    assert.equal(next.status, 200, JSON.stringify(next));
    assert.deepEqual(JSON.parse(next.body), { echo: 1 });
    assert.equal(next.closed, 'ok');
    assert.deepEqual(since(), []);
  });
}
