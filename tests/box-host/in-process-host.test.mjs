// The host's in-process side (issue 34, item 3): `host.fetch` answers the routes without a socket
// or a token while the HTTP server at `baseUrl` still refuses requests without the token; and a
// parked Node imports the harness it was given (startBoxHost `harness`) before its handover,
// running it only for a staged harness of exactly that text.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { packTar } from 'modern-tar';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { BoxRegistry } from '../../pkg-template/box-host/engine/registry.mjs';
import { hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { NO_BWRAP, until } from '../support/local-host.mjs';

const closing = [];
const temps = [];
after(async () => {
  await Promise.all(closing.map((close) => close()));
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

test('host.fetch answers in process without a token; over HTTP the token is still required', async () => {
  const host = await startBoxHost({ parked: { size: 0 } });
  closing.push(() => host.close());
  const inProcess = await host.fetch(new Request(`${host.baseUrl}/_vite-hub/counters`));
  assert.equal(inProcess.status, 200);
  assert.deepEqual(await inProcess.json(), { requests: {}, total: 0 });
  // A create, a write of a plain tar and a streamed command, all in process.
  const created = await host.fetch(
    new Request(`${host.baseUrl}/v2/sandboxes`, { method: 'POST', body: JSON.stringify({ timeout: 60_000 }) }),
  );
  assert.equal(created.status, 200);
  const { session } = await created.json();
  const tar = await packTar([{ header: { name: 'hello.txt', size: 2 }, body: 'hi' }]);
  const written = await host.fetch(
    new Request(`${host.baseUrl}/v2/sandboxes/sessions/${session.id}/fs/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-tar', 'x-cwd': '/vercel/sandbox' },
      body: tar,
    }),
  );
  assert.equal(written.status, 200, await written.clone().text());
  const cmd = await host.fetch(
    new Request(`${host.baseUrl}/v2/sandboxes/sessions/${session.id}/cmd`, {
      method: 'POST',
      body: JSON.stringify({ command: 'cat', args: ['hello.txt'], wait: true }),
    }),
  );
  assert.equal(cmd.headers.get('content-type'), 'application/x-ndjson');
  const lines = (await cmd.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(lines.at(-1).command.exitCode, 0, JSON.stringify(lines));
  assert.equal(lines.find((line) => line.stream === 'stdout')?.data, 'hi');
  const stopped = await host.fetch(
    new Request(`${host.baseUrl}/v2/sandboxes/sessions/${session.id}/stop`, { method: 'POST' }),
  );
  assert.equal(stopped.status, 200);
  assert.deepEqual(host.counters().requests, { create: 1, 'fs/write': 1, cmd: 1, stop: 1 });
  // The HTTP server: no token, a wrong one, or the in-process call's lack of one, is 401.
  for (const headers of [{}, { authorization: 'Bearer not-the-token' }, { authorization: 'Bearer ' }]) {
    const refused = await fetch(`${host.baseUrl}/_vite-hub/counters`, { headers });
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.code, 'unauthorized');
  }
  const allowed = await fetch(`${host.baseUrl}/_vite-hub/counters`, {
    headers: { authorization: `Bearer ${host.token}` },
  });
  assert.equal(allowed.status, 200);
});

test('an aborted in-process create rejects and leaves no Box', async () => {
  const host = await startBoxHost({ parked: { size: 0 } });
  closing.push(() => host.close());
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(
    host.fetch(new Request(`${host.baseUrl}/v2/sandboxes`, { method: 'POST', body: '{}', signal: controller.signal })),
    { name: 'AbortError' },
  );
  assert.deepEqual(host.counters().requests, {});
});

/** A harness stand-in: at import it marks the Box directory; run, it prints how it was run. */
const HARNESS = `import fs from 'node:fs';
fs.writeFileSync(process.cwd() + '/imported-at-park', String(process.argv.length));
const main = () => process.stdout.write('preloaded main ' + process.argv.slice(2).join(' '));
const handOver = globalThis[Symbol.for('vite-hub-sandbox:parked-harness')];
if (typeof handOver === 'function') handOver(main);
else main();
`;

test('a parked Node imports the given harness before its handover and runs it for that text only', {
  skip: NO_BWRAP,
  timeout: 60_000,
}, async () => {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-preloaded-'));
  temps.push(boxRoot);
  const registry = new BoxRegistry({
    boxRoot,
    isolation: 'bubblewrap',
    maxBoxes: 4,
    features: await hostFeatures(),
    spares: true,
    parked: { size: 1, idleMs: 60_000, harness: HARNESS },
  });
  closing.push(() => registry.stopAll());
  const runIn = async (box, text) => {
    const archive = gzipSync(
      await packTar([{ header: { name: '.vite-hub/harness.mjs', size: Buffer.byteLength(text) }, body: text }]),
    );
    await box.writeArchive('/vercel/sandbox', archive);
    const command = box.runCommand({ command: 'node', args: ['.vite-hub/harness.mjs', 'input'] });
    assert.equal(await command.waitExit(), 0, JSON.stringify(command.logs));
    return command.logs.map((entry) => entry.data).join('');
  };
  for (const [staged, expected] of [
    [HARNESS, 'preloaded main input'],
    // Any other text is imported from the Box at the handover, as `node` would.
    [`process.stdout.write('from the Box ' + process.argv.slice(2).join(' '));`, 'from the Box input'],
  ]) {
    assert.ok(await until(() => registry.parked.readyCount === 1), 'no spare was made');
    const box = await registry.create({});
    assert.ok(box.hasParked, 'the create took the spare');
    // Imported before any command of the Box: its mark is there already (argv: node and the parked script).
    const mark = path.join(box.workDirHost, 'imported-at-park');
    assert.ok(await until(() => fs.existsSync(mark)), 'the parked process did not import the harness');
    assert.equal(fs.readFileSync(mark, 'utf8'), '3');
    assert.equal(await runIn(box, staged), expected);
    assert.equal(box.handedOver, true);
    await box.stop();
  }
});
