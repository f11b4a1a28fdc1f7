// The bench's comparisons, read from its figures (the JSON scripts/bench.mjs writes): the one list
// the terminal output, the docs page (bench-docs.mjs) and the chart (bench-chart.mjs) show, with
// the targets of issues 25 and 34 (the one source of them), and the chart's panels of single
// figures (sizes, startup, concurrency). Targets are printed beside the figures, never asserted.

/** The one clock rule of every ratio (printed at the start and on the page). */
export const CLOCK_RULE =
  "both sides of every ratio stop their clock at their own parsed result; a Box's stop comes after both clocks (the SDK's stop() is awaited before the next sample, runSandbox's own stop is waited out)";

/**
 * Issues 25 and 34's targets: the most each ratio of medians, count, size or time may be. (Issue
 * 25's "warm Run ≤ 0.6× a bare node child" is gone: the bare side starts node on the clock, the
 * Run's was started before it; issue 34 holds the warm Run to a pre-started node instead.)
 */
export const TARGETS = {
  pooledRequestsBeforeResponse: 2,
  pooledVsSdkFlow: 0.5,
  pooledVsSnapshotFlow: 0.8,
  fullRunVsExec: 1.15,
  /** Warm Run / a node pre-started the same way (issue 34 item 3), ratio of medians. */
  warmVsPrestarted: 2,
  /** The runtime wasm's compile CPU in Node, ms (median). */
  compileCpuMs: 15,
  /** A package Worker's startup CPU minus the hand-written one's, ms (median of the rounds). */
  startupOverHandWrittenMs: 100,
  /** Each Worker's upload, KiB gzipped (as wrangler reports it). */
  workerGzipKiB: 600,
  /** Concurrent Runs that may fail at 128 (issue 34 item 4: all answer 200). */
  concurrencyFailuresAt128: 0,
};

/** The Workers of the size and startup rows (bench-workers.mjs), by key. */
export const WORKER_LABELS = {
  repository: "the repository's Worker (Rust)",
  minimalJs: 'a minimal JS Worker on the package',
  handWritten: 'the same Run hand-written on @cloudflare/sandbox',
};

/** The hosts of the SDK rows: figures key, id suffix and how the title names the host. */
const SDK_HOSTS = [
  ['sdkFlow', '', 'host: parked Node on'],
  ['sdkFlowParkedOff', '/parkedOff', 'host: parked off (stands for Vercel)'],
];

/**
 * `target ≤ x: met` or `: not met` for a figure (a count, a size, or a figure's median), `target ≤
 * x` for one not measured, '' without a target; `unit` follows x (' ms', ' KiB').
 */
export function targetNote(figure, target, unit = '') {
  if (target === undefined) return '';
  const value = typeof figure === 'number' ? figure : figure && !figure.na ? figure.median : undefined;
  if (value === undefined) return `target ≤ ${target}${unit}`;
  return `target ≤ ${target}${unit}: ${value <= target ? 'met' : 'not met'}`;
}

const SDK_SCENARIOS = [
  ['coldNoDeps', 'cold Run, no dependency', 'SDK flow', 'SDK flow'],
  ['preparedNoDeps', 'prepared Run, no dependency', 'SDK flow', 'SDK flow'],
  ['coldWithDeps', 'cold Run with a dependency', 'SDK flow with npm ci', 'SDK + npm ci'],
  ['preparedWithDeps', 'prepared Run with a dependency', 'SDK flow with npm ci', 'SDK + npm ci'],
  ['preparedVsSnapshot', 'prepared Run with a dependency', 'SDK flow from a hand-made snapshot', 'SDK from snapshot'],
  ['pooledWithDeps', 'pooled prepared Run with a dependency', 'SDK flow with npm ci', 'SDK + npm ci'],
  [
    'pooledVsSnapshot',
    'pooled prepared Run with a dependency',
    'SDK flow from a hand-made snapshot',
    'SDK from snapshot',
  ],
];

/**
 * A comparison: `a`, `b` (ms figures of bench-stats.mjs `stats`) and `ratio` when it was measured,
 * else `na` (why not).
 * @typedef {{ id: string, title: string, labels: string[], target?: number, na?: string, a?: object, b?: object, ratio?: object }} Comparison
 */

/**
 * A comparison of two sides' figures (`{ a, b, ratio }` with ms, or `{ na }`).
 * @returns {Comparison}
 */
function comparison(id, title, labels, pair, target) {
  const base = { id, title, labels, ...(target === undefined ? {} : { target }) };
  if (pair === undefined) return { ...base, na: 'not in this run' };
  if (pair.na) return { ...base, na: pair.na };
  for (const side of ['a', 'b'])
    if (pair[side].na) return { ...base, na: `${labels[side === 'a' ? 0 : 1]}: ${pair[side].na}` };
  return { ...base, a: pair.a, b: pair.b, ratio: pair.ratio };
}

