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
