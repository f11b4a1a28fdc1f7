// The node:test lanes of the suite, one folder each under tests/: the one list that
// scripts/test.sh runs (`node tests/support/lanes.mjs fast|slow` prints the lanes' folders, one a
// line, only those that hold a *.test.mjs: `node --test` fails on a folder without one) and that
// tests/e2e/temp-hygiene.test.mjs walks.
//
// - fast: by area, against the built dist/ and local Box hosts over loopback; a listed folder
//   (tests/docs/, say) runs once it holds a test file.
//   package: the published package's contract (exports, files, facts, imports, types);
//   runtime: one Run (payload, config, harness, faults, limits); session: Sessions, run
//   handles, sandboxId and executionAuthority; prepared: prepared projects and their fingerprint.
// - slow: the end-to-end runs: `npm pack` of dist/ installed into fresh apps, `vite dev`/`vite
//   build`, Nitro servers and Worker bundles built from them.
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const FAST_LANES = [
  'package',
  'runtime',
  'session',
  'prepared',
  'vite',
  'box-host',
  'cloudflare',
  'cli',
  'agent',
  'docs',
  'conformance',
];
export const SLOW_LANES = ['e2e'];

/** The absolute folder of a lane under tests/. */
export const laneDir = (lane) => fileURLToPath(new URL(`../${lane}/`, import.meta.url));

/** Whether the lane's folder exists and holds a test file. */
export const laneHasTests = (lane) =>
  existsSync(laneDir(lane)) && readdirSync(laneDir(lane)).some((name) => name.endsWith('.test.mjs'));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const which = process.argv[2];
  const lanes = which === 'fast' ? FAST_LANES : which === 'slow' ? SLOW_LANES : null;
  if (!lanes) {
    console.error('usage: node tests/support/lanes.mjs fast|slow');
    process.exit(2);
  }
  for (const lane of lanes) if (laneHasTests(lane)) console.log(`tests/${lane}/`);
}