/**
 * Every comparison of `figures`, in page order: `{ id, title, labels: [a, b], a, b, ratio,
 * target? }` (labels: short names of the two sides; a, b: ms figures; ratio: a/b per interleaved
 * pair), or `{ id, title, labels, target?, na }` when it could not be measured.
 * @returns {Comparison[]}
 */
export function comparisons(figures) {
  const out = [];
  const bare = figures.warmVsBare;
  if (bare) {
    const parking =
      bare.parking?.inEffect === true
        ? 'parked processes on'
        : bare.parking?.inEffect === false
          ? 'no parked process'
          : 'parking unknown';
    const pair = (runMs, ratio) => (bare.na ? bare : { a: runMs, b: bare.bareNodeMs, ratio });
    const prestarted = bare.na
      ? bare
      : bare.prestartedMs === undefined
        ? undefined
        : bare.prestartedMs.na
          ? bare.prestartedMs
          : { a: bare.runMs, b: bare.prestartedMs, ratio: bare.prestartedRatio };
    out.push(
      comparison(
        'warmVsPrestarted',
        `warm Run (${parking}) vs node pre-started in a Box (the limit of a parked exec)`,
        ['runSandbox', 'pre-started node'],
        prestarted,
        TARGETS.warmVsPrestarted,
      ),
    );
    out.push(
      comparison(
        'warmVsBare',
        `warm Run (${parking}) vs bare node child, its node started on the clock`,
        ['runSandbox', 'bare node'],
        pair(bare.runMs, bare.ratio),
      ),
    );
    out.push(
      comparison(
        'warmParkedOffVsBare',
        'warm Run, host parked: { size: 0 }, vs bare node child, its node started on the clock',
        ['runSandbox', 'bare node'],
        pair(bare.parkedOffRunMs, bare.parkedOffRatio),
      ),
    );
  }
  for (const [figuresKey, suffix, hostTitle] of SDK_HOSTS) {
    const byDelay = figures[figuresKey];
    if (byDelay === undefined) continue;
    if (byDelay.na) {
      out.push(comparison(`sdk${suffix}`, `runSandbox vs the SDK flow, ${hostTitle}`, ['runSandbox', 'SDK'], byDelay));
      continue;
    }
    for (const [delay, scenarios] of Object.entries(byDelay)) {
      const ms = delay.replace(/^delay/, '');
      for (const [key, title, other, label] of SDK_SCENARIOS) {
        const target =
          delay === 'delay25ms'
            ? { pooledWithDeps: TARGETS.pooledVsSdkFlow, pooledVsSnapshot: TARGETS.pooledVsSnapshotFlow }[key]
            : undefined;
        out.push(
          comparison(
            `${key}@${ms}${suffix}`,
            `${title} vs ${other}, ${ms}/request; ${hostTitle}`,
            ['runSandbox', label],
            scenarios[key],
            target,
          ),
        );
      }
    }
  }
  const full = figures.fullRunVsExec;
  if (full)
    out.push(
      comparison(
        'fullRunVsExec',
        'full warm Run vs one node exec on a prepared Box',
        ['runSandbox', 'one exec'],
        full.na ? full : { a: full.runMs, b: full.execMs, ratio: full.ratio },
        TARGETS.fullRunVsExec,
      ),
    );
  return out;
}

/**
 * A level's wall time per Run that answered 200 (ms, one decimal), or null when none did: a Run
 * that failed (a 503 after the queue's wait, say) must not make the level look faster.
 */
export const wallMsPerAnsweredRun = (level) => (level.ok > 0 ? Math.round((level.wallMs / level.ok) * 10) / 10 : null);

/**
 * The concurrency targets (issue 34 item 4), one line each with met / not met: 128 Runs all
 * answer 200; wall time per Run at 128 no worse than at 8 (per Run that answered 200; not met
 * while any failed). Empty when 128 was not measured.
 */
export function concurrencyTargets(concurrency) {
  const levels = concurrency?.levels;
  if (!levels?.[128]) return [];
  const at128 = levels[128];
  const lines = [
    `128 at once: ${at128.failures} failed; target ${TARGETS.concurrencyFailuresAt128} failures: ${at128.failures <= TARGETS.concurrencyFailuresAt128 ? 'met' : 'not met'}`,
  ];
  if (levels[8]) {
    const [w128, w8] = [wallMsPerAnsweredRun(at128), wallMsPerAnsweredRun(levels[8])];
    const met = at128.failures === 0 && w128 !== null && w8 !== null && w128 <= w8;
    lines.push(
      `wall time per answered Run at 128 (${w128 ?? 'n/a'} ms) no worse than at 8 (${w8 ?? 'n/a'} ms)${at128.failures ? ` and none failed (${at128.failures} did)` : ''}: ${met ? 'met' : 'not met'}`,
    );
  }
  return lines;
}

