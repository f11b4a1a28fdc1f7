// The benchmark of issue 12 (and DESIGN.md §9): prints figures and writes them as JSON; it never
// passes or fails on a figure. Both sides of every ratio run interleaved (A B, B A, …) in the same
// process or with the same environment; every figure is a min / median / max of several runs.
//
// Figures (keys of the JSON file):
//   machine     where they came from: cores, CPU model, node, load average, isolation, commit
//   wasm        bytes and gzipped bytes of the runtime and tooling wasm modules
//   install     bytes of `npm i --omit=dev <packed tarball>` in an empty directory (node_modules)
//   import      ms of `import('@vite-hub/sandbox')` in a fresh node (clean environment), after
//               the ESM loader started on a one-line module (its start is reported apart)
//   firstRun    in a fresh node: import, first Run (its Server-Timing `host` and `connect`),
//               second Run, their ratio, and how long after it the process exits on its own
//               (`exitMs`); and the same after `warmUp()`
//   servers     a freshly started built Nitro server and `vite dev` of examples/app (installed from
//               the packed tarball): first and second request, and their Runs' Server-Timing totals
//               (scripts/bench-servers.mjs)
//   requests    requests to the Box host per Run: cold and prepared, without and with dependencies
//   sdkFlow     runSandbox against the official @vercel/sandbox SDK doing create → writeFiles →
//               (npm ci) → runCommand → stop by hand, through a proxy adding 0 or 25 ms to every
//               request, against the same local Box host: cold and prepared, without and with deps
//   warmVsBare  a warm local Run against a bare `node` command in a Box of the host's own code
//               (same isolation, network, limits, env) doing the same import and JSON write; and
//               in that Box the harness command against that three-line runner (`harness`)
//   concurrency 1/8/32/64/128 concurrent Runs: failures and wall time
// A figure that cannot be measured here says so: `{ "na": "<why>" }`, printed as `n/a (why)`.
//
// Usage: node scripts/bench.mjs [--quick] [--out FILE] [--write-docs [--from FILE]]
//   (after `node scripts/build.mjs`)
//   --quick       fewer repetitions and concurrency levels (proves the script runs; figures are
//                 rough); scripts/test.sh runs it once as a smoke check (scripts/bench-check.mjs)
//   --out         the JSON file (default bench/latest.json)
//   --write-docs  also writes docs/benchmarks.md, the figures as tables (scripts/bench-docs.mjs):
//                 figures in the docs are generated, never pasted
//   --from FILE   with --write-docs: the page from that JSON file of an earlier run, measuring nothing
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Sandbox } from '@vercel/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { closeLocalBoxHost, configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
import { renderBenchmarks } from './bench-docs.mjs';
import { serverFirstRequests } from './bench-servers.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, out: { type: 'string' }, 'write-docs': { type: 'boolean', default: false }, from: { type: 'string' } },
});
const quick = flags.quick;
const outFile = path.resolve(flags.out ?? path.join(repo, 'bench', 'latest.json'));
/** The generated page of the figures (`--write-docs`). */
const DOCS_FILE = path.join(repo, 'docs', 'benchmarks.md');

/** Writes docs/benchmarks.md from `figures` (the JSON this bench writes). */
function writeDocs(figures) {
  mkdirSync(path.dirname(DOCS_FILE), { recursive: true });
  writeFileSync(DOCS_FILE, renderBenchmarks(figures));
  console.log(`wrote ${path.relative(process.cwd(), DOCS_FILE) || DOCS_FILE}`);
}

if (flags.from !== undefined) {
  if (!flags['write-docs']) throw new TypeError('--from FILE only goes with --write-docs (the page from an earlier run)');
  writeDocs(JSON.parse(readFileSync(flags.from, 'utf8')));
  process.exit(0);
}

/** Repetitions of each side of a ratio (pairs), by figure. */
const REPS = quick
  ? { import: 2, firstRun: 1, servers: 1, sdkNoDeps: 2, sdkDeps: 1, warm: 3, harness: 3 }
  : { import: 11, firstRun: 9, servers: 5, sdkNoDeps: 9, sdkDeps: 3, warm: 15, harness: 41 };
