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
//   wasm        bytes and gzipped bytes of the runtime and tooling wasm modules
//   install     bytes of `npm i --omit=dev <packed tarball>` in an empty directory (node_modules)
//   import      ms of `import('@vite-hub/sandbox')` in a fresh node (bench-first-run.mjs)
//   firstRun    in a fresh node: first and second Run, and the same after `warmUp()`
//   servers     a freshly started built Nitro server and `vite dev` of examples/app
//               (bench-servers.mjs)
//   requests    requests to the Box host per Run: cold and prepared, without and with deps, the
//               SDK by hand, and a prepared Run with deps taking a Box of `warmPool`
//   sdkFlow     per delay added to every request (25 and 0 ms, a proxy): runSandbox against the
//               official @vercel/sandbox SDK by hand (bench-sdk.mjs: create, write, [npm ci], run,
//               read), cold and prepared, without and with deps; the prepared Run with deps, and
//               one from `warmPool`, against that flow from a snapshot made once by hand
//   warmVsBare  a warm local Run on the host's default (parked processes, when the build has them)
//               and on a host with `parked: { size: 0 }`, against a bare `node` command in a Box of
//               the host's own code (bench-bare-node.mjs), three ways interleaved; how many of the
//               warm Runs ran in a parked process (host.parked()); the same Runs back to back,
//               without settling (`backToBack`); in that Box the harness command against a
//               three-line runner
//   fullRunVsExec  a warm Run of the trivial Definition against one `node` exec on a Box created
//               and written before the clock (the SDK), same host
//   concurrency 1/8/32/64/128 concurrent Runs: failures and wall time
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
import * as sandboxExports from '@vite-hub/sandbox';
import { closeLocalBoxHost, configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { openBareNodeBox } from './bench-bare-node.mjs';
import { renderChart } from './bench-chart.mjs';
import { CLOCK_RULE, comparisons, TARGETS, targetNote } from './bench-comparisons.mjs';
import { freshDefinition, filesOf, payloadOf, runOnce, TRIVIAL_ENTRY, TRIVIAL_PAYLOAD } from './bench-definitions.mjs';
import { CHART_FILE, renderBenchmarks } from './bench-docs.mjs';
import { importAndFirstRun } from './bench-first-run.mjs';
import { sdkExecOnPreparedBox, sdkFlow, sdkFromSnapshot, sdkSnapshot, startDelayProxy } from './bench-sdk.mjs';
import { serverFirstRequests } from './bench-servers.mjs';
import { settle, SETTLE_RULE } from './bench-settle.mjs';
import { interleaved, interleavedSamples, na, ratioStats, show, stats } from './bench-stats.mjs';

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
  writeFileSync(CHART_PATH, renderChart(comparisons(figures), { caption }));
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
      sdkNoDeps: 2,
      sdkDeps: 1,
      preparedDeps: 2,
      warm: 3,
      harness: 3,
      exec: 3,
      backToBack: 2,
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
    };
/** Runs per back-to-back block (warmVsBare.backToBack). */
const BACK_TO_BACK_RUNS = quick ? 4 : 10;
const CONCURRENCY = quick ? [1, 8] : [1, 8, 32, 64, 128];
const DELAYS_MS = [25, 0];
/** The environment of every child this bench starts (the same on both sides of a ratio). */
const CHILD_ENV = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: os.tmpdir() };
/** The pool a pooled Run takes its Box from (`configureSandbox({ warmPool })`, issue 25). */
const WARM_POOL = { size: 1, idleMs: 15_000 };
/**
 * Closes the warm pools' Boxes, awaited, before the config (and the proxy) that opened them goes:
 * configureSandbox would close them in the background, through a proxy the bench closes next. A
 * build without `warmPool` has no pools.
 */
const closePools = async () => sandboxExports.closeWarmPools?.();
const log = (line) => console.log(line);
const loadAverage = () => os.loadavg().map((v) => Math.round(v * 100) / 100);

/** Sends the Runs of this process to the host at `baseUrl`, with `extra` config; null, or why it was refused. */
function configureLocal(baseUrl, token, extra = {}) {
  try {
    configureSandbox({ provider: 'local', local: { baseUrl, token }, ...extra });
    return null;
  } catch (error) {
    return `configureSandbox refuses ${Object.keys(extra).join(', ')}: ${error.message}`;
  }
}

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
    sizes[label] = { bytes: bytes.length, gzipBytes: gzipSync(bytes).length };
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
 * A side that runs `name` and resolves to its ms, after checking (host counters) that it took a
 * pooled Box: the hosts settled before it, so what the host counted up to its Response is its own.
 */
