// What `warmUp()` does besides starting the in-process local Box host: one throwaway Box on it
// (create → write a one-file gzip'd tar → stop, Vercel protocol as the core speaks it), so the
// host's first create and first archive extraction, and this isolate's first gzip stream (the
// core gzips Box files with CompressionStream), are paid before the first Run instead of in it.
import { gzipSync } from 'node:zlib';
import { packTar } from 'modern-tar';

/**
 * Opens, writes and stops one Box on `host` (`{ baseUrl, token, fetch? }` of the in-process host).
 * @throws {Error} naming the step and the HTTP status when the host refuses one.
 */
export async function warmBoxPaths(host) {
  const gzip = new Blob(['warm-up']).stream().pipeThrough(new CompressionStream('gzip'));
  await new Response(gzip).arrayBuffer();

  const call = async (step, method, path, body, contentType = 'application/json') => {
    const request = new Request(`${host.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${host.token}`, 'content-type': contentType },
      body: contentType === 'application/json' ? JSON.stringify(body) : body,
    });
    // The way the Runs call it: in process where the host has its `fetch` (startBoxHost's).
    const response = await (host.fetch ? host.fetch(request) : fetch(request));
    const text = await response.text();
    if (!response.ok) throw new Error(`warm-up ${step}: the local Box host answered HTTP ${response.status}`);
    return text ? JSON.parse(text) : {};
  };
  const created = await call('create', 'POST', '/v2/sandboxes', { timeout: 60_000 });
  const session = `/v2/sandboxes/sessions/${created.session.id}`;
  try {
    const archive = gzipSync(await packTar([{ header: { name: 'warm-up.txt', size: 2 }, body: 'ok' }]));
    await call('write', 'POST', `${session}/fs/write`, archive, 'application/gzip');
  } finally {
    await call('stop', 'POST', `${session}/stop`, {});
  }
}
