// The entry's output reaches the caller before the result, whatever its size: a handler that
// prints far more than a pipe holds, without back-pressure, then returns, loses no line and keeps
// their order (the harness flushes process.stdout and process.stderr before the result frame,
// with no wall-clock cap; docs/internals/transfer.md "Envelopes"). The built package, a real local Box
// host, real processes; a concurrent CPU load on the machine slows the host's reading.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { startSandbox } from '@vite-hub/sandbox';
import { useLocalHost, defineTestSandbox } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

/** Busy threads until `stop()`: they compete with the Box host's reading of the pipes. */
function cpuLoad(threads) {
  const workers = [];
  for (let i = 0; i < threads; i += 1) {
    workers.push(new Worker('for (;;) Math.sqrt(Math.random());', { eval: true }));
  }
  return () => Promise.all(workers.map((worker) => worker.terminate()));
}

const LINES = 200_000; // about 20 MiB of stdout: a pipe (64 KiB) many hundred times over

test('every line a handler printed without back-pressure arrives through onLog, in order, before its result', async () => {
  defineTestSandbox(
    'order/flood',
    `export default (count) => {
      const pad = 'x'.repeat(90);
      for (let i = 0; i < count; i += 1) console.log('line ' + String(i).padStart(7, '0') + ' ' + pad);
      console.error('stderr last');
      return { printed: count };
    };`,
    { manifest: { vitehub: { sandbox: { timeout: 120_000 } } } },
  );
  const stop = cpuLoad(2);
  try {
    const stdout = [];
    const stderr = [];
    const run = startSandbox('order/flood', LINES, {
      onLog: ({ stream, line }) => (stream === 'stdout' ? stdout : stderr).push(line),
    });
    const response = await run.response();
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(await response.json(), { printed: LINES });
    await run.closed();
    assert.deepEqual(stderr, ['stderr last']);
    assert.equal(
      stdout.length,
      LINES,
      `${stdout.length} of ${LINES} lines arrived; the last: ${stdout.at(-1)?.slice(0, 12)}`,
    );
    const pad = 'x'.repeat(90);
    for (let i = 0; i < LINES; i += 1) {
      const expected = `line ${String(i).padStart(7, '0')} ${pad}`;
      if (stdout[i] !== expected) assert.fail(`line ${i} is ${JSON.stringify(stdout[i]?.slice(0, 12))}`);
    }
  } finally {
    await stop();
  }
});
