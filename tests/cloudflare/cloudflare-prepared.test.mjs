// Prepared projects on the `cloudflare` provider: Runs on one sandboxId (a kept Durable Object)
// install once per install digest and later Runs copy the Box's prepared tree (issue 12, item 1);
// Runs in Boxes of their own install once per digest too: the Run that installed packs its Box's
// installed project into the store Durable Object `vitehub-prepared-<digest>` after its Response,
// and later Runs unpack it with their own files (issue 26, item 3). Real workerd (miniflare), the
// real `Sandbox` Durable Object of @cloudflare/sandbox 0.12.10, its containers Boxes of the local
// Box host, real `npm ci` of a small package from the npm registry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { SLUGIFY_LOCK } from '../support/local-host.mjs';

const LOCK = JSON.stringify(SLUGIFY_LOCK);
// One package.json and lockfile for both Definitions: one install digest, one store.
const PACKAGE = JSON.stringify({ name: 'cfp-slug', private: true, type: 'module', dependencies: { slugify: '1.6.9' } });
// Whether this Run's copy of slugify carries an earlier Run's write (read before writing).
const TAMPERED = "const tampered = fs.readFileSync('node_modules/slugify/slugify.js', 'utf8').includes('TAMPERED');";

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, dropPreparedProject, listPreparedProjects, listSandboxes, registerSandbox, startSandbox } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

/** The last Run's handle: GET /closed answers once it has closed (its Run directory removed). */
let lastRun = null;

const files = (index) => [
  { path: 'package.json', content: ${JSON.stringify(PACKAGE)} },
  { path: 'package-lock.json', content: ${JSON.stringify(LOCK)} },
  { path: 'index.mjs', content: index },
];
// Writes into its own node_modules on every Run.
registerSandbox('cfp/slug', { files: files("import fs from 'node:fs'; import slugify from 'slugify';\\n" +
  "export default (title) => { ${TAMPERED}\\n" +
  "fs.appendFileSync('node_modules/slugify/slugify.js', '\\\\n// TAMPERED'); return { slug: slugify(title, { lower: true }), tampered }; };") });
// Only reads.
registerSandbox('cfp/clean', { files: files("import fs from 'node:fs'; import slugify from 'slugify';\\n" +
  "export default (title) => { ${TAMPERED} return { slug: slugify(title, { lower: true }), tampered }; };") });

const digest = () => listSandboxes().find((d) => d.name === 'cfp/slug').install.digest;
const outcome = (promise) => promise.then((value) => ({ value }), (error) => ({ code: error.code, message: error.message }));

