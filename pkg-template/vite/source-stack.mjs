// A handler error's stack, mapped from the Box back to the Definition's own source files (`vite dev`
// and `vite-hub-sandbox run`; production keeps no stack at all, see `configureSandbox({ debug })`).
// Host side only: the facts are gathered when a Definition is prepared (the compiled files' esbuild
// source maps) and never ship into the Box; the mapping runs after the Response came back.
// `mapSandboxStack` and `withMappedStack` use nothing outside themselves: generate.mjs copies their
// source into the dev facade.
import path from 'node:path';

/**
 * The stack facts of a prepared Definition: for each shipped JavaScript file (its path in
 * `files`, relative to the install root), the source it shows in a mapped stack: a path
 * (the file is shipped as written) or a source map (v3) whose `sources` are such paths. Paths are
 * relative to `displayRoot`, `/`-separated.
 * @param {{ files: Array<{ path: string }>, installRoot: string, maps?: Map<string, string | object>, mapRoot?: string }} prepared
 *   `installRoot`: the absolute folder `files` are relative to; `maps`: shipped path → esbuild's
 *   source map (JSON text or object) of a compiled file, its `sources` relative to `mapRoot`
 *   (default: the compiled file's folder below `installRoot`)
 * @param {string} displayRoot absolute folder the shown paths are relative to (the app root)
 * @returns {Record<string, string | object>}
 */
export function stackSources({ files, installRoot, maps = new Map(), mapRoot }, displayRoot) {
  const shown = (absolute) => path.relative(displayRoot, absolute).split(path.sep).join('/');
  const sources = {};
  for (const file of files) {
    if (!/\.[cm]?js$/.test(file.path)) continue;
    const map = maps.get(file.path);
    if (map === undefined) {
      sources[file.path] = shown(path.join(installRoot, file.path));
      continue;
    }
    const parsed = typeof map === 'string' ? JSON.parse(map) : map;
    const base = mapRoot ?? path.dirname(path.join(installRoot, file.path));
    // A source that is no file keeps its own name: esbuild's stdin entry (`<…>`, URL-encoded below
    // its resolve folder) and a plugin namespace (`namespace:path`).
    const resolved = parsed.sources.map((source) => {
      const decoded = decodeURIComponent(source);
      if (decoded.includes('<')) return decoded.slice(decoded.indexOf('<'));
      return /^[\w-]+:/.test(source) ? source : shown(path.resolve(base, source));
    });
    sources[file.path] = { version: 3, sources: resolved, names: parsed.names ?? [], mappings: parsed.mappings };
  }
  return sources;
}

/**
 * `stack` with every frame in a shipped file of the Definition rewritten to its source file, line
 * and column (`server/sandboxes/hello/index.ts:3:9`); frames elsewhere (the harness, installed
 * packages) stay as the Box printed them. A shipped file is recognised by its path under the
 * Box's project folder (`…/project/<path>`, crates/core/src/harness.rs `PROJECT_DIR`).
 * @param {string} stack `details.stack` of a `SANDBOX_HANDLER_ERROR` Response
 * @param {Record<string, string | object>} sources from {@link stackSources}
 * @param {Pick<typeof import('@jridgewell/trace-mapping'), 'TraceMap' | 'originalPositionFor'>} traceMapping
 *   `@jridgewell/trace-mapping`
 * @returns {string}
 */
export function mapSandboxStack(stack, sources, traceMapping) {
  const shipped = Object.keys(sources).sort((a, b) => b.length - a.length);
  const traces = new Map();
  const trace = (file) => {
    if (!traces.has(file)) traces.set(file, new traceMapping.TraceMap(sources[file]));
    return traces.get(file);
  };
  return stack.replace(/(?:file:\/\/)?(\/[^\s()]*?):(\d+):(\d+)/g, (frame, location, line, column) => {
    const file = shipped.find((candidate) => location.endsWith(`/project/${candidate}`));
    if (file === undefined) return frame;
    const source = sources[file];
    if (typeof source === 'string') return `${source}:${line}:${column}`;
    const original = traceMapping.originalPositionFor(trace(file), { line: Number(line), column: Number(column) - 1 });
    if (original.source === null || original.line === null) return frame;
    return `${original.source}:${original.line}:${original.column + 1}`;
  });
}

/**
 * `response` with the `details.stack` of its `SANDBOX_HANDLER_ERROR` body replaced by
 * `mapStack(stack)` (the same status, statusText and headers but `content-length`); any other
 * Response, or a stack `mapStack` leaves as it is, unchanged.
 * @param {Response} response
 * @param {(stack: string) => string | Promise<string>} mapStack
 * @returns {Promise<Response>}
 */
export async function withMappedStack(response, mapStack) {
  if (response.status !== 500 || !(response.headers.get('content-type') ?? '').startsWith('application/json'))
    return response;
  const body = await response
    .clone()
    .json()
    .catch(() => null);
  const stack = body?.error?.code === 'SANDBOX_HANDLER_ERROR' ? body.error.details?.stack : undefined;
  if (typeof stack !== 'string') return response;
  const mapped = await mapStack(stack);
  if (mapped === stack) return response;
  body.error.details.stack = mapped;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(body), { status: response.status, statusText: response.statusText, headers });
}
