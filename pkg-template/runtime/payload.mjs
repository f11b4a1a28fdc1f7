// Reading a route's request body as a Definition's payload: the JSON body of a Web Request, an h3
// v2 event (`event.req`) or an h3 v1 event (`event.node.req`), bounded in size, optionally checked
// by a Standard Schema v1 (https://standardschema.dev: zod, valibot, arktype…) or a parse
// function. Failures are SandboxErrors whose status (400, 413) frameworks answer with.
import { TRANSFER_LIMITS } from './facts.mjs';
import { sandboxError } from './sandbox-error.mjs';

/** Default body limit: the default `transfer.maxInputBytes` (the largest payload a Run accepts). */
const DEFAULT_MAX_BYTES = TRANSFER_LIMITS.find((limit) => limit.name === 'maxInputBytes').default;
/** h3 v1 caches the raw body of `event.node.req` under these symbols (h3 src/utils/body.ts). */
const H3_RAW_BODY = Symbol.for('h3RawBody');
const H3_PARSED_BODY = Symbol.for('h3ParsedBody');
/** At most this many schema issues are spelled out in the message (all are on `error.issues`). */
const MAX_LISTED_ISSUES = 10;

const invalid = (message, cause) => sandboxError('SANDBOX_INVALID_ARGUMENT', message, cause);

function tooLarge(value, maximum) {
  // `details.limit` names the option that set the limit: readRequestPayload's, not transfer's.
  const error = sandboxError(
    'SANDBOX_TRANSFER_LIMIT',
    `the request body is larger than ${maximum} bytes, the limit of readRequestPayload (options.maxBytes, default ${DEFAULT_MAX_BYTES}: the default transfer.maxInputBytes); send a smaller payload`,
  );
  error.details = { limit: 'maxBytes', value, maximum };
  return error;
}

function checkMaxBytes(options) {
  if (options === undefined) return DEFAULT_MAX_BYTES;
  if (options === null || typeof options !== 'object')
    throw invalid('readRequestPayload(event, options): options must be an object');
  const { maxBytes = DEFAULT_MAX_BYTES } = options;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw invalid(`options.maxBytes must be a non-negative integer (bytes), got ${String(maxBytes)}`);
  return maxBytes;
}

const isWebRequest = (value) =>
  value !== null &&
  typeof value === 'object' &&
  typeof value.headers?.get === 'function' &&
  'body' in value &&
  typeof value.arrayBuffer === 'function';

