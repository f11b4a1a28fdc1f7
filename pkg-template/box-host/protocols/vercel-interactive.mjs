// Interactive terminals of the Vercel protocol: `POST /v2/sandboxes/sessions/{id}/interactive`
// (`@vercel/sandbox` 3.5.0 `openInteractive()`: body `{}`, answer `{ url, token }`) and the
// WebSocket at `url`, spoken as the official Vercel Sandbox CLI speaks it
// (vercel/sandbox packages/sandbox/src/interactive-shell/interactive-shell.ts):
//
//   connect   `${url}?token=${encodeURIComponent(token)}` (the CLI), or `url` alone with the
//             token in the `start` message (a page that keeps it out of URLs)
//   → text    {"type":"start","command","args","env":["K=V"],"cwd","cols","rows"[,"token"]}, first
//   → binary  terminal input (keystrokes), any time after `start`
//   → text    {"type":"resize","cols","rows"}
//   ← binary  terminal output
//   ← text    {"type":"exit","code":n}, then close 1000; {"type":"error","message"} before a
//             close 1008 (token, protocol) or 1011 (the host could not start the terminal)
//
// The terminal is a command of the Box (engine/box-pty.mjs): it ends when its socket closes and
// when the Box stops (the socket is closed then). A token opens one socket once: used, or its
// Box stopped, or unused for TOKEN_TTL_MS, it is refused. The socket is served by the host's own
// HTTP server, on its loopback address; only the token authorizes it (a browser cannot send the
// host's bearer token with a WebSocket).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { checkEnv, newId } from '../engine/box.mjs';
import {
  DEFAULT_COLS,
  DEFAULT_ROWS,
  inputFrame,
  ptyUnavailable,
  resizeFrame,
  startPty,
  validSize,
} from '../engine/box-pty.mjs';
import { HttpError, readJson, sendJson } from './http-io.mjs';

/** An unused token is refused after this long (ms). */
export const TOKEN_TTL_MS = 300_000;
/** A socket authorized by no `?token=` must send `start` within this (ms). */
const START_WITHIN_MS = 30_000;
/** Terminals (opened, not yet ended) a Box may hold at once. */
const MAX_PER_BOX = 16;
/** Largest WebSocket message a client may send (bytes). */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Output queued for a slow client before the terminal's output is paused (bytes). */
const OUTPUT_HIGH_WATER = 1024 * 1024;
/** Input queued for the terminal before the socket is read no more (bytes). */
const INPUT_HIGH_WATER = 1024 * 1024;

const PATH = /^(?:\/api)?\/v2\/sandboxes\/sessions\/([A-Za-z0-9_-]+)\/interactive\/(pty_[A-Za-z0-9_-]+)$/;

function digest(text) {
  return createHash('sha256').update(text).digest();
}

/** The terminals of one host: `open` (the POST route), `upgrade` (the HTTP server's 'upgrade' event). */
export class InteractiveTerminals {
  /** @type {Map<string, { box: any, sid: string, digest: Buffer | null, expires: number, options: any, ended: boolean, starting: boolean }>} */
  #ptys = new Map();
  #baseUrl = null;
  /** @type {Set<import('ws').WebSocket>} */
  #sockets = new Set();
  /** @type {Promise<import('ws').WebSocketServer> | null} */
  #ws = null;

  /** The host's `http://127.0.0.1:<port>` (known once it listens). */
  set baseUrl(url) {
    this.#baseUrl = url;
  }