const pooledSide = (host, name) => async () => {
  const before = host.counters();
  const { ms } = await runOnce(name, payloadOf('deps'));
  const after = host.counters();
  const why = notPooled((after.requests.create ?? 0) - (before.requests.create ?? 0), after.total - before.total);
  if (why) throw Object.assign(new Error(why), { notPooled: true });
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

async function sdkComparison(host) {
  const prepared = await hasPreparedCache();
  const between = () => settle([host]);
  // The user's snapshot, made once by hand (no delay: it is not timed).
  const snapshotId = await sdkSnapshot({ baseUrl: host.baseUrl, token: host.token, files: filesOf('deps', 'sdk') });
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
      for (const kind of ['trivial', 'deps']) {
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
      if (!prepared)
        figures.preparedVsSnapshot = na(
          'no prepared-project cache here: a second Run of the same project installs again',
        );
      const pooled = await preparePooled(host, proxy.url);
      if (pooled.na) {
        figures.pooledWithDeps = pooled;
        figures.pooledVsSnapshot = pooled;
      } else {
        const side = pooledSide(host, pooled.name);
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

/**
 * Whether the default host's warm Runs ran in parked processes: its own count (`host.parked()`,
 * Boxes whose first command was a parked process) over the Runs it served since `before`.
 */
function parkingSeen(host, before, runs) {
  if (typeof host.parked !== 'function')
    return { inEffect: false, how: "not in effect: this build's host has no parked processes (no host.parked())" };
  const report = host.parked();
  const handedOver = report.handedOver - before;
  const how = `${handedOver} of ${runs} warm Runs ran in a parked process (host.parked(): size ${report.size}, idleMs ${report.idleMs}${report.lastError ? `, last error: ${report.lastError}` : ''})`;
  return { inEffect: handedOver > 0, handedOver, runs, how };
}

/**
 * A host with `parked: { size: 0 }` (its own state dir under `stateDir`), or `{ na }` when the build refuses the option.
 * @returns {Promise<Partial<Awaited<ReturnType<typeof startBoxHost>>> & { na?: string }>}
 */
async function startParkedOffHost(stateDir) {
  try {
    return await startBoxHost({ stateDir: mkdtempSync(path.join(stateDir, 'parked-off-')), parked: { size: 0 } });
  } catch (error) {
    return na(`startBoxHost({ parked: { size: 0 } }) throws: ${error.message}`);
  }
}

/** The harness command against the three-line runner in the bare node Box, or `{ na }` when it fails. */
async function harnessVsRunner(bare) {
  try {
    await bare.harnessOnce();
    // More pairs than the Run row: the two sides differ by a few ms of ~45, within one pair's noise.
    const pair = await interleaved(REPS.harness, bare.harnessOnce, bare.once);
    return { harnessMs: pair.a, runnerMs: pair.b, ratio: pair.ratio };
  } catch (error) {
    return na(
      `the harness of crates/core/src/harness/harness.mjs, run as a Run's command, failed: ${error.message.slice(0, 200)}`,
    );
  }
}

/**
 * The warm Run of a trivial Definition on `host` (its default: parked processes when the build
 * has them) and on a second host started with `parked: { size: 0 }`, against a bare node command
 * in a Box of the host's own code: three sides interleaved, the Runs configured to their host
 * before each sample (untimed, the same for both). Parked processes are counted on the default
 * host alone, then on both.
 */
async function warmVsBare(host, isolation, stateDir) {
  const name = freshDefinition('trivial');
  const runOn = (target) => async () => {
    configureLocal(target.baseUrl, target.token);
    return (await runOnce(name, TRIVIAL_PAYLOAD)).ms;
  };
  await runOn(host)();
  await settle([host]);
  const parkedOff = await startParkedOffHost(stateDir);
  const hosts = parkedOff.na ? [host] : [host, parkedOff];
  try {
    const bare = await openBareNodeBox({ isolation, entry: TRIVIAL_ENTRY, payload: TRIVIAL_PAYLOAD });
    try {
      if (!parkedOff.na) await runOn(parkedOff)();
      await bare.once();
      await settle(hosts);
      const handedOverBefore = host.parked?.().handedOver ?? 0;
      const sides = { run: runOn(host), bare: bare.once, ...(parkedOff.na ? {} : { parkedOff: runOn(parkedOff) }) };
      const samples = await interleavedSamples(REPS.warm, sides, () => settle(hosts));
      // A Box's stop is counted once it stopped: settled above, after the last sample.
      const parking = parkingSeen(host, handedOverBefore, samples.run.length);
      const withParkedOff = (figure) => (parkedOff.na ? parkedOff : figure());
      return {
        isolation,
        parking,
        backToBack: parkedOff.na ? parkedOff : await backToBack(runOn(host), runOn(parkedOff), hosts),
        runMs: stats(samples.run),
        parkedOffRunMs: withParkedOff(() => stats(samples.parkedOff)),
        bareNodeMs: stats(samples.bare),
        ratio: ratioStats(samples.run, samples.bare),
        parkedOffRatio: withParkedOff(() => ratioStats(samples.parkedOff, samples.bare)),
        gain: withParkedOff(() => ratioStats(samples.run, samples.parkedOff)),
        harness: await harnessVsRunner(bare),
      };
    } finally {
      await bare.close();
    }
  } finally {
    configureLocal(host.baseUrl, host.token);
    if (!parkedOff.na) await parkedOff.close();
  }
}

/**
 * Warm Runs one right after the other, without the settle between them: what a host sustains
 * while its spares are made again beside the Runs (the settled rows above show the best case, a
 * spare ready for every Run). Blocks of BACK_TO_BACK_RUNS Runs on one host, the two hosts'
 * blocks interleaved (A B, B A, …) with a settle between blocks; the ratio is of block medians.
 */
async function backToBack(parkedRun, parkedOffRun, hosts) {
  const median = (values) => stats(values).median;
  const parked = [];
  const parkedOff = [];
  const blockRatios = [];
  for (let i = 0; i < REPS.backToBack; i += 1) {
    const block = {};
    for (const [key, run] of i % 2 === 0
      ? [
          ['parked', parkedRun],
          ['parkedOff', parkedOffRun],
        ]
      : [
          ['parkedOff', parkedOffRun],
          ['parked', parkedRun],
        ]) {
      block[key] = [];
      for (let j = 0; j < BACK_TO_BACK_RUNS; j += 1) block[key].push(await run());
      await settle(hosts);
    }
    parked.push(...block.parked);
    parkedOff.push(...block.parkedOff);
    blockRatios.push(median(block.parked) / median(block.parkedOff));
  }
  return { runs: BACK_TO_BACK_RUNS, parkedMs: stats(parked), parkedOffMs: stats(parkedOff), ratio: stats(blockRatios) };
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

async function concurrency() {
  const curve = {};
  for (const n of CONCURRENCY) {
    const name = freshDefinition('trivial');
    const started = performance.now();
    const outcomes = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        runSandbox(name, { a: i, b: 1 }).then(async (r) => {
          await r.text();
          return r.status;
        }),
      ),
    );
    const wallMs = performance.now() - started;
    const failures = outcomes.filter((o) => o.status === 'rejected' || o.value !== 200);
    const codes = [
      ...new Set(failures.map((o) => (o.status === 'rejected' ? String(o.reason?.code ?? o.reason) : String(o.value)))),
    ];
    curve[n] = {
      failures: failures.length,
      wallMs: Math.round(wallMs),
      msPerRun: Math.round((wallMs / n) * 10) / 10,
      ...(codes.length ? { failureStatuses: codes } : {}),
    };
  }
  return curve;
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
const host = await startBoxHost({ maxBoxes: Math.max(...CONCURRENCY), stateDir });
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
  for (const [label, size] of Object.entries(figures.wasm))
    log(
      `${label} wasm module: ${(size.bytes / 1024).toFixed(1)} KiB, ${(size.gzipBytes / 1024).toFixed(1)} KiB gzipped (${size.gzipBytes} bytes)`,
    );

  figures.install = await installSize();
  log(
    `install of the packed package alone (npm i --omit=dev): ${(figures.install.nodeModulesBytes / 1e6).toFixed(2)} MB in node_modules, ${figures.install.packages} packages; tarball ${(figures.install.tarballBytes / 1e6).toFixed(2)} MB`,
  );

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

  figures.servers = await serverFirstRequests({ reps: REPS.servers, env: CHILD_ENV });
  for (const [kind, value] of Object.entries(figures.servers)) {
    const label = kind === 'built' ? 'built server (SANDBOX_PROVIDER=local)' : 'vite dev';
    log(`${label}, fresh start: first request ${show(value.firstRequestMs)}; second ${show(value.secondRequestMs)}`);
    log(
      `  its Runs' Server-Timing: first ${show(value.firstRunMs)}; second ${show(value.secondRunMs)}; first/second ${show(value.firstOverSecondRun, '')}; first requests with a host or connect phase: ${value.firstUsePhases}`,
    );
  }

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

  figures.sdkFlow = await sdkComparison(host);
  figures.warmVsBare = await warmVsBare(host, isolation, stateDir);
  figures.fullRunVsExec = await fullRunVsExec(host);
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

  figures.concurrency = await concurrency();
  for (const [n, value] of Object.entries(figures.concurrency))
    log(
      `${n} concurrent Runs: ${value.failures} failures, ${value.wallMs} ms wall, ${value.msPerRun} ms per Run${value.failureStatuses ? ` (${value.failureStatuses.join(', ')})` : ''}`,
    );
  m.loadAverageAtEnd = loadAverage();
  log(`load at the end: ${m.loadAverageAtEnd.join(' ')}`);
} finally {
  await host.close();
  await closeLocalBoxHost();
  rmSync(stateDir, { recursive: true, force: true });
}

mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(figures, null, 2)}\n`);
log(`wrote ${path.relative(process.cwd(), outFile) || outFile}`);
if (flags['write-docs']) writeDocs(figures);
