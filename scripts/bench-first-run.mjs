// The bench's first figures of a fresh Node (scripts/bench.mjs `import` and `firstRun`): the
// package's import, its first and second Run (their Server-Timing), the same after `warmUp()`, and
// how long after its last Run the process exits on its own.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { na, serverTiming, stats } from './bench-stats.mjs';
import { TRIVIAL_ENTRY } from './bench-definitions.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));

/**
 * A fresh node: import, first and second Run (Server-Timing of both); with `warm`, warmUp() first.
 * Then it leaves the in-process host open and exits on its own: `exitMs` is how long after its
 * last Run the process ended (what holds the event loop then: tests/runtime/process-exit.test.mjs).
 */
const FIRST_RUN_SCRIPT = `
// The ESM loader starts on a process's first dynamic import, whatever it imports: paid first, on a
// one-line module, so importMs is the package's own cost (what an app that already imports pays).
const tLoader = performance.now();
await import('data:text/javascript,export default 1');
const loaderMs = performance.now() - tLoader;
const t0 = performance.now();
const sandbox = await import('@vite-hub/sandbox');
const importMs = performance.now() - t0;
let warmUpMs = null;
if (process.argv[1] === 'warm') {
  if (typeof sandbox.warmUp !== 'function') { console.log(JSON.stringify({ importMs, loaderMs, noWarmUp: true })); process.exit(0); }
  const t = performance.now();
  await sandbox.warmUp();
  warmUpMs = performance.now() - t;
}
sandbox.registerSandbox('trivial', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: ${JSON.stringify(TRIVIAL_ENTRY)} },
] });
const runs = [];
for (let i = 0; i < 2; i += 1) {
  const t = performance.now();
  const response = await sandbox.runSandbox('trivial', { a: 1, b: 2 });
  await response.text();
  if (response.status !== 200) throw new Error('status ' + response.status);
  runs.push({ ms: performance.now() - t, timing: response.headers.get('server-timing') });
}
const last = performance.now();
process.on('exit', () => process.stdout.write(JSON.stringify({ importMs, loaderMs, warmUpMs, runs, exitMs: performance.now() - last }) + '\\n'));
`;

async function firstRunChild(mode, env) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', FIRST_RUN_SCRIPT, mode], {
    cwd: repo,
    env,
    timeout: 120_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/**
 * The `import` and `firstRun` figures: fresh nodes started interleaved (cold, warm, warm, cold, …),
 * `reps.firstRun` of each mode, and at least `reps.import` imports in all.
 * @param {{ reps: { import: number, firstRun: number }, env: Record<string, string> }} options
 */
export async function importAndFirstRun({ reps, env }) {
  const importMs = [];
  const loaderMs = [];
  const cold = { first: [], second: [], ratio: [], host: [], connect: [], exit: [] };
  const warm = { warmUp: [], first: [], second: [], ratio: [], exit: [] };
  let warmUpMissing = false;
  // Interleaved children: cold, warm, warm, cold, … (same environment, same cwd).
  for (let i = 0; i < Math.max(reps.firstRun, Math.ceil(reps.import / 2)); i += 1) {
    for (const mode of i % 2 === 0 ? ['cold', 'warm'] : ['warm', 'cold']) {
      const result = await firstRunChild(mode, env);
      importMs.push(result.importMs);
      loaderMs.push(result.loaderMs);
      if (i >= reps.firstRun) continue;
      if (result.noWarmUp) {
        warmUpMissing = true;
        continue;
      }
      const [first, second] = result.runs;
      const target = mode === 'cold' ? cold : warm;
      target.first.push(first.ms);
      target.second.push(second.ms);
      target.ratio.push(first.ms / second.ms);
      target.exit.push(result.exitMs);
      if (mode === 'cold') {
        const phases = serverTiming(first.timing);
        cold.host.push(phases.host ?? NaN);
        cold.connect.push(phases.connect ?? NaN);
      } else {
        warm.warmUp.push(result.warmUpMs);
      }
    }
  }
  const phase = (values, name) =>
    values.some(Number.isFinite) ? stats(values) : na(`the first Run's Server-Timing has no \`${name}\` phase`);
  return {
    import: { ms: stats(importMs), loaderStartMs: stats(loaderMs) },
    firstRun: {
      cold: {
        firstMs: stats(cold.first),
        secondMs: stats(cold.second),
        firstOverSecond: stats(cold.ratio),
        hostMs: phase(cold.host, 'host'),
        connectMs: phase(cold.connect, 'connect'),
        exitMs: stats(cold.exit),
      },
      afterWarmUp: warmUpMissing
        ? na('this build exports no warmUp()')
        : {
            warmUpMs: stats(warm.warmUp),
            firstMs: stats(warm.first),
            secondMs: stats(warm.second),
            firstOverSecond: stats(warm.ratio),
            exitMs: stats(warm.exit),
          },
    },
  };
}