  #prune() {
    const now = Date.now();
    for (const [id, pty] of this.#ptys) {
      if (pty.ended || !pty.box.running || (pty.digest !== null && pty.expires < now)) this.#ptys.delete(id);
    }
  }

  /**
   * `POST …/interactive` on `box`, body `{ command?, args?, cols?, rows? }` (the SDK sends `{}`;
   * the others are this host's: the terminal's command, fixed for its socket, and its size) →
   * `{ url, token }`.
   */
  async open(box, body) {
    const problem = ptyUnavailable(box.isolation);
    if (problem) throw new HttpError(501, 'not_supported', problem);
    const { command, args, cols, rows } = body;
    if (command !== undefined && (typeof command !== 'string' || command === '' || command.includes('\0')))
      throw new HttpError(400, 'bad_request', 'command must be a non-empty string');
    if (
      args !== undefined &&
      (command === undefined || !Array.isArray(args) || args.some((a) => typeof a !== 'string'))
    )
      throw new HttpError(400, 'bad_request', 'args must be an array of strings, with a command');
    for (const [key, value] of [
      ['cols', cols],
      ['rows', rows],
    ]) {
      if (value !== undefined && !validSize(value))
        throw new HttpError(400, 'bad_request', `${key} must be an integer from 1 to 65535`);
    }
    if (this.#baseUrl === null) throw new HttpError(503, 'not_listening', 'the Box host is not listening yet');
    this.#prune();
    const held = [...this.#ptys.values()].filter((pty) => pty.box === box).length;
    if (held >= MAX_PER_BOX) {
      throw new HttpError(
        429,
        'too_many_terminals',
        `a Box holds at most ${MAX_PER_BOX} interactive terminals at once`,
      );
    }
    const id = newId('pty');
    const token = randomBytes(32).toString('base64url');
    this.#ptys.set(id, {
      box,
      sid: box.id,
      digest: digest(token),
      expires: Date.now() + TOKEN_TTL_MS,
      options: { command, args, cols, rows },
      ended: false,
      starting: false,
    });
    const url = `${this.#baseUrl.replace(/^http/, 'ws')}/v2/sandboxes/sessions/${box.id}/interactive/${id}`;
    return { url, token };
  }

  /** Closes every terminal's socket (the host closes; its Boxes are stopped too). */
  closeAll() {
    for (const ws of this.#sockets) ws.close(1001, 'the Box host is closing');
    this.#ptys.clear();
  }

  /** Takes the token of terminal `id` if `token` is it and still valid (once). */
  #take(pty, token) {
    if (typeof token !== 'string' || pty.digest === null || pty.expires < Date.now() || !pty.box.running) return false;
    if (!timingSafeEqual(digest(token), pty.digest)) return false;
    pty.digest = null;
    return true;
  }

  /**
   * The HTTP server's 'upgrade' event: answers the WebSocket of a terminal, or refuses with a
   * status (404 unknown, 401 wrong or stale token, 410 the Box stopped). Returns false for a
   * path that is no terminal's (the caller refuses it).
   */
  upgrade(req, socket, head, counters) {
    const url = new URL(req.url ?? '/', 'http://box-host');
    const found = PATH.exec(url.pathname);
    if (!found || req.method !== 'GET') return false;
    counters?.count('interactive/connect');
    const [, sid, id] = found;
    const pty = this.#ptys.get(id);
    const refuse = (status, text) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      return true;
    };
    if (!pty || pty.sid !== sid || pty.ended) return refuse(404, 'Not Found');
    if (!pty.box.running) return refuse(410, 'Gone');
    const token = url.searchParams.get('token');
    if (token !== null && !this.#take(pty, token)) return refuse(401, 'Unauthorized');
    // The `ws` package is loaded with the first terminal's socket; one server (no listener of its own) serves them all.
    this.#ws ??= import('ws').then(
      ({ WebSocketServer }) =>
        new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES, perMessageDeflate: false }),
    );
    this.#ws.then(
      (server) => {
        server.handleUpgrade(req, socket, head, (ws) => this.#serve(pty, ws, token !== null));
      },
      () => refuse(500, 'Internal Server Error'),
    );
    return true;
  }

  /** One terminal's socket, from its `start` message to its end. */
  #serve(pty, ws, authorized) {
    let cmd = null;
    /** Frames that came while the terminal was starting, written once it runs (bytes bounded). */
    let queued = [];
    let queuedBytes = 0;
    const toTerminal = (frame) => {
      if (cmd === null) {
        queuedBytes += frame.length;
        if (queuedBytes > INPUT_HIGH_WATER) return fail(1008, 'too much input before the terminal started');
        queued.push(frame);
        return;
      }
      const stdin = cmd.child?.stdin;
      if (!cmd.running || !stdin || stdin.destroyed) return;
      stdin.write(frame);
      if (stdin.writableLength > INPUT_HIGH_WATER && !ws.isPaused) {
        ws.pause();
        stdin.once('drain', () => ws.resume());
      }
    };
    const fail = (code, message) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'error', message }));
      // A close reason holds at most 123 bytes (ws throws past that): cut by bytes.
      ws.close(code, Buffer.from(String(message)).subarray(0, 100).toString());
    };
    const startTimer = setTimeout(() => fail(1008, 'no start message'), START_WITHIN_MS);
    startTimer.unref();
    // Until its command runs, the socket is closed when the Box stops (after that, the command's
    // exit closes it).
    const boxWatch = setInterval(() => {
      if (cmd !== null) clearInterval(boxWatch);
      else if (!pty.box.running) fail(1001, 'the Box has stopped');
    }, 1000);
    boxWatch.unref();
    this.#sockets.add(ws);
    ws.on('close', () => {
      this.#sockets.delete(ws);
      clearTimeout(startTimer);
      clearInterval(boxWatch);
      // Only the socket that took the token ends the terminal: one refused (no token, a wrong
      // one) leaves it to its owner.
      if (authorized) pty.ended = true;
      // The terminal ends with its socket.
      cmd?.killAll().catch(() => {});
    });
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => {
      if (!authorized && (isBinary || !String(data).includes('"start"'))) {
        return fail(1008, 'the first message must be start, with the token');
      }
      if (isBinary) {
        toTerminal(inputFrame(Buffer.isBuffer(data) ? data : Buffer.concat(/** @type {Buffer[]} */ (data))));
        return;
      }
      let message;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return fail(1008, 'text messages must be JSON control messages; send terminal input as binary');
      }
      if (message?.type === 'start') {
        if (cmd !== null || pty.starting) return fail(1008, 'the terminal was started already');
        if (!authorized && !this.#take(pty, message.token)) return fail(1008, 'invalid or expired token');
        authorized = true;
        clearTimeout(startTimer);
        pty.starting = true;
        this.#start(pty, message).then(
          (started) => {
            cmd = started;
            if (ws.readyState !== ws.OPEN) {
              cmd.killAll().catch(() => {});
              return;
            }
            this.#pipeOutput(cmd, ws);
            for (const frame of queued) toTerminal(frame);
            queued = [];
          },
          (err) => fail(typeof err?.status === 'number' && err.status < 500 ? 1008 : 1011, err.message),
        );
      } else if (!authorized) {
        fail(1008, 'the first message must be start, with the token');
      } else if (message?.type === 'resize') {
        if (!validSize(message.cols) || !validSize(message.rows))
          return fail(1008, 'cols and rows must be integers from 1 to 65535');
        toTerminal(resizeFrame(message.cols, message.rows));
      }
    });
  }

  /** Starts terminal `pty`'s command from its `start` message (its fields over the open's). */
  async #start(pty, message) {
    const fixed = pty.options;
    if (fixed.command !== undefined && message.command !== undefined && message.command !== fixed.command) {
      throw new HttpError(400, 'bad_request', 'this terminal runs the command given to openInteractive');
    }
    const command = fixed.command ?? message.command;
    const args = fixed.command !== undefined ? (fixed.args ?? []) : (message.args ?? []);
    if (command !== undefined && (typeof command !== 'string' || command === ''))
      throw new HttpError(400, 'bad_request', 'command must be a non-empty string');
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))
      throw new HttpError(400, 'bad_request', 'args must be an array of strings');
    const cols = message.cols ?? fixed.cols ?? DEFAULT_COLS;
    const rows = message.rows ?? fixed.rows ?? DEFAULT_ROWS;
    if (!validSize(cols) || !validSize(rows))
      throw new HttpError(400, 'bad_request', 'cols and rows must be integers from 1 to 65535');
    if (message.cwd !== undefined && typeof message.cwd !== 'string')
      throw new HttpError(400, 'bad_request', 'cwd must be a string');
    const env = envObject(message.env);
    if (!pty.box.running) throw new HttpError(410, 'sandbox_stopped', 'the Box has stopped');
    return startPty(pty.box, { command, args, cols, rows, env, cwd: message.cwd });
  }

  /** The terminal's output to the socket (paused while the socket is slow), then its exit. */
  #pipeOutput(cmd, ws) {
    const send = (chunk) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(chunk, { binary: true });
      if (ws.bufferedAmount > OUTPUT_HIGH_WATER && !cmd.outputPaused) {
        cmd.pauseOutput();
        const check = setInterval(() => {
          if (ws.readyState !== ws.OPEN || ws.bufferedAmount < OUTPUT_HIGH_WATER / 4) {
            clearInterval(check);
            cmd.resumeOutput();
          }
        }, 20);
      }
    };
    cmd.child?.stdout?.on('data', send);
    cmd.child?.stderr?.on('data', send);
    cmd.waitExit().then((code) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(JSON.stringify({ type: 'exit', code }));
      ws.close(1000, 'exited');
    });
  }
}