const CONCURRENCY = quick ? [1, 8] : [1, 8, 32, 64, 128];
const DELAYS_MS = [25, 0];
/** The environment of every child this bench starts (the same on both sides of a ratio). */
const CHILD_ENV = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: os.tmpdir() };

// ---------------------------------------------------------------------------------------------
// Statistics and printing.

/** `{ min, median, max, n }` of `values` (ms or a ratio), rounded for reading. */
function stats(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { na: 'no sample' };
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const round = (v) => Math.round(v * 1000) / 1000;
  return { min: round(sorted[0]), median: round(median), max: round(sorted.at(-1)), n: sorted.length };
}

const show = (s, unit = ' ms') => (s.na ? `n/a (${s.na})` : `min ${fmt(s.min)}${unit}, median ${fmt(s.median)}${unit}, max ${fmt(s.max)}${unit} (n=${s.n})`);
const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2));
const na = (why) => ({ na: why });
const log = (line) => console.log(line);

/**
 * Runs `a` and `b` `reps` times interleaved (A B, then B A, …); ms of each and the ratio a/b per
 * pair. A side that resolves to a number measured its own ms (the timed part of its work): that
 * number is its sample instead of the whole call.
 */
async function interleaved(reps, a, b) {
  const aMs = [];
  const bMs = [];
  for (let i = 0; i < reps; i += 1) {
    const order = i % 2 === 0 ? [[a, aMs], [b, bMs]] : [[b, bMs], [a, aMs]];
    for (const [fn, samples] of order) {
      const started = performance.now();
      const own = await fn(i);
      samples.push(typeof own === 'number' ? own : performance.now() - started);
    }
  }
  return { a: stats(aMs), b: stats(bMs), ratio: stats(aMs.map((ms, i) => ms / bMs[i])) };
}

/** `name → ms` of a Server-Timing header value. */
function serverTiming(value) {
  const phases = {};
  for (const part of (value ?? '').split(',')) {
    const match = /^\s*([\w-]+)(?:;desc="([^"]*)")?;dur=([\d.]+)/.exec(part);
    if (!match) continue;
    // A prepared Run reports `install;desc="prepared";dur=0.0`: it installed nothing.
    if (match[1] === 'install' && match[2] === 'prepared') continue;
    phases[match[1]] = (phases[match[1]] ?? 0) + Number(match[3]);
  }
  return phases;
}

// ---------------------------------------------------------------------------------------------
// Definitions: a trivial one and one with an npm dependency (the example slugify-title).

const TRIVIAL_ENTRY = 'export default (payload) => ({ sum: payload.a + payload.b });\n';
/** A trivial Definition; `variant` changes its manifest (a new install-plan digest: a cold Run). */
function trivialFiles(variant) {
  return [
    { path: 'package.json', content: JSON.stringify({ name: 'bench-trivial', description: `variant ${variant}`, type: 'module' }) },
    { path: 'index.mjs', content: TRIVIAL_ENTRY },
  ];
}
const slugifyDir = path.join(repo, 'examples', 'app', 'server', 'sandboxes', 'slugify-title');
/** slugify-title (one npm dependency, with its lockfile); `variant` changes its manifest. */
function depsFiles(variant) {
  const manifest = JSON.parse(readFileSync(path.join(slugifyDir, 'package.json'), 'utf8'));
  return [
    { path: 'package.json', content: JSON.stringify({ ...manifest, description: `variant ${variant}` }) },
    { path: 'package-lock.json', content: readFileSync(path.join(slugifyDir, 'package-lock.json'), 'utf8') },
    { path: 'index.mjs', content: readFileSync(path.join(slugifyDir, 'index.mjs'), 'utf8') },
  ];
}
const TRIVIAL_PAYLOAD = { a: 1, b: 2 };
const DEPS_PAYLOAD = { title: 'Hello Bench World' };
let variantSeq = 0;
/** Registers a new variant of a Definition (never run before: its first Run is cold); its name. */
function freshDefinition(kind) {
  variantSeq += 1;
  const name = `bench/${kind}-${process.pid}-${variantSeq}`;
  registerSandbox(name, { files: kind === 'deps' ? depsFiles(name) : trivialFiles(name) });
  return name;
}

