// The benchmark of issues 12 and 25 (and DESIGN.md §9): prints figures and writes them as JSON; it
// never passes or fails on a figure. Both sides of every ratio run interleaved (A B, B A, …) in the
// same process or with the same environment, each stopping its clock at its own parsed result with
// any Box stop after both clocks (CLOCK_RULE), the hosts settling untimed between samples
// (SETTLE_RULE); every figure is a min / median / max of several runs. It needs the clone's dist/
// (`node scripts/build.mjs`) and node_modules/, nothing of target/.
//
// Figures (keys of the JSON file):
//   machine     where they came from: cores, CPU model, node, load average at the start and the
//               end, isolation, commit (and whether the work tree had uncommitted changes)
//   method      the clock and settle rules in force
//   wasm        bytes and gzipped bytes of the runtime and tooling wasm modules, with the change
//               of the gzipped bytes since the bench that wrote bench/latest.json before
//   workers     the upload of the repository's Worker, a minimal JS Worker on the package and the
//               same Run hand-written on @cloudflare/sandbox (`wrangler deploy --dry-run`, gzip
//               KiB, change since the last bench) and their startup CPU in workerd (`wrangler
//               check startup`), interleaved (bench-workers.mjs)
//   compile     the runtime wasm's compile CPU in a fresh Node (bench-workers.mjs)
//   install     bytes of `npm i --omit=dev <packed tarball>` in an empty directory (node_modules)
//   import      ms of `import('@vite-hub/sandbox')` in a fresh node (bench-first-run.mjs)
//   firstRun    in a fresh node: first and second Run, and the same after `warmUp()`
//   servers     a freshly started built Nitro server and `vite dev` of examples/app, and `vite
//               dev` from its port accepting to its first 200 (bench-servers.mjs)
//   requests    requests to the Box host per Run: cold and prepared, without and with deps, the
//               SDK by hand, and a prepared Run with deps taking a Box of `warmPool`
//   sdkFlow     per delay added to every request (25 and 0 ms, a proxy): runSandbox against the
//               official @vercel/sandbox SDK by hand (bench-sdk.mjs: create, write, [npm ci], run,
//               read), cold and prepared, without and with deps; the prepared Run with deps, and
//               one from `warmPool`, against that flow from a snapshot made once by hand; on the
//               bench's host with its parked processes (its default, which only this package's
//               harness can take)
//   sdkFlowParkedOff  the same on a host with `parked: { size: 0 }`: the figure that stands for
//               real Vercel, which has no parked Node
//   warmVsBare  a warm local Run on the host's default (parked processes, when the build has them)
//               and on a host with `parked: { size: 0 }`, against a `node` in a Box of the host's
//               own code (bench-warm.mjs, bench-bare-node.mjs): pre-started and waiting for a
//               signal (the physical limit of a parked exec) and bare (started on the clock), four
//               ways interleaved; how many of the warm Runs ran in a parked process
//               (host.parked()); the same Runs back to back, without settling (`backToBack`); in
//               that Box the harness command against a three-line runner
//   fullRunVsExec  a warm Run of the trivial Definition against one `node` exec on a Box created
//               and written before the clock (the SDK), same host
//   concurrency 1/8/32/128 concurrent Runs of a Definition that holds its Box (5 s; 0.3 s in
//               --quick, 1 and 8 only): failures, p50/p99 latency, wall time per Run
//               (bench-concurrency.mjs)
// A figure that cannot be measured here says so: `{ "na": "<why>" }`, printed as `n/a (why)`.
// Targets (bench-comparisons.mjs TARGETS) are printed beside their figures, never asserted.
//
// Usage: node scripts/bench.mjs [--quick] [--out FILE] [--write-docs [--from FILE]]
//   --quick       fewer repetitions and concurrency levels (proves the script runs; figures are
//                 rough); scripts/test.sh runs it once as a smoke check (scripts/bench-check.mjs)
//   --out         the JSON file (default bench/latest.json)
//   --write-docs  also writes docs/benchmarks.md and its chart docs/benchmarks.svg
//                 (bench-docs.mjs, bench-chart.mjs): figures in the docs are generated, never pasted
//   --from FILE   with --write-docs: the page and chart from that JSON file of an earlier run,
//                 measuring nothing
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { closeLocalBoxHost, closeWarmPools } from '@vite-hub/sandbox';
import { renderChart } from './bench-chart.mjs';
import {
  CLOCK_RULE,
  comparisons,
  concurrencyTargets,
  panels,
  TARGETS,
  targetNote,
  WORKER_LABELS,
} from './bench-comparisons.mjs';
import { concurrencyFigures } from './bench-concurrency.mjs';
import { configureLocal, freshDefinition, filesOf, payloadOf, runOnce, TRIVIAL_PAYLOAD } from './bench-definitions.mjs';
import { CHART_FILE, renderBenchmarks } from './bench-docs.mjs';
import { importAndFirstRun } from './bench-first-run.mjs';
import { sdkExecOnPreparedBox, sdkFlow, sdkFromSnapshot, sdkSnapshot, startDelayProxy } from './bench-sdk.mjs';
import { serverFirstRequests } from './bench-servers.mjs';
import { settle, SETTLE_RULE } from './bench-settle.mjs';
import { interleaved, interleavedSamples, na, ratioStats, show, stats } from './bench-stats.mjs';
import { startParkedOffHost, warmVsBare } from './bench-warm.mjs';
import { compileFigures, workerFigures } from './bench-workers.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    'write-docs': { type: 'boolean', default: false },
    from: { type: 'string' },
  },
});
const quick = flags.quick;
const outFile = path.resolve(flags.out ?? path.join(repo, 'bench', 'latest.json'));
/** The generated page of the figures (`--write-docs`), and its chart beside it. */
const DOCS_FILE = path.join(repo, 'docs', 'benchmarks.md');
const CHART_PATH = path.join(repo, 'docs', CHART_FILE);

