// Ports and preview URLs of issue 35 on the local provider (a real local Box host, real Box
// processes): `openSandboxSession({ ports })` and `session.domain(port)` reach an HTTP server
// and a WebSocket in the Box through the host's port proxy, and nothing else does: no secret, a
// wrong or another Box's secret, a stale one after close, another Box's commands (through the
// proxy or the raw port), an undeclared port.
import http from 'node:http';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { WebSocket } from 'undici';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { useLocalHost, processesMatching } from '../support/local-host.mjs';

/** The port forwarders of this process's Boxes: their directories are `vite-hub-box-<ns>-<pid>-…/.vite-hub-ports`. */
const OWN_FORWARDERS = new RegExp(`vite-hub-box-\\d+-${process.pid}-[^/ ]+/\\.vite-hub-ports`);

const require = createRequire(import.meta.url);
/** Headless Chromium, where installed (scripts/setup.sh installs it for the wasm browser tests). */
const NO_CHROMIUM = (() => {
  try {
    execFileSync('chromium', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'chromium is not installed';
  }
})();
const WS_DIR = path.dirname(require.resolve('ws/package.json'));

// An HTTP server that tells what it got (path, cookies), and a WebSocket echo on the same port.
const SERVER = `
const http = require('node:http');
const { WebSocketServer } = require('ws');
const server = http.createServer((req, res) => {
  res.setHeader('content-type', 'text/plain');
  res.end('hello from the Box ' + req.url + ' cookie=' + (req.headers.cookie ?? ''));
});
new WebSocketServer({ server }).on('connection', (socket, req) =>
  socket.on('message', (data) => socket.send('echo ' + req.url + ' ' + data)));
server.listen(Number(process.argv[1]), () => console.log('listening'));
`;

let host;
/** Everything this process writes to stdout/stderr while the tests run (no secret may be in it). */
let written = '';
const writes = [process.stdout.write, process.stderr.write];
before(async () => {
  host = await useLocalHost();
  for (const [index, stream] of [process.stdout, process.stderr].entries()) {
    stream.write = function (chunk, ...rest) {
      written += String(chunk);
      return writes[index].call(this, chunk, ...rest);
    };
  }
});
after(async () => {
  [process.stdout.write, process.stderr.write] = writes;
  await host.close();
});

/** Writes the `ws` package into the Box's node_modules (the server's only dependency). */
async function writeWs(session) {
  const walk = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(full) : [full];
    });
  for (const file of walk(WS_DIR)) {
    await session.write(`node_modules/ws/${path.relative(WS_DIR, file)}`, fs.readFileSync(file));
  }
}

/** Starts SERVER on `port` in the Box and resolves once it listens. */
async function startServer(session, port = 3000) {
  await writeWs(session);
  const server = await session.spawn('node', ['-e', SERVER, String(port)]);
  for await (const { stream, data } of server.logs()) {
    if (stream === 'stdout' && data.includes('listening')) return server;
    if (stream === 'stderr') throw new Error(`the Box's server failed: ${data}`);
  }
  throw new Error(`the Box's server exited: ${JSON.stringify(await server.wait())}`);
}

/** The secret path segment of a local port URL. */
const secretOf = (url) => new URL(url).pathname.slice(1);

test('fetch(session.domain(3000)) gets the body of a server in the Box; paths and queries pass, the secret does not', async () => {
  const session = await openSandboxSession({ ports: [3000] });
  try {
    await startServer(session);
    const url = session.domain(3000);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{32}$/);
    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'hello from the Box / cookie=');
    // The cookie that lets a browser load the page's absolute paths, for this proxy's port only.
    const cookie = response.headers.get('set-cookie');
    assert.match(
      cookie,
      new RegExp(`^vite-hub-sandbox-${new URL(url).port}=${secretOf(url)}; Path=/; HttpOnly; SameSite=Strict$`),
    );
    // A handle reattached by id answers the same URL (the routes of `GET /v2/sandboxes/{id}`).
    const again = await openSandboxSession({ id: session.id });
    assert.equal(again.domain(3000), url);
    const api = await fetch(`${url}/api/items?page=2`, { headers: { cookie: 'theme=dark' } });
    assert.equal(await api.text(), 'hello from the Box /api/items?page=2 cookie=theme=dark');
    // A browser's next request: an absolute path with the cookie; the Box never sees the cookie.
    const asset = await fetch(`${new URL(url).origin}/assets/app.js`, {
      headers: { cookie: `theme=dark; ${cookie.split(';')[0]}; vite-hub-sandbox-1=other` },
    });
    assert.equal(await asset.text(), 'hello from the Box /assets/app.js cookie=theme=dark');
  } finally {
    await session.close();
  }
});

