// Helpers for the Vite plugin tests: a copy of examples/app under target/ (inside the repo, so
// Node resolves vite, nitro and @vite-hub/sandbox from the repo's node_modules), a free port,
// JSON POSTs.
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Copies examples/app (without generated or built output) to a fresh directory; returns its path. */
export function copyExampleApp(prefix) {
  const base = join(repoRoot, 'target', 'vite-tests');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, `${prefix}-`));
  cpSync(join(repoRoot, 'examples', 'app'), dir, {
    recursive: true,
    filter: (source) => !/[\\/](\.output|\.nitro|\.vite-hub|node_modules)$/.test(source),
  });
  return dir;
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/** Stops a child process (SIGTERM) and waits for it to exit; no-op when absent or already exited. */
export async function stopChild(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

export async function postJson(url, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text, headers: response.headers };
}

/** Polls `check` until it returns a truthy value or `ms` pass. */
export async function eventually(check, ms = 20_000, what = 'condition') {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`timed out waiting for ${what}: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}