/** One runSandbox; throws unless it answered 200. Resolves to its Server-Timing phases. */
async function runOnce(name, payload) {
  const response = await runSandbox(name, payload);
  const body = await response.text();
  if (response.status !== 200) throw new Error(`runSandbox("${name}") answered ${response.status}: ${body.slice(0, 300)}`);
  return serverTiming(response.headers.get('server-timing'));
}

// ---------------------------------------------------------------------------------------------
// The official SDK flow by hand: what runSandbox replaces.

const VERCEL_API = 'https://vercel.com/api';
/** The runner the hand-written flow writes next to the files: import the entry, print its JSON. */
const SDK_RUNNER = "const m = await import('./index.mjs'); process.stdout.write(JSON.stringify(await m.default(JSON.parse(process.argv[2]))));\n";

async function sdkFlow(baseUrl, token, files, payload, withDeps) {
  const sandbox = await Sandbox.create({
    token,
    teamId: 'team_local',
    projectId: 'prj_local',
    fetch: (url, init) => globalThis.fetch(String(url).replace(VERCEL_API, baseUrl), init),
  });
  try {
    await sandbox.writeFiles([...files, { path: 'runner.mjs', content: SDK_RUNNER }].map((f) => ({ path: f.path, content: Buffer.from(f.content) })));
    if (withDeps) {
      const install = await sandbox.runCommand('npm', ['ci', '--no-audit', '--no-fund']);
      if (install.exitCode !== 0) throw new Error(`npm ci exited ${install.exitCode}: ${(await install.stderr()).slice(-300)}`);
    }
    const command = await sandbox.runCommand('node', ['runner.mjs', JSON.stringify(payload)]);
    const stdout = await command.stdout();
    if (command.exitCode !== 0) throw new Error(`the runner exited ${command.exitCode}: ${(await command.stderr()).slice(-300)}`);
    JSON.parse(stdout);
  } finally {
    await sandbox.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// A proxy adding a fixed delay to every request (a stand-in for a provider's round trip).

async function startDelayProxy(target, delayMs) {
  const targetUrl = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    setTimeout(() => {
      const upstream = http.request(
        { host: targetUrl.hostname, port: targetUrl.port, method: req.method, path: req.url, headers: req.headers, agent },
        (answer) => {
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', (error) => res.destroy(error));
      req.pipe(upstream);
    }, delayMs);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => {
      agent.destroy();
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// The figures.

async function machine(host) {
  const commit = await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo }).then(({ stdout }) => stdout.trim(), () => null);
  return {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: os.loadavg().map((v) => Math.round(v * 100) / 100),
    isolation: host.executionAuthority.isolation === 'process' ? 'bubblewrap' : 'none',
    commit,
    date: new Date().toISOString(),
    quick,
  };
}

function wasmSizes() {
  const sizes = {};
  for (const [label, file] of [['runtime', 'vite_hub_sandbox_bg.wasm'], ['tooling', 'vite_hub_sandbox_tooling_bg.wasm']]) {
    const bytes = readFileSync(path.join(repo, 'dist', 'wasm', file));
    sizes[label] = { bytes: bytes.length, gzipBytes: gzipSync(bytes).length };
  }
  return sizes;
}

async function installSize() {
  const work = mkdtempSync(path.join(os.tmpdir(), 'vite-hub-bench-install-'));
  try {
    const { stdout } = await run('npm', ['pack', path.join(repo, 'dist'), '--pack-destination', work, '--json', '--silent'], { cwd: work, maxBuffer: 16 << 20 });
    const tarball = path.join(work, JSON.parse(stdout)[0].filename);
    const app = path.join(work, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), '{"name":"bench-install","private":true}\n');
    await run('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: app, timeout: 300_000, maxBuffer: 16 << 20 });
    const du = async (target) => Number((await run('du', ['-sb', target])).stdout.split('\t')[0]);
    const lock = JSON.parse(readFileSync(path.join(app, 'node_modules', '.package-lock.json'), 'utf8'));
    const packages = Object.keys(lock.packages).filter((key) => key.startsWith('node_modules/')).length;
    return { nodeModulesBytes: await du(path.join(app, 'node_modules')), tarballBytes: await du(tarball), packages };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

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

async function firstRunChild(mode) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', FIRST_RUN_SCRIPT, mode], { cwd: repo, env: CHILD_ENV, timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

async function importAndFirstRun() {
  const importMs = [];
  const loaderMs = [];
  const cold = { first: [], second: [], ratio: [], host: [], connect: [], exit: [] };
  const warm = { warmUp: [], first: [], second: [], ratio: [], exit: [] };
  let warmUpMissing = false;
  // Interleaved children: cold, warm, warm, cold, … (same environment, same cwd).
  for (let i = 0; i < Math.max(REPS.firstRun, Math.ceil(REPS.import / 2)); i += 1) {
    for (const mode of i % 2 === 0 ? ['cold', 'warm'] : ['warm', 'cold']) {
      const result = await firstRunChild(mode);
      importMs.push(result.importMs);
      loaderMs.push(result.loaderMs);
      if (i >= REPS.firstRun) continue;
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
  const phase = (values, name) => (values.some(Number.isFinite) ? stats(values) : na(`the first Run's Server-Timing has no \`${name}\` phase`));
  return {
    import: { ms: stats(importMs), loaderStartMs: stats(loaderMs) },
    firstRun: {
      cold: { firstMs: stats(cold.first), secondMs: stats(cold.second), firstOverSecond: stats(cold.ratio), hostMs: phase(cold.host, 'host'), connectMs: phase(cold.connect, 'connect'), exitMs: stats(cold.exit) },
      afterWarmUp: warmUpMissing
        ? na('this build exports no warmUp()')
        : { warmUpMs: stats(warm.warmUp), firstMs: stats(warm.first), secondMs: stats(warm.second), firstOverSecond: stats(warm.ratio), exitMs: stats(warm.exit) },
    },
  };
}

/** Requests the host counted for one Run: before its Response resolved, and in all (a late stop). */
async function countRequests(host, name, payload) {
  host.resetCounters();
  const phases = await runOnce(name, payload);
  const beforeResponse = host.counters().total;
  await new Promise((resolve) => setTimeout(resolve, 300));
  const { total, requests } = host.counters();
  return { beforeResponse, total, requests, installed: 'install' in phases };
}

async function requestCounts(host) {
  const out = {};
  for (const kind of ['trivial', 'deps']) {
    const payload = kind === 'deps' ? DEPS_PAYLOAD : TRIVIAL_PAYLOAD;
    const name = freshDefinition(kind);
    const cold = await countRequests(host, name, payload);
    const again = await countRequests(host, name, payload);
    const label = kind === 'deps' ? 'WithDeps' : 'NoDeps';
    out[`cold${label}`] = cold;
    out[`prepared${label}`] = kind === 'deps' && again.installed
      ? na(`no prepared-project cache here: the second Run of the same project installed again (${again.total} requests)`)
      : again;
    // The hand-written SDK flow, for comparison (it installs on every run).
    host.resetCounters();
    await sdkFlow(host.baseUrl, host.token, kind === 'deps' ? depsFiles('sdk') : trivialFiles('sdk'), payload, kind === 'deps');
    const sdk = host.counters();
    out[`sdkFlow${label}`] = { total: sdk.total, requests: sdk.requests };
  }
  return out;
}

/** Whether this build has a prepared-project cache: the second Run of a project with deps does not install. */
async function hasPreparedCache() {
  const name = freshDefinition('deps');
  await runOnce(name, DEPS_PAYLOAD);
  return !('install' in (await runOnce(name, DEPS_PAYLOAD)));
}

async function sdkComparison(host) {
  const prepared = await hasPreparedCache();
  const result = {};
  for (const delayMs of DELAYS_MS) {
    const proxy = await startDelayProxy(host.baseUrl, delayMs);
    configureSandbox({ provider: 'local', local: { baseUrl: proxy.url, token: host.token } });
    const figures = {};
    try {
      for (const withDeps of [false, true]) {
        const kind = withDeps ? 'deps' : 'trivial';
        const payload = withDeps ? DEPS_PAYLOAD : TRIVIAL_PAYLOAD;
        const reps = withDeps ? REPS.sdkDeps : REPS.sdkNoDeps;
        const sdkSide = () => sdkFlow(proxy.url, host.token, withDeps ? depsFiles('sdk') : trivialFiles('sdk'), payload, withDeps);
        const label = withDeps ? 'WithDeps' : 'NoDeps';
        // cold: a project never run before on this host; prepared: one run once already.
        figures[`cold${label}`] = await interleaved(reps, () => runOnce(freshDefinition(kind), payload), sdkSide);
        if (withDeps && !prepared) {
          figures[`prepared${label}`] = na('no prepared-project cache here: a second Run of the same project installs again');
          continue;
        }
        const name = freshDefinition(kind);
        await runOnce(name, payload);
        figures[`prepared${label}`] = await interleaved(reps, () => runOnce(name, payload), sdkSide);
      }
    } finally {
      configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
      await proxy.close();
    }
    result[`delay${delayMs}ms`] = figures;
  }
  return result;
}

/**
 * The in-Box harness exactly as the runtime wasm embeds it: crates/core/build.rs's copy without comments and
 * indentation, from the newest wasm build in target/ (scripts/build.mjs made it).
 */
function embeddedHarness() {
  const buildDir = path.join(repo, 'target', 'wasm32-unknown-unknown', 'release', 'build');
  const copies = readdirSync(buildDir)
    .filter((name) => name.startsWith('vite-hub-sandbox-'))
    .map((name) => path.join(buildDir, name, 'out', 'harness.mjs'))
    .filter((file) => existsSync(file))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (copies.length === 0) throw new Error(`no crates/core/build.rs copy of the harness under ${buildDir}: run node scripts/build.mjs first`);
  return readFileSync(copies[0], 'utf8');
}

/**
 * A bare `node` command in a Box of the host's own code (BoxRegistry → Box → runCommand: the same
 * isolation, Box network, limits and clean environment as every Box command), without the HTTP
 * protocol, the Definition staging or the harness: what runSandbox's exec is compared with. In
 * the same Box, `harnessOnce` runs the harness as a Run's command does (`node
 * ../.vite-hub/harness.mjs ../.vite-hub/input.json` in the package dir, its input envelope written
 * first, untimed) and resolves to the command's ms: the in-Box cost of the harness against the
 * three-line runner of `once`.
 */
async function bareNodeUnderIsolation(isolation) {
  const { BoxRegistry } = await import(new URL('../dist/box-host/engine/registry.mjs', import.meta.url));
  const { hostFeatures } = await import(new URL('../dist/box-host/engine/isolation.mjs', import.meta.url));
  const { packTar } = await import('modern-tar');
  const archive = async (files) => gzipSync(await packTar(files.map(([name, body]) => ({ header: { name, size: Buffer.byteLength(body) }, body }))));
  const boxRoot = mkdtempSync(path.join(os.tmpdir(), 'vite-hub-bench-bare-'));
  const registry = new BoxRegistry({ boxRoot, isolation, maxBoxes: 1, maxQueued: 0, maxQueueWaitMs: 0, features: await hostFeatures() });
  const box = await registry.create({});
  await box.writeArchive('/vercel/sandbox', await archive([
    ['index.mjs', TRIVIAL_ENTRY],
    ['project/package.json', '{"type":"module"}'],
    ['project/index.mjs', TRIVIAL_ENTRY],
    ['.vite-hub/harness.mjs', embeddedHarness()],
  ]));
  const script = `const m = await import('./index.mjs'); process.stdout.write(JSON.stringify(await m.default(${JSON.stringify(TRIVIAL_PAYLOAD)})));`;
  /** Runs one command in the Box; resolves to its stdout once it exited 0. */
  const command = (spec) => new Promise((resolve, reject) => {
    const started = box.runCommand(spec);
    const finish = (code) => {
      const out = started.logs.filter((entry) => entry.stream === 'stdout').map((entry) => entry.data).join('');
      if (code === 0) resolve(out);
      else reject(new Error(`${spec.args[0]} exited ${code}: ${out} ${started.logs.filter((e) => e.stream === 'stderr').map((e) => e.data).join('')}`));
    };
    if (started.exitCode !== null) finish(started.exitCode);
    else started.once('exit', finish);
  });
  const once = async () => {
    const started = performance.now();
    const out = await command({ command: 'node', args: ['--input-type=module', '-e', script] });
    const ms = performance.now() - started;
    if (JSON.parse(out).sum !== 3) throw new Error(`bare node printed ${out}`);
    return ms;
  };
  let seq = 0;
  const harnessOnce = async () => {
    seq += 1;
    const nonce = `${process.pid}bench${seq}`.padEnd(32, '0');
    const envelope = { version: 1, nonce, entry: 'index.mjs', payload: TRIVIAL_PAYLOAD, limits: {} };
    await box.writeArchive('/vercel/sandbox', await archive([['.vite-hub/input.json', JSON.stringify(envelope)]]));
    const started = performance.now();
    const out = await command({ command: 'node', args: ['../.vite-hub/harness.mjs', '../.vite-hub/input.json'], cwd: '/vercel/sandbox/project' });
    const ms = performance.now() - started;
    const frame = out.split('\n').find((line) => line.startsWith(`<<vite-hub-sandbox:${nonce}>>`));
    if (!frame || JSON.parse(frame.slice(nonce.length + 21)).result?.sum !== 3) throw new Error(`the harness framed no result: ${out.slice(0, 300)}`);
    return ms;
  };
  return {
    once,
    harnessOnce,
    close: async () => {
      await box.stop();
      rmSync(boxRoot, { recursive: true, force: true });
    },
  };
}

async function warmVsBare(host, isolation) {
  const name = freshDefinition('trivial');
  await runOnce(name, TRIVIAL_PAYLOAD);
  const bare = await bareNodeUnderIsolation(isolation);
  try {
    await bare.once();
    await bare.harnessOnce();
    const figures = await interleaved(REPS.warm, () => runOnce(name, TRIVIAL_PAYLOAD), bare.once);
    // More pairs than the Run row: the two sides differ by a few ms of ~45, within one pair's noise.
    const harness = await interleaved(REPS.harness, bare.harnessOnce, bare.once);
    return { runSandboxMs: figures.a, bareNodeMs: figures.b, ratio: figures.ratio, isolation, harness: { harnessMs: harness.a, runnerMs: harness.b, ratio: harness.ratio } };
  } finally {
    await bare.close();
  }
}

async function concurrency() {
  const curve = {};
  for (const n of CONCURRENCY) {
    const name = freshDefinition('trivial');
    const started = performance.now();
    const outcomes = await Promise.allSettled(Array.from({ length: n }, (_, i) => runSandbox(name, { a: i, b: 1 }).then(async (r) => {
      await r.text();
      return r.status;
    })));
    const wallMs = performance.now() - started;
    const failures = outcomes.filter((o) => o.status === 'rejected' || o.value !== 200);
    const codes = [...new Set(failures.map((o) => (o.status === 'rejected' ? String(o.reason?.code ?? o.reason) : String(o.value))))];
    curve[n] = { failures: failures.length, wallMs: Math.round(wallMs), msPerRun: Math.round((wallMs / n) * 10) / 10, ...(codes.length ? { failureStatuses: codes } : {}) };
  }
  return curve;
}

// ---------------------------------------------------------------------------------------------

// A private state dir: the bench's prepared projects neither come from nor stay in the user's cache.
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'vhs-bench-state-'));
const host = await startBoxHost({ maxBoxes: Math.max(...CONCURRENCY), stateDir });
configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
const isolation = host.executionAuthority.isolation === 'process' ? 'bubblewrap' : 'none';
const figures = {};
try {
  figures.machine = await machine(host);
  const m = figures.machine;
  log(`machine: ${m.nproc} cores, ${m.cpu}, node ${m.node}, ${m.platform}, load ${m.loadAverage.join(' ')}, isolation ${isolation}; ${m.date.slice(0, 16)}Z, commit ${m.commit}${quick ? ' (quick mode)' : ''}`);

  figures.wasm = wasmSizes();
  for (const [label, size] of Object.entries(figures.wasm)) log(`${label} wasm module: ${(size.bytes / 1024).toFixed(1)} KiB, ${(size.gzipBytes / 1024).toFixed(1)} KiB gzipped (${size.gzipBytes} bytes)`);

  figures.install = await installSize();
  log(`install of the packed package alone (npm i --omit=dev): ${(figures.install.nodeModulesBytes / 1e6).toFixed(2)} MB in node_modules, ${figures.install.packages} packages; tarball ${(figures.install.tarballBytes / 1e6).toFixed(2)} MB`);

  const early = await importAndFirstRun();
  figures.import = early.import;
  figures.firstRun = early.firstRun;
  log(`import('@vite-hub/sandbox') in a fresh node: ${show(figures.import.ms)} (before it, the ESM loader's start on a one-line module: ${show(figures.import.loaderStartMs)})`);
  const cold = figures.firstRun.cold;
  log(`first Run in a fresh node: ${show(cold.firstMs)}; second: ${show(cold.secondMs)}; first/second: ${show(cold.firstOverSecond, '')}`);
  log(`  first Run's Server-Timing host: ${show(cold.hostMs)}; connect: ${show(cold.connectMs)}; the process exited ${show(cold.exitMs)} after its last Run`);
  const warm = figures.firstRun.afterWarmUp;
  if (warm.na) log(`after warmUp(): n/a (${warm.na})`);
  else log(`after warmUp() (${show(warm.warmUpMs)}): first Run ${show(warm.firstMs)}; second ${show(warm.secondMs)}; first/second ${show(warm.firstOverSecond, '')}; exited ${show(warm.exitMs)} after its last Run`);

  figures.servers = await serverFirstRequests({ reps: REPS.servers, env: CHILD_ENV, stats, serverTiming });
  for (const [kind, value] of Object.entries(figures.servers)) {
    const label = kind === 'built' ? 'built server (SANDBOX_PROVIDER=local)' : 'vite dev';
    log(`${label}, fresh start: first request ${show(value.firstRequestMs)}; second ${show(value.secondRequestMs)}`);
    log(`  its Runs' Server-Timing: first ${show(value.firstRunMs)}; second ${show(value.secondRunMs)}; first/second ${show(value.firstOverSecondRun, '')}; first requests with a host or connect phase: ${value.firstUsePhases}`);
  }

  figures.requests = await requestCounts(host);
  for (const [label, value] of Object.entries(figures.requests)) {
    if (value.na) log(`requests per Run, ${label}: n/a (${value.na})`);
    else if (label.startsWith('sdkFlow')) log(`requests per run, ${label} (the SDK by hand): ${value.total} ${JSON.stringify(value.requests)}`);
    else log(`requests per Run, ${label}: ${value.beforeResponse} before the Response, ${value.total} in all ${JSON.stringify(value.requests)}`);
  }

  figures.sdkFlow = await sdkComparison(host);
  for (const [delay, scenarios] of Object.entries(figures.sdkFlow)) {
    for (const [label, value] of Object.entries(scenarios)) {
      if (value.na) log(`runSandbox vs SDK by hand, ${delay}, ${label}: n/a (${value.na})`);
      else log(`runSandbox vs SDK by hand, ${delay}, ${label}: runSandbox ${show(value.a)}; SDK ${show(value.b)}; ratio ${show(value.ratio, '')}`);
    }
  }

  const bare = await warmVsBare(host, isolation);
  figures.warmVsBare = bare;
  log(`warm Run vs bare node child (${isolation}): runSandbox ${show(bare.runSandboxMs)}; bare node ${show(bare.bareNodeMs)}; ratio ${show(bare.ratio, '')}`);
  log(`  in the same Box, the harness command vs the three-line runner: harness ${show(bare.harness.harnessMs)}; runner ${show(bare.harness.runnerMs)}; ratio ${show(bare.harness.ratio, '')}`);

  figures.concurrency = await concurrency();
  for (const [n, value] of Object.entries(figures.concurrency)) log(`${n} concurrent Runs: ${value.failures} failures, ${value.wallMs} ms wall, ${value.msPerRun} ms per Run${value.failureStatuses ? ` (${value.failureStatuses.join(', ')})` : ''}`);
} finally {
  await host.close();
  await closeLocalBoxHost();
  rmSync(stateDir, { recursive: true, force: true });
}

mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(figures, null, 2)}\n`);
log(`wrote ${path.relative(process.cwd(), outFile) || outFile}`);
if (flags['write-docs']) writeDocs(figures);
