// The bench's size and startup figures (scripts/bench.mjs `sizes`, `startup`, `compile`):
//   - the upload of three Workers as `wrangler deploy --dry-run` reports it (`Total Upload: … /
//     gzip: N KiB`, the figure the Worker-size tests assert): the repository's Worker
//     (wrangler.toml, Rust on crates/worker; its build step compiles it), the minimal JS Worker on
//     the package (tests/fixtures/cloudflare/minimal-worker/) and the same Run written by hand on
//     @cloudflare/sandbox alone (tests/fixtures/cloudflare/hand-written-worker/);
//   - each Worker's startup CPU in workerd, by `wrangler check startup --worker <bundle>`: it
//     loads the dry run's upload into workerd (miniflare), starts the V8 CPU profiler, imports
//     the main module inside a first request and stops the profiler; the figure is the profile's
//     time outside `(idle)` samples (ms). The Workers' runs are interleaved;
//   - the runtime wasm's compile CPU in Node: in a fresh `node` each time, the CPU time of the
//     process (process.cpuUsage, every thread) across `new WebAssembly.Module(bytes)` of dist's
//     runtime wasm (what the package's Node entry does at import, wasm-node.mjs initSync), the
//     bytes read before the clock; and of `new WebAssembly.Instance` after it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { offlineWranglerEnv, uploadGzipKiB } from '../tests/support/cloudflare-worker.mjs';
import { interleavedSamples, na, stats } from './bench-stats.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const wrangler = path.join(repo, 'node_modules/.bin/wrangler');

/** The Workers measured, by key: where their wrangler config is, and what they are. */
export const WORKERS = {
  repository: { dir: repo, label: "the repository's Worker (Rust, wrangler.toml)" },
  minimalJs: {
    dir: path.join(repo, 'tests/fixtures/cloudflare/minimal-worker'),
    label: 'a minimal JS Worker on the package',
  },
  handWritten: {
    dir: path.join(repo, 'tests/fixtures/cloudflare/hand-written-worker'),
    label: 'the same Run hand-written on @cloudflare/sandbox',
  },
};

/** One line for the output and the page: what the startup figure is. */
export const STARTUP_METHOD =
  "`wrangler check startup --worker <the dry run's upload>` (wrangler 4.86): workerd (miniflare) loads the upload, the V8 CPU profiler starts, a first request imports the main module, the profiler stops; the figure is the profile's time outside `(idle)` samples, in ms (the profiler's own sampling: about 1 ms or coarser); what workerd does before the profiler starts (loading the upload) is not in the figure";
export const COMPILE_METHOD =
  "a fresh `node` per sample: CPU time of the process (process.cpuUsage, all threads) across `new WebAssembly.Module(bytes)` of dist/wasm/vite_hub_sandbox_bg.wasm (what the package's Node entry does at import), the file read before the clock; then across `new WebAssembly.Instance` of it";

/**
 * `wrangler deploy --dry-run` of the Worker in `dir`, offline (tests/support/cloudflare-worker.mjs),
 * its upload written as one bundle file for `wrangler check startup`. Resolves to `{ gzipKiB,
 * bundle, work }` (the caller removes `work`).
 */
async function dryRun(dir, timeout) {
  const work = mkdtempSync(path.join(os.tmpdir(), 'vite-hub-bench-worker-'));
  const bundle = path.join(work, 'worker.bundle');
  try {
    const { stdout, stderr } = await run(
      wrangler,
      ['deploy', '--dry-run', '--outdir', path.join(work, 'out'), '--outfile', bundle],
      { cwd: dir, env: offlineWranglerEnv(path.join(work, 'config')), timeout, maxBuffer: 64 << 20 },
    );
    return { gzipKiB: uploadGzipKiB(`${stdout}\n${stderr}`), bundle, work };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

/** The startup CPU (ms) of one `wrangler check startup` of `bundle`: the profile's non-idle time. */
async function startupCpuMs(bundle, work) {
  const profileFile = path.join(work, 'startup.cpuprofile');
  await run(wrangler, ['check', 'startup', '--worker', bundle, '--outfile', profileFile], {
    cwd: work,
    env: offlineWranglerEnv(path.join(work, 'config')),
    timeout: 120_000,
    maxBuffer: 16 << 20,
  });
  const profile = JSON.parse(readFileSync(profileFile, 'utf8'));
  rmSync(profileFile, { force: true });
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    if (!idle.has(id)) busyUs += profile.timeDeltas[i] ?? 0;
  });
  return busyUs / 1000;
}

