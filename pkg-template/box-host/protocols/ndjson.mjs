// NDJSON framing for command and log streams: one JSON value per line, pure ASCII (every non-ASCII
// character is escaped as \uXXXX, so a line can never be split inside a UTF-8 sequence), written
// in one piece.

/** Encodes one NDJSON line (with the trailing newline). */
export function ndjsonLine(value) {
  return `${JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}

/** The exact content type the official SDK accepts. */
export const NDJSON_CONTENT_TYPE = 'application/x-ndjson';

/** Bytes buffered for a slow reader before the writer reports backpressure. */
export const NDJSON_HIGH_WATER_BYTES = 1024 * 1024;

/**
 * Starts an NDJSON response and returns a writer `{ line(value) → boolean, onDrain(fn), end() }`
 * that writes each line with one `write`. `line` answers false once more than
 * NDJSON_HIGH_WATER_BYTES wait unsent: the producer must pause until `onDrain` calls back.
 */
export function startNdjson(res) {
  res.writeHead(200, { 'content-type': NDJSON_CONTENT_TYPE, 'cache-control': 'no-store' });
  res.flushHeaders();
  return {
    line(value) {
      if (res.writableEnded || res.destroyed) return true;
      res.write(ndjsonLine(value));
      return res.writableLength <= NDJSON_HIGH_WATER_BYTES;
    },
    onDrain(fn) {
      res.once('drain', fn);
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}
