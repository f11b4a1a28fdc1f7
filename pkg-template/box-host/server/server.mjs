// The HTTP server of the Box host: bearer-token check, then the dispatch it shares with the
// in-process Fetch handler (in-process.mjs): `/api` prefix, the `/_vite-hub/counters` and
// `/_vite-hub/execution-authority` routes, request counting, the Vercel REST handlers (error
// answers in the Vercel shape) and the Cloudflare container API under `/cloudflare/<containerId>/…`.
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { handleCloudflare, matchCloudflareRoute } from '../protocols/cloudflare-api.mjs';
import { sendError, sendJson } from '../protocols/http-io.mjs';
import { matchRoute } from '../protocols/vercel-api.mjs';

function digest(text) {
  return createHash('sha256').update(text).digest();
}

function authorized(req, tokenDigest) {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  return timingSafeEqual(digest(header.slice(7)), tokenDigest);
}

/**
 * The routes of the host behind its HTTP checks: `dispatch(req, res, url)` answers one request
 * whose token, if any, was checked (the HTTP server's) or that needs none (the in-process Fetch
 * handler, in-process.mjs).
 * @param {{
 *   registry: import('../engine/registry.mjs').BoxRegistry,
 *   containers: import('../protocols/cloudflare-containers.mjs').CloudflareContainers,
 *   counters: import('./counters.mjs').RequestCounters,
 * }} options
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, url: URL) => Promise<void>}
 */
export function createDispatch({ registry, containers, counters }) {
  return async (req, res, url) => {
    let pathname = url.pathname;
    if (pathname === '/api' || pathname.startsWith('/api/')) pathname = pathname.slice(4);
    if (pathname === '/_vite-hub/counters' && req.method === 'GET') {
      sendJson(res, 200, counters.snapshot());
      return;
    }
    if (pathname === '/_vite-hub/counters/reset' && req.method === 'POST') {
      counters.reset();
      sendJson(res, 200, counters.snapshot());
      return;
    }
    if (pathname === '/_vite-hub/execution-authority' && req.method === 'GET') {
      // What a Box created with `?networkPolicy=<JSON>` would get (the rule of create).
      counters.count('execution-authority');
      try {
        const policy = url.searchParams.get('networkPolicy');
        sendJson(res, 200, registry.executionAuthorityFor(policy === null ? undefined : JSON.parse(policy)));
      } catch (err) {
        if (typeof err?.status === 'number') sendError(res, err.status, err.code ?? 'bad_request', err.message);
        else sendError(res, 400, 'bad_request', 'networkPolicy must be JSON');
      }
      return;
    }
    const container = matchCloudflareRoute(req.method, url.pathname);
    if (container) {
      counters.count(container.name);
      await handleCloudflare({ route: container, containers, req, res });
      return;
    }
    const route = matchRoute(req.method, pathname, url.searchParams);
    if (!route) {
      counters.count('unknown');
      sendError(res, 404, 'not_found', `no route for ${req.method} ${pathname}`);
      req.resume();
      return;
    }
    counters.count(route.name);
    try {
      await route.handler({ registry, req, res, params: route.params, query: url.searchParams });
    } catch (err) {
      if (typeof err?.status === 'number' && typeof err.code === 'string') {
        sendError(res, err.status, err.code, err.message);
      } else {
        sendError(res, 500, 'internal_error', `the local Box host failed: ${err?.code ?? err?.message ?? err}`);
      }
      req.resume();
    }
  };
}

/**
 * Creates (does not start) the HTTP server over `dispatch` (createDispatch); `cors`: the CORS
 * step of cors.mjs (default: none). Every request needs the bearer `token`.
 * @param {{
 *   token: string,
 *   dispatch: ReturnType<typeof createDispatch>,
 *   cors?: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => boolean,
 * }} options
 */
export function createBoxHostServer({ token, dispatch, cors = () => false }) {
  const tokenDigest = digest(token);
  return http.createServer(async (req, res) => {
    // CORS headers for an allowed browser origin; a preflight is answered there (cors.mjs).
    if (cors(req, res)) return;
    let url;
    try {
      url = new URL(req.url, 'http://box-host');
    } catch {
      sendError(res, 400, 'bad_request', 'malformed request URL');
      return;
    }
    if (!authorized(req, tokenDigest)) {
      res.setHeader('www-authenticate', 'Bearer');
      sendError(res, 401, 'unauthorized', 'a valid bearer token is required');
      req.resume();
      return;
    }
    await dispatch(req, res, url);
  });
}