/** `{ gzipKiB, previousKiB?, changeKiB? }` against the previous bench's figure of the same key. */
function withChange(gzipKiB, previous) {
  const before = previous?.gzipKiB;
  return typeof before === 'number'
    ? { gzipKiB, previousKiB: before, changeKiB: Math.round((gzipKiB - before) * 100) / 100 }
    : { gzipKiB, changeKiB: null };
}

/**
 * The Worker sizes and startup CPU. `previous`: the `workers.sizes` of the last bench (for the
 * change), `quick`: the repository's Worker is not built (its build step compiles the Rust
 * Worker: minutes). Resolves to `{ sizes: key → {gzipKiB, changeKiB} | {na}, startup: { method,
 * key → ms figure, differenceMs: key → figure of the per-round difference to handWritten } }`.
 * @param {{ reps: number, quick: boolean, previous?: Record<string, { gzipKiB?: number }> }} options
 */
export async function workerFigures({ reps, quick, previous = {} }) {
  const built = {};
  const sizes = {};
  try {
    for (const [key, worker] of Object.entries(WORKERS)) {
      if (key === 'repository' && quick) {
        sizes[key] = na(
          'quick mode: its build step compiles the Rust Worker (cargo, worker-build --release: minutes); the full bench measures it',
        );
        continue;
      }
      try {
        built[key] = await dryRun(worker.dir, key === 'repository' ? 1_800_000 : 120_000);
        sizes[key] = withChange(built[key].gzipKiB, previous[key]);
      } catch (error) {
        sizes[key] = na(
          `wrangler deploy --dry-run failed: ${String(error.stderr || error.message)
            .trim()
            .slice(-300)}`,
        );
      }
    }
    const startup = { method: STARTUP_METHOD };
    if (!built.handWritten) {
      for (const key of Object.keys(WORKERS)) startup[key] = na('the hand-written Worker did not build');
      return { sizes, startup };
    }
    const sides = Object.fromEntries(
      Object.entries(built).map(([key, { bundle, work }]) => [key, () => startupCpuMs(bundle, work)]),
    );
    const samples = await interleavedSamples(reps, sides);
    startup.differenceMs = {};
    for (const key of Object.keys(WORKERS)) {
      startup[key] = samples[key] ? stats(samples[key]) : sizes[key];
      if (key !== 'handWritten')
        startup.differenceMs[key] = samples[key]
          ? stats(samples[key].map((ms, i) => ms - samples.handWritten[i]))
          : sizes[key];
    }
    return { sizes, startup };
  } finally {
    for (const { work } of Object.values(built)) rmSync(work, { recursive: true, force: true });
  }
}

const COMPILE_SCRIPT = `
const bytes = require('node:fs').readFileSync(process.argv[1]);
const c0 = process.cpuUsage();
const t0 = performance.now();
const module = new WebAssembly.Module(bytes);
const wallMs = performance.now() - t0;
const c1 = process.cpuUsage(c0);
const imports = {};
for (const i of WebAssembly.Module.imports(module)) {
  imports[i.module] ??= {};
  imports[i.module][i.name] = i.kind === 'function' ? () => {} : i.kind === 'memory' ? new WebAssembly.Memory({ initial: 1 }) : undefined;
}
const c2 = process.cpuUsage();
new WebAssembly.Instance(module, imports);
const c3 = process.cpuUsage(c2);
const ms = (u) => (u.user + u.system) / 1000;
console.log(JSON.stringify({ cpuMs: ms(c1), wallMs, instanceCpuMs: ms(c3) }));
`;

/**
 * The runtime wasm's compile CPU in Node, `reps` fresh processes (COMPILE_METHOD). `{ method,
 * bytes, cpuMs, wallMs, instanceCpuMs }`, or `{ na }` when dist has no runtime wasm.
 */
export async function compileFigures({ reps, env }) {
  const wasm = path.join(repo, 'dist/wasm/vite_hub_sandbox_bg.wasm');
  let bytes;
  try {
    bytes = readFileSync(wasm).length;
  } catch (error) {
    return na(`no runtime wasm in dist/ (${error.code}): run node scripts/build.mjs`);
  }
  const out = { cpu: [], wall: [], instance: [] };
  for (let i = 0; i < reps; i += 1) {
    const { stdout } = await run(process.execPath, ['-e', COMPILE_SCRIPT, wasm], { env, timeout: 60_000 });
    const result = JSON.parse(stdout);
    out.cpu.push(result.cpuMs);
    out.wall.push(result.wallMs);
    out.instance.push(result.instanceCpuMs);
  }
  return {
    method: COMPILE_METHOD,
    bytes,
    cpuMs: stats(out.cpu),
    wallMs: stats(out.wall),
    instanceCpuMs: stats(out.instance),
  };
}
