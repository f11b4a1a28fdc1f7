// The Definitions the bench runs (scripts/bench.mjs): a trivial one and one with an npm
// dependency (the example slugify-title), and one Run of either timed to its parsed result.
import { readFileSync } from 'node:fs';
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
import { serverTiming } from './bench-stats.mjs';

export const TRIVIAL_ENTRY = 'export default (payload) => ({ sum: payload.a + payload.b });\n';
export const TRIVIAL_PAYLOAD = { a: 1, b: 2 };
export const DEPS_PAYLOAD = { title: 'Hello Bench World' };

/** The trivial Definition's files; `variant` changes its manifest (a new install-plan digest: a cold Run). */
export function trivialFiles(variant) {
  return [
    {
      path: 'package.json',
      content: JSON.stringify({ name: 'bench-trivial', description: `variant ${variant}`, type: 'module' }),
    },
    { path: 'index.mjs', content: TRIVIAL_ENTRY },
  ];
}

const slugifyDir = new URL('../examples/app/server/sandboxes/slugify-title/', import.meta.url);
/** slugify-title's files (one npm dependency, with its lockfile); `variant` changes its manifest. */
export function depsFiles(variant) {
  const manifest = JSON.parse(readFileSync(new URL('package.json', slugifyDir), 'utf8'));
  return [
    { path: 'package.json', content: JSON.stringify({ ...manifest, description: `variant ${variant}` }) },
    { path: 'package-lock.json', content: readFileSync(new URL('package-lock.json', slugifyDir), 'utf8') },
    { path: 'index.mjs', content: readFileSync(new URL('index.mjs', slugifyDir), 'utf8') },
  ];
}

/** The files and payload of a kind of Definition (`trivial` or `deps`). */
export const filesOf = (kind, variant) => (kind === 'deps' ? depsFiles(variant) : trivialFiles(variant));
export const payloadOf = (kind) => (kind === 'deps' ? DEPS_PAYLOAD : TRIVIAL_PAYLOAD);

let variantSeq = 0;
/** Registers a new variant of a Definition (never run before: its first Run is cold); its name. */
export function freshDefinition(kind) {
  variantSeq += 1;
  const name = `bench/${kind}-${process.pid}-${variantSeq}`;
  registerSandbox(name, { files: filesOf(kind, name) });
  return name;
}

/**
 * One runSandbox, its clock stopped once its body is parsed; throws unless it answered 200.
 * Resolves to `{ ms, phases }` (phases: its Server-Timing, `name → ms`).
 */
export async function runOnce(name, payload) {
  const started = performance.now();
  const response = await runSandbox(name, payload);
  const body = await response.text();
  if (response.status !== 200)
    throw new Error(`runSandbox("${name}") answered ${response.status}: ${body.slice(0, 300)}`);
  JSON.parse(body);
  const ms = performance.now() - started;
  const timing = response.headers.get('server-timing') ?? '';
  return { ms, phases: serverTiming(timing), timing };
}

/** Sends the Runs of this process to the host at `baseUrl`, with `extra` config; null, or why it was refused. */
export function configureLocal(baseUrl, token, extra = {}) {
  try {
    configureSandbox({ provider: 'local', local: { baseUrl, token }, ...extra });
    return null;
  } catch (error) {
    return `configureSandbox refuses ${Object.keys(extra).join(', ')}: ${error.message}`;
  }
}
