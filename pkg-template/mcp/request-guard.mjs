// Who may call the Streamable HTTP handler (spec 2025-06-18, Transports, "Security Warning": validate
// `Origin` on every request against DNS rebinding, bind to loopback when local, authenticate when
// remote). One rule each:
// - production: known at creation; without `authorize` the handler refuses to be created there;
// - loopback: without `authorize` (development) only a request from this machine is answered;
// - Origin: a browser's request from another origin is refused, always.
import { sandboxError } from '../runtime/sandbox-error.mjs';

/** `import.meta.env.PROD` of the app's Vite build, handed over by hubSandbox()'s shim (vite/vite.mjs). */
let bundledProduction;

/**
 * Sets what the app's Vite build says of production: in a Node build `@vite-hub/sandbox/mcp` stays
 * an external package, which Vite never compiles, so its own `import.meta.env.PROD` is not replaced.
 * @param {boolean} production
 */
export function setBundledProduction(production) {
  if (typeof production === 'boolean') bundledProduction = production;
}

/**
 * Whether the handler is created in production: `options.production` when given; else what the
 * app's Vite build said ({@link setBundledProduction}); else Vite's `import.meta.env.PROD` where
 * Vite compiled this module (a Vite/Nitro build: true, `vite dev`:
 * false); else `NODE_ENV === 'production'`; else, in a Worker (workerd, where there is no
 * NODE_ENV unless the Worker's vars set one), true.
 * @param {boolean | undefined} explicit
 */
export function isProduction(explicit) {
  if (typeof explicit === 'boolean') return explicit;
  if (typeof bundledProduction === 'boolean') return bundledProduction;
  // Written out in full: Vite replaces the literal `import.meta.env.PROD` (its module runner refuses
  // any other access to `import.meta.env`); elsewhere `import.meta.env` is undefined.
  let vite;
  try {
    // @ts-expect-error: ImportMeta has no `env` outside Vite's types
    vite = import.meta.env.PROD;
  } catch {}
  if (typeof vite === 'boolean') return vite;
  const nodeEnv = globalThis.process?.env?.NODE_ENV;
  if (typeof nodeEnv === 'string' && nodeEnv !== '') return nodeEnv === 'production';
  return globalThis.navigator?.userAgent === 'Cloudflare-Workers';
}

/** Throws SANDBOX_INVALID_ARGUMENT when the handler would serve anyone in production. */
export function checkCanStart({ authorize, production }) {
  if (authorize !== undefined && typeof authorize !== 'function')
    throw sandboxError(
      'SANDBOX_INVALID_ARGUMENT',
      'createSandboxMcpHandler: options.authorize must be a function (request) => boolean',
    );
  if (authorize === undefined && isProduction(production))
    throw sandboxError(
      'SANDBOX_INVALID_ARGUMENT',
      'createSandboxMcpHandler needs options.authorize in production: without it anyone who reaches this route could run your Definitions. Pass authorize(request) (check a bearer token, a session), or production: false for a server that only listens on loopback',
    );
}

/** Whether an IP address (v4, v6, v4-mapped v6) is this machine's loopback. */
export function isLoopbackAddress(address) {
  const text = String(address ?? '')
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (text === '::1' || text === '0:0:0:0:0:0:0:1') return true;
  const v4 = text.startsWith('::ffff:') ? text.slice(7) : text;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Whether a host name (URL `hostname`) names loopback. */
export function isLoopbackHost(hostname) {
  const host = String(hostname)
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return host === 'localhost' || host.endsWith('.localhost') || isLoopbackAddress(host);
}

/**
 * Whether a request came from this machine: its peer address when the server tells it
 * (`context.remoteAddress`, or srvx's `request.ip` under Nitro/h3 v2), and the URL's host, and no
 * forwarding header naming another address (a proxy on this machine forwards remote clients).
 * @param {Request} request
 * @param {{ remoteAddress?: string }} [context]
 */
export function isLoopbackRequest(request, context) {
  const peer = context?.remoteAddress ?? /** @type {any} */ (request).ip;
  if (peer !== undefined && peer !== null && !isLoopbackAddress(peer)) return false;
  if (!isLoopbackHost(new URL(request.url).hostname)) return false;
  for (const name of ['cf-connecting-ip', 'x-real-ip']) {
    const value = request.headers.get(name);
    if (value && !isLoopbackAddress(value.trim())) return false;
  }
  const forwarded = request.headers.get('x-forwarded-for');
  if (forwarded?.split(',').some((part) => !isLoopbackAddress(part.trim()))) return false;
  // RFC 7239: `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`.
  const standard = request.headers.get('forwarded');
  for (const [, value] of standard?.matchAll(/for=("[^"]*"|[^;,\s]*)/gi) ?? []) {
    const address = value
      .replace(/^"|"$/g, '')
      .replace(/^\[([^\]]*)\](:\d+)?$/, '$1')
      .replace(/^([\d.]+):\d+$/, '$1');
    if (!isLoopbackAddress(address)) return false;
  }
  return true;
}

/**
 * Whether a request's `Origin` (sent by browsers) may call: absent (not a browser), the request's
 * own origin, one of `allowedOrigins`, or, in development without `authorize`, a loopback origin
 * (a local inspector page). A page elsewhere (DNS rebinding: a public name resolving to 127.0.0.1)
 * is refused.
 */
export function isAllowedOrigin(request, { allowedOrigins = [], loopbackPages }) {
  const origin = request.headers.get('origin');
  if (origin === null) return true;
  if (origin === new URL(request.url).origin || allowedOrigins.includes(origin)) return true;
  if (!loopbackPages) return false;
  try {
    return isLoopbackHost(new URL(origin).hostname);
  } catch {
    return false;
  }
}

/** A refusal as JSON-RPC error (code -32000, no id: the request was not read), with an HTTP status. */
export function refusal(status, message) {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}
