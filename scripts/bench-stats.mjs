// The bench's statistics and its one way of timing a comparison (scripts/bench.mjs): figures are
// min / median / max of n samples, and both sides of a ratio run interleaved, each resolving to
// its own ms stopped at its parsed result (CLOCK_RULE in bench-comparisons.mjs).

/** `{ min, median, max, n }` of `values` (ms or a ratio), rounded for reading; `{ na }` without one. */
export function stats(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { na: 'no sample' };
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const round = (v) => Math.round(v * 1000) / 1000;
  return { min: round(sorted[0]), median: round(median), max: round(sorted.at(-1)), n: sorted.length };
}

/** A figure that cannot be measured here, and why (printed `n/a (why)`). */
export const na = (why) => ({ na: why });
export const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2));
/** One figure for the terminal: `min …, median …, max … (n=…)` or `n/a (why)`. */
export const show = (s, unit = ' ms') =>
  s.na
    ? `n/a (${s.na})`
    : `min ${fmt(s.min)}${unit}, median ${fmt(s.median)}${unit}, max ${fmt(s.max)}${unit} (n=${s.n})`;

/**
 * Runs the named `sides` `reps` times interleaved, the order rotated and reversed from one round
 * to the next (A B C, C B A, B C A, …) so no side always follows another. Each side resolves to
 * its own ms (the clock of its timed part, stopped at its parsed result); whatever it does after
 * its clock stopped (a Box's stop) it awaits before resolving, and `between()` (the hosts settling)
 * runs untimed after every sample. Resolves to `name → ms[]`, the i-th of each from the same round.
 * @param {number} reps
 * @param {Record<string, (round: number) => Promise<number>>} sides
 * @param {() => Promise<void>} [between]
 */
export async function interleavedSamples(reps, sides, between = async () => {}) {
  const names = Object.keys(sides);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < reps; round += 1) {
    const shift = Math.floor(round / 2) % names.length;
    const rotated = [...names.slice(shift), ...names.slice(0, shift)];
    for (const name of round % 2 === 0 ? rotated : rotated.reverse()) {
      const ms = await sides[name](round);
      if (typeof ms !== 'number')
        throw new TypeError(`the bench side "${name}" resolved to ${typeof ms}, not its own ms`);
      samples[name].push(ms);
      await between();
    }
  }
  return samples;
}

/** min / median / max of the per-round ratios `a[i] / b[i]` of two sides' samples. */
export const ratioStats = (a, b) => stats(a.map((ms, i) => ms / b[i]));

/** Two sides interleaved (interleavedSamples): `{ a, b, ratio }` figures, ratio a/b per round. */
export async function interleaved(reps, a, b, between) {
  const samples = await interleavedSamples(reps, { a, b }, between);
  return { a: stats(samples.a), b: stats(samples.b), ratio: ratioStats(samples.a, samples.b) };
}

/** `name → ms` of a Server-Timing header value. */
export function serverTiming(value) {
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
