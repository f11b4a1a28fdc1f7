// Prepared projects in a kept Box (issue 12, items 1–2): Runs with one sandboxId install once per
// install digest; the Box keeps the installed trees in `.vite-hub-prepared/<digest>/` and each
// later Run gets its own copy. And a snapshot of a prepared project that cannot be saved is
// reported (onLog, else console.warn), never silent and never a failed Run. Real local Box host,
// real processes, real `npm ci` of small packages from the npm registry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { closeSandbox, configureSandbox, listSandboxes, runSandbox } from '@vite-hub/sandbox';
import { defineSlugifySandbox, until } from '../support/local-host.mjs';

// cwd is <Box cwd>/.vite-hub-runs/<run>/project: three levels up is the kept Box's cwd.
const INDEX = `import fs from 'node:fs';
export default async function (payload = {}) {
  const kept = '../../../.vite-hub-prepared';
  const file = 'node_modules/slugify/slugify.js';
  const seen = { tampered: fs.readFileSync(file, 'utf8').includes('TAMPERED'), extra: fs.existsSync('node_modules/extra.txt') };
  if (payload.tamper) {
    fs.appendFileSync(file, '\\n// TAMPERED');
    fs.writeFileSync('node_modules/extra.txt', 'x');
  }
  if (payload.damage) fs.rmSync(kept + '/' + payload.damage + '/tree/node_modules/slugify/slugify.js');
  if (payload.remove) fs.rmSync(kept + '/' + payload.remove, { recursive: true });
  if (payload.rewrite) {
    // In place: the kept tree's file keeps its size (and its record); only its content changes.
    const target = kept + '/' + payload.rewrite + '/tree/' + file;
    const size = fs.statSync(target).size;
    const evil = 'module.exports = () => "pwned";';
    fs.writeFileSync(target, evil + '/*' + ' '.repeat(size - evil.length - 4) + '*/');
  }
  if (payload.grow) {
    // One byte more, and record.json (writable by Runs too) edited to match.
    const dir = kept + '/' + payload.grow;
    fs.appendFileSync(dir + '/tree/' + file, ';module.exports = () => "pwned";');
    const record = JSON.parse(fs.readFileSync(dir + '/record.json', 'utf8'));
    if (typeof record.bytes === 'number') record.bytes += ';module.exports = () => "pwned";'.length;
    fs.writeFileSync(dir + '/record.json', JSON.stringify(record));
  }
  const slug = (await import('slugify')).default(payload.title ?? '', { lower: true });
  return { ...seen, slug, prepared: fs.existsSync(kept) ? fs.readdirSync(kept).sort() : null };
}`;

let host;
let stateDir;

before(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-kept-prepared-test-'));
  host = await startBoxHost({ stateDir });
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
});

after(async () => {
  configureSandbox({});
  await host?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** Registers `name` (its own package name, so each Definition has its own install digest). */
function define(name) {
  defineSlugifySandbox(name, INDEX);
  return listSandboxes().find((d) => d.name === name).install.digest;
}

/** One Run: `{ status, body, install, requestsAtResponse }` (`install`: the install phase's desc). */
async function run(name, payload, sandboxId, options = {}) {
  const response = await runSandbox(name, payload, { sandboxId, ...options });
  const requestsAtResponse = { ...host.counters().requests };
  const install = /install;desc="([^"]+)"/.exec(response.headers.get('server-timing') ?? '')?.[1];
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return { status: response.status, body: JSON.parse(text), install, requestsAtResponse };
}