/** Writes docs/benchmarks.md and docs/benchmarks.svg from `figures` (the JSON this bench writes). */
function writeDocs(figures) {
  mkdirSync(path.dirname(DOCS_FILE), { recursive: true });
  writeFileSync(DOCS_FILE, renderBenchmarks(figures));
  const m = figures.machine;
  const caption = `commit ${m.commit}${m.uncommitted ? ' (uncommitted changes)' : ''}, ${m.date.slice(0, 10)}; ${m.nproc} cores, ${m.cpu}; load ${m.loadAverage.join(' ')} → ${m.loadAverageAtEnd.join(' ')}${m.quick ? '; quick mode' : ''}`;
  writeFileSync(CHART_PATH, renderChart(comparisons(figures), { caption, panels: panels(figures) }));
  for (const file of [DOCS_FILE, CHART_PATH]) console.log(`wrote ${path.relative(process.cwd(), file) || file}`);
}

if (flags.from !== undefined) {
  if (!flags['write-docs'])
    throw new TypeError('--from FILE only goes with --write-docs (the page from an earlier run)');
  writeDocs(JSON.parse(readFileSync(flags.from, 'utf8')));
  process.exit(0);
}

/** Repetitions of each side of a ratio (rounds), by figure. */
const REPS = quick
  ? {
      import: 2,
      firstRun: 1,
      servers: 1,
      sdkNoDeps: 1,
      sdkDeps: 1,
      preparedDeps: 1,
      warm: 2,
      harness: 2,
      exec: 2,
      backToBack: 2,
      startup: 1,
      compile: 2,
    }
  : {
      import: 11,
      firstRun: 9,
      servers: 5,
      sdkNoDeps: 9,
      sdkDeps: 3,
      preparedDeps: 9,
      warm: 15,
      harness: 41,
      exec: 15,
      backToBack: 6,
      startup: 7,
      compile: 11,
    };
