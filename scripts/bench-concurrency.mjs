// The bench's concurrency figures (scripts/bench.mjs `concurrency`): n Runs started at once of a
// Definition that holds its Box `holdMs` (its handler waits that long, then answers), on the
// bench's local host (which allows 128 Boxes). Per n: how many answered 200 and what the others
// got (a failure is a figure, never hidden), the latency of each Run that answered 200 from its
// start to its parsed body (p50, p99 by nearest rank, min, max), the wall time from the first
// start to the last answer, and that wall time per Run.
import { registerSandbox, runSandbox } from '@vite-hub/sandbox';
import { stats } from './bench-stats.mjs';

/** The holding Definition's entry: waits `payload.holdMs`, then answers its index. */
const HOLD_ENTRY =
  'export default async (payload) => { await new Promise((resolve) => setTimeout(resolve, payload.holdMs)); return { i: payload.i }; };\n';

/** The nearest-rank percentile `p` (0–100) of `values`, or null without one. */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (v) => (v === null ? null : Math.round(v * 10) / 10);

/** One Run of `name`: `{ ok, ms, failure? }`, never rejects (a failure is counted, not thrown). */
async function timedRun(name, payload) {
  const started = performance.now();
  try {
    const response = await runSandbox(name, payload);
    const body = await response.text();
    if (response.status !== 200) {
      let code = '';
      try {
        code = JSON.parse(body).error?.code ?? '';
      } catch {}
      return { ok: false, ms: performance.now() - started, failure: `${response.status}${code ? ` ${code}` : ''}` };
    }
    if (JSON.parse(body).i !== payload.i) throw new Error(`Run ${payload.i} answered ${body.slice(0, 100)}`);
    return { ok: true, ms: performance.now() - started };
  } catch (error) {
    return { ok: false, ms: performance.now() - started, failure: String(error.code ?? error.message).slice(0, 120) };
  }
}

/**
 * The curve: `{ holdMs, levels: { [n]: { ok, failures, failureCounts, p50Ms, p99Ms, latencyMs,
 * wallMs, wallMsPerRun } }, notes? }` (notes: a level after which the host did not settle). One
 * Definition for every level, run once first (untimed) so no level pays a first Run; `between()`
 * (the hosts settling) runs after that and after each level.
 * @param {{ levels: number[], holdMs: number, between: () => Promise<void> }} options
 */
export async function concurrencyFigures({ levels, holdMs, between }) {
  const name = `bench/hold-${process.pid}`;
  registerSandbox(name, {
    files: [
      { path: 'package.json', content: JSON.stringify({ name: 'bench-hold', type: 'module' }) },
      { path: 'index.mjs', content: HOLD_ENTRY },
    ],
  });
  const first = await timedRun(name, { i: -1, holdMs: 0 });
  if (!first.ok) throw new Error(`the holding Definition's first Run failed: ${first.failure}`);
  /** @type {{ holdMs: number, levels: Record<number, object>, notes?: string[] }} */
  const out = { holdMs, levels: {} };
  // A host still busy after a level (128 Boxes to stop) is said, not fatal: the next level starts.
  const settled = async (after) => {
    try {
      await between();
    } catch (error) {
      out.notes = [...(out.notes ?? []), `after ${after}: ${error.message}; the next level started anyway`];
    }
  };
  await settled('the first Run');
  for (const n of levels) {
    const started = performance.now();
    const runs = await Promise.all(Array.from({ length: n }, (_, i) => timedRun(name, { i, holdMs })));
    const wallMs = performance.now() - started;
    const ok = runs.filter((r) => r.ok).map((r) => r.ms);
    const failureCounts = {};
    for (const r of runs.filter((run) => !run.ok)) failureCounts[r.failure] = (failureCounts[r.failure] ?? 0) + 1;
    out.levels[n] = {
      ok: ok.length,
      failures: n - ok.length,
      failureCounts,
      p50Ms: round(percentile(ok, 50)),
      p99Ms: round(percentile(ok, 99)),
      latencyMs: ok.length ? stats(ok) : { na: `none of the ${n} Runs answered 200` },
      wallMs: Math.round(wallMs),
      wallMsPerRun: round(wallMs / n),
    };
    await settled(`${n} at once`);
  }
  return out;
}
