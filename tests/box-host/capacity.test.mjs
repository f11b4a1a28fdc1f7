// A host that runs what the machine can hold (issue 34, item 4): Boxes are admitted by their
// memory request, not their limit (box-queue.mjs, registry.mjs); a queued create waits as long as
// its own timeout and its client allow; spares count what they use, come back when work returns
// after they idled, and `parked().limitedBy` says why fewer than `parked.size` are ready.
import { test, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { SPARE_MEMORY_BYTES } from '../../pkg-template/box-host/engine/parked-boxes.mjs';
import { NO_BWRAP, defineTestSandbox, hostApi, until } from '../support/local-host.mjs';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const hosts = [];
const temps = [];
// Each test closes its hosts (each holds a process `exit` listener while it runs).
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/** A host of its own Box root (so its directories can be counted), closed after the test. */
async function hostWith(options) {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-capacity-'));
  temps.push(boxRoot);
  const host = await startBoxHost({ boxRoot, ...options });
  hosts.push(host);
  return Object.assign(host, {
    boxDirs: () => fs.readdirSync(boxRoot).filter((name) => name.startsWith('vite-hub-box-')),
  });
}

/** Creates a Box on `host` with `body`: `{ status, body }` (the session id in `body.session.id`). */
async function create(host, body = {}, signal) {
  const res = await fetch(`${host.baseUrl}/v3/sandboxes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  return { status: res.status, body: await res.json() };
}

const stop = (host, created) => hostApi(host, 'POST', `/v2/sandboxes/sessions/${created.body.session.id}/stop`);

/** A handler that holds its Box `ms` before it answers. */
defineTestSandbox(
  'capacity/hold',
  `export default async ({ ms }) => {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { held: ms };
};`,
);

test('128 concurrent Runs of a Definition that holds its Box 5 s all answer 200, and every Box is closed', {
  skip: NO_BWRAP,
  timeout: 900_000,
}, async () => {
  // The host's defaults (memory bound: this machine's memory; each Box counts 512 MiB), as the
  // in-process host runs them. On a 24 GB machine Boxes counted by their 4 GiB limit ran 5 at a
  // time, and the Runs still queued after the runtime's 60 s create bound answered 503.
  const host = await hostWith({});
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  const answers = await Promise.all(
    Array.from({ length: 128 }, async () => {
      const response = await runSandbox('capacity/hold', { ms: 5000 });
      return { status: response.status, body: await response.json() };
    }),
  );
  const failed = answers.filter((answer) => answer.status !== 200);
  assert.deepEqual(
    failed.slice(0, 3).map((answer) => answer.body.error),
    [],
    `${failed.length} of 128 Runs failed`,
  );
  assert.ok(answers.every((answer) => answer.body.held === 5000));
  // Every Box opened is closed; the spares (default 2) are made again once the work is done.
  assert.ok(await until(() => host.parked().ready === 2, 60_000), JSON.stringify(host.parked()));
  assert.ok(await until(() => host.boxDirs().length === 2), `left: ${host.boxDirs()}`);
});

test('Boxes are admitted by their memory request, not their limit, and the limit stays theirs', {
  skip: NO_BWRAP,
}, async () => {
  // 2 GiB of memory for all: four Boxes of the default request (512 MiB) run at once, though each
  // may use its own 4 GiB limit; a fifth waits.
  const host = await hostWith({ maxTotalMemoryBytes: 2 * GiB, parked: { size: 0 } });
  const created = await Promise.all(Array.from({ length: 4 }, () => create(host)));
  for (const answer of created) assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(created[0].body.session.memory, 4096, 'the session shows its limit, vcpus × 2048 MiB');
  if (created[0].body.session.limits.enforcedBy !== 'rlimit') {
    assert.equal(created[0].body.session.limits.memoryBytes, 4 * GiB, 'the cgroup bounds the Box at its limit');
  }
  const fifth = await create(host, { timeout: 1000 });
  assert.equal(fifth.status, 503, JSON.stringify(fifth.body));
  assert.match(fifth.body.error.message, /no Box slot became free within 1000ms \(the create's timeout/);
  await stop(host, created[0]);
  const next = await create(host, {});
  assert.equal(next.status, 200, 'a stopped Box frees its request');
  await Promise.all([...created.slice(1), next].map((answer) => stop(host, answer)));

  // A larger request: two at a time.
  const large = await hostWith({ maxTotalMemoryBytes: 2 * GiB, memoryRequestBytes: GiB, parked: { size: 0 } });
  const two = await Promise.all([create(large), create(large)]);
  assert.deepEqual(
    two.map((answer) => answer.status),
    [200, 200],
  );
  assert.equal((await create(large, { timeout: 500 })).status, 503);
  await Promise.all(two.map((answer) => stop(large, answer)));
});

test('a queued create waits until its own timeout passes or its client leaves: the host sets no wait bound of its own by default', {
  skip: NO_BWRAP,
}, async () => {
  const host = await hostWith({ maxBoxes: 1, parked: { size: 0 } });
  const held = await create(host);
  assert.equal(held.status, 200);
  // The client goes away: the create leaves the queue (the next one is not behind it).
  const gone = new AbortController();
  const leaving = create(host, {}, gone.signal).catch((error) => error.name);
  await new Promise((resolve) => setTimeout(resolve, 300));
  gone.abort();
  assert.equal(await leaving, 'AbortError');
  // The wait is bounded by the create's own timeout (here 1.5 s; a Run's Box asks for its
  // timeout plus 60 s, and the Run's own deadline ends the wait first).
  const bounded = await create(host, { timeout: 1500 }, AbortSignal.timeout(30_000));
  assert.equal(bounded.status, 503);
  assert.match(bounded.body.error.message, /within 1500ms \(the create's timeout/);
  await stop(host, held);
  const next = await create(host, {}, AbortSignal.timeout(30_000));
  assert.equal(next.status, 200, JSON.stringify(next.body));
  assert.equal(host.boxDirs().length, 1, 'no Box was made for the create that left');
  await stop(host, next);
});

test('a Run queued behind a busy host ends by its own timeout or signal, never SANDBOX_PROVIDER_UNAVAILABLE', {
  skip: NO_BWRAP,
}, async () => {
  const host = await hostWith({ maxBoxes: 1, parked: { size: 0 } });
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  defineTestSandbox('capacity/short', 'export default () => 1;', {
    manifest: { vitehub: { sandbox: { timeout: 2000 } } },
  });
  const held = await create(host);
  const timedOut = await runSandbox('capacity/short');
  assert.equal(timedOut.status, 504, await timedOut.clone().text());
  assert.equal((await timedOut.json()).error.code, 'SANDBOX_TIMEOUT');
  const controller = new AbortController();
  const running = runSandbox('capacity/hold', { ms: 1 }, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error('the client left')), 500);
  await assert.rejects(running, /the client left/);
  await stop(host, held);
  // Nothing of the two Runs waits or runs any more: the next Run gets the one slot at once.
  const ok = await runSandbox('capacity/hold', { ms: 1 });
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.ok(await until(() => host.boxDirs().length === 0), `left: ${host.boxDirs()}`);
});

test('spares count what they use, so parked.size is honoured under a memory bound no Box limit fits', {
  skip: NO_BWRAP,
}, async () => {
  // 1 GiB for all: a spare counted by its Box's 4 GiB limit never fit (none was made).
  const host = await hostWith({ maxTotalMemoryBytes: GiB, parked: { size: 4, idleMs: 60_000 } });
  assert.ok(await until(() => host.parked().ready === 4, 60_000), JSON.stringify(host.parked()));
  assert.equal(host.parked().limitedBy, null);
  // What a spare uses, by its Box cgroup (the peak so far, once its Node is up: at least 4 MiB),
  // is within what it counts.
  const { cgroup } = await hostFeatures();
  const read = (dir, v1, v2) => {
    const file =
      cgroup?.kind === 'cgroup-v1'
        ? path.join(cgroup.memory, dir, v1)
        : cgroup?.kind === 'cgroup-v2'
          ? path.join(cgroup.dir, dir, v2)
          : null;
    return file && fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : null;
  };
  const spares = host.boxDirs();
  if (spares.some((dir) => read(dir, 'memory.usage_in_bytes', 'memory.current') === null)) return;
  assert.ok(
    await until(() => spares.every((dir) => read(dir, 'memory.usage_in_bytes', 'memory.current') >= 4 * MiB), 30_000),
    'the parked Node processes did not start',
  );
  for (const dir of spares) {
    const peak = read(dir, 'memory.max_usage_in_bytes', 'memory.peak') ?? read(dir, '', 'memory.current');
    assert.ok(peak <= SPARE_MEMORY_BYTES, `a spare used ${peak} bytes`);
  }
});

test('host.parked() says why fewer spares than parked.size are ready', { skip: NO_BWRAP }, async () => {
  const slots = await hostWith({ maxBoxes: 2, parked: { size: 4, idleMs: 60_000 } });
  assert.ok(await until(() => slots.parked().limitedBy === 'maxBoxes'), JSON.stringify(slots.parked()));
  assert.equal(slots.parked().ready, 2);

  // Spares count 32 MiB each (at most a Box's request): two fit in 80 MiB, a third does not.
  const memory = await hostWith({
    maxTotalMemoryBytes: 80 * MiB,
    memoryRequestBytes: 32 * MiB,
    parked: { size: 4, idleMs: 60_000 },
  });
  assert.ok(await until(() => memory.parked().limitedBy === 'memory'), JSON.stringify(memory.parked()));
  assert.equal(memory.parked().ready, 2);

  const none = await hostWith({ isolation: 'none', parked: { size: 2 } });
  assert.deepEqual(
    { size: none.parked().size, limitedBy: none.parked().limitedBy },
    { size: 0, limitedBy: 'isolation' },
  );
  const off = await hostWith({ parked: { size: 0 } });
  assert.equal(off.parked().limitedBy, null);
});

test('spares retired after idleMs come back when work returns, while its first Run still runs', {
  skip: NO_BWRAP,
}, async () => {
  const host = await hostWith({ parked: { size: 1, idleMs: 300 } });
  assert.ok(await until(() => host.parked().ready === 1), JSON.stringify(host.parked()));
  assert.ok(await until(() => host.parked().limitedBy === 'idle'), JSON.stringify(host.parked()));
  assert.equal(host.parked().ready, 0);
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  // A Run that holds its Box until the test ends it: the spare is made beside it.
  const controller = new AbortController();
  const running = runSandbox('capacity/hold', { ms: 120_000 }, { signal: controller.signal }).catch((error) => error);
  const back = await until(() => host.parked().ready === 1, 60_000);
  controller.abort(new Error('done'));
  await running;
  assert.ok(back, `no spare was made while work ran again: ${JSON.stringify(host.parked())}`);
});

test('memoryRequestBytes and maxQueueWaitMs are checked', async () => {
  for (const value of [0, 1024, MiB + 0.5, 2 * 1024 ** 4, '512']) {
    await assert.rejects(
      startBoxHost({ isolation: 'none', memoryRequestBytes: value }).then((host) => host.close()),
      /memoryRequestBytes must be an integer number of bytes from 1048576 \(1 MiB\) to 1099511627776 \(1 TiB\)/,
    );
  }
  await assert.rejects(
    startBoxHost({ isolation: 'none', maxQueueWaitMs: -1 }).then((host) => host.close()),
    /maxQueueWaitMs must be an integer/,
  );
});