/** Runs per back-to-back block (warmVsBare.backToBack). */
const BACK_TO_BACK_RUNS = quick ? 2 : 10;
const CONCURRENCY = quick ? [1, 8] : [1, 8, 32, 128];
/** The bench's host allows 128 Boxes (the default is 64), in --quick too. */
const HOST_MAX_BOXES = 128;
/** How long the concurrency rows' Definition holds its Box (ms). */
const HOLD_MS = quick ? 300 : 5000;
/** The delays of the SDK rows: --quick keeps one (the code path is the same). */
const DELAYS_MS = quick ? [25] : [25, 0];
/** The figures of the bench that wrote bench/latest.json before this one (sizes' change), or {}. */
const previousFigures = (() => {
  try {
    return JSON.parse(readFileSync(path.join(repo, 'bench', 'latest.json'), 'utf8'));
  } catch {
    return {};
  }
})();
/** The environment of every child this bench starts (the same on both sides of a ratio). */
const CHILD_ENV = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: os.tmpdir() };
/** The pool a pooled Run takes its Box from (`configureSandbox({ warmPool })`, issue 25). */
const WARM_POOL = { size: 1, idleMs: 15_000 };
/**
 * Closes the warm pools' Boxes, awaited, before the config (and the proxy) that opened them goes:
 * configureSandbox would close them in the background, through a proxy the bench closes next.
 */
const closePools = () => closeWarmPools();
const log = (line) => console.log(line);
/** Seconds each part of the bench took (printed at the end: --quick must stay short). */
const took = [];
let partStarted = performance.now();
/** Ends the part named `name` (its seconds go to `took`). */
const part = (name) => {
  const now = performance.now();
  took.push(`${name} ${((now - partStarted) / 1000).toFixed(1)}`);
  partStarted = now;
};
const loadAverage = () => os.loadavg().map((v) => Math.round(v * 100) / 100);

// ---------------------------------------------------------------------------------------------
// The figures.

async function machine(host) {
  const git = (args) =>
    run('git', args, { cwd: repo }).then(
      ({ stdout }) => stdout.trim(),
      () => null,
    );
  const commit = await git(['rev-parse', '--short', 'HEAD']);
  const changes = await git(['status', '--porcelain', '--untracked-files=no']);
  return {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: loadAverage(),
    isolation: host.executionAuthority.isolation === 'process' ? 'bubblewrap' : 'none',
    commit,
    uncommitted: Boolean(changes),
    date: new Date().toISOString(),
    quick,
  };
}

function wasmSizes() {
  const sizes = {};
  for (const [label, file] of [
    ['runtime', 'vite_hub_sandbox_bg.wasm'],
    ['tooling', 'vite_hub_sandbox_tooling_bg.wasm'],
  ]) {
    const bytes = readFileSync(path.join(repo, 'dist', 'wasm', file));
    const gzipBytes = gzipSync(bytes).length;
    const before = previousFigures.wasm?.[label]?.gzipBytes;
    sizes[label] = {
      bytes: bytes.length,
      gzipBytes,
      ...(typeof before === 'number' ? { previousGzipBytes: before, changeGzipBytes: gzipBytes - before } : {}),
    };
  }
  return sizes;
}

async function installSize() {
  const work = mkdtempSync(path.join(os.tmpdir(), 'vite-hub-bench-install-'));
  try {
    const { stdout } = await run(
      'npm',
      ['pack', path.join(repo, 'dist'), '--pack-destination', work, '--json', '--silent'],
      { cwd: work, maxBuffer: 16 << 20 },
    );
    const tarball = path.join(work, JSON.parse(stdout)[0].filename);
    const app = path.join(work, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), '{"name":"bench-install","private":true}\n');
    await run(
      'npm',
      ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball],
      { cwd: app, timeout: 300_000, maxBuffer: 16 << 20 },
    );
    const du = async (target) => Number((await run('du', ['-sb', target])).stdout.split('\t')[0]);
    const lock = JSON.parse(readFileSync(path.join(app, 'node_modules', '.package-lock.json'), 'utf8'));
    const packages = Object.keys(lock.packages).filter((key) => key.startsWith('node_modules/')).length;
    return { nodeModulesBytes: await du(path.join(app, 'node_modules')), tarballBytes: await du(tarball), packages };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Requests the host counted for one Run: before its Response resolved (and the creates among
 * them), and in all once the hosts settled (its Box's stop, a pool's refill).
 */
