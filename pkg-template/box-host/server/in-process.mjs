// The Box host called in process: a Fetch handler `(Request) => Promise<Response>` over the same
// routes as the HTTP server (server.mjs `createDispatch`), for the runtime of the process that
// started the host (runtime/index.node.mjs). No socket, no HTTP parse and no token: the handler is
// a function only that process holds (the standalone host's HTTP server still checks its token).
// The route handlers speak Node's `req`/`res`: a request becomes a Readable with `method`, `url`
// and lowercase `headers`; the answer a Writable whose `writeHead`/`write`/`end` make a Response
// (a body ended in one piece is handed over whole, a streamed one as a ReadableStream that keeps
// the writer's backpressure). The Request's signal, or a cancelled body, closes the answer as a
// dropped connection would (`close`; a create still waiting for a slot leaves the queue).
import { Readable, Writable } from 'node:stream';

/** Bytes a streamed answer buffers for a reader that does not read (the NDJSON writers' own bound is above it). */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * The answer of one in-process request: resolves `response` once headers are flushed, the first
 * body chunk is written or the answer ends.
 */
class InProcessAnswer extends Writable {
  #resolve;
  #reject;
  #headers = {};
  #whole = null;
  #controller = null;
  #pending = null;
  #settled = false;
  statusCode = 200;
  statusMessage = '';

  constructor() {
    super({ highWaterMark: HIGH_WATER_BYTES });
    this.response = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A rejection nobody awaits (the handler ended the answer with an error) is not unhandled.
    this.response.catch(() => {});
  }

  get headersSent() {
    return this.#settled;
  }

  setHeader(name, value) {
    this.#headers[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name) {
    return this.#headers[name.toLowerCase()];
  }

  writeHead(status, message, headers) {
    this.statusCode = status;
    if (typeof message === 'string') this.statusMessage = message;
    else headers = message;
    for (const [name, value] of Object.entries(headers ?? {})) this.setHeader(name, value);
    return this;
  }

  flushHeaders() {
    this.#stream();
  }

  end(chunk, encoding, callback) {
    // A body ended in one piece, with nothing streamed before it, is handed over whole.
    if (!this.#settled && this.writableLength === 0 && chunk !== undefined && typeof chunk !== 'function') {
      const charset = /** @type {BufferEncoding} */ (typeof encoding === 'string' ? encoding : 'utf8');
      this.#whole = typeof chunk === 'string' ? Buffer.from(chunk, charset) : chunk;
      return super.end(typeof encoding === 'function' ? encoding : callback);
    }
    return super.end(chunk, encoding, callback);
  }

  #headersObject() {
    const headers = new Headers();
    for (const [name, value] of Object.entries(this.#headers)) {
      if (Array.isArray(value)) for (const item of value) headers.append(name, String(item));
      else headers.set(name, String(value));
    }
    return headers;
  }

  /** Settles the Response with a streamed body (once). */
  #stream() {
    if (this.#settled) return;
    this.#settled = true;
    const body = new ReadableStream(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          const next = this.#pending;
          this.#pending = null;
          next?.();
        },
        cancel: () => {
          this.#controller = null;
          this.destroy();
        },
      },
      { highWaterMark: 1 },
    );
    this.#resolve(new Response(body, { status: this.statusCode, headers: this.#headersObject() }));
  }

  _write(chunk, _encoding, callback) {
    this.#stream();
    if (this.#controller === null) return callback();
    this.#controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if (this.#controller.desiredSize > 0) callback();
    else this.#pending = callback;
  }

  _final(callback) {
    if (!this.#settled) {
      this.#settled = true;
      this.#resolve(new Response(this.#whole, { status: this.statusCode, headers: this.#headersObject() }));
    } else {
      this.#controller?.close();
      this.#controller = null;
    }
    callback();
  }

  _destroy(error, callback) {
    const failure = error ?? new Error('the local Box host closed the answer');
    if (!this.#settled) {
      this.#settled = true;
      this.#reject(failure);
    } else if (this.#controller !== null) {
      // A stream ended before its end: the reader sees an error, as over a dropped connection.
      try {
        this.#controller.error(failure);
      } catch {}
      this.#controller = null;
    }
    const next = this.#pending;
    this.#pending = null;
    next?.();
    callback();
  }
}

/**
 * A Fetch handler over `dispatch(req, res, url)` (server.mjs): what `startBoxHost()` returns as
 * `fetch`. Any origin is taken as the host's own; the path, query, method, headers and body are
 * read as the HTTP server reads them.
 * @param {(req: object, res: object, url: URL) => Promise<void>} dispatch
 * @returns {(request: Request) => Promise<Response>}
 */
export function inProcessFetch(dispatch) {
  return async (request) => {
    if (!(request instanceof Request)) request = new Request(request);
    const signal = request.signal;
    if (signal?.aborted) throw signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
    const body = request.body === null ? null : Buffer.from(await request.arrayBuffer());
    const url = new URL(request.url);
    const headers = Object.fromEntries(request.headers);
    if (body !== null) headers['content-length'] = String(body.length);
    // What the route handlers read of an IncomingMessage: the stream, method, url and headers.
    const req = Object.assign(Readable.from(body === null || body.length === 0 ? [] : [body], { objectMode: false }), {
      method: request.method,
      url: `${url.pathname}${url.search}`,
      headers,
    });
    const res = new InProcessAnswer();
    const abort = () => res.destroy(signal.reason ?? new DOMException('The operation was aborted.', 'AbortError'));
    signal?.addEventListener('abort', abort, { once: true });
    res.once('close', () => signal?.removeEventListener('abort', abort));
    dispatch(req, res, url).catch((error) => res.destroy(error));
    return res.response;
  };
}
