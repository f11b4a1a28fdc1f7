// A Run's handler lines as MCP notifications, at the pace the client reads them. One notification
// per line made a handler that prints 60,000 lines queue 60,000 writes on the transport (each
// waiting for its own 'drain'), and the server answered nothing for many seconds afterwards (the
// fresh-user trial of issue 36). Here lines are gathered per stream and sent together, one
// notification at a time (the next waits until the transport took the last), and a call relays
// at most MAX_RELAYED_BYTES of them; past that, lines are counted and one last notification says
// how many were not relayed.

/** At most this many bytes of a call's lines (UTF-16 code units, as the lines are) are relayed. */
export const MAX_RELAYED_BYTES = 4 * 1024 * 1024;
/** Lines wait at most this long (ms) for others to travel with. */
const GATHER_MS = 50;
/** A batch is sent at once when its lines reach this many bytes. */
const BATCH_BYTES = 64 * 1024;

/**
 * @param {{
 *   notify: (notification: { method: string, params: object }) => Promise<unknown>,
 *   ignored: (level: string) => boolean,
 *   logger: string,
 *   progressToken?: string | number,
 * }} options `notify` resolves once the transport took the notification (and never rejects);
 *   `ignored(level)` is the client's `logging/setLevel` filter; `logger` the Definition's name;
 *   `progressToken` the call's, when it asked for progress (one step per line).
 * @returns {{ onLog: (entry: { stream: string, line: string }) => void, end: () => Promise<void> }}
 *   `onLog` for startSandbox; `end()` sends what is left (and the count of lines not relayed).
 */
export function logRelay({ notify, ignored, logger, progressToken }) {
  /** @type {{ stdout: string[], stderr: string[] }} */
  let pending = { stdout: [], stderr: [] };
  let pendingBytes = 0;
  let relayedBytes = 0;
  let dropped = 0;
  let progress = 0;
  let timer = null;
  /** The batch in flight: the next one waits for it. */
  let sending = Promise.resolve();

  const send = async (batch) => {
    for (const stream of /** @type {const} */ (['stdout', 'stderr'])) {
      const lines = batch[stream];
      if (lines.length === 0) continue;
      const level = stream === 'stderr' ? 'warning' : 'info';
      if (!ignored(level))
        await notify({ method: 'notifications/message', params: { level, logger, data: lines.join('\n') } });
      if (progressToken !== undefined) {
        progress += lines.length;
        await notify({
          method: 'notifications/progress',
          params: { progressToken, progress, message: lines[lines.length - 1] },
        });
      }
    }
  };

  const flush = () => {
    clearTimeout(timer);
    timer = null;
    if (pendingBytes === 0) return sending;
    const batch = pending;
    pending = { stdout: [], stderr: [] };
    pendingBytes = 0;
    sending = sending.then(() => send(batch));
    return sending;
  };

  return {
    onLog({ stream, line }) {
      if (relayedBytes + line.length > MAX_RELAYED_BYTES) {
        dropped += 1;
        return;
      }
      relayedBytes += line.length;
      pending[stream === 'stderr' ? 'stderr' : 'stdout'].push(line);
      pendingBytes += line.length;
      if (pendingBytes >= BATCH_BYTES) void flush();
      else timer ??= setTimeout(flush, GATHER_MS);
    },
    async end() {
      await flush();
      if (dropped > 0 && !ignored('warning'))
        await notify({
          method: 'notifications/message',
          params: {
            level: 'warning',
            logger,
            data: `[vite-hub-sandbox] ${dropped} more lines were not relayed: a call relays at most ${MAX_RELAYED_BYTES} bytes of its handler's output`,
          },
        });
    },
  };
}
