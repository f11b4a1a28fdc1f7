// Prepared projects without isolation (issue 32, item 7): a Box of plain processes
// (`isolation: 'none'`) sees its Box paths below the Box's host directory, not at `/vercel/sandbox`,
// so every path a Run's commands are given must be relative to their cwd. The installed project is
// kept (a snapshot, or a kept Box's `.vite-hub-prepared/`) and the next Run does not install again.
// Real local Box host, real processes, real `npm ci` of slugify from the npm registry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { closeSandbox, configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineSlugifySandbox, until } from '../support/local-host.mjs';

// In a kept Box the cwd is <Box cwd>/.vite-hub-runs/<run>/project: three levels up is its cwd.
const INDEX = `import fs from 'node:fs';
export default async function (payload = {}) {
  const slug = (await import('slugify')).default(payload.title ?? '', { lower: true });
  const kept = '../../../.vite-hub-prepared';
  return { slug, kept: fs.existsSync(kept) ? fs.readdirSync(kept) : null };
}`;

let host;
let stateDir;
let logs;

before(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-unisolated-prepared-test-'));
  host = await startBoxHost({ stateDir, isolation: 'none' });
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
});

after(async () => {
  configureSandbox({});
  await host?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** Registers `name` with slugify as its dependency and INDEX as its entry. */
const define = (name) => defineSlugifySandbox(name, INDEX);

/** One Run: `{ body, install }` (`install`: the install phase's desc); onLog lines go to `logs`. */
async function run(name, payload, options = {}) {
  const response = await runSandbox(name, payload, { ...options, onLog: (entry) => logs.push(entry.line) });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return {
    body: JSON.parse(text),
    install: /install;desc="([^"]+)"/.exec(response.headers.get('server-timing') ?? '')?.[1],
  };
}

async function snapshotCount() {
  const response = await fetch(`${host.baseUrl}/v2/sandboxes/snapshots`, {
    headers: { authorization: `Bearer ${host.token}` },
  });
  return (await response.json()).snapshots.length;
}

test('without isolation, the second Run of a Definition starts from the prepared project instead of installing', async () => {
  logs = [];
  define('plain/prepared');
  const first = await run('plain/prepared', { title: 'First Run' });
  assert.deepEqual([first.install, first.body.slug], ['fresh', 'first-run']);
  assert.ok(
    await until(() => snapshotCount().then((n) => n === 1), 30_000),
    `the installed project was kept as a snapshot; reports: ${logs.join(' | ')}`,
  );
  const second = await run('plain/prepared', { title: 'Second Run' });
  assert.deepEqual([second.install, second.body.slug], ['prepared', 'second-run']);
  assert.deepEqual(
    logs.filter((line) => line.includes('was not kept')),
    [],
  );
});

test('without isolation, a kept Box (sandboxId) keeps its installed tree inside the Box and the next Run copies it', async () => {
  logs = [];
  define('plain/kept');
  const first = await run('plain/kept', { title: 'First Run' }, { sandboxId: 'plain-kept' });
  assert.equal(first.install, 'fresh');
  assert.deepEqual(
    logs.filter((line) => line.includes('could not be kept')),
    [],
  );
  assert.equal(first.body.kept?.length, 1, 'the prepared tree is in the Box directory, where its Runs see it');
  const second = await run('plain/kept', { title: 'Second Run' }, { sandboxId: 'plain-kept' });
  assert.deepEqual([second.install, second.body.slug], ['prepared', 'second-run']);
  assert.equal(await closeSandbox('plain-kept'), true);
});
