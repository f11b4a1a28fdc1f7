// The error the JS glue throws for bad input it finds before the core sees it (a request body
// that is not JSON, a file it cannot read or compile): the same shape as the core's errors
// (src/error/js.rs), with the status of its code from the core's table, so callers handle one kind.
import { ERROR_STATUS } from './facts.mjs';

/**
 * What sandboxError() makes (runtime/index.d.ts `SandboxError`); `details` as the core's errors
 * have them, set by the caller where a code has some.
 * @typedef {Error & { code: string, status: number, details?: Record<string, unknown> }} SandboxError
 */

/**
 * A `SandboxError`: `name`, `code`, `status` (the HTTP status of `code`, DESIGN.md §5).
 * @param {keyof typeof ERROR_STATUS} code a `SANDBOX_*` code
 * @param {string} message says what is wrong, where, and how to fix it
 * @param {unknown} [cause] the underlying error (kept as `error.cause`)
 * @returns {SandboxError}
 */
export function sandboxError(code, message, cause) {
  const status = ERROR_STATUS[code];
  if (status === undefined) throw new TypeError(`unknown sandbox error code ${code}`);
  const error = /** @type {SandboxError} */ (new Error(message, cause === undefined ? undefined : { cause }));
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