test('a WebSocket through session.domain(3000) echoes', async () => {
  const session = await openSandboxSession({ ports: [3000] });
  try {
    await startServer(session);
    const socket = new WebSocket(`${session.domain(3000).replace(/^http/, 'ws')}/live?room=1`);
    const echoed = new Promise((resolve, reject) => {
      socket.onmessage = (event) => resolve(event.data);
      socket.onerror = () => reject(new Error('the WebSocket failed'));
    });
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error('the WebSocket did not open'));
    });
    socket.send('ping');
    assert.equal(await echoed, 'echo /live?room=1 ping');
    const closed = new Promise((resolve) => {
      socket.onclose = resolve;
    });
    // Closing the Session ends the tunnel too.
    await session.close();
    await closed;
  } finally {
    await session.close();
  }
});

test('no secret, a wrong one, another Box secret and a stale one are refused; closing the Session closes its proxy and forwarder', async () => {
  const a = await openSandboxSession({ ports: [3000] });
  const b = await openSandboxSession({ ports: [3000] });
  let urlA;
  try {
    await startServer(a);
    urlA = a.domain(3000);
    const origin = new URL(urlA).origin;
    const wrong = `${origin}/${'x'.repeat(secretOf(urlA).length)}`;
    const otherBox = `${origin}/${secretOf(b.domain(3000))}`;
    for (const attempt of [
      origin,
      `${origin}/`,
      wrong,
      `${wrong}/api`,
      otherBox,
      `${origin}/${secretOf(urlA).slice(0, -1)}`,
    ]) {
      const response = await fetch(attempt);
      assert.equal(response.status, 404, attempt);
      const text = await response.text();
      assert.equal(text, 'Not Found\n');
      assert.equal(response.headers.get('set-cookie'), null);
    }
    // A cookie with a wrong secret, or the cookie of another proxy port, admits nothing.
    const forged = await fetch(`${origin}/`, {
      headers: {
        cookie: `vite-hub-sandbox-${new URL(urlA).port}=nope; vite-hub-sandbox-${new URL(b.domain(3000)).port}=${secretOf(urlA)}`,
      },
    });
    assert.equal(forged.status, 404);
    // A WebSocket upgrade without the secret is refused the same way.
    const refused = new WebSocket(`${origin.replace(/^http/, 'ws')}/live`);
    await new Promise((resolve) => {
      refused.onerror = resolve;
    });
    assert.equal((await processesMatching(OWN_FORWARDERS)).length >= 1, true, 'the forwarders run');
  } finally {
    await a.close();
    await b.close();
  }
  // Stale: the proxy is closed with its Session; so are the forwarders in the Box networks.
  await assert.rejects(fetch(urlA), (error) => error.cause?.code === 'ECONNREFUSED');
  assert.throws(
    () => a.domain(3000),
    (error) => error.code === 'SANDBOX_INVALID_STATE',
  );
  assert.deepEqual(await processesMatching(OWN_FORWARDERS), []);
  assert.equal(written.includes(secretOf(urlA)), false, 'the secret is in no log');
});

for (const isolation of ['default', 'none']) {
  test(`${isolation} isolation: a Box cannot reach another Box's port through the proxy without its secret, nor the raw port on a Box network`, async () => {
    // Without isolation the Box's server listens on this machine's loopback: a port nobody uses.
    const port = isolation === 'none' ? 20_000 + Math.floor(Math.random() * 10_000) : 3000;
    const own = isolation === 'none' ? await startBoxHost({ isolation: 'none' }) : host;
    configureSandbox({ provider: 'local', local: { baseUrl: own.baseUrl, token: own.token } });
    const a = await openSandboxSession({ ports: [port] });
    const b = await openSandboxSession();
    try {
      await startServer(a, port);
      const urlA = a.domain(port);
      const origin = new URL(urlA).origin;
      const attempts = [
        origin,
        `${origin}/${'x'.repeat(secretOf(urlA).length)}`,
        urlA,
        `http://127.0.0.1:${port}/`,
        `http://10.0.2.2:${new URL(urlA).port}${new URL(urlA).pathname}`,
      ];
      const probe = `
        const results = [];
        for (const url of ${JSON.stringify(attempts)}) {
          try {
            const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
            results.push({ url, status: response.status, body: await response.text() });
          } catch (error) {
            results.push({ url, error: error.cause?.code ?? error.name });
          }
        }
        console.log(JSON.stringify(results));
      `;
      const { stdout, exitCode } = await b.exec('node', ['--input-type=module', '-e', probe]);
      assert.equal(exitCode, 0);
      const results = JSON.parse(stdout);
      if (isolation === 'none') assert.equal(b.executionAuthority.network, 'unrestricted');
      if (b.executionAuthority.network === 'restricted') {
        // A Box network (slirp4netns without the host's loopback): neither the proxy nor Box A's
        // port is reachable, with or without the secret.
        for (const result of results) assert.ok(result.error, JSON.stringify(result));
      } else {
        // A shared network (docs/sessions.md): the proxy answers and refuses without the secret.
        for (const result of results.slice(0, 2)) {
          assert.deepEqual([result.status, result.body], [404, 'Not Found\n'], JSON.stringify(result));
        }
      }
    } finally {
      await a.close();
      await b.close();
      if (own !== host) {
        await own.close();
        configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
      }
    }
  });
}

