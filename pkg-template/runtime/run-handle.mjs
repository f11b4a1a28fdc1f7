// The run handle of `startSandbox`: status, live logs (replayed from the start for a late
// reader) and the Response, all from one Run of the core (`wasm.runSandbox(name, payload,
// options, events)`; the events object is the core's callback side, see src/run/events.rs).
// Glue only: which Run, when it answers and what it logs are the core's decisions.

import { sandboxError } from './sandbox-error.mjs';

/** Bytes (UTF-8) of entry output `logs()` keeps for replay; past it one marker entry ends the history. */
export const RUN_LOG_HISTORY_BYTES = 16 * 1024 * 1024;

const utf8 = new TextEncoder();

/**
 * Starts one Run and returns its handle.
 * @param {typeof import('../wasm/vite_hub_sandbox.js')} wasm the runtime wasm exports (the
 *   runtime's waitUntil, if any, is set on it: `setSandboxKeepAlive`)
 * @param {string} name the Definition's name
 * @param {unknown} payload the Run's payload
 * @param {unknown} options the call's options, as given (the core checks them)
 * @param {((entry: { name: string, stream: 'stdout' | 'stderr', line: string }) => void) | undefined} defaultOnLog
 *   the onLog of `configureSandbox`, used when the call has none
 * @param {{ keepLogs?: boolean }} [handle] `keepLogs: false` when no one can call `logs()`
 *   (`runSandbox` gives only the Response): the entry's output is then not kept at all
 */
export function startRun(wasm, name, payload, options, defaultOnLog, { keepLogs = true } = {}) {
  // The core checks every option (onLog included: a function or absent) and answers a bad one
  // with a 400 Response; the glue only reads onLog once it is known to be a function. A call's
  // own onLog wins over the one of configureSandbox (`defaultOnLog`).
  const onLog = chosenOnLog(options, defaultOnLog);
  const history = [];
  let historyBytes = 0;
  let historyCut = !keepLogs;
  const readers = new Set();
  const lines = onLog === undefined ? null : logLines(name, onLog);
  let status = 'pending';
  let finished = false;
  let closing = null;
  let closeFailure = null;
  const wake = () => {
    for (const reader of readers) reader();
  };
  const events = {
    status(next) {
      status = next;
      if (next === 'stopped' || next === 'failed') {
        finished = true;
        lines?.end();
        wake();
      }
    },
    log(stream, data) {
      if (!historyCut) {
        historyBytes += utf8.encode(data).byteLength;
        if (historyBytes <= RUN_LOG_HISTORY_BYTES) {
          history.push({ stream, data });
        } else {
          // Memory stays bounded: the marker is the last entry every logs() reader sees (onLog
          // still gets every line).
          historyCut = true;
          history.push({
            stream: 'stderr',
            data: `[vite-hub-sandbox] logs() stops here: the entry printed more than ${RUN_LOG_HISTORY_BYTES} bytes, the most a run handle keeps; use onLog for all of it\n`,
            truncated: true,
          });
        }
        wake();
      }
      lines?.log(stream, data);
    },
    background(work) {
      closing = work;
    },
    report(message, code) {
      closeFailure = sandboxError(code, message);
      if (lines) lines.report(message);
      else console.warn(`[vite-hub-sandbox] ${message}`);
    },
    // News that is not this Run's failure (a warm pool's refill failed): a line, never closed()'s.
    notice(message) {
      if (lines) lines.report(message);
      else console.warn(`[vite-hub-sandbox] ${message}`);
    },
  };
  const response = wasm.runSandbox(name, payload, options, events);
  // The Response's own promise is returned by response(); a Run whose caller never asks for it
  // must not surface an unhandled rejection (the rejection is the caller's own abort reason).
  response.catch(() => {});
  response.then(
    () => {},
    () => {
      if (!finished) events.status('failed');
    },
  );
  return {
    /** `'pending' | 'running' | 'stopped' | 'failed'`. */
    get status() {
      return status;
    },
    /** The Response `runSandbox` gives (the same promise on every call). */
    response() {
      return response;
    },
    /**
     * The entry's stdout/stderr as `{ stream, data }`, from the start, then live until the Run
     * ends; at most RUN_LOG_HISTORY_BYTES, then one `{ stream: 'stderr', data, truncated: true }`.
     */
    async *logs() {
      let next = 0;
      while (true) {
        while (next < history.length) yield history[next++];
        if (finished) return;
        await new Promise((resolve) => {
          const reader = () => {
            readers.delete(reader);
            resolve();
          };
          readers.add(reader);
        });
      }
    },
    /**
     * Resolves once the Box was given back after the Response (closed, or a kept Box freed);
     * rejects with a SandboxError naming the failure when that did not work (also reported to `onLog`
     * or the console).
     */
    async closed() {
      await response.catch(() => {});
      if (closing) await closing;
      if (closeFailure !== null) throw closeFailure;
    },
  };
}