async function countRequests(host, name, payload) {
  await settle([host]);
  host.resetCounters();
  const { phases } = await runOnce(name, payload);
  const atResponse = host.counters();
  await settle([host]);
  const { total, requests } = host.counters();
  return {
    beforeResponse: atResponse.total,
    createsBeforeResponse: atResponse.requests.create ?? 0,
    total,
    requests,
    installed: 'install' in phases,
  };
}

/**
 * Why a Run did not take a pooled Box: it created one before its Response (`creates`, of
 * `requests` before it, `routes` by name when known); null when it created none.
 */
const notPooled = (creates, requests, routes) =>
  creates > 0
    ? `with warmPool the prepared Run still created its Box before its Response (${requests} requests${routes ? ` ${JSON.stringify(routes)}` : ''}): no pooled Box was taken`
    : null;

/**
 * Configures `warmPool` on the host at `baseUrl`, prepares a fresh Definition with a dependency
 * (its cold Run, then a prepared one, after which the pool holds a Box) and counts the requests
 * of the next Run. `{ name, counted }`, or `{ na }` when the build refuses the option or the Run
 * took no pooled Box. The caller configures back.
 */
async function preparePooled(host, baseUrl) {
  const refused = configureLocal(baseUrl, host.token, { warmPool: WARM_POOL });
  if (refused) return na(refused);
  const name = freshDefinition('deps');
  for (let i = 0; i < 2; i += 1) {
    await runOnce(name, payloadOf('deps'));
    await settle([host]);
  }
  const counted = await countRequests(host, name, payloadOf('deps'));
  const why = notPooled(counted.createsBeforeResponse, counted.beforeResponse, counted.requests);
  return why ? na(why) : { name, counted };
}

async function requestCounts(host) {
  const out = {};
  for (const kind of ['trivial', 'deps']) {
    const payload = payloadOf(kind);
    const name = freshDefinition(kind);
    const cold = await countRequests(host, name, payload);
    const again = await countRequests(host, name, payload);
    const label = kind === 'deps' ? 'WithDeps' : 'NoDeps';
    out[`cold${label}`] = cold;
    out[`prepared${label}`] =
      kind === 'deps' && again.installed
        ? na(
            `no prepared-project cache here: the second Run of the same project installed again (${again.total} requests)`,
          )
        : again;
    // The hand-written SDK flow, for comparison (it installs on every run).
    await settle([host]);
    host.resetCounters();
    await sdkFlow({
      baseUrl: host.baseUrl,
      token: host.token,
      files: filesOf(kind, 'sdk'),
      payload,
      install: kind === 'deps',
    });
    const sdk = host.counters();
    out[`sdkFlow${label}`] = { total: sdk.total, requests: sdk.requests };
  }
  try {
    const pooled = await preparePooled(host, host.baseUrl);
    out.pooledWithDeps = pooled.na ? pooled : pooled.counted;
  } finally {
    await closePools();
    configureLocal(host.baseUrl, host.token);
  }
  return out;
}

/** Whether this build has a prepared-project cache: the second Run of a project with deps does not install. */
async function hasPreparedCache() {
  const name = freshDefinition('deps');
  await runOnce(name, payloadOf('deps'));
  return !('install' in (await runOnce(name, payloadOf('deps'))).phases);
}

/**
 * A side that runs `name` and resolves to its ms, after checking that it took a pooled Box (its
 * Server-Timing says `box;desc="warm"`). Not by the host's counters: a plain JSON result is
 * answered at its frame, so the pool's refill create may already be counted by then.
 */
const pooledSide = (name) => async () => {
  const { ms, timing } = await runOnce(name, payloadOf('deps'));
  if (!/\bbox;desc="warm"/.test(timing))
    throw Object.assign(new Error(`with warmPool the prepared Run took no pooled Box (Server-Timing: ${timing})`), {
      notPooled: true,
    });
  return ms;
};