// The fresh-user trial of issue 35: on the machine's network (here `isolation: 'none'`; also a
// host without /dev/net/tun) two Boxes declaring one port shared it, and B's URL served A's server.
test("on the machine's network a declared port is one Box's: another Box, or a port in use, is refused", async () => {
  const own = await startBoxHost({ isolation: 'none' });
  configureSandbox({ provider: 'local', local: { baseUrl: own.baseUrl, token: own.token } });
  const port = 20_000 + Math.floor(Math.random() * 10_000);
  const taken = http.createServer((_req, res) => res.end('the machine'));
  await new Promise((resolve) => taken.listen(port + 1, '127.0.0.1', resolve));
  const a = await openSandboxSession({ ports: [port] });
  try {
    await startServer(a, port);
    for (const ports of [[port], [port + 1]]) {
      await assert.rejects(openSandboxSession({ ports }), (error) => {
        assert.match(error.message, ports[0] === port ? /declared by another Box/ : /already in use/);
        assert.equal(error.details.status, 409);
        return true;
      });
    }
    await a.close();
    // Given back at close: the next Box may declare it.
    const b = await openSandboxSession({ ports: [port] });
    await b.close();
  } finally {
    await a.close();
    taken.close();
    await own.close();
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test('an undeclared port, bad ports and ports under deny-all are refused with their codes', async () => {
  const session = await openSandboxSession({ ports: [3000, 5173] });
  try {
    assert.notEqual(session.domain(3000), session.domain(5173));
    assert.throws(
      () => session.domain(8080),
      (error) =>
        error.code === 'SANDBOX_INVALID_ARGUMENT' &&
        error.operation === 'ports' &&
        error.message.includes('ports: [3000, 5173]'),
    );
    assert.throws(
      () => session.domain('3000'),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT',
    );
    // Nothing listens yet: the proxy answers 502, never another port.
    assert.equal((await fetch(session.domain(5173))).status, 502);
  } finally {
    await session.close();
  }
  for (const ports of [[0], [3000, 3000], [70000], ['3000'], 'x', Array.from({ length: 16 }, (_, i) => 3000 + i)]) {
    await assert.rejects(
      openSandboxSession({ ports }),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT',
      JSON.stringify(ports),
    );
  }
  configureSandbox({
    provider: 'local',
    local: { baseUrl: host.baseUrl, token: host.token, networkPolicy: 'deny-all' },
  });
  try {
    await assert.rejects(openSandboxSession({ ports: [3000] }), (error) => {
      assert.equal(error.code, 'SANDBOX_NOT_SUPPORTED');
      assert.equal(error.operation, 'ports');
      assert.match(error.message, /deny-all/);
      return true;
    });
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test('a browser opening session.domain(3000) loads the page and its absolute paths (the cookie)', {
  skip: NO_CHROMIUM,
}, async () => {
  const session = await openSandboxSession({ ports: [3000] });
  try {
    const page = `require('node:http').createServer((req, res) => {
      if (req.url === '/app.js') {
        res.setHeader('content-type', 'text/javascript');
        return res.end("document.getElementById('out').textContent = 'loaded ' + document.cookie.length");
      }
      res.setHeader('content-type', 'text/html');
      res.end('<p id=out>not loaded</p><script src="/app.js"></script>');
    }).listen(3000, () => console.log('listening'))`;
    const server = await session.spawn('node', ['-e', page]);
    for await (const { data } of server.logs()) if (data.includes('listening')) break;
    // Async: the proxy answers from this process.
    const { stdout } = await promisify(execFile)(
      'chromium',
      ['--headless=new', '--no-sandbox', '--disable-gpu', '--dump-dom', `${session.domain(3000)}/`],
      { timeout: 60_000 },
    );
    // `/app.js` came through the proxy without the secret in its path; the cookie is HttpOnly.
    assert.match(stdout, /<p id="out">loaded 0<\/p>/);
  } finally {
    await session.close();
  }
});

test('Cloudflare: ports are SANDBOX_NOT_SUPPORTED (operation ports) before any Box is opened', async () => {
  configureSandbox({
    provider: 'cloudflare',
    env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
  });
  try {
    const requests = host.counters().total;
    await assert.rejects(openSandboxSession({ ports: [8080] }), (error) => {
      assert.equal(error.code, 'SANDBOX_NOT_SUPPORTED');
      assert.equal(error.operation, 'ports');
      assert.equal(error.provider, 'cloudflare');
      assert.match(error.message, /proxyToSandbox on a custom domain/);
      return true;
    });
    assert.equal(host.counters().total, requests, 'no request reached the host');
    // A Session without ports works, and its domain() says the same.
    const session = await openSandboxSession();
    try {
      assert.throws(
        () => session.domain(8080),
        (error) =>
          error.code === 'SANDBOX_NOT_SUPPORTED' && error.operation === 'ports' && error.provider === 'cloudflare',
      );
    } finally {
      await session.close();
    }
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});
