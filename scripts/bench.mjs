// Benchmarks of DESIGN.md §9, printed as figures (never asserted): the sizes of the runtime and
// tooling wasm modules, the import time of the runtime entry, requests per cold run, a warm run
// of a trivial Definition against a bare `node` child doing the same work, and 64 concurrent runs
// on the local provider (failures, host memory).
// Usage: node scripts/bench.mjs   (after `node scripts/build.mjs`)
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';

const run = promisify(execFile);
const repo = new URL('..', import.meta.url);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const kb = (bytes) => (bytes / 1024).toFixed(0);
for (const [label, file] of [['runtime', 'vite_hub_sandbox_bg.wasm'], ['tooling', 'vite_hub_sandbox_tooling_bg.wasm']]) {
  const wasm = readFileSync(new URL(`dist/wasm/${file}`, repo));
  console.log(`${label} wasm module: ${kb(wasm.length)} KB, ${kb(gzipSync(wasm).length)} KB gzipped`);
}

// The runtime entry's import time, measured inside fresh `node` children (same cwd and env for
// every sample; the first one also warms the OS file cache, as a server start after a deploy would).
const importSamples = [];
const importEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production' };
const importScript = "const t = performance.now(); await import('@vite-hub/sandbox'); console.log(performance.now() - t);";
for (let i = 0; i < 11; i += 1) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', importScript], { cwd: repo, env: importEnv });
  importSamples.push(Number(stdout));
}
const sorted = [...importSamples].sort((a, b) => a - b);
console.log(`import('@vite-hub/sandbox') in a fresh node, ${sorted.length} runs: min ${sorted[0].toFixed(1)} ms, median ${median(sorted).toFixed(1)} ms, max ${sorted.at(-1).toFixed(1)} ms`);

const host = await startBoxHost({});
configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
registerSandbox('bench/trivial', {
  files: [
    { path: 'package.json', content: '{"name":"trivial","type":"module"}' },
    { path: 'index.mjs', content: 'export default (payload) => ({ sum: payload.a + payload.b });' },
  ],
});

async function time(fn, rounds) {
  const samples = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

host.resetCounters();
await (await runSandbox('bench/trivial', { a: 1, b: 2 })).json();
console.log(`requests per cold run (no dependencies): ${host.counters().total} ${JSON.stringify(host.counters().requests)}`);

const rounds = 15;
const sandboxMs = await time(async () => (await runSandbox('bench/trivial', { a: 1, b: 2 })).json(), rounds);
const bareMs = await time(() => run('node', ['-e', 'console.log(JSON.stringify({ sum: 1 + 2 }))']), rounds);
console.log(`warm run, median of ${rounds}: runSandbox ${sandboxMs.toFixed(1)} ms, bare node child ${bareMs.toFixed(1)} ms, ratio ${(sandboxMs / bareMs).toFixed(2)} (isolation: ${host.executionAuthority.isolation})`);

const concurrent = 64;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage().rss); }, 20);
const started = performance.now();
const statuses = await Promise.all(Array.from({ length: concurrent }, (_, i) => runSandbox('bench/trivial', { a: i, b: 1 }).then((r) => r.status)));
clearInterval(sampler);
const failures = statuses.filter((status) => status !== 200).length;
console.log(`${concurrent} concurrent runs: ${failures} failures, ${(performance.now() - started).toFixed(0)} ms, peak host RSS ${(peakRss / 1048576).toFixed(0)} MiB`);
await host.close();
