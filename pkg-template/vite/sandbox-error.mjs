// The build steps' errors for bad input found before the core sees it (a file it cannot read or
// compile, a symlink that escapes): runtime/sandbox-error.mjs's SandboxError, shaped like the core's,
// and where a failed transform or bundle of the app's Vite points.
export { invalidArgument, sandboxError } from '../runtime/sandbox-error.mjs';

/**
 * A message of a failed transform or bundle of the app's Vite, as far as transformProblem reads
 * it: esbuild's `text` and `location` (Vite 7), oxc's or rollup's `loc`, `id` and `message`.
 * @typedef {{
 *   text?: string,
 *   location?: { file?: string, line: number, column: number } | null,
 *   loc?: { file?: string, line?: number, column?: number } | null,
 *   id?: string,
 *   message?: string,
 * }} TransformMessage
 */

/**
 * `file:line:column: text` of the first message of a failed transform or bundle of the app's
 * Vite (esbuild's `errors[].location` on Vite 7, oxc's or rollup's `loc` elsewhere), for
 * `SANDBOX_INVALID_ARGUMENT` messages; `fallbackFile` when the error gives no location.
 * @param {TransformMessage & { errors?: TransformMessage[] }} error what the transform or
 *   `build()` threw (any value: every field is read with `?.`)
 * @param {string} fallbackFile the file being compiled or bundled
 * @param {string} [root] absolute directory that absolute file names are shown relative to
 */
export function transformProblem(error, fallbackFile, root) {
  const first = Array.isArray(error?.errors) && error.errors.length > 0 ? error.errors[0] : error;
  const shown = (file) => {
    if (!file) return fallbackFile;
    const name = String(file).split('?')[0];
    return root && name.startsWith(`${root}/`) ? name.slice(root.length + 1) : name;
  };
  if (typeof first?.text === 'string') {
    const location = first.location;
    const where = location ? `${shown(location.file)}:${location.line}:${location.column + 1}` : fallbackFile;
    return `${where}: ${first.text}`;
  }
  const loc = first?.loc ?? error?.loc;
  const file = shown(loc?.file ?? first?.id ?? error?.id);
  const where = typeof loc?.line === 'number' ? `${file}:${loc.line}:${loc.column + 1}` : file;
  return `${where}: ${firstLine(first?.message ?? error?.message ?? error)}`;
}

/** The first meaningful line of a Vite/oxc/rollup message, without its `[CODE]`, `[plugin x]` or `file:` prefixes. */
function firstLine(message) {
  const lines = String(message)
    .split('\n')
    .map((line) => line.trim())
    .filter(
      (line) => line && !/^Transform failed with \d+ error/.test(line) && !/^Build failed with \d+ error/.test(line),
    );
  let line = lines[0] ?? String(message);
  line = line
    .replace(/^\[plugin [^\]]+\]\s*/, '')
    .replace(/^\[[A-Z_]+\]\s*/, '')
    .replace(/^(?:Error|SyntaxError|RollupError):\s*/, '');
  return line;
}
