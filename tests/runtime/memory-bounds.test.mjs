// Memory bounded by the caps, not by the output (issue 9, item 2), measured in this process,
// which runs both the runtime and the in-process Box host: many runs printing 20 MiB each leave
// the heap where it was (stopped Boxes keep no logs), and a sparse result file far past
// maxOutputBytes is refused by its size before any of it is read.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox, useLocalHost } from '../support/local-host.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const MiB = 1024 * 1024;
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** Runs of the heap test: issue 9's figure. */
const RUNS = 50;

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  configureSandbox({});
  await host.close();
});

/** Runs `node args` from the repository (so `@vite-hub/sandbox` resolves to the built package). */
function runNode(args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: repoRoot, maxBuffer: 16 * MiB }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ stdout, stderr, code: error ? error.code : 0 });
    });
  });
}

function heapAfterGc() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

test('runs printing 20 MiB each leave the heap within 20 MiB of where it started', { timeout: 600_000 }, async () => {
  defineTestSandbox(
    'memory/loud',
    "export default () => { const line = 'y'.repeat(1024 * 1024 - 1) + '\\n'; for (let i = 0; i < 20; i += 1) process.stdout.write(line); return 'done'; };",
  );
  // One run first: the wasm, the Box host and the Definition are loaded and warm.
  assert.equal((await runSandbox('memory/loud')).status, 200);
  const start = heapAfterGc();
  for (let i = 0; i < RUNS; i += 1) {
    const response = await runSandbox('memory/loud');
    assert.equal(response.status, 200);
    assert.equal(await response.json(), 'done');
  }
  const grown = heapAfterGc() - start;
  assert.ok(grown < 20 * MiB, `the heap grew by ${(grown / MiB).toFixed(1)} MiB over ${RUNS} runs of 20 MiB`);
});

test('six concurrent Runs printing 64 MiB each fit in a 96 MiB heap that also holds the in-process Box host', {
  timeout: 300_000,
}, async () => {
  // A process of its own, with the heap bound: held output (a Run handle's history, the host's
  // replay) would crash it (it did, at one Run printing 60 MiB). Its cache is the suite's.
  const app = `
    import { configureSandbox, registerSandbox, runSandbox, closeLocalBoxHost } from '@vite-hub/sandbox';
    configureSandbox({ provider: 'local' });
    registerSandbox('memory/chatty', { files: [
      { path: 'package.json', content: '{"type":"module"}' },
      { path: 'index.mjs', content: "export default async () => { const chunk = ('z'.repeat(1023) + String.fromCharCode(10)).repeat(1024); for (let i = 0; i < 64; i += 1) await new Promise((done) => process.stdout.write(chunk, done)); return 'quiet now'; };" },
    ] });
    const responses = await Promise.all(Array.from({ length: 6 }, () => runSandbox('memory/chatty')));
    console.log(JSON.stringify(await Promise.all(responses.map(async (response) => [response.status, await response.text()]))));
    await closeLocalBoxHost();
  `;
  const { stdout, stderr, code } = await runNode(['--max-old-space-size=96', '--input-type=module', '-e', app]);
  assert.equal(code, 0, stderr.slice(-2000));
  assert.deepEqual(
    JSON.parse(stdout.trim().split('\n').pop()),
    Array.from({ length: 6 }, () => [200, '"quiet now"']),
  );
});

test('a sparse result file far past maxOutputBytes is SANDBOX_TRANSFER_LIMIT, read by its size only', async () => {
  // No frame on stdout (the harness is killed), so the result file is the fallback; 900 MiB of
  // holes (under the Box's 1 GiB file size limit), no disk used.
  defineTestSandbox(
    'memory/sparse',
    `import fs from 'node:fs';
     export default () => {
       const output = new URL('../.vite-hub/output.json', 'file://' + process.cwd() + '/').pathname;
       fs.writeFileSync(output, '');
       fs.truncateSync(output, 900 * 1024 * 1024);
       process.kill(process.pid, 'SIGKILL');
     };`,
  );
  const before = process.memoryUsage().rss;
  const response = await runSandbox('memory/sparse');
  const grown = process.memoryUsage().rss - before;
  const body = await response.json();
  assert.equal(response.status, 500, JSON.stringify(body));
  assert.equal(body.error.code, 'SANDBOX_TRANSFER_LIMIT', JSON.stringify(body));
  assert.equal(body.error.details.limit, 'maxOutputBytes');
  assert.ok(body.error.details.value >= 900 * MiB, JSON.stringify(body.error.details));
  assert.ok(grown < 64 * MiB, `RSS grew by ${(grown / MiB).toFixed(1)} MiB`);
});
