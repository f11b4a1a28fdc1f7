// The bench's warm Runs (scripts/bench.mjs `warmVsBare`): a warm Run of a trivial Definition on
// the bench's host (parked processes on, its default) and on a host with `parked: { size: 0 }`,
// against `node` in a Box of the host's own code (bench-bare-node.mjs), pre-started (the limit of
// a parked exec) and bare (started on the clock), interleaved; the same Runs back to back; and in
// that Box the harness command against a three-line runner.
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { openBareNodeBox } from './bench-bare-node.mjs';
import { configureLocal, freshDefinition, runOnce, TRIVIAL_ENTRY, TRIVIAL_PAYLOAD } from './bench-definitions.mjs';
import { settle } from './bench-settle.mjs';
import { interleaved, interleavedSamples, na, ratioStats, stats } from './bench-stats.mjs';

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
export async function startParkedOffHost(stateDir) {
  try {
    return await startBoxHost({ stateDir: mkdtempSync(path.join(stateDir, 'parked-off-')), parked: { size: 0 } });
  } catch (error) {
    return na(`startBoxHost({ parked: { size: 0 } }) throws: ${error.message}`);
  }
}

/** The harness command against the three-line runner in the bare node Box, or `{ na }` when it fails. */
async function harnessVsRunner(bare, reps) {
  try {
    await bare.harnessOnce();
    // More pairs than the Run row: the two sides differ by a few ms of ~45, within one pair's noise.
    const pair = await interleaved(reps, bare.harnessOnce, bare.once);
    return { harnessMs: pair.a, runnerMs: pair.b, ratio: pair.ratio };
  } catch (error) {
    return na(
      `the harness of crates/core/src/harness/harness.mjs, run as a Run's command, failed: ${error.message.slice(0, 200)}`,
    );
  }
}

/**
 * The warm Run of a trivial Definition on `host` (its default: parked processes when the build
 * has them) and on `parkedOff` (a host started with `parked: { size: 0 }`, or `{ na }`), against
 * a `node` in a Box of the host's own code, pre-started (waiting for a signal before the clock)
 * and bare (started on the clock): four sides interleaved, the Runs configured to their host
 * before each sample (untimed, the same for all). Parked processes are counted on the default
 * host alone, then on both. `reps`: rounds of the four sides (`warm`), pairs of the harness
 * against the runner (`harness`), back-to-back blocks (`backToBack`) of `backToBackRuns` Runs.
 * @param {{ warm: number, harness: number, backToBack: number }} reps
 * @param {number} backToBackRuns
 */
export async function warmVsBare(host, parkedOff, isolation, reps, backToBackRuns) {
  const name = freshDefinition('trivial');
  const runOn = (target) => async () => {
    configureLocal(target.baseUrl, target.token);
    return (await runOnce(name, TRIVIAL_PAYLOAD)).ms;
  };
  await runOn(host)();
  await settle([host]);
  const hosts = parkedOff.na ? [host] : [host, parkedOff];
  try {
    const bare = await openBareNodeBox({ isolation, entry: TRIVIAL_ENTRY, payload: TRIVIAL_PAYLOAD });
    try {
      if (!parkedOff.na) await runOn(parkedOff)();
      await bare.once();
      await settle(hosts);
      // The pre-started node waits in the Box while the others run: it is started (and settled)
      // within its own sample, before its clock.
      let prestartedFailed = null;
      const prestarted = async () => {
        try {
          return await bare.prestartedOnce(() => settle(hosts));
        } catch (error) {
          prestartedFailed ??= error.message.slice(0, 300);
          return Number.NaN;
        }
      };
      await prestarted();
      await settle(hosts);
      const handedOverBefore = host.parked?.().handedOver ?? 0;
      const sides = {
        run: runOn(host),
        prestarted,
        bare: bare.once,
        ...(parkedOff.na ? {} : { parkedOff: runOn(parkedOff) }),
      };
      const samples = await interleavedSamples(reps.warm, sides, () => settle(hosts));
      // A Box's stop is counted once it stopped: settled above, after the last sample.
      const parking = parkingSeen(host, handedOverBefore, samples.run.length);
      const withParkedOff = (figure) => (parkedOff.na ? parkedOff : figure());
      const withPrestarted = (figure) =>
        prestartedFailed ? na(`the pre-started node failed: ${prestartedFailed}`) : figure();
      return {
        isolation,
        parking,
        prestartedMs: withPrestarted(() => stats(samples.prestarted)),
        prestartedRatio: withPrestarted(() => ratioStats(samples.run, samples.prestarted)),
        parkedOffPrestartedRatio: withPrestarted(() =>
          withParkedOff(() => ratioStats(samples.parkedOff, samples.prestarted)),
        ),
        backToBack: parkedOff.na
          ? parkedOff
          : await backToBack(runOn(host), runOn(parkedOff), hosts, reps.backToBack, backToBackRuns),
        runMs: stats(samples.run),
        parkedOffRunMs: withParkedOff(() => stats(samples.parkedOff)),
        bareNodeMs: stats(samples.bare),
        ratio: ratioStats(samples.run, samples.bare),
        parkedOffRatio: withParkedOff(() => ratioStats(samples.parkedOff, samples.bare)),
        gain: withParkedOff(() => ratioStats(samples.run, samples.parkedOff)),
        harness: await harnessVsRunner(bare, reps.harness),
      };
    } finally {
      await bare.close();
    }
  } finally {
    configureLocal(host.baseUrl, host.token);
  }
}

/**
 * Warm Runs one right after the other, without the settle between them: what a host sustains
 * while its spares are made again beside the Runs (the settled rows above show the best case, a
 * spare ready for every Run). `blocks` blocks of `runs` Runs on one host, the two hosts'
 * blocks interleaved (A B, B A, …) with a settle between blocks; the ratio is of block medians.
 */
async function backToBack(parkedRun, parkedOffRun, hosts, blocks, runs) {
  const median = (values) => stats(values).median;
  const parked = [];
  const parkedOff = [];
  const blockRatios = [];
  for (let i = 0; i < blocks; i += 1) {
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
      for (let j = 0; j < runs; j += 1) block[key].push(await run());
      await settle(hosts);
    }
    parked.push(...block.parked);
    parkedOff.push(...block.parkedOff);
    blockRatios.push(median(block.parked) / median(block.parkedOff));
  }
  return { runs, parkedMs: stats(parked), parkedOffMs: stats(parkedOff), ratio: stats(blockRatios) };
}