/** Collects a ReadableStream or a Node readable (async iterable of chunks), failing past `maxBytes`. */
async function collect(stream, maxBytes) {
  const chunks = [];
  let total = 0;
  const add = (chunk) => {
    const bytes =
      typeof chunk === 'string'
        ? new TextEncoder().encode(chunk)
        : chunk instanceof Uint8Array
          ? chunk
          : new Uint8Array(chunk);
    total += bytes.byteLength;
    if (total > maxBytes) throw tooLarge(total, maxBytes);
    chunks.push(bytes);
  };
  if (typeof stream.getReader === 'function') {
    const reader = stream.getReader();
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) add(next.value);
    } catch (error) {
      await reader.cancel(error).catch(() => {});
      throw error;
    }
  } else {
    for await (const chunk of stream) add(chunk);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Bytes of an already-read body value (Buffer, string, ArrayBuffer, stream), or `undefined` for anything else. */
async function bodyBytes(value, maxBytes) {
  if (typeof value === 'string') value = new TextEncoder().encode(value);
  if (value instanceof ArrayBuffer) value = new Uint8Array(value);
  if (value instanceof Uint8Array) {
    if (value.byteLength > maxBytes) throw tooLarge(value.byteLength, maxBytes);
    return value;
  }
  if (
    value !== null &&
    typeof value === 'object' &&
    (typeof value.getReader === 'function' || typeof value[Symbol.asyncIterator] === 'function')
  )
    return collect(value, maxBytes);
  return undefined;
}

function checkContentLength(value, maxBytes) {
  const length = value === null || value === undefined ? NaN : Number(value);
  if (Number.isSafeInteger(length) && length > maxBytes) throw tooLarge(length, maxBytes);
}

/**
 * The body of `source`: `{ bytes }`, or `{ value }` when a framework already parsed it (h3 v1's
 * `readBody` cache, a `req.body` object set by a body parser).
 */
async function readBody(source, maxBytes) {
  // A Web Request, or an h3 v2 event (its `req` is a Web Request).
  const request = isWebRequest(source) ? source : isWebRequest(source?.req) ? source.req : undefined;
  if (request) {
    if (request.bodyUsed)
      throw invalid('the request body was already read; call readRequestPayload before anything else reads it');
    checkContentLength(request.headers.get('content-length'), maxBytes);
    return { bytes: request.body === null ? new Uint8Array(0) : await collect(request.body, maxBytes) };
  }
  // An h3 v1 event: the Node IncomingMessage, read the way h3's readRawBody reads it, and cached
  // where h3 looks so that h3's own readBody still works afterwards.
  const req = source?.node?.req;
  if (req !== null && typeof req === 'object') {
    if (H3_PARSED_BODY in req) return { value: req[H3_PARSED_BODY] };
    checkContentLength(req.headers?.['content-length'], maxBytes);
    for (const cached of [source._requestBody, source.web?.request?.body, req[H3_RAW_BODY], req.rawBody, req.body]) {
      if (cached === undefined || cached === null) continue;
      const resolved = await cached;
      const bytes = await bodyBytes(resolved, maxBytes);
      if (bytes !== undefined) return { bytes };
      if (typeof resolved === 'object') return { value: resolved };
    }
    if (typeof req[Symbol.asyncIterator] !== 'function')
      throw invalid('readRequestPayload(event): event.node.req is not a readable request');
    const reading = collect(req, maxBytes);
    req[H3_RAW_BODY] = reading.then((bytes) =>
      typeof Buffer === 'function' ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes,
    );
    req[H3_RAW_BODY].catch(() => {});
    return { bytes: await reading };
  }
  throw invalid(
    'readRequestPayload(event) expects a Web Request, an h3 v2 event (event.req) or an h3 v1 event (event.node.req)',
  );
}

/**
 * A SandboxError as the HTTP error of h3, the server of Nitro and Nuxt: h3 v2 knows its own errors
 * by `name === 'HTTPError'`, h3 v1 by `constructor.__h3_error__`. Any other error reaching h3 is
 * "unhandled": logged as a crash and answered with a hidden message ("Server Error"). This one is
 * answered with its status, its message and `data: { code, message }`. It keeps the SandboxError's
 * `code`, `status` and the rest of its own fields, and the SandboxError itself as `cause`.
 */
class FrameworkHttpError extends Error {
  static __h3_error__ = true;

  constructor(sandboxError) {
    super(sandboxError.message, { cause: sandboxError });
    Object.assign(this, sandboxError);
    /** @type {number} the SandboxError's, copied above */
    this.status;
    this.name = 'HTTPError';
    this.data = { code: sandboxError.code, message: sandboxError.message };
  }

  /** h3 v1 reads the status here. */
  get statusCode() {
    return this.status;
  }

  /** The body h3 v2 answers with (the shape of its HTTPError's). */
  toJSON() {
    return { status: this.status, message: this.message, data: this.data };
  }
}

/** `error` as h3 answers it best when `event` is an h3 event (v2 `event.req`, v1 `event.node.req`); else unchanged. */
function asFrameworkError(event, error) {
  const h3Event =
    !isWebRequest(event) &&
    (isWebRequest(event?.req) || (event?.node?.req !== null && typeof event?.node?.req === 'object'));
  return h3Event && error?.name === 'SandboxError' ? new FrameworkHttpError(error) : error;
}

/**
 * The JSON body of a route's request, as a Definition's payload: `undefined` for an empty body.
 * The content type is not consulted (`curl -d` sends form-urlencoded), only the bytes.
 * @param {unknown} event a Web `Request`, an h3 v2 event or an h3 v1 event
 * @param {{ maxBytes?: number }} [options] `maxBytes`: the body limit in bytes (default 4 MiB, the default `transfer.maxInputBytes`)
 * @returns {Promise<unknown>}
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT` (400): not JSON, not UTF-8, already read, not a request;
 *   `SANDBOX_TRANSFER_LIMIT` (413): larger than `maxBytes` (`details.limit` is `maxInputBytes`). For
 *   an h3 event the error is h3's kind (`name: 'HTTPError'`, the same `code`, `status` and message,
 *   `data: { code, message }`, the SandboxError as `cause`), so h3 answers with all of them.
 */
export async function readRequestPayload(event, options) {
  try {
    return await readPayload(event, options);
  } catch (error) {
    throw asFrameworkError(event, error);
  }
}

async function readPayload(event, options) {
  const maxBytes = checkMaxBytes(options);
  const body = await readBody(event, maxBytes);
  if ('value' in body) return body.value;
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body.bytes);
  } catch (error) {
    throw invalid('the request body is not UTF-8 text; send the payload as JSON', error);
  }
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(`the request body is not valid JSON (${error.message}); send the payload as JSON`, error);
  }
}