/**
 * A chart panel of single figures on a scale of their own: `{ id, title, unit, rows: [{ label,
 * figure, note? }], limit? }`; `figure` is a min/median/max figure, a plain number, or `{ na }`;
 * `limit` (`{ value, label }`) draws a target line.
 * @typedef {{ id: string, title: string, unit: string, rows: { label: string, figure: any, note?: string }[], limit?: { value: number, label: string } }} Panel
 */

/**
 * The chart's panels beside the comparisons (bench-chart.mjs), from `figures`: Worker startup
 * CPU, sizes, the runtime wasm's compile CPU, `vite dev`'s first request and the concurrency
 * latencies. A panel whose figures are not in this run is left out.
 * @returns {Panel[]}
 */
export function panels(figures) {
  const out = [];
  const startup = figures.workers?.startup;
  if (startup)
    out.push({
      id: 'startup',
      title: `Worker startup CPU in workerd, wrangler check startup (target: ≤ hand-written + ${TARGETS.startupOverHandWrittenMs} ms)`,
      unit: 'ms',
      rows: Object.entries(WORKER_LABELS).map(([key, label]) => ({
        label,
        figure: startup[key] ?? { na: 'not in this run' },
      })),
    });
  const sizes = figures.workers?.sizes;
  if (sizes || figures.wasm) {
    const rows = Object.entries(figures.wasm ?? {}).map(([name, s]) => ({
      label: `${name} wasm`,
      figure: Math.round((s.gzipBytes / 1024) * 10) / 10,
      note:
        s.changeGzipBytes === undefined
          ? undefined
          : `${s.changeGzipBytes >= 0 ? '+' : ''}${(s.changeGzipBytes / 1024).toFixed(1)} KiB since the last bench`,
    }));
    for (const [key, label] of Object.entries(WORKER_LABELS)) {
      const size = sizes?.[key];
      if (!size) continue;
      rows.push({
        label,
        figure: size.na ? size : size.gzipKiB,
        note:
          typeof size.changeKiB === 'number'
            ? `${size.changeKiB >= 0 ? '+' : ''}${size.changeKiB} KiB since the last bench`
            : undefined,
      });
    }
    out.push({
      id: 'sizes',
      title: 'Sizes, gzipped (Workers: the upload as wrangler deploy --dry-run reports it)',
      unit: 'KiB',
      rows,
      limit: { value: TARGETS.workerGzipKiB, label: `Worker budget ${TARGETS.workerGzipKiB} KiB` },
    });
  }
  if (figures.compile)
    out.push({
      id: 'compile',
      title: "The runtime wasm's compile CPU in a fresh Node (new WebAssembly.Module)",
      unit: 'ms',
      rows: [{ label: 'compile CPU', figure: figures.compile.na ? figures.compile : figures.compile.cpuMs }],
      limit: { value: TARGETS.compileCpuMs, label: `target ${TARGETS.compileCpuMs} ms` },
    });
  const dev = figures.servers?.dev;
  const listening = figures.servers?.devListening;
  if (dev || listening)
    out.push({
      id: 'viteDev',
      title: "vite dev's first request: from the port accepting (what a user sees) and after a warm-up request",
      unit: 'ms',
      rows: [
        { label: 'port accepting → first 200', figure: listening?.listenToFirst200Ms ?? { na: 'not in this run' } },
        { label: 'first request, warmed', figure: dev?.firstRequestMs ?? { na: 'not in this run' } },
      ],
    });
  const levels = figures.concurrency?.levels;
  if (levels)
    out.push({
      id: 'concurrency',
      title: `Concurrent Runs holding their Box ${figures.concurrency.holdMs} ms: latency of the Runs that answered 200`,
      unit: 'ms',
      rows: Object.entries(levels).flatMap(([n, level]) =>
        ['p50', 'p99'].map((p) => ({
          label: `${n} at once, ${p}`,
          figure: level[`${p}Ms`] ?? { na: `none of the ${n} answered 200` },
          note:
            p === 'p50'
              ? `${level.failures} failed, ${wallMsPerAnsweredRun(level) ?? 'n/a'} ms wall/answered Run`
              : undefined,
        })),
      ),
    });
  return out;
}
