// A provider that answers 307 or 308 (a load balancer moving the API) is followed with the same
// method and body: the request body must survive being sent twice. A real redirecting server in
// front of a real local Box host.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox } from '../support/local-host.mjs';

let host;
let redirector;
let status;
before(async () => {
  host = await startBoxHost({});
  // Same origin (a cross-origin redirect drops the Authorization header, as fetch must): every
  // request is sent on to /moved/…, which is passed through to the Box host.
  redirector = http.createServer((req, res) => {
    if (!req.url.startsWith('/moved/')) {
      res.writeHead(status, { location: `/moved${req.url}` });
      res.end();
      return;
    }
    const target = new URL(req.url.slice('/moved'.length), host.baseUrl);
    const forwarded = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise((resolve) => redirector.listen(0, '127.0.0.1', resolve));
});
after(async () => {
  configureSandbox({});
  redirector.closeAllConnections();
  await new Promise((resolve) => redirector.close(resolve));
  await host.close();
});

for (const code of [307, 308]) {
  test(`a ${code} from the provider is followed, bodies included`, { timeout: 60_000 }, async () => {
    status = code;
    configureSandbox({ provider: 'local', local: { baseUrl: `http://127.0.0.1:${redirector.address().port}`, token: host.token } });
    defineTestSandbox('redirect/echo', 'export default (payload) => ({ echoed: payload });');
    const response = await runSandbox('redirect/echo', { n: code });
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(await response.json(), { echoed: { n: code } });
  });
}
