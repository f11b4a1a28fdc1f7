// The bench's comparisons, read from its figures (the JSON scripts/bench.mjs writes): the one list
// the terminal output, the docs page (bench-docs.mjs) and the chart (bench-chart.mjs) show, with
// the targets of issue 25 (the one source of them). Targets are printed beside the figures,
// never asserted.

/** The one clock rule of every ratio (printed at the start and on the page). */
export const CLOCK_RULE =
  "both sides of every ratio stop their clock at their own parsed result; a Box's stop comes after both clocks (the SDK's stop() is awaited before the next sample, runSandbox's own stop is waited out)";

/** Issue 25's targets: the most each ratio of medians (or count) may be. */
export const TARGETS = {
  warmVsBare: 0.6,
  pooledRequestsBeforeResponse: 2,
  pooledVsSdkFlow: 0.5,
  pooledVsSnapshotFlow: 0.8,
  fullRunVsExec: 1.15,
};

/**
 * `target ≤ x: met` or `: not met` for a figure (a count, or a ratio's median), `target ≤ x` for
 * one not measured, '' without a target.
 */
export function targetNote(figure, target) {
  if (target === undefined) return '';
  const value = typeof figure === 'number' ? figure : figure && !figure.na ? figure.median : undefined;
  if (value === undefined) return `target ≤ ${target}`;
  return `target ≤ ${target}: ${value <= target ? 'met' : 'not met'}`;
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
    out.push(
      comparison(
        'warmVsBare',
        `warm local Run (${parking}) vs bare node child`,
        ['runSandbox', 'bare node'],
        pair(bare.runMs, bare.ratio),
        TARGETS.warmVsBare,
      ),
    );
    out.push(
      comparison(
        'warmParkedOffVsBare',
        'warm local Run, host with parked: { size: 0 }, vs bare node child',
        ['runSandbox', 'bare node'],
        pair(bare.parkedOffRunMs, bare.parkedOffRatio),
      ),
    );
  }
  for (const [delay, scenarios] of Object.entries(figures.sdkFlow ?? {})) {
    const ms = delay.replace(/^delay/, '');
    for (const [key, title, other, label] of SDK_SCENARIOS) {
      const target =
        delay === 'delay25ms'
          ? { pooledWithDeps: TARGETS.pooledVsSdkFlow, pooledVsSnapshot: TARGETS.pooledVsSnapshotFlow }[key]
          : undefined;
      out.push(
        comparison(
          `${key}@${ms}`,
          `${title} vs ${other}, ${ms} per request`,
          ['runSandbox', label],
          scenarios[key],
          target,
        ),
      );
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