/** The longest `line` an onLog call gets (UTF-16 code units); a longer line comes in pieces. */
export const LOG_LINE_MAX_CHARS = 65536;

/**
 * The onLog side of a Run: `log(stream, data)` passes each complete line (a trailing `\r`
 * removed), a line longer than LOG_LINE_MAX_CHARS in pieces of that length (so memory stays bounded
 * whatever the Box prints without a newline), `end()` the last unterminated ones, `report(message)`
 * a failure after the Response (or a notice, such as a warm pool's failed refill) as a
 * `[vite-hub-sandbox]` stderr line. A throwing onLog is ignored
 * (the Run goes on).
 * @param {string} name the Definition
 * @param {(entry: { name: string, stream: 'stdout' | 'stderr', line: string }) => void} onLog
 */
export function logLines(name, onLog) {
  const pending = { stdout: '', stderr: '' };
  const emit = (stream, line) => {
    try {
      onLog({ name, stream, line });
    } catch {
      // A throwing onLog must not stop the Run.
    }
  };
  return {
    log(stream, data) {
      const parts = (pending[stream] + data).split('\n');
      let rest = parts.pop();
      for (const line of parts) {
        let at = 0;
        for (; line.length - at > LOG_LINE_MAX_CHARS; at += LOG_LINE_MAX_CHARS)
          emit(stream, line.slice(at, at + LOG_LINE_MAX_CHARS));
        const last = line.slice(at);
        emit(stream, last.endsWith('\r') ? last.slice(0, -1) : last);
      }
      // What has no newline yet is kept up to one piece, so pending text never grows past it.
      while (rest.length > LOG_LINE_MAX_CHARS) {
        emit(stream, rest.slice(0, LOG_LINE_MAX_CHARS));
        rest = rest.slice(LOG_LINE_MAX_CHARS);
      }
      pending[stream] = rest;
    },
    end() {
      for (const stream of ['stdout', 'stderr']) if (pending[stream] !== '') emit(stream, pending[stream]);
      pending.stdout = pending.stderr = '';
    },
    report(message) {
      emit('stderr', `[vite-hub-sandbox] ${message}`);
    },
  };
}

/**
 * The events of a Run that has no handle (a runner's `run`): only its onLog lines (the call's
 * own `onLog`, else `defaultOnLog`); `undefined` without either, so a late failure goes to
 * `console.warn`.
 */
export function onLogEvents(name, options, defaultOnLog) {
  const onLog = chosenOnLog(options, defaultOnLog);
  if (onLog === undefined) return undefined;
  const lines = logLines(name, onLog);
  return {
    status(next) {
      if (next === 'stopped' || next === 'failed') lines.end();
    },
    log: (stream, data) => lines.log(stream, data),
    report: (message) => lines.report(message),
    notice: (message) => lines.report(message),
  };
}

/**
 * The onLog a Run uses: the call's own (`options.onLog`, when a function), else `defaultOnLog`
 * (configureSandbox's), else `undefined`. A throwing getter or Proxy trap counts as none here: the
 * core reads the options again and answers them (400).
 */
function chosenOnLog(options, defaultOnLog) {
  try {
    if (typeof options?.onLog === 'function') return options.onLog;
  } catch {
    // Answered by the core.
  }
  return defaultOnLog;
}
