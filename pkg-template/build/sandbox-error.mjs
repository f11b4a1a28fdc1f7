// The error the JS glue throws for bad input it finds before the core sees it (a file it cannot
// read or compile, a symlink that escapes): the same shape as the core's errors (`to_js_error` in
// src/api.rs), so callers handle one kind.

/**
 * A `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` (HTTP status 400).
 * @param {string} message says what is wrong, where, and how to fix it
 * @param {unknown} [cause] the underlying error (kept as `error.cause`)
 */
export function invalidArgument(message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause });
  error.name = 'SandboxError';
  error.code = 'SANDBOX_INVALID_ARGUMENT';
  error.status = 400;
  return error;
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
