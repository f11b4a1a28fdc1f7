// No Run leaks on the caller's heap (issue 32, item 5): 1,000 Runs in one process used to leave
// one AbortController and seven wasm-bindgen closures each (timers whose `once_into_js` callback
// was cleared and never called, and `JsFuture`s of waits that never settled). A child process
// started with --expose-gc runs them (support/many-runs.mjs) against a Box host in this process
// and reports live counts after GC; the counts, not a time, must stay flat.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startBoxHost } from '@vite-hub/sandbox/box-host';

const RUNS = 1_000;
const WARM_RUNS = 100;
const KiB = 1024;

let host;
before(async () => {
  host = await startBoxHost({});
});
after(async () => {
  await host.close();
});

/**
 * Runs support/many-runs.mjs in `node --expose-gc`; its `{ warm, end }` counts. V8's optimizing
 * tiers are off there: the code they compile over the first Runs (about 1 MiB) is not the Runs'.
 */
function manyRuns() {
  const script = fileURLToPath(new URL('../support/many-runs.mjs', import.meta.url));
  const env = {
    ...process.env,
    BOX_HOST_URL: host.baseUrl,
    BOX_HOST_TOKEN: host.token,
    RUNS: String(RUNS),
    WARM_RUNS: String(WARM_RUNS),
  };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--no-opt', '--no-maglev', '--no-sparkplug', script],
      { env, maxBuffer: 1024 * KiB },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the Runs failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1)));
      },
    );
  });
}

test('1,000 Runs leave no AbortController, closure or heap behind them', { timeout: 600_000 }, async () => {
  const { warm, end } = await manyRuns();
  const runs = RUNS - WARM_RUNS;
  const detail = JSON.stringify({ warm, end });
  assert.ok(end.controllers - warm.controllers <= 4, `live AbortControllers grew over ${runs} Runs: ${detail}`);
  assert.ok(end.closures - warm.closures <= 8, `live wasm-bindgen closures grew over ${runs} Runs: ${detail}`);
  // 2.2 KiB a Run before the fix (issue 32); GC leaves a few hundred KiB of noise either way.
  assert.ok(
    end.heapBytes - warm.heapBytes < runs * KiB,
    `the heap after GC grew by ${((end.heapBytes - warm.heapBytes) / KiB).toFixed(0)} KiB over ${runs} Runs: ${detail}`,
  );
});
