// CORS for the local Box host, so a browser page (a local playground) can call it: only for the
// origins the host was started with (`startBoxHost({ allowOrigins })`, `vite-hub-sandbox host
// --allow-origin <origin>`), never `*`. The bearer token is still required on every request
// except the preflight (browsers send a preflight without credentials; Fetch standard, "CORS
// protocol"). Without allowed origins nothing changes: no Access-Control-* header is ever sent.

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Checks one origin: a serialized origin (`http://localhost:5173`: scheme, host, optional port;
 * no path, no `*`), as a browser sends it in `Origin`.
 * @param {unknown} origin
 * @returns {string} the origin
 * @throws {TypeError} naming the value and the expected form
 */
function checkOrigin(origin) {
  let parsed;
  try {
    parsed = typeof origin === 'string' && origin !== '*' ? new URL(origin) : null;
  } catch {
    parsed = null;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
    throw new TypeError(
      `allowOrigins: ${JSON.stringify(origin)} is not an origin; give scheme://host[:port] exactly as the page's origin (e.g. "http://localhost:5173"), never "*"`,
    );
  }
  return origin;
}

/**
 * The CORS step of the host's request handler.
 * @param {string[] | undefined} allowOrigins
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => boolean}
 *   sets the CORS headers of an allowed origin on `res`; `true` when it answered the request (a
 *   preflight), so the handler stops there.
 * @throws {TypeError} for an `allowOrigins` that is not an array of origins
 */
export function corsPolicy(allowOrigins) {
  if (allowOrigins === undefined) return () => false;
  if (!Array.isArray(allowOrigins)) throw new TypeError('allowOrigins must be an array of origins');
  const allowed = new Set(allowOrigins.map(checkOrigin));
  return (req, res) => {
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || !allowed.has(origin)) return false;
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('vary', 'Origin');
    const preflight = req.method === 'OPTIONS' && typeof req.headers['access-control-request-method'] === 'string';
    if (!preflight) {
      // The runtime reads the provider's response headers (content-type, retry-after, …).
      res.setHeader('access-control-expose-headers', '*');
      return false;
    }
    res.setHeader('access-control-allow-methods', ALLOWED_METHODS);
    const requested = req.headers['access-control-request-headers'];
    if (typeof requested === 'string' && requested) res.setHeader('access-control-allow-headers', requested);
    res.setHeader('access-control-max-age', String(PREFLIGHT_MAX_AGE_S));
    res.statusCode = 204;
    res.end();
    req.resume();
    return true;
  };
}
