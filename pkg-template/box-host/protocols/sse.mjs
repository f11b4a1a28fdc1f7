// Server-sent events as the Cloudflare container writes them (protocol note §4.4): one
// `data: <json>\n\n` per event, no `event:`/`id:` fields, every payload with a `timestamp`.
// JSON escapes CR and LF, so output containing them never breaks the framing; each event is
// written with one `write`, whole, so a multi-byte UTF-8 character is never split by us.

/** Bytes buffered for a slow client before the writer reports backpressure. */
export const SSE_HIGH_WATER_BYTES = 1024 * 1024;

/** Encodes one SSE event (with its terminating blank line); `timestamp` is added (ISO text). */
export function sseEvent(value) {
  return `data: ${JSON.stringify({ ...value, timestamp: new Date().toISOString() })}\n\n`;
}

/**
 * Starts a `text/event-stream` response and returns `{ send(value) → boolean, end(), onDrain(fn) }`.
 * `send` answers false once more than SSE_HIGH_WATER_BYTES wait unsent: the caller must then stop
 * producing until `onDrain` calls back (the writer itself never drops events).
 */
export function startSse(res) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();
  return {
    send(value) {
      if (res.writableEnded || res.destroyed) return true;
      res.write(sseEvent(value));
      return res.writableLength <= SSE_HIGH_WATER_BYTES;
    },
    onDrain(fn) {
      res.once('drain', fn);
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}