/** `interleaved(…)`, or `{ na }` when the pooled side found no pooled Box. */
async function pooledPair(reps, a, b, between) {
  try {
    return await interleaved(reps, a, b, between);
  } catch (error) {
    if (error.notPooled) return na(error.message);
    throw error;
  }
}

/** The SDK rows with a dependency (npm ci, the snapshot, warmPool), by figures key. */
const DEPS_SCENARIOS = ['coldWithDeps', 'preparedWithDeps', 'preparedVsSnapshot', 'pooledWithDeps', 'pooledVsSnapshot'];

/**
 * runSandbox against the SDK flows on `host`, per delay of DELAYS_MS. `skipDeps` (a reason):
 * the rows with a dependency say n/a with it (--quick on its second host: the same code path).
 * @param {Partial<Awaited<ReturnType<typeof startBoxHost>>>} host
 * @param {{ skipDeps?: string }} [options]
 */
async function sdkComparison(host, { skipDeps } = {}) {
  configureLocal(host.baseUrl, host.token);
  const prepared = skipDeps ? false : await hasPreparedCache();
  const between = () => settle([host]);
  // The user's snapshot, made once by hand (no delay: it is not timed).
  const snapshotId = skipDeps
    ? undefined
    : await sdkSnapshot({ baseUrl: host.baseUrl, token: host.token, files: filesOf('deps', 'sdk') });
  const result = {};
  for (const delayMs of DELAYS_MS) {
    const proxy = await startDelayProxy(host.baseUrl, delayMs);
    configureLocal(proxy.url, host.token);
    const figures = {};
    const flow = (kind) => ({
      baseUrl: proxy.url,
      token: host.token,
      files: filesOf(kind, 'sdk'),
      payload: payloadOf(kind),
    });
    const snapshotSide = () => sdkFromSnapshot({ ...flow('deps'), snapshotId });
    try {
      if (skipDeps) {
        for (const key of DEPS_SCENARIOS) figures[key] = na(skipDeps);
      }
      for (const kind of skipDeps ? ['trivial'] : ['trivial', 'deps']) {
        const withDeps = kind === 'deps';
        const reps = withDeps ? REPS.sdkDeps : REPS.sdkNoDeps;
        const sdkSide = () => sdkFlow({ ...flow(kind), install: withDeps });
        const label = withDeps ? 'WithDeps' : 'NoDeps';
        // cold: a project never run before on this host; prepared: one run once already.
        figures[`cold${label}`] = await interleaved(
          reps,
          async () => (await runOnce(freshDefinition(kind), payloadOf(kind))).ms,
          sdkSide,
          between,
        );
        if (withDeps && !prepared) {
          figures[`prepared${label}`] = na(
            'no prepared-project cache here: a second Run of the same project installs again',
          );
          continue;
        }
        const name = freshDefinition(kind);
        await runOnce(name, payloadOf(kind));
        const preparedSide = async () => (await runOnce(name, payloadOf(kind))).ms;
        figures[`prepared${label}`] = await interleaved(reps, preparedSide, sdkSide, between);
        // What a user gets from one snapshot made by hand, without this package (issue 25).
        if (withDeps)
          figures.preparedVsSnapshot = await interleaved(REPS.preparedDeps, preparedSide, snapshotSide, between);
      }
      if (!prepared && !skipDeps)
        figures.preparedVsSnapshot = na(
          'no prepared-project cache here: a second Run of the same project installs again',
        );
      const pooled = skipDeps ? na(skipDeps) : await preparePooled(host, proxy.url);
      if (pooled.na) {
        figures.pooledWithDeps = pooled;
        figures.pooledVsSnapshot = pooled;
      } else {
        const side = pooledSide(pooled.name);
        figures.pooledWithDeps = await pooledPair(
          REPS.preparedDeps,
          side,
          () => sdkFlow({ ...flow('deps'), install: true }),
          between,
        );
        figures.pooledVsSnapshot = await pooledPair(REPS.preparedDeps, side, snapshotSide, between);
      }
    } finally {
      await closePools();
      configureLocal(host.baseUrl, host.token);
      await proxy.close();
    }
    result[`delay${delayMs}ms`] = figures;
  }
  return result;
}

