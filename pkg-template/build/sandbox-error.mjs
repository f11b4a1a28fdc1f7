// The error the JS glue throws for bad input it finds before the core sees it (a file it cannot
// read or compile, a symlink that escapes): the same shape as the core's errors
// (src/error/js.rs), with the status of its code from the core's table, so callers handle one kind.
import { ERROR_STATUS } from '../runtime/facts.mjs';

/**
 * A `SandboxError`: `name`, `code`, `status` (the HTTP status of `code`, DESIGN.md §5).
 * @param {keyof typeof ERROR_STATUS} code a `SANDBOX_*` code
 * @param {string} message says what is wrong, where, and how to fix it
 * @param {unknown} [cause] the underlying error (kept as `error.cause`)
 */
export function sandboxError(code, message, cause) {
  const status = ERROR_STATUS[code];
  if (status === undefined) throw new TypeError(`unknown sandbox error code ${code}`);
  const error = new Error(message, cause === undefined ? undefined : { cause });
  error.name = 'SandboxError';
  error.code = code;
  error.status = status;
  return error;
}

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