test('Runs with one sandboxId install once per digest; a later Run copies the kept tree: write, copy, write, exec before its Response', async () => {
  const digest = define('kept/once');
  host.resetCounters();
  const first = await run('kept/once', { title: 'First Run' }, 'kp-once');
  assert.deepEqual([first.install, first.body.slug, first.body.prepared], ['fresh', 'first-run', [digest]]);
  assert.ok(
    await until(() => host.counters().requests.cmd === 3, 20_000),
    'waited for install, exec and the Run directory removal',
  );

  host.resetCounters();
  const second = await run('kept/once', { title: 'Second Run' }, 'kp-once');
  assert.deepEqual([second.install, second.body.slug], ['prepared', 'second-run']);
  // The kept Box is open: the project's files, the copy of the prepared tree (or, when the kept
  // tree is refused, a fresh install: the Definition's own scripts run, so the harness and the
  // input with the Run's nonce come only after it, run::stage::harness_files), those, the exec.
  // A plain JSON result is answered at its frame, so the Run directory's removal (a cmd sent once
  // the process exits) may already be counted then; the total below allows no fourth.
  const { cmd: cmdsAtResponse, ...writesAtResponse } = second.requestsAtResponse;
  assert.deepEqual(writesAtResponse, { 'fs/write': 2 });
  assert.ok(cmdsAtResponse === 2 || cmdsAtResponse === 3, `cmds at the Response: ${cmdsAtResponse}`);
  assert.ok(
    await until(() => host.counters().requests.cmd === 3, 20_000),
    'waited for the Run directory removal after the Response',
  );
  assert.deepEqual(host.counters().requests, { 'fs/write': 2, cmd: 3 });
  assert.equal(await closeSandbox('kp-once'), true);
});

test('a Run that writes into its node_modules changes nothing the next Run on the id sees', async () => {
  define('kept/tamper');
  const first = await run('kept/tamper', { tamper: true }, 'kp-tamper');
  assert.deepEqual([first.install, first.body.tampered, first.body.extra], ['fresh', false, false]);
  const second = await run('kept/tamper', { tamper: true }, 'kp-tamper');
  assert.deepEqual([second.install, second.body.tampered, second.body.extra], ['prepared', false, false]);
  const third = await run('kept/tamper', {}, 'kp-tamper');
  assert.deepEqual([third.install, third.body.tampered, third.body.extra], ['prepared', false, false]);
  assert.equal(await closeSandbox('kp-tamper'), true);
});

test('a damaged or removed kept tree falls back to a fresh install and the Run succeeds', async () => {
  const digest = define('kept/damaged');
  assert.equal((await run('kept/damaged', {}, 'kp-damaged')).install, 'fresh');
  // This Run deletes a file of the kept tree (its own copy is intact).
  assert.equal((await run('kept/damaged', { damage: digest }, 'kp-damaged')).install, 'prepared');
  const fallback = await run('kept/damaged', { title: 'Still Works' }, 'kp-damaged');
  assert.deepEqual(
    [fallback.install, fallback.body.slug, fallback.body.prepared],
    ['fresh-fallback', 'still-works', [digest]],
  );
  assert.equal((await run('kept/damaged', { remove: digest }, 'kp-damaged')).install, 'prepared');
  const fresh = await run('kept/damaged', { title: 'Again' }, 'kp-damaged');
  assert.deepEqual([fresh.install, fresh.body.slug], ['fresh', 'again']);
  assert.equal((await run('kept/damaged', {}, 'kp-damaged')).install, 'prepared');
  assert.equal(await closeSandbox('kp-damaged'), true);
});

test('a kept tree rewritten in place by a Run (same size, or record.json edited to match) is detected: the next Run installs the genuine package', async () => {
  const digest = define('kept/rewritten');
  assert.equal((await run('kept/rewritten', {}, 'kp-rewritten')).install, 'fresh');
  // This Run gets its own intact copy, then rewrites the kept tree's slugify.js keeping its size.
  const rewriting = await run('kept/rewritten', { title: 'Own Copy', rewrite: digest }, 'kp-rewritten');
  assert.deepEqual([rewriting.install, rewriting.body.slug], ['prepared', 'own-copy']);
  const after = await run('kept/rewritten', { title: 'Genuine Again' }, 'kp-rewritten');
  assert.deepEqual(
    [after.install, after.body.slug, after.body.prepared],
    ['fresh-fallback', 'genuine-again', [digest]],
  );
  assert.equal((await run('kept/rewritten', { title: 'Kept Again' }, 'kp-rewritten')).install, 'prepared');
  // A changed size with the record edited to match is caught too.
  assert.equal((await run('kept/rewritten', { grow: digest }, 'kp-rewritten')).install, 'prepared');
  const grown = await run('kept/rewritten', { title: 'Still Genuine' }, 'kp-rewritten');
  assert.deepEqual([grown.install, grown.body.slug], ['fresh-fallback', 'still-genuine']);
  assert.equal((await run('kept/rewritten', {}, 'kp-rewritten')).install, 'prepared');
  assert.equal(await closeSandbox('kp-rewritten'), true);
});

