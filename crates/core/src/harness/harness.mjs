// The in-Box runner of @vite-hub/sandbox (contract: docs/internals/transfer.md, "Envelopes").
// Invoked as `node ../.vite-hub/harness.mjs ../.vite-hub/input.json` with cwd = the package dir.
// Only `node:` built-ins: it runs before any install. Embedded into the wasm with include_str!.
//
// Built-ins come from `process.getBuiltinModule` (Node 20.16+, else a dynamic import): an ESM
// import of a built-in reads every export of it, and the lazy ones load modules of their own
// (fs's ReadStream and WriteStream, buffer's File, util's parseArgs: 2-3 ms of every Run on Node
// 20). For the same reason `fs.rmSync` runs only on directories that exist (it loads rimraf),
// there is no `Response` global on the hot path (reading a lazy global such as `Response` loads
// undici, ~20 ms on Node 20: a value is checked against it only once it looks like a Response, see
// looksLikeResponse), and buffer's `File` is read only to revive a File.
const builtin = (name) => process.getBuiltinModule?.(name) ?? import(name).then((module) => module.default);
const fs = await builtin('node:fs');
const path = await builtin('node:path');
const buffer = await builtin('node:buffer');
const { Blob, Buffer } = buffer;
const { pathToFileURL } = await builtin('node:url');
const { types, inspect } = await builtin('node:util');

// Captured before the entry is imported: a frame (which carries the run's nonce) is encoded and
// written only through these, so an entry that replaces `Buffer.from` or `fs.writeSync` later
// never sees a frame nor its nonce.
const apply = Reflect.apply;
const writeSync = fs.writeSync;
// UTF-8 through a TextEncoder, not Buffer.from: that calls Buffer.prototype methods (utf8Write)
// which an entry can replace to read the frame as it is encoded.
const utf8Encoder = new TextEncoder();
const encodeUtf8 = TextEncoder.prototype.encode;
const writeFileSync = fs.writeFileSync;
const stringify = JSON.stringify;
const isWellFormed = String.prototype.isWellFormed;
const toWellFormed = String.prototype.toWellFormed;
// The entry's own output streams, for the flush before a frame. `process.stdout` and
// `process.stderr` are made on their first read (for a pipe that loads `net` and the streams:
// 1.5-2 ms of a Run on Node 20), and the harness writes its frames to fd 1 itself, so it reads
// neither: their getters are wrapped to learn which streams the entry (or its `console`) made,
// each kept with its `write` as made, before the entry can replace it.
const madeStreams = { stdout: null, stderr: null };
for (const name of Object.keys(madeStreams)) {
  const descriptor = Reflect.getOwnPropertyDescriptor(process, name);
  const get = descriptor?.get;
  if (typeof get !== 'function' || !descriptor.configurable) {
    const stream = process[name];
    madeStreams[name] = { stream, write: stream.write };
    continue;
  }
  Reflect.defineProperty(process, name, {
    ...descriptor,
    get() {
      const stream = apply(get, this, []);
      if (madeStreams[name] === null && stream) madeStreams[name] = { stream, write: stream.write };
      return stream;
    },
  });
}
const STDOUT_FD = 1;
const MARKER = 'vitehub:sandbox:value';
const MAX_MESSAGE_CHARS = 16384;
const MAX_STACK_CHARS = 4096;
/** Body bytes per frame of a streamed Response (base64 in the frame). */
const BODY_FRAME_BYTES = 65536;
const DEFAULT_LIMITS = { maxOutputBytes: 4194304, maxDepth: 32, maxSidecars: 64, maxSidecarBytes: 67108864 };
const BINARY_KINDS = new Set(['blob', 'file', 'buffer', 'uint8array']);
/** One lone surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` as an envelope value: itself when well-formed UTF-16, else a string marker (its text
 * with each lone surrogate as U+FFFD, and those units by position), which JSON keeps but the
 * host's Rust strings could not (crates/core/src/transfer/lone_surrogate.rs).
 */
function encodeString(text) {
  if (apply(isWellFormed, text, [])) return text;
  const lone = [];
  const replaced = text.replace(LONE_SURROGATE, (unit, position) => {
    lone.push([position, unit.charCodeAt(0)]);
    return '\uFFFD';
  });
  return { [MARKER]: { tag: 'string', text: replaced, lone } };
}

