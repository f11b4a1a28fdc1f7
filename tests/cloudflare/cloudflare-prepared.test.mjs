// Prepared projects on the `cloudflare` provider. Runs on one sandboxId (a kept Durable Object)
// install once per install digest and later Runs copy the Box's prepared tree (issue 12, item 1).
// Runs in Boxes of their own install once per digest too (issue 34, item 2): the Run that installs
// packs its installed trees right after the install, before its handler, and after its Response
// the Worker writes that archive to the store Durable Object `vitehub-prepared-<digest[..40]>`
// (its storage: no container); later Runs read it and send it before their own files. Real
// workerd (miniflare), the real `Sandbox` Durable Object of @cloudflare/sandbox 0.12.10 with the
// store of @vite-hub/sandbox/cloudflare, its containers Boxes of the local Box host, real `npm ci`
// of a small package from the npm registry. The attacks of the last round (a handler that
// rewrites the packed archive, a shadow `index.mjs/node_modules/`, `project/` replaced by a
// symlink, an archive over 8 MiB, a drop while the Run holds its archive) and a damaged archive
// must not reach later Runs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { SLUGIFY_LOCK } from '../support/local-host.mjs';

const LOCK = JSON.stringify(SLUGIFY_LOCK);
const PACKAGE = { name: 'cfp-slug', private: true, type: 'module', dependencies: { slugify: '1.6.9' } };
// Another digest: its install leaves 9 MiB of random bytes in node_modules (over the 8 MiB a store keeps).
const BIG_PACKAGE = {
  ...PACKAGE,
  scripts: {
    postinstall:
      "node -e \"require('fs').writeFileSync('node_modules/big.bin', require('crypto').randomBytes(9 * 1024 * 1024))\"",
  },
};

// Each handler returns whether its copy of slugify carries an earlier Run's write (read first).
const HEAD = "import fs from 'node:fs'; import cp from 'node:child_process'; import slugify from 'slugify';\n";
const TAMPERED = "const tampered = fs.readFileSync('node_modules/slugify/slugify.js', 'utf8').includes('TAMPERED');";
const ANSWER = 'return { slug: slugify(title, { lower: true }), tampered };';
const HANDLERS = {
  // Only reads.
  clean: `export default (title) => { ${TAMPERED} ${ANSWER} };`,
  // Writes into its own node_modules.
  writes: `export default (title) => { ${TAMPERED} fs.appendFileSync('node_modules/slugify/slugify.js', '\\n// TAMPERED'); ${ANSWER} };`,
  // F1: rewrites the packed archive beside the project with one whose slugify says PWNED.
  rewrites: `export default (title) => { ${TAMPERED}
    fs.mkdirSync('../pwn/project/node_modules/slugify', { recursive: true });
    fs.cpSync('node_modules/slugify', '../pwn/project/node_modules/slugify', { recursive: true });
    fs.writeFileSync('../pwn/project/node_modules/slugify/slugify.js', "module.exports = () => 'PWNED';");
    cp.execFileSync('tar', ['-c', '-z', '-f', '../.vite-hub-prepared.tgz', '-C', '../pwn', 'project']);
    ${ANSWER} };`,
  // F2: a shadow index.mjs/node_modules/ where the Run's own index.mjs goes.
  shadows: `export default (title) => { ${TAMPERED} fs.rmSync('index.mjs');
    fs.mkdirSync('index.mjs/node_modules/x', { recursive: true }); fs.writeFileSync('index.mjs/node_modules/x/a.js', '1');
    ${ANSWER} };`,
  // F2: project/ replaced by a symlink to a copy of it.
  symlinks: `export default (title) => { ${TAMPERED} const here = process.cwd();
    fs.renameSync(here, here + '.real'); fs.symlinkSync(here + '.real', here); ${ANSWER} };`,
  // F5: says it runs (a file), then waits until the test lets it go (another file).
  waits: `export default async (title) => { ${TAMPERED} fs.writeFileSync('waiting', '');
    while (!fs.existsSync('go')) await new Promise((r) => setTimeout(r, 20)); ${ANSWER} };`,
};

