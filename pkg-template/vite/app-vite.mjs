// The app's Vite, for the build steps that compile, parse and bundle a Definition's code (Node
// only). `vite` is the package's one peer dependency (optional, `^7 || ^8`): imported from where
// the app resolves it, never bundled, and loaded on the first step that needs it, so a server that
// only runs Definitions needs no Vite. What each major offers (../shared/reference/vite-build-deps.md):
//
// - TypeScript: `transformWithOxc` (Vite 8, oxc) else `transformWithEsbuild` (Vite 7, which
//   depends on esbuild; Vite 8 no longer installs it);
// - parsing: `parseAst` (rollup's on 7, oxc's on 8), ESTree with UTF-16 `start`/`end`; this file
//   adds `range` (eslint-scope needs it) and `loc.start` (1-based line, 0-based column);
// - bundling: `build()` (free-form.mjs).
import { BOX_NODE_TARGET } from './box-target.mjs';
import { sandboxError } from './sandbox-error.mjs';

let loading = null;

/**
 * The app's `vite` module, loaded once. `purpose` says which build step needs it (for the message).
 * @param {string} purpose e.g. 'Compiling a Definition\'s TypeScript'
 * @returns {Promise<any>} the module's exports
 * @throws {SandboxError} `SANDBOX_NOT_SUPPORTED` (501) when `vite` is not installed where the app
 *   resolves it, naming it and `npm i -D vite`.
 */
export function appVite(purpose) {
  loading ??= import('vite').catch((error) => {
    loading = null;
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes("'vite'")) throw error;
    throw sandboxError(
      'SANDBOX_NOT_SUPPORTED',
      `${purpose} needs the package "vite", which is not installed: it is the peer dependency of @vite-hub/sandbox whose TypeScript transform, parser and bundler its build steps use. Install it in your app: npm i -D vite`,
      error,
    );
  });
  return loading;
}

/**
 * One module's TypeScript (or JavaScript) compiled to JavaScript by the app's Vite, module syntax
 * kept as written (no output format), with an external source map naming `file`.
 *
 * Vite 7 (esbuild): for the Box's Node (box-target.mjs), exactly as the package compiled before.
 * Vite 8 (oxc): syntax is kept (`target: 'esnext'`): oxc lowers with helpers imported from
 * `@oxc-project/runtime`, a package the Box does not have. Neither reads a tsconfig.json.
 * @param {string} code the source text
 * @param {string} file its path, as named in the map and in messages
 * @param {{ lang: 'ts' | 'js', target?: 'box' | 'esnext', purpose: string }} options
 * @returns {Promise<{ code: string, map: string }>} `map`: JSON text
 * @throws what the transform threw (read it with sandbox-error.mjs `transformProblem`)
 */
export async function transformModule(code, file, { lang, target = 'box', purpose }) {
  const vite = await appVite(purpose);
  let result;
  if (typeof vite.transformWithOxc === 'function') {
    result = await vite.transformWithOxc(code, file, { lang, target: 'esnext', sourcemap: true, tsconfig: false });
    // oxc names the source by the path given; esbuild by `sourcefile`: the same here.
  } else {
    result = await vite.transformWithEsbuild(code, file, {
      loader: lang,
      ...(target === 'box' ? BOX_NODE_TARGET : { target: 'esnext' }),
      sourcefile: file,
      sourcemap: 'external',
      logLevel: 'silent',
      // A string: Vite reads no tsconfig.json for the file (esbuild's own defaults apply).
      tsconfigRaw: '{}',
    });
  }
  const map = typeof result.map === 'string' ? result.map : JSON.stringify(result.map);
  return { code: result.code, map };
}

/** Offsets at which each line of `code` starts (line 1 at index 0). */
function lineStarts(code) {
  const starts = [0];
  for (let i = 0; i < code.length; i++) {
    const char = code.charCodeAt(i);
    if (char === 10 || char === 0x2028 || char === 0x2029 || (char === 13 && code.charCodeAt(i + 1) !== 10))
      starts.push(i + 1);
  }
  return starts;
}

/** `{ line, column }` (1-based line, 0-based UTF-16 column) of `offset`, by binary search in `starts`. */
function positionIn(starts, offset) {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle] <= offset) low = middle;
    else high = middle - 1;
  }
  return { line: low + 1, column: offset - starts[low] };
}

/**
 * What parseModule throws for code that is not a valid module: `loc` in `code`, null when the
 * parser gave no offset.
 * @typedef {SyntaxError & { loc?: { line: number, column: number } | null }} ModuleSyntaxError
 */

/**
 * `code` parsed as an ES module by the app's Vite (`parseAst`; JavaScript only: compile
 * TypeScript first). Every node gets `range: [start, end]` (eslint-scope reads it) and
 * `loc: { start: { line, column } }` (1-based line, 0-based column, as acorn's).
 * @returns {Promise<object>} the ESTree `Program`
 * @throws {SyntaxError} with `loc: { line, column }` (of `code`) when it is not a valid module.
 */
export async function parseModule(code, purpose) {
  const vite = await appVite(purpose);
  let program;
  try {
    program = vite.parseAst(code, { sourceType: 'module', range: true });
  } catch (error) {
    const offset = typeof error?.pos === 'number' ? error.pos : null;
    const first =
      String(error?.message ?? error)
        .split('\n')
        .find((line) => line.trim() && !/^Parse failed with/.test(line)) ?? String(error);
    /** @type {ModuleSyntaxError} */
    const syntaxError = new SyntaxError(first.replace(/^\[[A-Z_]+\]\s*/, ''), { cause: error });
    syntaxError.loc = offset === null ? null : positionIn(lineStarts(code), offset);
    throw syntaxError;
  }
  const starts = lineStarts(code);
  const stack = [program];
  while (stack.length > 0) {
    const node = stack.pop();
    node.range ??= [node.start, node.end];
    node.loc = { start: positionIn(starts, node.start) };
    for (const key of Object.keys(node)) {
      if (key === 'loc' || key === 'range') continue;
      const value = node[key];
      if (Array.isArray(value)) {
        for (const item of value) if (item && typeof item.type === 'string') stack.push(item);
      } else if (value && typeof value.type === 'string') {
        stack.push(value);
      }
    }
  }
  return program;
}
