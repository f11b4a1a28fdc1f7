// Error bodies of the Cloudflare container control API (protocol note §4.1):
// `{ code, message, context, httpStatus, timestamp }` with the HTTP status equal to `httpStatus`.
// Errors of the shared Box engine (BoxPathError, BoxRequestError, HttpError) are translated here.
import { sendJson } from './http-io.mjs';

/** An error answered in the container API's shape (`code` is one of the note's §4.1 codes). */
export class ContainerApiError extends Error {
  constructor(httpStatus, code, message, context = {}) {
    super(message);
    this.httpStatus = httpStatus;
    this.containerCode = code;
    this.context = context;
  }
}

/** Engine error codes (box.mjs, paths.mjs, http-io.mjs) → container API [status, code]. */
const ENGINE_CODES = {
  bad_path: [400, 'VALIDATION_FAILED'],
  bad_request: [400, 'VALIDATION_FAILED'],
  payload_too_large: [413, 'VALIDATION_FAILED'],
  capacity: [503, 'CONTAINER_UNAVAILABLE'],
  host_closing: [503, 'CONTAINER_UNAVAILABLE'],
  spawn_failed: [503, 'CONTAINER_UNAVAILABLE'],
  tool_missing: [503, 'CONTAINER_UNAVAILABLE'],
};

/** The §4.1 body of any error thrown by a handler (unknown errors: 500 `INTERNAL_ERROR`). */
export function containerErrorBody(err) {
  let status;
  let code;
  let context = {};
  if (err instanceof ContainerApiError) {
    [status, code, context] = [err.httpStatus, err.containerCode, err.context];
  } else if (err?.code === 'bad_path' && err.escape) {
    // Leaving the Box: the real container has no Box to leave, so this is a refusal of ours.
    [status, code] = [403, 'PERMISSION_DENIED'];
  } else if (typeof err?.code === 'string' && ENGINE_CODES[err.code]) {
    [status, code] = ENGINE_CODES[err.code];
  } else {
    [status, code] = [500, 'INTERNAL_ERROR'];
  }
  const message =
    status === 500 && code === 'INTERNAL_ERROR'
      ? `the local Box host failed: ${[err?.code, err?.message].filter((part) => typeof part === 'string' && part !== '').join(': ') || String(err)}`
      : String(err?.message ?? err);
  return { code, message, context, httpStatus: status, timestamp: new Date().toISOString() };
}

/** Answers `err` as a §4.1 error body (or cuts the connection when a response already started). */
export function sendContainerError(res, err) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = containerErrorBody(err);
  sendJson(res, body.httpStatus, body);
}

/** Answers a §4.3 success body: `value` plus `success: true` and `timestamp`. */
export function sendContainerJson(res, value) {
  sendJson(res, 200, { success: true, ...value, timestamp: new Date().toISOString() });
}
