// `wrangler dev` for the Worker tests: wrangler 4.86 kept offline (offlineWranglerEnv, plus the
// placeholder account that lets it skip preparing a registry image, docs/providers/cloudflare.md
// "Local development without Docker"), containers off (no Docker here), on free ports, in a
// process group of its own so that stopping it also stops its workerd children. And a lock that
// keeps two test files from building the repository's Worker into worker/build/ at once.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { offlineWranglerEnv } from './cloudflare-worker.mjs';
import { freePort, repoRoot } from './vite-app.mjs';

/** The wrangler of the repository's devDependencies (4.86.0, the newest that runs on Node 20). */
export const WRANGLER = join(repoRoot, 'node_modules/.bin/wrangler');

/**
 * The env worker-build needs to build offline (as worker/build.mjs gives it): the wasm-bindgen
 * CLI setup.sh installs, esbuild and the npm binaryen's wasm-opt, instead of downloads.
 */
export const OFFLINE_WORKER_BUILD_ENV = {
  WASM_BINDGEN_BIN: 'wasm-bindgen',
  ESBUILD_BIN: join(repoRoot, 'node_modules/.bin/esbuild'),
  WASM_OPT_BIN: join(repoRoot, 'node_modules/.bin/wasm-opt'),
};

/**
 * Starts `wrangler dev --local --enable-containers=false` in `cwd` (its wrangler.toml) and
 * resolves once it says "Ready on <url>" (after the config's `[build] command`, which wrangler
 * 4.86 runs twice: once for the first bundle and once more when its watcher of `watch_dir` is
 * ready). Its state and logs go to a temporary folder that `stop()` removes.
 * @param {{ cwd: string, vars?: Record<string, string>, env?: Record<string, string>, timeoutMs?: number }} options
 *   `vars`: Worker vars (`--var NAME:value`); `env`: more environment for wrangler and its build
 *   command; `timeoutMs`: the bound on the start-up, builds included, in ms (then it is stopped
 *   and the promise rejects with its output).
 * @returns {Promise<{ url: string, startupMs: number, output: () => string, stop: () => Promise<void> }>}
 *   `startupMs`: ms from the spawn to "Ready on"; `output()`: its stdout and stderr so far.
 */
export async function startWranglerDev({ cwd, vars = {}, env = {}, timeoutMs = 60_000 }) {
  const dir = mkdtempSync(join(tmpdir(), 'vite-hub-wrangler-dev-'));
  const [port, inspectorPort] = [await freePort(), await freePort()];
  const args = [
    'dev',
    '--local',
    '--enable-containers=false',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspectorPort),
  ];
  args.push('--persist-to', join(dir, 'state'), '--show-interactive-dev-session=false');
  for (const [name, value] of Object.entries(vars)) args.push('--var', `${name}:${value}`);
  const started = Date.now();
  // detached: a process group of its own (wrangler's node, its esbuild and workerd processes).
  const child = spawn(WRANGLER, args, {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...offlineWranglerEnv(join(dir, 'config')),
      CLOUDFLARE_ACCOUNT_ID: '0'.repeat(32),
      CLOUDFLARE_API_TOKEN: 'offline-placeholder',
      ...env,
    },
  });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      killGroup(child.pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    // wrangler's own exit does not wait for its workerd children: make sure the group is gone.
    killGroup(child.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`wrangler dev was not ready within ${timeoutMs} ms`)), timeoutMs);
      const onData = (chunk) => {
        output += chunk;
        const ready = /Ready on (http:\/\/[^\s]+)/.exec(output);
        if (ready) {
          clearTimeout(timer);
          resolve(ready[1]);
        }
      };
      child.stdout.setEncoding('utf8').on('data', onData);
      child.stderr.setEncoding('utf8').on('data', onData);
      exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`wrangler dev exited (${signal ?? code}) before it was ready`));
      });
    });
    return { url, startupMs: Date.now() - started, output: () => output, stop };
  } catch (error) {
    await stop();
    error.message += `\n--- wrangler dev output ---\n${output.slice(-8000)}`;
    throw error;
  }
}

/**
 * A fresh folder under target/wrangler-dev-tests/ for a test's own Worker: inside the repository,
 * so wrangler's bundler resolves its imports (@cloudflare/sandbox, …) from the repository's
 * node_modules. The caller removes it.
 */
export function testWorkerDir(label) {
  const base = join(repoRoot, 'target', 'wrangler-dev-tests');
  mkdirSync(base, { recursive: true });
  return mkdtempSync(join(base, `${label}-`));
}

/** Signals every process of the group `pgid`; a group already gone is not an error. */
function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if (error.code !== 'ESRCH') throw error;
  }
}

/**
 * Waits until this process holds the lock on the repository's Worker build output (a directory
 * target/repo-worker.lock, made atomically, holding its owner's pid), for the test files that
 * run its build step (`node worker/build.mjs`) and bundle what it wrote: node --test runs two files
 * of a lane at once, and worker-build 0.8.7 serializes its own builds but, when one finishes,
 * removes each file of worker/build/ before it moves the new one in, so a bundler reading it then
 * finds no file. A lock whose owner is gone is taken over.
 * @param {number} [timeoutMs] how long to wait for another holder, in ms (a cold build of the Rust Worker takes minutes)
 * @returns {Promise<() => void>} releases the lock
 */
export async function lockRepoWorkerBuild(timeoutMs = 1_800_000) {
  const lock = join(repoRoot, 'target', 'repo-worker.lock');
  mkdirSync(join(repoRoot, 'target'), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    if (lockIsStale(lock)) rmSync(lock, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`${lock} was held for more than ${timeoutMs} ms`);
    else await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Whether the lock's owner has exited (or never wrote its pid within 10 s of making it). */
function lockIsStale(lock) {
  let pid;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs > 10_000;
    } catch {
      return false; // released meanwhile
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}