test('two digests on one id are kept side by side', async () => {
  const a = define('kept/two-a');
  const b = define('kept/two-b');
  assert.notEqual(a, b);
  assert.equal((await run('kept/two-a', {}, 'kp-two')).install, 'fresh');
  assert.equal((await run('kept/two-b', {}, 'kp-two')).install, 'fresh');
  const againA = await run('kept/two-a', {}, 'kp-two');
  const againB = await run('kept/two-b', {}, 'kp-two');
  assert.deepEqual([againA.install, againB.install], ['prepared', 'prepared']);
  assert.deepEqual(againB.body.prepared, [a, b].sort());
  assert.equal(await closeSandbox('kp-two'), true);
});

test('concurrent first Runs of one digest on one id install once', async () => {
  define('kept/concurrent');
  const runs = await Promise.all([0, 1, 2].map((i) => run('kept/concurrent', { title: `Run ${i}` }, 'kp-concurrent')));
  assert.deepEqual(
    runs.map((r) => r.body.slug),
    ['run-0', 'run-1', 'run-2'],
  );
  assert.deepEqual(runs.map((r) => r.install).sort(), ['fresh', 'prepared', 'prepared']);
  assert.equal(await closeSandbox('kp-concurrent'), true);
});

test('a prepared project whose snapshot cannot be saved is reported through onLog, else console.warn; the Run answers', async () => {
  const brokenState = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-kept-prepared-broken-'));
  const broken = await startBoxHost({ stateDir: brokenState });
  const warn = console.warn;
  try {
    configureSandbox({ provider: 'local', local: { baseUrl: broken.baseUrl, token: broken.token } });
    // The host's snapshot store: loaded, then replaced by a file, so taking a snapshot fails.
    const listed = await fetch(`${broken.baseUrl}/v2/sandboxes/snapshots`, {
      headers: { authorization: `Bearer ${broken.token}` },
    });
    assert.equal(listed.status, 200);
    fs.rmSync(path.join(brokenState, 'snapshots'), { recursive: true });
    fs.writeFileSync(path.join(brokenState, 'snapshots'), 'not a directory');

    define('kept/unsaved-log');
    const lines = [];
    const response = await runSandbox(
      'kept/unsaved-log',
      { title: 'Answered' },
      { onLog: (entry) => lines.push(entry) },
    );
    assert.equal(response.status, 200);
    assert.equal((await response.json()).slug, 'answered');
    assert.ok(
      await until(() => lines.some((l) => l.line.includes('was not kept')), 20_000),
      'waited for the report through onLog',
    );
    const reported = lines.find((l) => l.line.includes('was not kept'));
    assert.equal(reported.stream, 'stderr');
    assert.match(
      reported.line,
      /^\[vite-hub-sandbox\] The installed project of Sandbox "kept\/unsaved-log" was not kept: its snapshot failed: /,
    );
    // Both Boxes are stopped: the one whose snapshot failed, and the one the Run went on in.
    assert.ok(
      await until(() => (broken.counters().requests.stop ?? 0) === 2, 20_000),
      'waited for the Boxes stopped after the failed snapshot',
    );
    assert.ok(!lines.some((l) => l.line.includes('clean-up after a Run')), JSON.stringify(lines));

    define('kept/unsaved-warn');
    const warned = [];
    console.warn = (...args) => warned.push(args.join(' '));
    const quiet = await runSandbox('kept/unsaved-warn', { title: 'No Handle' });
    assert.equal(quiet.status, 200);
    assert.ok(
      await until(
        () => warned.some((w) => w.includes('"kept/unsaved-warn" was not kept: its snapshot failed')),
        20_000,
      ),
      'waited for the console.warn report',
    );
  } finally {
    console.warn = warn;
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
    await broken.close();
    fs.rmSync(brokenState, { recursive: true, force: true });
  }
});
