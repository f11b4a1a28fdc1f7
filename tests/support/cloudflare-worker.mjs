// Helpers for the Cloudflare Worker tests: wrangler kept offline (wrangler-offline.md §2), a
// dry-run deploy, and a built Worker's module directory run in real workerd (miniflare).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { repoRoot } from './vite-app.mjs';

const run = promisify(execFile);

/** The environment that keeps wrangler 4.86 from calling home (metrics, banner update check, cf.json); its logs go to `configDir`. */
export function offlineWranglerEnv(configDir) {
  return {
    ...process.env,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    CI: '1',
    XDG_CONFIG_HOME: configDir,
  };
}

/** Whether `unshare -n` works here (root in a user namespace): then the dry run has no network at all. */
function canUnshareNetwork() {
  try {
    execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * `wrangler deploy --dry-run --outdir <tmp>/out` in `cwd` (its wrangler config, or `config`),
 * offline, within `timeout` ms (the config's build step included). The caller removes `dir` (the upload in `outDir`, wrangler's logs beside it).
 * @param {string} cwd
 * @param {{ config?: string, wrangler?: string, timeout?: number }} [options]
 * @returns {Promise<{ dir: string, outDir: string, stdout: string, files: string[] }>}
 */
export async function wranglerDryRun(
  cwd,
  { config, wrangler = join(repoRoot, 'node_modules/.bin/wrangler'), timeout = 120_000 } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'vite-hub-dry-run-'));
  const outDir = join(dir, 'out');
  const args = ['deploy', '--dry-run', '--outdir', outDir, ...(config ? ['--config', config] : [])];
  const [command, argv] = canUnshareNetwork() ? ['unshare', ['-n', wrangler, ...args]] : [wrangler, args];
  try {
    const { stdout, stderr } = await run(command, argv, {
      cwd,
      env: offlineWranglerEnv(join(dir, 'config')),
      timeout,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { dir, outDir, stdout: `${stdout}\n${stderr}`, files: readdirSync(outDir) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The Worker size budget (DESIGN.md §9): its upload, gzipped, as wrangler reports it (KiB). */
export const WORKER_GZIP_BUDGET_KIB = 600;

/**
 * The gzipped size (KiB) of the upload a `wrangler deploy --dry-run` printed (`Total Upload: …
 * KiB / gzip: N KiB`); throws when the output has no such line.
 */
export function uploadGzipKiB(stdout) {
  const match = /Total Upload:\s*[\d.]+\s*KiB\s*\/\s*gzip:\s*([\d.]+)\s*KiB/.exec(stdout);
  if (!match) throw new Error(`wrangler printed no upload size:\n${stdout}`);
  return Number(match[1]);
}

/**
 * `vite build` in `cwd` in a child process whose TMPDIR is a folder removed afterwards (Nitro's
 * jiti keeps a cache in the temp directory).
 */
export async function viteBuild(cwd, vite = join(repoRoot, 'node_modules/vite/bin/vite.js')) {
  const temp = mkdtempSync(join(tmpdir(), 'vite-hub-build-tmp-'));
  try {
    return await run(process.execPath, [vite, 'build'], {
      cwd,
      env: { ...process.env, TMPDIR: temp },
      timeout: 180_000,
    });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** Whether `file` starts with the WebAssembly magic word 00 61 73 6d. */
export function isWasm(file) {
  const bytes = readFileSync(file);
  return bytes.length > 8 && bytes[0] === 0x00 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d;
}

/**
 * A built Worker run in real workerd (miniflare): `entry` and the ES modules beside it in `dir`,
 * its `.wasm` files as compiled modules, `nodejs_compat`, and the `Sandbox` Durable Object class
 * bound as `SANDBOX` (so workerd checks that the Worker exports it).
 * @param {{ dir: string, entry?: string, compatibilityDate: string, bindings: Record<string, string> }} options
 */
export function builtWorker({ dir, entry = 'index.mjs', compatibilityDate, bindings }) {
  return new Miniflare({
    modules: true,
    scriptPath: join(dir, entry),
    modulesRoot: dir,
    modulesRules: [
      { type: 'ESModule', include: [`**/*${extname(entry)}`] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate,
    compatibilityFlags: ['nodejs_compat'],
    durableObjects: { SANDBOX: { className: 'Sandbox', useSQLite: true } },
    bindings,
  });
}

/** The Box host's counters once the Box was stopped: the stop comes after the Response (waitUntil), within 5 s. */
export async function countersAfterStop(host) {
  const until = Date.now() + 5000;
  let counters = await host.counters();
  while (!counters.requests.stop && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    counters = await host.counters();
  }
  return counters;
}

/** Hop-by-hop and length headers a forwarding test proxy drops both ways. */
const HOP_HEADERS = ['host', 'connection', 'content-length', 'transfer-encoding'];

/**
 * Sends a request a test proxy has read (`req`, its whole `body` as a Buffer) on to `target` (a
 * base URL such as a Box host's), without hop-by-hop headers: the upstream fetch Response.
 */
export function forwardRequest(target, req, body) {
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !HOP_HEADERS.includes(name)));
  return fetch(target + req.url, { method: req.method, headers, body: body.length ? body : undefined });
}

/**
 * A test proxy's pass-through: forwards `req` (read into `body`) to `target` and streams the
 * answer back on `res`; a failure on the way cuts the connection, as a dropped upstream would.
 */
export async function proxyTo(target, req, res, body) {
  try {
    const upstream = await forwardRequest(target, req, body);
    res.writeHead(
      upstream.status,
      Object.fromEntries([...upstream.headers].filter(([name]) => !HOP_HEADERS.includes(name))),
    );
    // Node's web ReadableStream is async-iterable (the DOM lib's type does not say so).
    const chunks = /** @type {AsyncIterable<Uint8Array> | null} */ (/** @type {unknown} */ (upstream.body));
    if (chunks) for await (const chunk of chunks) res.write(chunk);
    res.end();
  } catch {
    res.destroy();
  }
}
