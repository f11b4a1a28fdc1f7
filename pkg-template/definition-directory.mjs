// Reads a Definition folder into memory and compiles its local TypeScript (Node only).
// Contract: docs/internals.md, "TypeScript" and "Project resolution".
import path from 'node:path';
import { transform } from 'esbuild';
import { init as initLexer, parse as parseImports } from 'es-module-lexer';
import { readProjectFiles } from './definition-project.mjs';

const TYPESCRIPT = /\.m?ts$/;
const DECLARATION = /\.d\.m?ts$/;

function invalidArgument(message) {
  const error = new Error(message);
  error.code = 'SANDBOX_INVALID_ARGUMENT';
  return error;
}

/**
 * Reads a Definition's project (see definition-project.mjs: the folder alone, or the parts of an
 * enclosing pnpm workspace) and adds the compiled `.ts.mjs` / `.mts.mjs` siblings of every
 * shipped TypeScript file (a shipped workspace is compiled whole).
 * @param {string} dir
 * @param {{ appRoot?: string }} [options] `appRoot`: search pnpm workspaces upwards up to it
 * @returns {Promise<{ name: string, files: Array<{ path: string, content: Uint8Array, mode?: number }>, packagePath: string }>}
 */
export async function readDefinitionDirectory(dir, options = {}) {
  const absolute = path.resolve(dir);
  const { files, packagePath } = await readProjectFiles(absolute, options);
  return { name: path.basename(absolute), files: await compileTypeScriptFiles(files), packagePath };
}

function compiledName(filePath) {
  return `${filePath}.mjs`;
}

function isTypeScriptSource(filePath) {
  return TYPESCRIPT.test(filePath) && !DECLARATION.test(filePath);
}

/** Maps a relative specifier of `fromPath` to the compiled sibling it should load, or null. */
function rewriteTarget(specifier, fromPath, sources, present) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return null;
  const match = /^([^?#]*)([?#].*)?$/.exec(specifier);
  const bare = match[1];
  const suffix = match[2] ?? '';
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(fromPath), bare));
  if (target.startsWith('../')) return null;
  if (sources.has(target)) return `${bare}.mjs${suffix}`;
  const alternatives = { '.js': ['.ts', '.mts'], '.mjs': ['.mts', '.ts'] };
  const extension = path.posix.extname(bare);
  if (!alternatives[extension] || present.has(target)) return null;
  const stem = bare.slice(0, -extension.length);
  for (const replacement of alternatives[extension]) {
    if (sources.has(target.slice(0, -extension.length) + replacement)) return `${stem}${replacement}.mjs${suffix}`;
  }
  return null;
}

function rewriteSpecifiers(code, fromPath, sources, present) {
  const [imports] = parseImports(code, fromPath);
  let output = '';
  let cursor = 0;
  for (const item of imports) {
    if (item.n === undefined || item.d === -2) continue;
    const replacement = rewriteTarget(item.n, fromPath, sources, present);
    if (replacement === null) continue;
    // Static imports: s..e is inside the quotes; dynamic imports: s..e includes them.
    const start = item.d === -1 ? item.s - 1 : item.s;
    const end = item.d === -1 ? item.e + 1 : item.e;
    output += code.slice(cursor, start) + JSON.stringify(replacement);
    cursor = end;
  }
  return output + code.slice(cursor);
}

async function compileOne(file, sources, present) {
  const source = typeof file.content === 'string' ? file.content : new TextDecoder().decode(file.content);
  let code;
  try {
    ({ code } = await transform(source, {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      sourcefile: file.path,
      logLevel: 'silent',
    }));
  } catch (error) {
    const first = error && Array.isArray(error.errors) ? error.errors[0] : undefined;
    const where = first && first.location ? `${file.path}:${first.location.line}:${first.location.column + 1}` : file.path;
    const reason = first ? first.text : String(error && error.message);
    const failure = invalidArgument(`Cannot compile ${where}: ${reason}`);
    failure.cause = error;
    throw failure;
  }
  try {
    return rewriteSpecifiers(code, file.path, sources, present);
  } catch (error) {
    const failure = invalidArgument(`Cannot read the imports of compiled ${file.path}: ${error.message}`);
    failure.cause = error;
    throw failure;
  }
}

/**
 * Compiles every `X.ts` / `X.mts` (not `.d.ts`) to a sibling `X.ts.mjs` / `X.mts.mjs`, rewriting
 * relative specifiers that name a package TypeScript file to the compiled sibling.
 * Returns all input files plus the generated ones, sorted by path.
 * @param {Array<{ path: string, content: Uint8Array | string, mode?: number }>} files
 * @returns {Promise<Array<{ path: string, content: Uint8Array, mode?: number }>>}
 */
export async function compileTypeScriptFiles(files) {
  const present = new Set(files.map((file) => file.path));
  const sources = new Set(files.map((file) => file.path).filter(isTypeScriptSource));
  for (const source of sources) {
    if (present.has(compiledName(source))) {
      throw invalidArgument(`Definition file "${compiledName(source)}" collides with the compiled output of "${source}"; rename it.`);
    }
  }
  await initLexer;
  const encoder = new TextEncoder();
  const output = files.map((file) => ({
    ...file,
    content: typeof file.content === 'string' ? encoder.encode(file.content) : file.content,
  }));
  for (const file of files) {
    if (!sources.has(file.path)) continue;
    const code = await compileOne(file, sources, present);
    output.push({ path: compiledName(file.path), content: encoder.encode(code) });
  }
  return output.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