/** `payload.items[2].name` for a Standard Schema issue path (keys or `{ key }` segments). */
function issuePath(path) {
  let out = 'payload';
  for (const segment of path ?? []) {
    const key = segment !== null && typeof segment === 'object' ? segment.key : segment;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${typeof key === 'symbol' ? key.toString() : JSON.stringify(key)}]`;
  }
  return out;
}

/**
 * {@link readRequestPayload}, then the payload checked by `schema`: a Standard Schema v1 (its
 * `~standard.validate` result's `value`), or a function that returns the payload or throws.
 * @param {unknown} event see {@link readRequestPayload}
 * @param {object | ((value: unknown) => unknown)} schema
 * @param {{ maxBytes?: number }} [options]
 * @throws SandboxError `SANDBOX_INVALID_ARGUMENT` (400) for a payload the schema refuses: the message
 *   lists up to 10 issues as `payload.<path>: <message>`, `error.issues` holds them all (Standard
 *   Schema issues), a throwing function is `error.cause`; also every error of readRequestPayload.
 * @throws TypeError when `schema` is neither a Standard Schema v1 nor a function (a bug in the route, not in the request).
 */
export async function readValidatedPayload(event, schema, options) {
  const standard =
    schema !== null && (typeof schema === 'object' || typeof schema === 'function') ? schema['~standard'] : undefined;
  if (standard === undefined && typeof schema !== 'function') {
    throw new TypeError(
      'readValidatedPayload(event, schema): schema must be a Standard Schema v1 (zod, valibot, …) or a function (value) => payload',
    );
  }
  if (standard !== undefined && (standard?.version !== 1 || typeof standard.validate !== 'function')) {
    throw new TypeError(
      `readValidatedPayload(event, schema): schema['~standard'] is not Standard Schema v1 (version ${String(standard?.version)})`,
    );
  }
  try {
    return await validatePayload(await readPayload(event, options), standard, schema);
  } catch (error) {
    throw asFrameworkError(event, error);
  }
}

async function validatePayload(value, standard, schema) {
  if (standard === undefined) {
    try {
      return await schema(value);
    } catch (error) {
      throw invalid(`the request payload was refused: ${error?.message ?? String(error)}`, error);
    }
  }
  const result = await standard.validate(value);
  if (!result?.issues) return result.value;
  const issues = [...result.issues];
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => `${issuePath(issue.path)}: ${issue.message}`);
  if (issues.length > MAX_LISTED_ISSUES) listed.push(`and ${issues.length - MAX_LISTED_ISSUES} more`);
  /** @type {import('./sandbox-error.mjs').SandboxError & { issues?: unknown[] }} */
  const error = invalid(`the request payload does not match the schema (${standard.vendor}): ${listed.join('; ')}`);
  error.issues = issues;
  throw error;
}
