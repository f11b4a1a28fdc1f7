// The build steps' errors for bad input found before the core sees it (a file it cannot read or
// compile, a symlink that escapes): runtime/sandbox-error.mjs's SandboxError, shaped like the core's.
import { sandboxError } from '../runtime/sandbox-error.mjs';

export { sandboxError };

/**
 * A `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` (HTTP status 400).
 * @param {string} message says what is wrong, where, and how to fix it
 * @param {unknown} [cause] the underlying error (kept as `error.cause`)
 */
export function invalidArgument(message, cause) {
  return sandboxError('SANDBOX_INVALID_ARGUMENT', message, cause);
}

/**
 * `file:line:column: text` of the first message of an esbuild failure (`transform`/`build`), for
 * `SANDBOX_INVALID_ARGUMENT` messages; `fallbackFile` when esbuild gives no location.
 * @param {unknown} error what esbuild threw
 * @param {string} fallbackFile the file being compiled or bundled
 */
export function esbuildProblem(error, fallbackFile) {
  const first = Array.isArray(error?.errors) ? error.errors[0] : undefined;
  const location = first?.location;
  const where = location ? `${location.file || fallbackFile}:${location.line}:${location.column + 1}` : fallbackFile;
  return `${where}: ${first ? first.text : String(error?.message ?? error)}`;
}
