#!/usr/bin/env node
// Prints the size of the repository's Worker as wrangler would upload it: runs
// `wrangler deploy --dry-run --outdir <tmp>` offline (wrangler.toml at the repository root, no
// Docker, no login; needs `node scripts/build.mjs` first) and lists the modules, raw and gzipped,
// the wasm and the JavaScript separately. `--json` prints the figures as JSON.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'vite-hub-worker-size-'));
const config = mkdtempSync(join(tmpdir(), 'vite-hub-wrangler-config-'));
try {
  execFileSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', outDir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    // wrangler-offline.md §2: no metrics, no update check, no cf.json fetch, no prompts.
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: 'false',
      WRANGLER_HIDE_BANNER: 'true',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      CI: '1',
      XDG_CONFIG_HOME: config,
    },
  });
  const modules = readdirSync(outDir)
    .filter((name) => /\.(m?js|wasm)$/.test(name))
    .map((name) => {
      const bytes = readFileSync(join(outDir, name));
      return {
        name,
        kind: name.endsWith('.wasm') ? 'wasm' : 'js',
        bytes: bytes.length,
        gzip: gzipSync(bytes, { level: 9 }).length,
      };
    });
  const total = (kind) =>
    modules
      .filter((m) => kind === undefined || m.kind === kind)
      .reduce((sum, m) => ({ bytes: sum.bytes + m.bytes, gzip: sum.gzip + m.gzip }), { bytes: 0, gzip: 0 });
  const figures = { modules, wasm: total('wasm'), js: total('js'), total: total() };
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(figures, null, 2));
  } else {
    const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
    console.log('Worker bundle (wrangler deploy --dry-run):');
    for (const m of modules)
      console.log(
        `  ${m.kind.padEnd(4)} ${m.name.replace(/^[0-9a-f]{40}-/, '')}: ${kb(m.bytes)} raw, ${kb(m.gzip)} gzipped`,
      );
    console.log(`  wasm total: ${kb(figures.wasm.bytes)} raw, ${kb(figures.wasm.gzip)} gzipped`);
    console.log(`  js total:   ${kb(figures.js.bytes)} raw, ${kb(figures.js.gzip)} gzipped`);
    console.log(`  total:      ${kb(figures.total.bytes)} raw, ${kb(figures.total.gzip)} gzipped`);
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
  rmSync(config, { recursive: true, force: true });
}
