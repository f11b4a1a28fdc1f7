// A recording proxy in front of a local Box host, for the conformance lane: the official
// `@vercel/sandbox` SDK and our Vercel client are pointed at it, and each test file records the
// requests it compares (the SDK's against ours).
import http from 'node:http';

/** The SDK's API base, which its `fetch` option sees and the proxy replaces. */
const VERCEL_API = 'https://vercel.com/api';

/**
 * Starts a proxy on 127.0.0.1 that hands every request to `record(req, url, body)` (`url` a URL of
 * its path and query, `body` a Buffer), then forwards it unchanged to `target` (a base URL) and
 * answers with the target's answer.
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export async function startRecordingProxy(target, record) {
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url, 'http://proxy');
    record(req, url, body);
    const headers = { ...req.headers };
    delete headers.host;
    delete headers['content-length'];
    const answer = await fetch(`${target}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body: ['GET', 'HEAD'].includes(req.method) ? undefined : body,
    });
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The official SDK's options for `host` (a started local Box host) behind the proxy at `proxyUrl`. */
export function vercelSdkParams(host, proxyUrl) {
  return {
    token: host.token,
    teamId: 'team_local',
    projectId: 'prj_local',
    fetch: (url, init) => globalThis.fetch(String(url).replace(VERCEL_API, proxyUrl), init),
  };
}
