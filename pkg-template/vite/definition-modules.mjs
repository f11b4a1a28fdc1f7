// Compiles a Definition's TypeScript and checks its module graph (Node only): the app's Vite
// compiles (app-vite.mjs: esbuild on Vite 7, oxc on Vite 8),
// module-facts.mjs reads imports and CommonJS uses, the Rust core (checkModuleGraph, rules in
// crates/core/src/definition/module_graph.rs) decides what is allowed and which specifiers to rewrite.
// The rules are in the tooling wasm module (tooling-wasm.mjs). Contract: docs/internals/build-steps.md, "TypeScript".
import * as wasm from './tooling-wasm.mjs';
import { moduleFacts } from './module-facts.mjs';
import { transformModule } from './app-vite.mjs';
import { invalidArgument, transformProblem } from './sandbox-error.mjs';

const TYPESCRIPT = /\.m?ts$/;
const JAVASCRIPT = /\.m?js$/;
const DECLARATION = /\.d\.m?ts$/;

function compiledName(filePath) {
  return `${filePath}.mjs`;
}

function isTypeScriptSource(filePath) {
  return TYPESCRIPT.test(filePath) && !DECLARATION.test(filePath);
}

const decode = (content) => (typeof content === 'string' ? content : new TextDecoder().decode(content));

/**
 * The compiled code and external source map (JSON text) of one TypeScript file. No output
 * `format`: the module syntax stays as written, so CommonJS uses reach the check. (With
 * `format: 'esm'` esbuild wraps a file that uses only `module`/`exports` in a function binding
 * both, which hides them.)
 */
async function compileOne(file) {
  const purpose = "Compiling a Definition's TypeScript";
  const source = decode(file.content);
  try {
    return await transformModule(source, file.path, { lang: 'ts', target: 'box', purpose });
  } catch (error) {
    if (error?.name === 'SandboxError') throw error;
    throw invalidArgument(`Cannot compile ${transformProblem(error, file.path)}`, error);
  }
}

/** The facts of a JS source; a syntax error becomes a fact (Rust reports it if the module is reachable). */
async function javaScriptFacts(file) {
  try {
    return await moduleFacts(decode(file.content));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const loc = /** @type {import('./app-vite.mjs').ModuleSyntaxError} */ (error).loc;
    const message = error.message.replace(/ \(\d+:\d+\)$/, '');
    return {
      imports: [],
      commonjs: [],
      parseError: { message, line: loc?.line ?? null, column: loc ? loc.column + 1 : null },
    };
  }
}

/** The compiled map of `filePath` with its source named relative to the compiled sibling's folder (esbuild names it as `sourcefile`). */
function relativeSources(map, filePath) {
  const parsed = JSON.parse(map);
  parsed.sources = parsed.sources.map((source) => (source === filePath ? filePath.split('/').pop() : source));
  delete parsed.sourcesContent;
  return parsed;
}

/** `code` with the edits (UTF-16 offsets, non-overlapping) applied. */
function applyEdits(code, edits) {
  let output = '';
  let cursor = 0;
  for (const edit of [...edits].sort((a, b) => a.start - b.start)) {
    output += code.slice(cursor, edit.start) + edit.text;
    cursor = edit.end;
  }
  return output + code.slice(cursor);
}

/**
 * Compiles every `X.ts` / `X.mts` (not `.d.ts`) to a sibling `X.ts.mjs` / `X.mts.mjs` and checks
 * the module graph of the package: relative specifiers that name a package TypeScript file
 * (`./x.ts`, or `./x.js` whose only source is `x.ts`) are rewritten to the compiled sibling.
 * Returns all input files plus the generated ones, sorted by path.
 *
 * Facts are gathered for every file, a shipped workspace included, so imported workspace
 * packages are checked too: they must resolve (exports/main/index.js, as Node) to shipped
 * JavaScript (R0018–R0020).
 *
 * The graph rules (R0018–R0031 of the contract §4.4) run only for a package whose package.json
 * has `"type": "module"` and that has exactly one root entry; other problems are left to
 * registration (`registerSandbox`), whose messages win.
 *
 * @param {Array<{ path: string, content: Uint8Array | string, mode?: number }>} files
 * @param {{ name?: string, packagePath?: string, sourceMaps?: Map<string, string> }} [options] `name` for messages (`Sandbox "<name>": …`);
 *   `packagePath` = the package directory inside `files` (`''` = the root); `sourceMaps`, when
 *   given, receives each compiled file's source map (JSON text, keyed by the compiled path;
 *   its `sources` name the TypeScript file relative to the compiled file's folder).
 * @returns {Promise<Array<{ path: string, content: Uint8Array, mode?: number }>>}
 * @throws {Error} `code: 'SANDBOX_INVALID_ARGUMENT'` when a file collides with a compiled name,
 *   TypeScript does not compile (`Cannot compile <file>:<line>:<column>: …`), or reachable code
 *   breaks a module-graph rule (`Sandbox "<name>": <file>:<line>:<column> …`), including an
 *   imported workspace package without runtime JavaScript.
 */
export async function compileTypeScriptFiles(files, { name, packagePath = '', sourceMaps } = {}) {
  const present = new Set(files.map((file) => file.path));
  const sources = files.filter((file) => isTypeScriptSource(file.path));
  for (const source of sources) {
    if (present.has(compiledName(source.path))) {
      throw invalidArgument(
        `Definition file "${compiledName(source.path)}" collides with the compiled output of "${source.path}"; rename it.`,
      );
    }
  }

  const compiled = new Map();
  const modules = [];
  for (const file of files) {
    if (isTypeScriptSource(file.path)) {
      const { code, map } = await compileOne(file);
      let facts;
      try {
        facts = await moduleFacts(code, { map });
      } catch (error) {
        if (error?.name === 'SandboxError') throw error;
        throw invalidArgument(`Cannot read the imports of compiled ${file.path}: ${error.message}`, error);
      }
      compiled.set(file.path, code);
      sourceMaps?.set(compiledName(file.path), relativeSources(map, file.path));
      modules.push({ path: file.path, ...facts });
    } else if (JAVASCRIPT.test(file.path)) {
      modules.push({ path: file.path, ...(await javaScriptFacts(file)) });
    }
  }

  const manifestPath = packagePath ? `${packagePath}/package.json` : 'package.json';
  const manifest = files.find((file) => file.path === manifestPath);
  const plan = wasm.checkModuleGraph({
    name,
    manifest: manifest === undefined ? undefined : decode(manifest.content),
    packagePath,
    files: files.map((file) => file.path),
    modules,
    // Every shipped package.json: Rust finds the pnpm workspace packages the Definition imports.
    manifests: files
      .filter((file) => file.path === 'package.json' || file.path.endsWith('/package.json'))
      .map((file) => ({ path: file.path, text: decode(file.content) })),
  });

  const encoder = new TextEncoder();
  const output = files.map((file) => ({
    ...file,
    content: typeof file.content === 'string' ? encoder.encode(file.content) : file.content,
  }));
  for (const [path, code] of compiled) {
    output.push({ path: compiledName(path), content: encoder.encode(applyEdits(code, plan.rewrites[path] ?? [])) });
  }
  return output.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