/** The string of a string marker's body (`{tag: 'string', text, lone}`); null when invalid. */
function markerString(descriptor) {
  const { text, lone } = descriptor;
  if (typeof text !== 'string' || !Array.isArray(lone)) return null;
  const units = text.split('');
  for (const pair of lone) {
    const [position, unit] = Array.isArray(pair) ? pair : [];
    if (units[position] !== '\uFFFD' || !Number.isInteger(unit) || unit < 0xd800 || unit > 0xdfff) return null;
    units[position] = String.fromCharCode(unit);
  }
  return units.join('');
}

class TransferError extends Error {
  constructor(name, code, message, details) {
    super(message);
    this.name = name;
    this.code = code;
    if (details) this.details = details;
  }
}

function serializationError(message) {
  return new TransferError('TypeError', 'SANDBOX_SERIALIZATION_ERROR', message);
}

function limitError(what, limit, value, maximum) {
  return new TransferError(
    'RangeError',
    'SANDBOX_TRANSFER_LIMIT',
    `Sandbox ${what} exceeds ${limit} (${value} > ${maximum}).`,
    { limit, value, maximum },
  );
}

// ---------------------------------------------------------------------------------------------
// Input: read, delete, revive.

function readInput(inputPath) {
  let text;
  try {
    text = fs.readFileSync(inputPath, 'utf8');
  } finally {
    removeIfPresent(inputPath);
  }
  const envelope = JSON.parse(text);
  if (!envelope || typeof envelope !== 'object' || envelope.version !== 1) {
    throw serializationError('Sandbox input envelope has an unsupported version.');
  }
  return envelope;
}

