// The ports of a Box (`ports` on create, the Vercel SDK's `routes` and `domain(port)`): one
// reverse proxy per Box on this machine's loopback, one listening socket per declared port, that
// reaches only that Box and only its declared ports, behind a secret of the Box's own.
//
// The URL of a port is `http://127.0.0.1:<proxy port>/<secret>`: the secret is the first path
// segment, stripped before the request reaches the Box, so `fetch(url)`, `fetch(`${url}/api`)`
// and a WebSocket to `ws://…/<secret>/…` work with no header to add. A browser loading a page
// there gets a cookie (`vite-hub-sandbox-<proxy port>`, HttpOnly, SameSite=Strict) that admits the
// page's absolute paths (`/assets/app.js`, a dev server's HMR socket) on that origin too. Cookies
// do not tell ports apart, so the proxy strips every `vite-hub-sandbox-*` cookie before forwarding:
// a Box never sees another Box's secret. Anything else (no secret, a wrong or stale one) is a bare
// 404; the proxy logs nothing, so the secret is in no log.
//
// How the host reaches the port (box-reach.mjs): inside a Box network through a forwarder in its
// network namespace; with the host's network, 127.0.0.1:<port>.
import crypto from 'node:crypto';
import http from 'node:http';
import { BoxRequestError } from './box.mjs';
import { boxPortReach, PortTakenError } from './box-reach.mjs';

/** At most this many ports per Box (Vercel's limit, SDK `ports`: "up to 15"). */
export const MAX_PORTS = 15;
const COOKIE_PREFIX = 'vite-hub-sandbox-';
/** Hop-by-hop headers (RFC 9110 §7.6.1) never forwarded by the proxy itself. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade'];

/**
 * The `ports` of a create body, checked: `[]` when absent; else distinct integers 1–65535, at
 * most MAX_PORTS. `networkDenied`: a local Box under `deny-all` has no network its commands share
 * (each command has a network namespace of its own with only its loopback), so nothing there could
 * be reached: 400, never a URL that cannot work.
 * @param {unknown} ports
 * @param {boolean} networkDenied
 * @returns {number[]}
 */
export function checkPorts(ports, networkDenied) {
  if (ports === undefined || ports === null) return [];
  if (!Array.isArray(ports) || ports.length > MAX_PORTS) {
    throw new BoxRequestError(400, 'bad_request', `ports must be an array of at most ${MAX_PORTS} port numbers`);
  }
  for (const port of ports) {
    if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) {
      throw new BoxRequestError(400, 'bad_request', 'ports must hold integers from 1 to 65535');
    }
  }
  if (new Set(ports).size !== ports.length) throw new BoxRequestError(400, 'bad_request', 'ports must be distinct');
  if (ports.length > 0 && networkDenied) {
    throw new BoxRequestError(
      400,
      'bad_request',
      "ports cannot be reached in a local Box under networkPolicy 'deny-all': each of its commands has a network namespace of its own with only its loopback",
    );
  }
  return ports;
}