const WORKER = `
import { Sandbox as StoreSandbox } from '@vite-hub/sandbox/cloudflare';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, dropPreparedProject, listPreparedProjects, listSandboxes, registerSandbox, startSandbox } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(StoreSandbox);

/** The last Run's handle: GET /closed answers once it has closed. */
let lastRun = null;
/** What Runs reported through onLog (failures after the Response, a dropped archive). */
const logs = [];

const files = (pkg, index) => [
  { path: 'package.json', content: JSON.stringify(pkg) },
  { path: 'package-lock.json', content: ${JSON.stringify(LOCK)} },
  { path: 'index.mjs', content: ${JSON.stringify(HEAD)} + index },
];
for (const [name, index] of Object.entries(${JSON.stringify(HANDLERS)})) {
  registerSandbox('cfp/' + name, { files: files(${JSON.stringify(PACKAGE)}, index) });
}
registerSandbox('cfp/big', { files: files(${JSON.stringify(BIG_PACKAGE)}, ${JSON.stringify(HANDLERS.clean)}) });

const digestOf = (name) => listSandboxes().find((d) => d.name === name).install.digest;
const store = (env, name) => env.SANDBOX.get(env.SANDBOX.idFromName('vitehub-prepared-' + digestOf(name).slice(0, 40)));
const outcome = (promise) => promise.then((value) => ({ value }), (error) => ({ code: error.code, message: error.message }));

export default {
  async fetch(request, env) {
    configureSandbox({ provider: 'cloudflare', env });
    const { pathname, searchParams } = new URL(request.url);
    const name = searchParams.get('name') ?? 'cfp/clean';
    if (pathname === '/closed') {
      const failed = await lastRun.closed().then(() => null, (error) => error);
      return new Response(failed ? \`\${failed.code}: \${failed.message}\` : 'closed');
    }
    if (pathname === '/logs') return Response.json(logs.splice(0));
    if (pathname === '/digests') return Response.json(listSandboxes().map((d) => d.install.digest));
    if (pathname === '/drop') return Response.json(await outcome(dropPreparedProject(digestOf(name))));
    if (pathname === '/list') return Response.json(await outcome(listPreparedProjects()));
    if (pathname === '/stored') return Response.json({ bytes: await store(env, name).vitehubPreparedSize() });
    if (pathname === '/damage') {
      await store(env, name).vitehubKeepPreparedArchive(new TextEncoder().encode('not a gzip stream'));
      return Response.json({ damaged: true });
    }
    const { title, options } = await request.json();
    lastRun = startSandbox(name, title, { ...options, onLog: (entry) => logs.push(entry.line) });
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
/** Commands the containers ran (buffered /api/execute and streamed /api/execute/stream). */
const commands = async () => {
  const requests = await counters();
  return (requests['cloudflare/execute'] ?? 0) + (requests['cloudflare/execute/stream'] ?? 0);
};

async function get(pathname) {
  const response = await worker.miniflare.dispatchFetch(`http://worker.test${pathname}`);
  const text = await response.text();
  return pathname === '/closed' ? text : JSON.parse(text);
}