/** A warm Run of the trivial Definition against one `node` exec on a prepared Box, same host. */
async function fullRunVsExec(host) {
  const name = freshDefinition('trivial');
  await runOnce(name, TRIVIAL_PAYLOAD);
  const exec = () =>
    sdkExecOnPreparedBox({
      baseUrl: host.baseUrl,
      token: host.token,
      files: filesOf('trivial', 'sdk'),
      payload: TRIVIAL_PAYLOAD,
    });
  await exec();
  await settle([host]);
  const pair = await interleaved(
    REPS.exec,
    async () => (await runOnce(name, TRIVIAL_PAYLOAD)).ms,
    exec,
    () => settle([host]),
  );
  return { runMs: pair.a, execMs: pair.b, ratio: pair.ratio };
}

// ---------------------------------------------------------------------------------------------
// Printing.

/** One comparison's line: both sides, the ratio of interleaved pairs and its target. */
function printComparison(c) {
  if (c.na) log(`${c.title}: n/a (${c.na})${c.target === undefined ? '' : `; ${targetNote(undefined, c.target)}`}`);
  else
    log(
      `${c.title}: ${c.labels[0]} ${show(c.a)}; ${c.labels[1]} ${show(c.b)}; ratio ${show(c.ratio, '')}${c.target === undefined ? '' : `; ${targetNote(c.ratio, c.target)}`}`,
    );
}

// ---------------------------------------------------------------------------------------------

