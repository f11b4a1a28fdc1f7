// HTTP plumbing of the Box host: bounded request bodies, JSON answers and wire error bodies.

/** Largest JSON request body (bytes). */
export const MAX_JSON_BYTES = 1024 * 1024;
/** Largest `fs/write` archive body (bytes). */
export const MAX_ARCHIVE_BYTES = 256 * 1024 * 1024;

/** An error answered as `{ error: { code, message } }` with `status`. */
export class HttpError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Reads the whole body, failing with 413 past `limit` bytes. */
export function readBody(req, limit) {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(new HttpError(413, 'payload_too_large', `request body exceeds ${limit} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new HttpError(413, 'payload_too_large', `request body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => failed || resolve(Buffer.concat(chunks)));
    req.on('error', (err) => failed || reject(err));
  });
}

/**
 * Reads a JSON object body of at most `limit` bytes (empty body → `{}`); 400 when it is not a
 * JSON object, 413 past the limit.
 */
export async function readJson(req, limit = MAX_JSON_BYTES) {
  const text = (await readBody(req, limit)).toString('utf8');
  if (text.trim() === '') return {};
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'bad_request', 'request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(400, 'bad_request', 'request body must be a JSON object');
  }
  return value;
}

/** Answers `value` as JSON with `status`. */
export function sendJson(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Answers a wire error `{ error: { code, message } }`. */
export function sendError(res, status, code, message) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { error: { code, message } });
}