/** Revives `values` (payload, context: one id space) and deletes the sidecar folder. */
function reviveInput(values, filesDir) {
  const cache = new Map();
  const invalid = () => serializationError('Sandbox input contains an invalid value marker.');
  const readSidecar = (id) => {
    if (!cache.has(id)) {
      const file = path.join(filesDir, String(id));
      let bytes;
      try {
        bytes = fs.readFileSync(file);
      } catch {
        throw serializationError(`Sandbox input binary sidecar ${id} does not exist.`);
      }
      cache.set(id, bytes);
    }
    return cache.get(id);
  };
  const revive = (node) => {
    if (Array.isArray(node)) return node.map(revive);
    if (node === null || typeof node !== 'object') return node;
    if (Object.hasOwn(node, MARKER)) {
      const descriptor = node[MARKER];
      if (!descriptor || typeof descriptor !== 'object' || Array.isArray(descriptor)) throw invalid();
      if (descriptor.tag === 'string') {
        const text = markerString(descriptor);
        if (text === null) throw invalid();
        return text;
      }
      if (descriptor.tag === 'object') {
        if (!Array.isArray(descriptor.entries)) throw invalid();
        const out = {};
        for (const entry of descriptor.entries) {
          if (!Array.isArray(entry) || entry.length !== 2) throw invalid();
          const key =
            typeof entry[0] === 'string'
              ? entry[0]
              : entry[0]?.[MARKER]?.tag === 'string'
                ? markerString(entry[0][MARKER])
                : null;
          if (key === null) throw invalid();
          Object.defineProperty(out, key, {
            value: revive(entry[1]),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return out;
      }
      if (descriptor.tag !== 'binary') throw invalid();
      const { id, kind, type } = descriptor;
      if (!Number.isSafeInteger(id) || id < 0 || Object.is(id, -0) || !BINARY_KINDS.has(kind)) throw invalid();
      if (type !== undefined && typeof type !== 'string') throw invalid();
      const bytes = readSidecar(id);
      if (kind === 'blob') return new Blob([bytes], { type: type ?? '' });
      if (kind === 'file') {
        const { name, lastModified } = descriptor;
        if (typeof name !== 'string' || !Number.isFinite(lastModified)) throw invalid();
        return new buffer.File([bytes], name, { type: type ?? '', lastModified });
      }
      if (kind === 'buffer') return Buffer.from(bytes);
      return new Uint8Array(bytes);
    }
    const out = {};
    for (const key of Object.keys(node)) {
      Object.defineProperty(out, key, {
        value: revive(node[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  try {
    return values.map(revive);
  } finally {
    removeIfPresent(filesDir);
  }
}

/** Removes a file, or a directory with its contents; nothing when `target` does not exist. */
function removeIfPresent(target) {
  const stat = fs.lstatSync(target, { throwIfNoEntry: false });
  if (stat?.isDirectory()) fs.rmSync(target, { recursive: true, force: true });
  else if (stat) fs.unlinkSync(target);
}

// ---------------------------------------------------------------------------------------------
// Output: JSON semantics + markers.

function binaryKind(value) {
  if (value instanceof Blob) return 'blob';
  if (Buffer.isBuffer(value)) return 'buffer';
  if (types.isUint8Array(value)) return 'uint8array';
  return null;
}

function unsupported(type, where) {
  return serializationError(`Sandbox result must be JSON-serializable; unsupported ${type} at "${where}".`);
}

/**
 * The class of an object JSON cannot carry (`Map`, `Float32Array`, `Point instance`), or null for
 * a plain object (prototype null or an `Object` constructor) or an array: the rule the core
 * applies to payloads (src/transfer/envelope.rs `non_plain_class`).
 */
function nonPlainClass(value) {
  if (Array.isArray(value)) return null;
  const prototype = Object.getPrototypeOf(value);
  if (prototype === null) return null;
  const valueClass = prototype.constructor;
  if (typeof valueClass !== 'function') return null;
  const name = typeof valueClass.name === 'string' ? valueClass.name : '';
  if (name === 'Object') return null;
  if (['Map', 'Set', 'WeakMap', 'WeakSet', 'Promise', 'RegExp', 'Error', 'ArrayBuffer', 'DataView'].includes(name))
    return name;
  if (name === '') return 'class instance';
  if (name.endsWith('Array')) return name;
  return `${name} instance`;
}

function guarded(where, action, read) {
  try {
    return read();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const failure = serializationError(
      `Sandbox result must be JSON-serializable; ${action} at "${where}" threw: ${reason}`,
    );
    failure.cause = error;
    throw failure;
  }
}

/**
 * Walks `value` with JSON semantics; returns the encoded tree and the sidecars to write.
 * Paths are dotted like the host's input walker (`result.items.0.name`).
 */
function encodeResult(value, limits) {
  const sidecars = [];
  let sidecarBytes = 0;
  const ancestors = new Set();

  const binaryMarker = (binary, kind) => {
    const size = kind === 'blob' ? binary.size : binary.byteLength;
    if (sidecars.length + 1 > limits.maxSidecars) {
      throw limitError('result', 'maxSidecars', sidecars.length + 1, limits.maxSidecars);
    }
    sidecarBytes += size;
    if (sidecarBytes > limits.maxSidecarBytes) {
      throw limitError('result', 'maxSidecarBytes', sidecarBytes, limits.maxSidecarBytes);
    }
    const id = sidecars.length;
    sidecars.push({ id, binary });
    const descriptor = { tag: 'binary', id, kind };
    if (kind === 'blob') descriptor.type = binary.type;
    return { [MARKER]: descriptor };
  };

  // Returns `undefined` when JSON would drop the value (only `undefined` itself here).
  const encode = (input, key, where, depth) => {
    let current = input;
    // Every object counts as a level (binary values and toJSON holders too), like the host's walker.
    if (current !== null && typeof current === 'object' && depth + 1 > limits.maxDepth) {
      throw limitError('result', 'maxDepth', depth + 1, limits.maxDepth);
    }
    let kind = current !== null && typeof current === 'object' ? binaryKind(current) : null;
    if (kind) return binaryMarker(current, kind);
    if (current !== null && (typeof current === 'object' || typeof current === 'bigint')) {
      const toJSON = guarded(where, 'reading toJSON', () => current.toJSON);
      if (typeof toJSON === 'function') {
        current = guarded(where, 'toJSON', () => toJSON.call(current, key));
        kind = current !== null && typeof current === 'object' ? binaryKind(current) : null;
        if (kind) return binaryMarker(current, kind);
      }
    }
    if (current !== null && typeof current === 'object' && types.isBoxedPrimitive(current)) {
      if (types.isBigIntObject(current)) throw unsupported('bigint', where);
      if (types.isSymbolObject(current)) throw unsupported('symbol', where);
      if (types.isNumberObject(current)) current = guarded(where, 'unboxing', () => Number(current));
      else if (types.isStringObject(current)) current = guarded(where, 'unboxing', () => String(current));
      else if (types.isBooleanObject(current)) current = Boolean.prototype.valueOf.call(current);
    }
    switch (typeof current) {
      case 'undefined':
        return undefined;
      case 'string':
        return encodeString(current);
      case 'boolean':
        return current;
      case 'number':
        if (!Number.isFinite(current)) throw unsupported('non-finite number', where);
        return current;
      case 'bigint':
        throw unsupported('bigint', where);
      case 'symbol':
        throw unsupported('symbol', where);
      case 'function':
        throw unsupported('function', where);
    }
    if (current === null) return null;
    if (looksLikeResponse(current)) throw unsupported('nested Response', where);
    if (ancestors.has(current)) throw unsupported('cycle', where);
    // JSON.stringify would give `{}` for a Map, a Set or a class instance: refuse instead of
    // losing the data silently (a class with toJSON was handled above).
    const nonPlain = guarded(where, 'reading the prototype', () => nonPlainClass(current));
    if (nonPlain) throw unsupported(nonPlain, where);
    if (depth + 1 > limits.maxDepth) throw limitError('result', 'maxDepth', depth + 1, limits.maxDepth);
    ancestors.add(current);
    try {
      if (Array.isArray(current)) {
        const length = guarded(where, 'reading length', () => current.length);
        const out = [];
        for (let index = 0; index < length; index += 1) {
          const itemWhere = `${where}.${index}`;
          // A hole would become null: refused like payloads are (src/transfer/envelope.rs).
          if (!guarded(itemWhere, 'reading', () => index in current))
            throw unsupported('sparse array (a hole)', itemWhere);
          const item = guarded(itemWhere, 'reading', () => current[index]);
          const encoded = encode(item, String(index), itemWhere, depth + 1);
          out.push(encoded === undefined ? null : encoded);
        }
        return out;
      }
      const symbolKeyed = guarded(where, 'listing keys', () =>
        Object.getOwnPropertySymbols(current).some((symbol) =>
          Object.prototype.propertyIsEnumerable.call(current, symbol),
        ),
      );
      if (symbolKeyed) throw unsupported('symbol key', where);
      const keys = guarded(where, 'listing keys', () => Object.keys(current));
      const entries = [];
      for (const name of keys) {
        const itemWhere = `${where}.${name}`;
        const item = guarded(itemWhere, 'reading', () => current[name]);
        const encoded = encode(item, name, itemWhere, depth + 1);
        if (encoded !== undefined) entries.push([encodeString(name), encoded]);
      }
      // A key that is the marker key itself, or a string marker, needs the entries form.
      if (entries.some(([name]) => typeof name !== 'string' || name === MARKER))
        return { [MARKER]: { tag: 'object', entries } };
      const out = Object.create(null);
      for (const [name, encoded] of entries) out[name] = encoded;
      return out;
    } finally {
      ancestors.delete(current);
    }
  };

  return { encoded: encode(value, '', 'result', 0), sidecars };
}

/**
 * Whether `value` is a Web Response. Structural first (an object with a numeric `status`, a
 * `headers` object and an `arrayBuffer` method); only such a value is checked against the
 * `Response` global, so plain results never load undici.
 */
function looksLikeResponse(value) {
  if (value === null || typeof value !== 'object') return false;
  let shaped;
  try {
    shaped =
      typeof value.status === 'number' &&
      typeof value.arrayBuffer === 'function' &&
      value.headers !== null &&
      typeof value.headers === 'object';
  } catch {
    return false;
  }
  return shaped && typeof globalThis.Response === 'function' && value instanceof globalThis.Response;
}

async function writeSidecars(sidecars, filesDir) {
  removeIfPresent(filesDir);
  if (sidecars.length === 0) return;
  fs.mkdirSync(filesDir, { recursive: true });
  for (const { id, binary } of sidecars) {
    const bytes =
      binary instanceof Blob
        ? new Uint8Array(await binary.arrayBuffer())
        : new Uint8Array(binary.buffer, binary.byteOffset, binary.byteLength);
    apply(writeFileSync, fs, [path.join(filesDir, String(id)), bytes]);
  }
}

async function successEnvelope(result, limits, filesDir) {
  const { encoded, sidecars } = encodeResult(result, limits);
  const envelope = encoded === undefined ? { version: 1, ok: true } : { version: 1, ok: true, result: encoded };
  const json = stringify(envelope);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > limits.maxOutputBytes) throw limitError('result', 'maxOutputBytes', bytes, limits.maxOutputBytes);
  await writeSidecars(sidecars, filesDir);
  return json;
}

// ---------------------------------------------------------------------------------------------
// Errors, framing.

/** `text` cut to MAX_MESSAGE_CHARS, well-formed (a lone surrogate shows as U+FFFD in an error). */
function bounded(text) {
  if (text.length <= MAX_MESSAGE_CHARS) return apply(toWellFormed, text, []);
  let end = MAX_MESSAGE_CHARS;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return apply(toWellFormed, text.slice(0, end), []);
}

function describeThrown(thrown) {
  let name = 'Error';
  let message;
  let stack;
  try {
    const object = thrown !== null && (typeof thrown === 'object' || typeof thrown === 'function');
    if (thrown instanceof Error || (object && typeof thrown.message === 'string')) {
      if (typeof thrown.name === 'string' && thrown.name) name = thrown.name;
      message = String(thrown.message ?? '');
      if (!(thrown instanceof TransferError) && typeof thrown.stack === 'string')
        stack = apply(toWellFormed, thrown.stack.slice(0, MAX_STACK_CHARS), []);
    } else if (object) {
      // What Node prints for it uncaught (`{ code: 42 }`), not String()'s "[object Object]".
      message = apply(inspect, null, [thrown, { depth: 4, breakLength: Infinity }]);
    } else {
      message = String(thrown);
    }
  } catch {
    message = 'Unprintable thrown value';
  }
  const error = { name: bounded(name), message: bounded(message) };
  if (stack) error.stack = stack;
  if (thrown instanceof TransferError) {
    error.code = thrown.code;
    if (thrown.details) error.details = thrown.details;
  }
  return error;
}

function errorEnvelope(thrown) {
  return stringify({ version: 1, ok: false, error: describeThrown(thrown) });
}

function writeFully(fd, text) {
  const bytes = apply(encodeUtf8, utf8Encoder, [text]);
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += apply(writeSync, fs, [fd, bytes, offset, bytes.length - offset]);
    } catch (error) {
      if (error && error.code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2); // fd 1 is non-blocking: wait, retry
        continue;
      }
      throw error;
    }
  }
}

/** Writes one frame: the prefix with the run's nonce, one JSON text, `\n`, in one write. */
async function writeFrame(nonce, json) {
  await flushOutput();
  writeFully(STDOUT_FD, `<<vite-hub-sandbox:${nonce}>>${json}\n`);
}

/**
 * Streams a returned Response: a head frame (status, headers) right away, then its body as it
 * is produced, in frames of at most BODY_FRAME_BYTES, then an end frame. The body is bounded by
 * maxOutputBytes (a limit error frame ends it).
 */
async function streamResponse(response, nonce, limits) {
  await writeFrame(
    nonce,
    stringify({
      version: 1,
      frame: 'head',
      status: response.status,
      statusText: response.statusText,
      headers: [...response.headers],
    }),
  );
  if (response.body !== null) {
    let total = 0;
    for await (const chunk of response.body) {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      total += bytes.length;
      if (total > limits.maxOutputBytes) throw limitError('result', 'maxOutputBytes', total, limits.maxOutputBytes);
      for (let at = 0; at < bytes.length; at += BODY_FRAME_BYTES) {
        const data = bytes.subarray(at, at + BODY_FRAME_BYTES).toString('base64');
        await writeFrame(nonce, `{"version":1,"frame":"body","data":"${data}"}`);
      }
    }
  }
  await writeFrame(nonce, '{"version":1,"frame":"end"}');
}

/**
 * Resolves once every byte the entry wrote to process.stdout and process.stderr so far was handed
 * to the pipe: a zero-length write through the same stream completes after the writes queued
 * before it (a write error, such as a destroyed stream, resolves too: those bytes are lost anyway).
 * No wall-clock bound: the Run's deadline bounds the whole command.
 */
async function flushOutput() {
  for (const made of [madeStreams.stdout, madeStreams.stderr]) {
    if (made === null || !(made.stream.writableLength > 0)) continue;
    await new Promise((resolve) => {
      try {
        apply(made.write, made.stream, ['', () => resolve()]);
      } catch {
        resolve();
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Main.

async function callEntry(envelope, cwd) {
  const entry = envelope.entry;
  if (typeof entry !== 'string' || entry === '') throw new TypeError('Sandbox input envelope has no entry.');
  const module = await import(pathToFileURL(path.resolve(cwd, entry)).href);
  if (typeof module.default !== 'function') {
    throw new TypeError(`Definition ${entry} must default-export a function`);
  }
  return module.default(envelope.payload, envelope.context);
}

async function main() {
  const inputArg = process.argv[2];
  process.argv.splice(2, 1);
  let settled = false;
  process.on('unhandledRejection', (reason) => {
    if (settled) return;
    const text = reason instanceof Error ? reason.message : String(reason);
    process.stderr.write(`[vite-hub-sandbox] unhandled rejection: ${text}\n`);
  });
  if (typeof inputArg !== 'string' || inputArg === '') {
    process.stderr.write('[vite-hub-sandbox] usage: node harness.mjs <input.json>\n');
    process.exitCode = 1;
    return;
  }
  const cwd = process.cwd();
  const inputPath = path.resolve(cwd, inputArg);
  const boxDir = path.dirname(inputPath);
  const outputPath = path.join(boxDir, 'output.json');
  let nonce = null;
  let output;
  let ok = false;
  // If the process ends before the entry settles, say so instead of leaving no result:
  // 'beforeExit' fires when the event loop empties under a promise that never settles;
  // 'exit' fires on an explicit process.exit().
  const reportEarly = (message) => {
    if (settled || nonce === null) return;
    settled = true;
    // A plain error shape: the stack would only show the harness.
    const early = errorEnvelope({ name: 'Error', message });
    try {
      apply(writeFileSync, fs, [outputPath, early]);
    } catch {}
    writeFully(STDOUT_FD, `<<vite-hub-sandbox:${nonce}>>${early}\n`);
  };
  process.on('beforeExit', () => {
    reportEarly('The entry returned a promise that never settled: nothing was left running to settle it.');
    process.exit(1);
  });
  process.on('exit', (code) =>
    reportEarly(`The entry ended the process with exit code ${code} before returning a result.`),
  );
  try {
    const envelope = readInput(inputPath);
    nonce = typeof envelope.nonce === 'string' ? envelope.nonce : null;
    delete envelope.nonce;
    const limits = { ...DEFAULT_LIMITS };
    for (const name of Object.keys(DEFAULT_LIMITS)) {
      const given = envelope.limits && envelope.limits[name];
      if (Number.isSafeInteger(given) && given >= 0) limits[name] = given;
    }
    const filesDir = `${inputPath}.files`;
    [envelope.payload, envelope.context] = reviveInput([envelope.payload, envelope.context], filesDir);
    const result = await callEntry(envelope, cwd);
    if (nonce !== null && looksLikeResponse(result)) {
      await streamResponse(result, nonce, limits);
      settled = true;
      process.exit(0);
    }
    output = await successEnvelope(result, limits, `${outputPath}.files`);
    ok = true;
  } catch (thrown) {
    output = errorEnvelope(thrown);
  }
  settled = true;
  try {
    apply(writeFileSync, fs, [outputPath, output]);
  } catch (error) {
    process.stderr.write(`[vite-hub-sandbox] cannot write output.json: ${error.message}\n`);
  }
  if (nonce !== null) await writeFrame(nonce, output);
  // The Run ends when the entry's promise settles, as a serverless handler does: timers or sockets
  // the entry left open must not hold the Box until the Definition timeout.
  process.exit(ok ? 0 : 1);
}

// A parked Node process (the local Box host's parked-node.mjs) imports the harness before its
// Run exists and sets this hook only while it does: the harness hands over `main` to be run at
// the handover, with the Run's cwd and argv, instead of running it now. Nothing of a Run (its
// input, its nonce, its entry) exists before the handover, so nothing can set the hook but the
// parked script.
const parkedHook = Symbol.for('vite-hub-sandbox:parked-harness');
const handOver = globalThis[parkedHook];
if (typeof handOver === 'function') handOver(main);
else await main();