// A private state dir: the bench's prepared projects neither come from nor stay in the user's cache.
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'vhs-bench-state-'));
const host = await startBoxHost({ maxBoxes: HOST_MAX_BOXES, stateDir });
/** The same host with `parked: { size: 0 }`: what stands for real Vercel, which has no parked Node. */
let parkedOff = await startParkedOffHost(stateDir);
configureLocal(host.baseUrl, host.token);
const isolation = host.executionAuthority.isolation === 'process' ? 'bubblewrap' : 'none';
const figures = {};
try {
  figures.machine = await machine(host);
  figures.method = { clock: CLOCK_RULE, settle: SETTLE_RULE };
  const m = figures.machine;
  log(
    `machine: ${m.nproc} cores, ${m.cpu}, node ${m.node}, ${m.platform}, load ${m.loadAverage.join(' ')}, isolation ${isolation}; ${m.date.slice(0, 16)}Z, commit ${m.commit}${m.uncommitted ? ' with uncommitted changes' : ''}${quick ? ' (quick mode)' : ''}`,
  );
  log(`clock: ${CLOCK_RULE}`);
  log(`settling: ${SETTLE_RULE}`);

  figures.wasm = wasmSizes();
  const change = (bytes) => (bytes === undefined ? 'no earlier figure' : `${bytes >= 0 ? '+' : ''}${bytes} bytes`);
  for (const [label, size] of Object.entries(figures.wasm))
    log(
      `${label} wasm module: ${(size.bytes / 1024).toFixed(1)} KiB, ${(size.gzipBytes / 1024).toFixed(1)} KiB gzipped (${size.gzipBytes} bytes; since the last bench: ${change(size.changeGzipBytes)})`,
    );
  figures.compile = await compileFigures({ reps: REPS.compile, env: CHILD_ENV });
  if (figures.compile.na) log(`runtime wasm compile CPU in Node: n/a (${figures.compile.na})`);
  else
    log(
      `runtime wasm compile CPU in Node (new WebAssembly.Module, fresh node): ${show(figures.compile.cpuMs)}; ${targetNote(figures.compile.cpuMs, TARGETS.compileCpuMs, ' ms')}; wall ${show(figures.compile.wallMs)}; then new WebAssembly.Instance: ${show(figures.compile.instanceCpuMs)} CPU`,
    );
  part('wasm sizes and compile');
  figures.workers = await workerFigures({
    reps: REPS.startup,
    quick,
    previous: previousFigures.workers?.sizes,
  });
  for (const [key, size] of Object.entries(figures.workers.sizes))
    log(
      `Worker upload, ${WORKER_LABELS[key]} (wrangler deploy --dry-run): ${size.na ? `n/a (${size.na})` : `${size.gzipKiB} KiB gzipped (since the last bench: ${size.changeKiB === null ? 'no earlier figure' : `${size.changeKiB >= 0 ? '+' : ''}${size.changeKiB} KiB`}); ${targetNote(size.gzipKiB, TARGETS.workerGzipKiB, ' KiB')}`}`,
    );
  const startup = figures.workers.startup;
  log(`Worker startup CPU in workerd: ${startup.method}`);
  for (const key of Object.keys(WORKER_LABELS))
    log(
      `  ${WORKER_LABELS[key]}: ${show(startup[key])}${key === 'handWritten' ? '' : `; minus the hand-written one, per round: ${show(startup.differenceMs[key])}; ${targetNote(startup.differenceMs[key], TARGETS.startupOverHandWrittenMs, ' ms')}`}`,
    );

  part('workers');
  figures.install = await installSize();
  log(
    `install of the packed package alone (npm i --omit=dev): ${(figures.install.nodeModulesBytes / 1e6).toFixed(2)} MB in node_modules, ${figures.install.packages} packages; tarball ${(figures.install.tarballBytes / 1e6).toFixed(2)} MB`,
  );

  part('install');
  const early = await importAndFirstRun({ reps: REPS, env: CHILD_ENV });
  figures.import = early.import;
  figures.firstRun = early.firstRun;
  log(
    `import('@vite-hub/sandbox') in a fresh node: ${show(figures.import.ms)} (before it, the ESM loader's start on a one-line module: ${show(figures.import.loaderStartMs)})`,
  );
  const cold = figures.firstRun.cold;
  log(
    `first Run in a fresh node: ${show(cold.firstMs)}; second: ${show(cold.secondMs)}; first/second: ${show(cold.firstOverSecond, '')}`,
  );
  log(
    `  first Run's Server-Timing host: ${show(cold.hostMs)}; connect: ${show(cold.connectMs)}; the process exited ${show(cold.exitMs)} after its last Run`,
  );
  const warm = figures.firstRun.afterWarmUp;
  if (warm.na) log(`after warmUp(): n/a (${warm.na})`);
  else
    log(
      `after warmUp() (${show(warm.warmUpMs)}): first Run ${show(warm.firstMs)}; second ${show(warm.secondMs)}; first/second ${show(warm.firstOverSecond, '')}; exited ${show(warm.exitMs)} after its last Run`,
    );

  part('import and first Run');
  figures.servers = await serverFirstRequests({ reps: REPS.servers, env: CHILD_ENV });
  for (const [kind, value] of Object.entries(figures.servers)) {
    if (kind === 'devListening') {
      log(
        `vite dev, fresh start, from its port accepting to the first 200 (nothing warmed): ${show(value.listenToFirst200Ms)}; requests sent until that 200: ${show(value.attempts, '')}`,
      );
      continue;
    }
    const label = kind === 'built' ? 'built server (SANDBOX_PROVIDER=local)' : 'vite dev';
    log(`${label}, fresh start: first request ${show(value.firstRequestMs)}; second ${show(value.secondRequestMs)}`);
    log(
      `  its Runs' Server-Timing: first ${show(value.firstRunMs)}; second ${show(value.secondRunMs)}; first/second ${show(value.firstOverSecondRun, '')}; first requests with a host or connect phase: ${value.firstUsePhases}`,
    );
  }

  part('servers');
  figures.requests = await requestCounts(host);
  for (const [label, value] of Object.entries(figures.requests)) {
    const target =
      label === 'pooledWithDeps'
        ? `; ${targetNote(value.na ? undefined : value.beforeResponse, TARGETS.pooledRequestsBeforeResponse)}`
        : '';
    if (value.na) log(`requests per Run, ${label}: n/a (${value.na})${target}`);
    else if (label.startsWith('sdkFlow'))
      log(`requests per run, ${label} (the SDK by hand): ${value.total} ${JSON.stringify(value.requests)}`);
    else
      log(
        `requests per Run, ${label}: ${value.beforeResponse} before the Response, ${value.total} in all ${JSON.stringify(value.requests)}${target}`,
      );
  }

  part('requests');
  figures.sdkFlow = await sdkComparison(host);
  part('SDK rows');
  figures.sdkFlowParkedOff = parkedOff.na
    ? parkedOff
    : await sdkComparison(parkedOff, {
        skipDeps: quick
          ? 'quick mode: the rows with a dependency run on the default host alone (the same code path); the full bench runs them here too'
          : undefined,
      });
  configureLocal(host.baseUrl, host.token);
  part('SDK rows, parked off');
  figures.warmVsBare = await warmVsBare(host, parkedOff, isolation, REPS, BACK_TO_BACK_RUNS);
  part('warm Runs');
  figures.fullRunVsExec = await fullRunVsExec(host);
  part('full Run vs exec');
  for (const c of comparisons(figures)) printComparison(c);
  const bare = figures.warmVsBare;
  log(
    `parked processes: ${bare.parking.how}; warm Run, default host / parked: { size: 0 } host: ${show(bare.gain, '')}`,
  );
  const b2b = /** @type {{ na?: string, runs?: number, parkedMs?: object, parkedOffMs?: object, ratio?: object }} */ (
    bare.backToBack
  );
  if (b2b.na) log(`  back-to-back warm Runs: n/a (${b2b.na})`);
  else
    log(
      `  back-to-back warm Runs (no settle, blocks of ${b2b.runs}): default host ${show(b2b.parkedMs)}; parked: { size: 0 } host ${show(b2b.parkedOffMs)}; ratio of block medians ${show(b2b.ratio, '')}`,
    );
  if (bare.harness.na) log(`  in the same Box, the harness command vs the three-line runner: n/a (${bare.harness.na})`);
  else
    log(
      `  in the same Box, the harness command vs the three-line runner: harness ${show(bare.harness.harnessMs)}; runner ${show(bare.harness.runnerMs)}; ratio ${show(bare.harness.ratio, '')}`,
    );

  // Only the bench's host runs Boxes now: the other one is closed first.
  if (!parkedOff.na) await parkedOff.close();
  parkedOff = na('closed before the concurrency rows');
  figures.concurrency = await concurrencyFigures({
    levels: CONCURRENCY,
    holdMs: HOLD_MS,
    between: () => settle([host]),
  });
  log(`concurrent Runs of a Definition that holds its Box ${HOLD_MS} ms (the host allows ${HOST_MAX_BOXES} Boxes):`);
  for (const [n, value] of Object.entries(figures.concurrency.levels))
    log(
      `  ${n} at once: ${value.ok} answered 200, ${value.failures} failed${value.failures ? ` ${JSON.stringify(value.failureCounts)}` : ''}; latency p50 ${value.p50Ms} ms, p99 ${value.p99Ms} ms (${show(value.latencyMs)}); wall ${value.wallMs} ms, ${value.wallMsPerRun} ms per Run`,
    );
  for (const line of concurrencyTargets(figures.concurrency)) log(`  ${line}`);
  for (const note of figures.concurrency.notes ?? []) log(`  note: ${note}`);
  part('concurrency');
  m.loadAverageAtEnd = loadAverage();
  log(`load at the end: ${m.loadAverageAtEnd.join(' ')}`);
  log(`seconds per part: ${took.join(', ')}`);
} finally {
  if (!parkedOff.na) await parkedOff.close();
  await host.close();
  await closeLocalBoxHost();
  rmSync(stateDir, { recursive: true, force: true });
}

mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(figures, null, 2)}\n`);
log(`wrote ${path.relative(process.cwd(), outFile) || outFile}`);
if (flags['write-docs']) writeDocs(figures);
