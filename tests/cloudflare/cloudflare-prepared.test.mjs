// Prepared projects on the `cloudflare` provider (issue 12, item 1): Runs on one sandboxId (a kept
// Durable Object) install once per install digest and later Runs copy the Box's prepared tree;
// Runs in Boxes of their own still install. Real workerd (miniflare), the real `Sandbox` Durable
// Object of @cloudflare/sandbox 0.12.10, its container a Box of the local Box host, real `npm ci`
// of a small package from the npm registry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { SLUGIFY_LOCK } from '../support/local-host.mjs';

const LOCK = JSON.stringify(SLUGIFY_LOCK);

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox, startSandbox } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

/** The last Run's handle: GET /closed answers once it has closed (its Run directory removed). */
let lastRun = null;

registerSandbox('cfp/slug', {
  files: [
    { path: 'package.json', content: JSON.stringify({ name: 'cfp-slug', private: true, type: 'module', dependencies: { slugify: '1.6.9' } }) },
    { path: 'package-lock.json', content: ${JSON.stringify(LOCK)} },
    { path: 'index.mjs', content: "import fs from 'node:fs'; import slugify from 'slugify';\\n" +
      "export default (title) => { const tampered = fs.readFileSync('node_modules/slugify/slugify.js', 'utf8').includes('TAMPERED');\\n" +
      "fs.appendFileSync('node_modules/slugify/slugify.js', '\\\\n// TAMPERED'); return { slug: slugify(title, { lower: true }), tampered }; };" },
  ],
});

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === '/closed') {
      await lastRun.closed();
      return new Response('closed');
    }
    const { title, options } = await request.json();
    configureSandbox({ provider: 'cloudflare', env });
    lastRun = startSandbox('cfp/slug', title, options);
    return lastRun.response();
  },
};
`;

let worker;

before(async () => {
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-prepared');
});

after(async () => {
  await worker?.close();
});

/** The Box host's request counters by route (`cloudflare/<route>`, ...). */
const counters = () => worker.host.counters().requests;
const resetCounters = () => worker.host.resetCounters();
/** Commands the container ran (buffered /api/execute and streamed /api/execute/stream). */
const commands = async () => {
  const requests = await counters();
  return (requests['cloudflare/execute'] ?? 0) + (requests['cloudflare/execute/stream'] ?? 0);
};

/** Resolves once the last Run has closed: after that it sends nothing (an event, not a wait). */
async function closed() {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/closed');
  assert.equal(await response.text(), 'closed');
}

async function run(title, options) {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/', {
    method: 'POST',
    body: JSON.stringify({ title, options }),
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const install = /install;desc="([^"]+)"/.exec(response.headers.get('server-timing') ?? '')?.[1];
  return { body: JSON.parse(text), install };
}

/** The kept Box's prepared digests on the host (`/workspace/.vite-hub-prepared/`). */
function preparedOnHost() {
  const boxes = fs.readdirSync(worker.boxRoot).filter((n) => n.startsWith('vite-hub-box-'));
  return boxes.flatMap((box) => {
    const dir = path.join(worker.boxRoot, box, 'workspace', '.vite-hub-prepared');
    return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
  });
}

test('Runs on one sandboxId install once; the next Run copies the prepared tree (one command) and its writes stay its own', async () => {
  const options = { sandboxId: 'cf-prepared' };
  await resetCounters();
  const first = await run('First Run', options);
  assert.deepEqual([first.install, first.body], ['fresh', { slug: 'first-run', tampered: false }]);
  assert.equal(preparedOnHost().length, 1, 'one prepared tree in the kept Box');
  // Install, entry, and the Run directory's removal after the Response.
  await closed();
  assert.equal(await commands(), 3, JSON.stringify(await counters()));
  await resetCounters();

  const second = await run('Second Run', options);
  // The first Run wrote into its own node_modules; the second one got an untouched copy.
  assert.deepEqual([second.install, second.body], ['prepared', { slug: 'second-run', tampered: false }]);
  // Three commands in all: the copy of the prepared tree (the install step), the entry, and the
  // Run directory's removal after the Response; no install. Counted once the Run has closed.
  await closed();
  assert.equal(await commands(), 3, JSON.stringify(await counters()));
  // The Run's files: two archives, one write each, unpacked by the next command (no mkdir, no
  // write per file): the project before the copy's command, and the harness and input (the
  // Run's nonce) after it, since that command installs afresh when the kept tree is refused and
  // the Definition's own scripts must not see them (issue 32 item 6): four container requests
  // before the Response (three before issue 32, issue 12 item 2).
  const requests = await counters();
  assert.equal(requests['cloudflare/write'], 2, JSON.stringify(requests));
  assert.equal(requests['cloudflare/mkdir'] ?? 0, 0, JSON.stringify(requests));
  assert.equal(preparedOnHost().length, 1);
});

test('a Run in a Box of its own still installs (no kept Box to keep the tree in)', async () => {
  const own = await run('Own Box');
  assert.deepEqual([own.install, own.body.slug], ['fresh', 'own-box']);
  const again = await run('Own Box Again');
  assert.equal(again.install, 'fresh');
});