function sameSecret(given, secret) {
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** The value of cookie `name` in a Cookie header, or undefined. */
function cookieValue(header, name) {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A Cookie header without this host's cookies (undefined when nothing is left). */
function foreignCookies(header) {
  if (header === undefined) return undefined;
  const kept = header
    .split(';')
    .filter((part) => !part.trim().startsWith(COOKIE_PREFIX))
    .join(';')
    .trim();
  return kept === '' ? undefined : kept;
}

/**
 * The Box-side path of a request to the proxy listening on `listenPort`, or null when it is not
 * admitted: `/<secret>[/rest][?query]` → `/rest?query` (`viaPath`), or any path with the cookie.
 */
function admit(req, secret, listenPort) {
  const url = req.url ?? '/';
  const prefix = `/${secret}`;
  const head = url.slice(0, prefix.length);
  const next = url.charAt(prefix.length);
  if (sameSecret(head, prefix) && (next === '' || next === '/' || next === '?')) {
    const rest = url.slice(prefix.length);
    return { path: rest.startsWith('/') ? rest : `/${rest}`, viaPath: true };
  }
  const cookie = cookieValue(req.headers.cookie, `${COOKIE_PREFIX}${listenPort}`);
  if (cookie !== undefined && sameSecret(cookie, secret)) return { path: url, viaPath: false };
  return null;
}

/** The headers to send to the Box: end-to-end ones, this host's cookies removed. */
function forwardHeaders(req, keepUpgrade) {
  const headers = { ...req.headers };
  for (const name of HOP_BY_HOP) delete headers[name];
  const cookie = foreignCookies(req.headers.cookie);
  if (cookie === undefined) delete headers.cookie;
  else headers.cookie = cookie;
  if (keepUpgrade) {
    headers.connection = 'Upgrade';
    headers.upgrade = req.headers.upgrade;
  }
  return headers;
}

function refuse(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`${text}\n`);
}

/** Writes an HTTP/1.1 response head (status line and raw header pairs) to a raw socket. */
function writeHead(socket, res) {
  let head = `HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n`;
  for (let i = 0; i < res.rawHeaders.length; i += 2) head += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`;
  socket.write(`${head}\r\n`);
}

/** One declared port of a Box: its listening server on loopback. */
class PortListener {
  constructor(boxPort, secret, reach) {
    this.boxPort = boxPort;
    this.secret = secret;
    this.reach = reach;
    /** Upgraded (WebSocket) connections, destroyed at close. */
    this.tunnels = new Set();
    this.server = http.createServer((req, res) => this.#request(req, res));
    this.server.on('upgrade', (req, socket, head) => this.#upgrade(req, socket, head));
    this.server.on('clientError', (_err, socket) => socket.destroy());
  }

  async listen() {
    await new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve(undefined));
    });
    this.server.unref();
    this.listenPort = /** @type {import('node:net').AddressInfo} */ (this.server.address()).port;
  }

  #boxRequest(req, path, keepUpgrade) {
    return http.request({
      method: req.method,
      path,
      headers: forwardHeaders(req, keepUpgrade),
      createConnection: (_opts, done) => this.reach.connect(this.boxPort, done),
    });
  }

  #request(req, res) {
    const admitted = admit(req, this.secret, this.listenPort);
    if (!admitted) return refuse(res, 404, 'Not Found');
    const upstream = this.#boxRequest(req, admitted.path, false);
    upstream.on('response', (answer) => {
      const headers = { ...answer.headers };
      for (const name of HOP_BY_HOP) delete headers[name];
      if (admitted.viaPath) {
        const own = `${COOKIE_PREFIX}${this.listenPort}=${this.secret}; Path=/; HttpOnly; SameSite=Strict`;
        headers['set-cookie'] = [...(answer.headers['set-cookie'] ?? []), own];
      }
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
      answer.pipe(res);
      res.on('close', () => answer.destroy());
    });
    upstream.on('error', () => {
      if (!res.headersSent) refuse(res, 502, `Nothing answered on port ${this.boxPort} in the Box`);
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  #upgrade(req, socket, head) {
    socket.on('error', () => {});
    const admitted = admit(req, this.secret, this.listenPort);
    if (!admitted) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const upstream = this.#boxRequest(req, admitted.path, true);
    upstream.on('upgrade', (answer, boxSocket, boxHead) => {
      boxSocket.on('error', () => socket.destroy());
      socket.on('close', () => boxSocket.destroy());
      boxSocket.on('close', () => socket.destroy());
      this.tunnels.add(socket);
      socket.on('close', () => this.tunnels.delete(socket));
      writeHead(socket, answer);
      if (boxHead.length > 0) socket.write(boxHead);
      boxSocket.pipe(socket);
      socket.pipe(boxSocket);
    });
    // The Box answered without switching protocols: that answer goes back as it is.
    upstream.on('response', (answer) => {
      writeHead(socket, answer);
      answer.pipe(socket);
    });
    upstream.on('error', () => {
      socket.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    });
    if (head.length > 0) upstream.write(head);
    upstream.end();
  }

  close() {
    for (const socket of this.tunnels) socket.destroy();
    this.server.close();
    this.server.closeAllConnections();
  }
}

/**
 * The port proxy of one Box: `routes()` gives the Vercel `routes` of its create and get answers,
 * `close()` (at the Box's stop) closes every listener, open connection and the Box-side reach.
 */
export class PortProxy {
  /**
   * Opens the listeners of `ports` (checked by checkPorts) for `box`.
   * @param {import('./box.mjs').Box} box
   * @param {number[]} ports
   */
  static async open(box, ports) {
    const secret = crypto.randomBytes(24).toString('base64url');
    const reach = boxPortReach(box, ports);
    const listeners = ports.map((port) => new PortListener(port, secret, reach));
    const proxy = new PortProxy(box.id, listeners, reach);
    try {
      await Promise.all([reach.ready, ...listeners.map((l) => l.listen())]);
    } catch (err) {
      proxy.close();
      // On the machine's network a port is one for all: a taken one is the caller's to change.
      if (err instanceof PortTakenError)
        throw new BoxRequestError(
          409,
          'port_taken',
          `the Box's ports could not be opened: ${err.message}; this Box shares the machine's network (no Box network of its own), so declare another port`,
        );
      throw new BoxRequestError(500, 'internal_error', `the Box's ports could not be opened: ${err.message}`);
    }
    return proxy;
  }

  constructor(boxId, listeners, reach) {
    this.boxId = boxId;
    this.listeners = listeners;
    this.reach = reach;
  }

  /** `[{ port, subdomain, url }]` (SDK `SandboxRoute`); `url` carries the secret. */
  routes() {
    return this.listeners.map((l) => ({
      port: l.boxPort,
      subdomain: `${this.boxId}-${l.boxPort}`.toLowerCase().replace(/[^a-z0-9-]/g, '-'),
      url: `http://127.0.0.1:${l.listenPort}/${l.secret}`,
    }));
  }

  close() {
    for (const listener of this.listeners) listener.close();
    this.reach.close();
  }
}

/**
 * Opens the port proxy of a Box just created with `ports` (checked; none: nothing). When it
 * cannot be opened the Box is stopped and the create fails (500 `internal_error` saying why).
 * @param {import('./box.mjs').Box} box
 * @param {number[]} ports
 */
export async function openPorts(box, ports) {
  if (ports.length === 0) return;
  try {
    box.portProxy = await PortProxy.open(box, ports);
  } catch (err) {
    await box.stop();
    throw err;
  }
  // Stopped while it opened: Box.stop closed no proxy yet.
  if (!box.running) box.portProxy.close();
}

/** The `routes` of a Box's create and get answers: `[]` without ports or once it stopped. */
export function routesOf(box) {
  return box.portProxy && box.running ? box.portProxy.routes() : [];
}
