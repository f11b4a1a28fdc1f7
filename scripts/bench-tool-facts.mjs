// What the tool facts (vite/tool-facts.mjs: the TypeScript payload schemas, loaded lazily) cost the
// generation `vite build` and `vite dev` run at their start: `generateSandboxArtifacts` of this
// worktree's dist/ against a baseline dist/ without tool facts (BASELINE_DIST, e.g. a build of
// the commit before them), each in a fresh Node process (a cold TypeScript load, as a `vite`
// start has), interleaved, on a copy of examples/app (4 Definitions, 2 of them TypeScript).
//   node scripts/bench-tool-facts.mjs [n]   (BASELINE_DIST=/path/to/dist, default ../main/dist)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { interleavedSamples, ratioStats, show, stats } from './bench-stats.mjs';
import { copyExampleApp, removeDir } from '../tests/support/vite-app.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const n = Number(process.argv[2] ?? 5);
const withFacts = path.join(repo, 'dist');
const baseline = path.resolve(process.env.BASELINE_DIST ?? path.join(repo, '../main/dist'));
if (!existsSync(path.join(baseline, 'vite/generate.mjs'))) throw new Error(`no baseline dist at ${baseline}`);

/** One generation in a fresh process; resolves to its ms (the clock inside the child, around the call). */
function generation(dist, app, mode) {
  const script = `const t = performance.now();
const { generateSandboxArtifacts } = await import(${JSON.stringify(path.join(dist, 'vite/generate.mjs'))});
await generateSandboxArtifacts({ root: ${JSON.stringify(app)}, mode: ${JSON.stringify(mode)} });
console.log(performance.now() - t);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
}

const app = copyExampleApp('bench-tool-facts');
try {
  for (const mode of ['build', 'dev']) {
    const samples = await interleavedSamples(n, {
      facts: async () => generation(withFacts, app, mode),
      baseline: async () => generation(baseline, app, mode),
    });
    console.log(`generateSandboxArtifacts ${mode}, fresh process (examples/app):`);
    console.log(`  with tool facts: ${show(stats(samples.facts))}`);
    console.log(`  baseline:        ${show(stats(samples.baseline))}`);
    console.log(`  ratio:           ${show(ratioStats(samples.facts, samples.baseline), '×')}`);
  }
} finally {
  removeDir(app);
}
