// Shared set-up of the integration tests: a local Box host of our own (so counters can be read)
// and in-memory Definitions.
import { afterEach } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { execFileSync } from 'node:child_process';
import { configureSandbox, registerSandbox } from '@vite-hub/sandbox';

/** Starts a Box host and points the `local` provider at it. */
export async function useLocalHost() {
  const host = await startBoxHost({});
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  return host;
}

/**
 * Registers a JS-only Definition: `index` is the source of index.mjs; `manifest` is merged into
 * package.json.
 */
export function defineTestSandbox(name, index, { manifest = {}, files = {} } = {}) {
  const packageJson = JSON.stringify({ name: name.replaceAll('/', '-'), private: true, type: 'module', ...manifest });
  registerSandbox(name, {
    files: [
      { path: 'package.json', content: packageJson },
      { path: 'index.mjs', content: index },
      ...Object.entries(files).map(([path, content]) => ({ path, content })),
    ],
  });
}

/** The phases named in a Server-Timing header value. */
export function timingPhases(response) {
  return (response.headers.get('server-timing') ?? '')
    .split(',')
    .map((part) => part.trim().split(';')[0])
    .filter(Boolean);
}

/** Lines of `ps` whose command line contains `marker` (a string, or a RegExp it matches). */
export async function processesMatching(marker) {
  const matches = (line) => (typeof marker === 'string' ? line.includes(marker) : marker.test(line));
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => matches(line) && !line.includes('ps -eo'));
}

/** Whether bubblewrap is installed and can create a sandbox here (the Box host's isolation). */
export const hasBwrap = (() => {
  try {
    execFileSync('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** `skip` of a test that needs bubblewrap: false where it works, else the reason it is skipped. */
export const NO_BWRAP = hasBwrap ? false : 'bubblewrap (bwrap) is not installed or cannot create a sandbox here';

/**
 * Registers the Definition `name` with one dependency, slugify 1.6.9 (SLUGIFY_LOCK), and `index`
 * as its index.mjs (`extraFiles`: more `{ path, content }` beside it); its package name is its own, so
 * each such Definition has its own install digest.
 */
export function defineSlugifySandbox(name, index, extraFiles = []) {
  const manifest = {
    name: name.replaceAll('/', '-'),
    private: true,
    type: 'module',
    dependencies: { slugify: '1.6.9' },
  };
  registerSandbox(name, {
    files: [
      { path: 'package.json', content: JSON.stringify(manifest) },
      { path: 'package-lock.json', content: JSON.stringify(SLUGIFY_LOCK, null, 2) },
      { path: 'index.mjs', content: index },
      ...extraFiles,
    ],
  });
}

/** npm lockfile (v3) of a project whose one dependency is slugify 1.6.9 (the prepared-project tests). */
export const SLUGIFY_LOCK = {
  lockfileVersion: 3,
  requires: true,
  packages: {
    '': { dependencies: { slugify: '1.6.9' } },
    'node_modules/slugify': {
      version: '1.6.9',
      resolved: 'https://registry.npmjs.org/slugify/-/slugify-1.6.9.tgz',
      integrity: 'sha512-vZ7rfeehZui7wQs438JXBckYLkIIdfHOXsaVEUMyS5fHo1483l1bMdo0EDSWYclY0yZKFOipDy4KHuKs6ssvdg==',
      license: 'MIT',
      engines: { node: '>=8.0.0' },
    },
  },
};

/** Polls `check` (sync or async) every 20 ms until it returns true: true, or false once `ms` passed. */
export async function until(check, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/**
 * One request to a Box host's API as its clients send it (bearer token, JSON body): `{ status,
 * text }` of the answer.
 */
export async function hostApi(host, method, route, body) {
  const res = await fetch(`${host.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/**
 * The Box session ids a test file opens on `host()` (add each): all are stopped after every test,
 * so none holds the host's memory bound (maxTotalMemoryBytes) for the next one.
 */
export function boxesStoppedAfterEach(host) {
  const opened = new Set();
  afterEach(async () => {
    await Promise.all([...opened].map((sid) => hostApi(host(), 'POST', `/v2/sandboxes/sessions/${sid}/stop`)));
    opened.clear();
  });
  return opened;
}