export default {
  async fetch(request, env) {
    configureSandbox({ provider: 'cloudflare', env });
    const { pathname } = new URL(request.url);
    if (pathname === '/closed') {
      await lastRun.closed();
      return new Response('closed');
    }
    if (pathname === '/digest') return Response.json({ digest: digest(), sameForBoth: digest() === listSandboxes().find((d) => d.name === 'cfp/clean').install.digest });
    if (pathname === '/drop') return Response.json(await outcome(dropPreparedProject(digest())));
    if (pathname === '/list') return Response.json(await outcome(listPreparedProjects()));
    const { name = 'cfp/slug', title, options } = await request.json();
    lastRun = startSandbox(name, title, options);
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

async function run(title, options, name) {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/', { method: 'POST', body: JSON.stringify({ name, title, options }) });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const install = /install;desc="([^"]+)"/.exec(response.headers.get('server-timing') ?? '')?.[1];
  return { body: JSON.parse(text), install };
}

async function get(pathname) {
  return (await worker.miniflare.dispatchFetch(`http://worker.test${pathname}`)).json();
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
  // The Run's files: one archive in one write, unpacked by the copy's command (no mkdir, no
  // write per file): three container requests before the Response (issue 12 item 2).
  const requests = await counters();
  assert.equal(requests['cloudflare/write'], 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/mkdir'] ?? 0, 0, JSON.stringify(requests));
  assert.equal(preparedOnHost().length, 1);
});

/** The stores' Boxes on the host: `vite-hub-box-*` directories holding a prepared archive. */
function storesOnHost() {
  return fs.readdirSync(worker.boxRoot).filter((box) => fs.existsSync(path.join(worker.boxRoot, box, 'workspace', '.vite-hub-prepared.tgz')));
}

test('Runs in Boxes of their own install once per digest: the next Run unpacks the prepared project with its files, three requests before its Response', async () => {
  const { digest, sameForBoth } = await get('/digest');
  assert.ok(sameForBoth, 'the two Definitions share one install digest');
  const first = await run('Own Box', undefined, 'cfp/clean');
  assert.deepEqual([first.install, first.body], ['fresh', { slug: 'own-box', tampered: false }]);
  // After the Response: the clean-up, the packing, the read of the archive, its write to the
  // store, the Box destroyed.
  await closed();
  assert.equal(storesOnHost().length, 1, `one store keeps the archive of ${digest}`);
  await resetCounters();

  const second = await run('Own Box Again', undefined, 'cfp/clean');
  assert.deepEqual([second.install, second.body], ['prepared', { slug: 'own-box-again', tampered: false }]);
  await closed();
  const requests = await counters();
  // The store's archive (one read), the Run's files and the archive in one write, the entry:
  // no install command, no mkdir; then the Box destroyed.
  assert.equal(await commands(), 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/read'], 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/write'], 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/mkdir'] ?? 0, 0, JSON.stringify(requests));
});

test('a Definition that writes into its node_modules gets an untouched copy, and its writes reach neither the store nor the other Definition', async () => {
  const tamperer = await run('Writes', undefined, 'cfp/slug');
  assert.deepEqual([tamperer.install, tamperer.body], ['prepared', { slug: 'writes', tampered: false }]);
  await closed();
  const again = await run('Writes Again', undefined, 'cfp/slug');
  assert.deepEqual([again.install, again.body.tampered], ['prepared', false]);
  await closed();
  const other = await run('Reads', undefined, 'cfp/clean');
  assert.deepEqual([other.install, other.body.tampered], ['prepared', false]);
  await closed();
});

test('dropPreparedProject deletes the store; a Run that wrote into its node_modules while installing keeps nothing', async () => {
  assert.deepEqual(await get('/drop'), { value: 1 });
  assert.equal(storesOnHost().length, 0);
  assert.deepEqual(await get('/drop'), { value: 0 }, 'nothing is kept any more');
  // The first Run after the drop installs; its handler writes into node_modules, so its Box
  // is not kept (its fingerprint differs) and the next Run installs too.
  const owner = await run('Owner Writes', undefined, 'cfp/slug');
  assert.deepEqual([owner.install, owner.body.tampered], ['fresh', false]);
  await closed();
  assert.equal(storesOnHost().length, 0, 'nothing kept');
  const next = await run('Next', undefined, 'cfp/clean');
  assert.deepEqual([next.install, next.body.tampered], ['fresh', false]);
  await closed();
  assert.equal(storesOnHost().length, 1);
});

test('prepared projects cannot be listed on Cloudflare, and a sandboxId cannot name a store', async () => {
  const listed = await get('/list');
  assert.equal(listed.code, 'SANDBOX_NOT_SUPPORTED');
  assert.match(listed.message, /cannot be listed/);
  const { digest } = await get('/digest');
  const response = await worker.miniflare.dispatchFetch('http://worker.test/', {
    method: 'POST',
    body: JSON.stringify({ name: 'cfp/clean', title: 'x', options: { sandboxId: `vitehub-prepared-${digest.slice(0, 40)}` } }),
  });
  const body = await response.json();
  assert.equal(response.status, 400, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.match(body.error.message, /stores of prepared projects/);
});