/** The `start` message's `env` (`["K=V", …]`, the CLI's, or an object) as an object (box.mjs checkEnv). */
function envObject(env) {
  if (env === undefined) return undefined;
  if (Array.isArray(env)) {
    const out = {};
    for (const entry of env) {
      const at = typeof entry === 'string' ? entry.indexOf('=') : -1;
      if (at <= 0) throw new HttpError(400, 'bad_request', 'env entries must be "NAME=value" strings');
      out[entry.slice(0, at)] = entry.slice(at + 1);
    }
    return checkEnv(out);
  }
  return checkEnv(env);
}

/** @type {WeakMap<object, InteractiveTerminals>} */
const byRegistry = new WeakMap();

/** The terminals of the host whose Box registry is `registry` (one per host, made on first use). */
export function terminalsOf(registry) {
  let terminals = byRegistry.get(registry);
  if (!terminals) {
    terminals = new InteractiveTerminals();
    byRegistry.set(registry, terminals);
  }
  return terminals;
}

/**
 * `POST /v2/sandboxes/sessions/{id}/interactive` (vercel-api.mjs's route table).
 * @type {import('./vercel-api.mjs').RouteHandler}
 */
export async function openInteractive({ registry, req, res, params: [sid] }) {
  const box = registry.running(sid);
  const body = await readJson(req);
  sendJson(res, 200, await terminalsOf(registry).open(box, body));
}
