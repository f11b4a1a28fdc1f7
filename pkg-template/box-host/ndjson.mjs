// NDJSON framing for command and log streams: one JSON value per line, pure ASCII (every non-ASCII
// character is escaped as \uXXXX, so a line can never be split inside a UTF-8 sequence), written
// in one piece.

/** Encodes one NDJSON line (with the trailing newline). */
export function ndjsonLine(value) {
  return `${JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}

/** The exact content type the official SDK accepts. */
export const NDJSON_CONTENT_TYPE = 'application/x-ndjson';

/** Starts an NDJSON response and returns a writer that writes each line with one `write`. */
export function startNdjson(res) {
  res.writeHead(200, { 'content-type': NDJSON_CONTENT_TYPE, 'cache-control': 'no-store' });
  res.flushHeaders();
  return {
    line(value) {
      if (!res.writableEnded && !res.destroyed) res.write(ndjsonLine(value));
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}