function post(name, title, options) {
  return worker.miniflare.dispatchFetch(`http://worker.test/?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    body: JSON.stringify({ title, options }),
  });
}

async function run(name, title, options) {
  const response = await post(name, title, options);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const install = /install;desc="([^"]+)"/.exec(response.headers.get('server-timing') ?? '')?.[1];
  // 'closed', or the failure after the Response the handle reported (`<code>: <message>`).
  const after = await get('/closed');
  return { body: JSON.parse(text), install, after };
}

/** Bytes the store of `name`'s digest keeps (0: none). */
const stored = async (name = 'cfp/clean') => (await get(`/stored?name=${encodeURIComponent(name)}`)).bytes;

/** Drops the shared digest's store: the next Run of it installs. */
async function dropShared() {
  const dropped = await get('/drop?name=cfp/clean');
  assert.equal(typeof dropped.value, 'number', JSON.stringify(dropped));
  assert.equal(await stored(), 0);
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
  const first = await run('cfp/writes', 'First Run', options);
  assert.deepEqual([first.install, first.body], ['fresh', { slug: 'first-run', tampered: false }]);
  assert.equal(preparedOnHost().length, 1, 'one prepared tree in the kept Box');
  // Install, entry, and the Run directory's removal after the Response.
  assert.equal(await commands(), 3, JSON.stringify(await counters()));
  await resetCounters();

  const second = await run('cfp/writes', 'Second Run', options);
  // The first Run wrote into its own node_modules; the second one got an untouched copy.
  assert.deepEqual([second.install, second.body], ['prepared', { slug: 'second-run', tampered: false }]);
  // The copy of the prepared tree (the install step), the entry, the Run directory's removal;
  // the project and the harness in one write each (issue 32 item 6).
  assert.equal(await commands(), 3, JSON.stringify(await counters()));
  const requests = await counters();
  assert.equal(requests['cloudflare/write'], 2, JSON.stringify(requests));
  assert.equal(requests['cloudflare/mkdir'] ?? 0, 0, JSON.stringify(requests));
  assert.equal(preparedOnHost().length, 1);
  assert.equal(await stored(), 0, 'a kept Box keeps its own: no store is written');
});

test('Boxes of their own install once per digest: the next Run starts from the store, without an install, in two container requests', async () => {
  const digests = await get('/digests');
  assert.equal(new Set(digests).size, 2, 'every Definition but cfp/big shares one install digest');
  await resetCounters();
  const first = await run('cfp/clean', 'Own Box');
  assert.deepEqual([first.install, first.body], ['fresh', { slug: 'own-box', tampered: false }]);
  const firstRequests = await counters();
  // The store was asked through its Durable Object storage: no container of its own. The Run's
  // container: the Definition's files, the install with its clean-up, the packing and the read
  // of the archive (before the handler), the Run's files, the entry; after the Response only
  // the destroy (no fingerprint: nothing the handler does reaches the archive).
  assert.equal(firstRequests['cloudflare/read'], 1, JSON.stringify(firstRequests));
  assert.equal(firstRequests['cloudflare/write'], 2, JSON.stringify(firstRequests));
  assert.equal(await commands(), 3, JSON.stringify(firstRequests));
  assert.equal(firstRequests['cloudflare/version'], 1, JSON.stringify(firstRequests));
  assert.equal(first.after, 'closed');
  assert.ok((await stored()) > 0, 'the store keeps the archive');
  assert.deepEqual(await get('/logs'), []);
  await resetCounters();

  const second = await run('cfp/clean', 'Own Box Again');
  assert.deepEqual([second.install, second.body], ['prepared', { slug: 'own-box-again', tampered: false }]);
  const requests = await counters();
  // The Run's files after the archive in one write, the entry: no install, no mkdir, no read;
  // then the destroy. Nothing else reached a container.
  assert.equal(requests['cloudflare/write'], 1, JSON.stringify(requests));
  assert.equal(await commands(), 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/read'] ?? 0, 0, JSON.stringify(requests));
  assert.equal(requests['cloudflare/mkdir'] ?? 0, 0, JSON.stringify(requests));
  // One container started (the SDK's version check runs once per start): the Run's, not the store's.
  assert.equal(requests['cloudflare/version'], 1, JSON.stringify(requests));
});

test('a handler that writes into node_modules gets an untouched copy; its writes reach neither the store nor the Definition that shares its digest', async () => {
  const writer = await run('cfp/writes', 'Writes');
  assert.deepEqual([writer.install, writer.body], ['prepared', { slug: 'writes', tampered: false }]);
  const again = await run('cfp/writes', 'Writes Again');
  assert.deepEqual([again.install, again.body.tampered], ['prepared', false]);
  const other = await run('cfp/clean', 'Reads');
  assert.deepEqual([other.install, other.body.tampered], ['prepared', false]);
  // The Run that installs writes too: what is kept was packed before its handler ran.
  await dropShared();
  const owner = await run('cfp/writes', 'Owner Writes');
  assert.deepEqual([owner.install, owner.body.tampered], ['fresh', false]);
  const next = await run('cfp/clean', 'After The Writer');
  assert.equal(next.body.tampered, false);
});

test('dropPreparedProject deletes the store; listPreparedProjects is not supported', async () => {
  await run('cfp/clean', 'Keep One');
  assert.ok((await stored()) > 0);
  assert.deepEqual(await get('/drop?name=cfp/clean'), { value: 1 });
  assert.equal(await stored(), 0);
  assert.deepEqual(await get('/drop?name=cfp/clean'), { value: 0 }, 'nothing is kept any more');
  const next = await run('cfp/clean', 'After Drop');
  assert.equal(next.install, 'fresh');

  const listed = await get('/list');
  assert.equal(listed.code, 'SANDBOX_NOT_SUPPORTED');
  assert.match(listed.message, /cannot be listed/);
});

test('a sandboxId cannot name a store, in any case', async () => {
  const [digest] = await get('/digests');
  for (const sandboxId of [`vitehub-prepared-${digest.slice(0, 40)}`, 'VITEHUB-PREPARED-x']) {
    const response = await post('cfp/clean', 'x', { sandboxId });
    const body = await response.json();
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(body.error.code, 'SANDBOX_INVALID_ARGUMENT');
    assert.match(body.error.message, /stores of prepared projects/);
  }
});

// The attacks: the Run that installs runs a hostile handler; the next Run must be clean.
for (const [name, what] of [
  ['cfp/rewrites', 'rewrites the packed archive'],
  ['cfp/shadows', 'leaves a shadow index.mjs/node_modules/'],
  ['cfp/symlinks', 'replaces project/ with a symlink'],
]) {
  test(`a handler that ${what} while its Run installs does not reach later Runs`, async () => {
    await dropShared();
    const attacker = await run(name, 'Attack');
    assert.equal(attacker.install, 'fresh');
    // What the Run reported after its Response, if anything, is about its own Box.
    assert.ok(attacker.after === 'closed' || /Sandbox "cfp\/\w+" was not kept/.test(attacker.after), attacker.after);
    await get('/logs');
    for (const title of ['Later', 'Later Again']) {
      const later = await run('cfp/clean', title);
      assert.deepEqual(later.body, { slug: title.toLowerCase().replace(' ', '-'), tampered: false });
      assert.equal(later.after, 'closed');
    }
  });
}

test('an archive over 8 MiB is not kept: every Run of its digest installs, and says why', async () => {
  const first = await run('cfp/big', 'Big');
  assert.equal(first.install, 'fresh');
  assert.equal(await stored('cfp/big'), 0);
  assert.match(
    first.after,
    /^SANDBOX_RUNTIME_ERROR: The installed project of Sandbox "cfp\/big" was not kept: .*8388608/,
  );
  assert.ok((await get('/logs')).some((line) => line.includes('8388608')));
  const second = await run('cfp/big', 'Big Again');
  assert.equal(second.install, 'fresh');
});

test('a drop while the installing Run holds its archive is not undone by the Run', async () => {
  await dropShared();
  const pending = post('cfp/waits', 'Waits');
  // The handler runs (its archive is held by then): find its project on the host.
  let project;
  while (!project) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const boxes = fs.readdirSync(worker.boxRoot).filter((n) => n.startsWith('vite-hub-box-'));
    project = boxes
      .map((box) => path.join(worker.boxRoot, box, 'workspace', 'project'))
      .find((dir) => fs.existsSync(path.join(dir, 'waiting')));
  }
  assert.deepEqual(await get('/drop?name=cfp/clean'), { value: 0 });
  fs.writeFileSync(path.join(project, 'go'), '');
  const response = await pending;
  assert.equal(response.status, 200, await response.text());
  assert.equal(await get('/closed'), 'closed');
  assert.equal(await stored(), 0, 'the drop stands');
  const next = await run('cfp/clean', 'After The Race');
  assert.equal(next.install, 'fresh');
});

test('a damaged archive is dropped and the Run installs; the Run that installed keeps a good one again', async () => {
  await run('cfp/clean', 'Good');
  assert.ok((await stored()) > 0);
  assert.deepEqual(await get('/damage?name=cfp/clean'), { damaged: true });
  const damaged = await run('cfp/clean', 'Damaged');
  assert.deepEqual([damaged.install, damaged.body], ['fresh-fallback', { slug: 'damaged', tampered: false }]);
  // Said where the user sees it, naming the prepared project, not the Run's files.
  assert.match(
    damaged.after,
    /the prepared project vitehub-prepared-\w+ could not be unpacked in the Box and was dropped/,
  );
  assert.doesNotMatch(damaged.after, /Run's files/);
  assert.ok((await get('/logs')).some((line) => line.includes('could not be unpacked')));
  const next = await run('cfp/clean', 'Good Again');
  assert.deepEqual([next.install, next.body.tampered], ['prepared', false]);
});
