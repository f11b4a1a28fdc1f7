// A Box's installs get the app's CA and proxy settings, never its tokens (issue 32, item 7).
// Behind a corporate proxy that re-signs TLS, the app's Node trusts the proxy's CA through
// NODE_EXTRA_CA_CERTS (or npm's cafile) and reaches the registry through HTTPS_PROXY; a Box that
// got neither failed every install with SELF_SIGNED_CERT_IN_CHAIN.
//
// Here: a registry stand-in over HTTPS on 127.0.0.1, named `registry.corp.test` with a certificate
// of a CA made at test time (openssl), and an HTTP proxy (CONNECT) listening on every address of
// this machine that resolves that name to the stand-in, as a corporate proxy resolves internal
// names. The host's
// process has NPM_CONFIG_CAFILE and NODE_EXTRA_CA_CERTS naming the CA (npm's cafile, where set,
// replaces what Node trusts: a machine whose global npmrc names a cafile, as this one may, needs
// npm's) and HTTPS_PROXY naming the proxy by this machine's non-loopback address; plus tokens in
// its environment and npm config. The registry's name resolves nowhere but in the proxy (and
// under bubblewrap with a Box network, slirp4netns without host loopback, its 127.0.0.1 is out of
// the Box's reach too), so an install that succeeds went through the proxy (counted) and trusted
// the CA. Real local Box host (the isolation this machine gives), real `npm ci`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
import { hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { NO_BWRAP } from '../support/local-host.mjs';

const SECRET = 'sekrit-do-not-leak';
const lanAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const SKIP = !hasOpenssl
  ? 'openssl is not installed (it makes the test CA)'
  : !lanAddress
    ? 'this machine has no non-loopback IPv4 address for the proxy'
    : false;

let dir;
let registry;
let proxy;
let host;
let features;
const registryRequests = [];
const tunnels = [];
let tarball;

/** The registry stand-in's name: only the proxy knows where it is. */
const REGISTRY_HOST = 'registry.corp.test';

/** A CA and a certificate for REGISTRY_HOST signed by it (PEM files in `dir`). */
function makeCertificates() {
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=vite-hub test corporate CA',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    `/CN=${REGISTRY_HOST}`,
  );
  fs.writeFileSync(path.join(dir, 'san.ext'), `subjectAltName=DNS:${REGISTRY_HOST}\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
}

/** The package `tiny@1.0.0` as a registry tarball: `{ bytes, integrity }`. */
function makeTarball() {
  const pkg = path.join(dir, 'tiny', 'package');
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(
    path.join(pkg, 'package.json'),
    JSON.stringify({ name: 'tiny', version: '1.0.0', main: 'index.js' }),
  );
  fs.writeFileSync(path.join(pkg, 'index.js'), "module.exports = 'tiny from the corporate registry';\n");
  execFileSync('tar', ['czf', '../tiny-1.0.0.tgz', 'package'], { cwd: path.join(dir, 'tiny') });
  const bytes = fs.readFileSync(path.join(dir, 'tiny-1.0.0.tgz'));
  return { bytes, integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}` };
}

function listen(server, address) {
  return new Promise((resolve) => server.listen(0, address, () => resolve(server.address().port)));
}

before(async () => {
  if (SKIP) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-install-network-'));
  makeCertificates();
  tarball = makeTarball();
  registry = https.createServer(
    { key: fs.readFileSync(path.join(dir, 'server.key')), cert: fs.readFileSync(path.join(dir, 'server.pem')) },
    (req, res) => {
      registryRequests.push({ url: req.url, authorization: req.headers.authorization ?? null });
      if (req.url === '/tiny/-/tiny-1.0.0.tgz') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarball.bytes);
      } else {
        res.writeHead(404).end();
      }
    },
  );
  registry.port = await listen(registry, '127.0.0.1');
  // An HTTP proxy: CONNECT tunnels (what npm uses for https), counted; anything else 405.
  proxy = http.createServer((req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, socket, head) => {
    tunnels.push({ target: req.url, authorization: req.headers['proxy-authorization'] ?? null });
    const [targetHost, targetPort] = req.url.split(':');
    if (targetHost !== REGISTRY_HOST) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(targetPort), '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  proxy.port = await listen(proxy, '0.0.0.0');

  // The app's process, as behind a corporate proxy: its CA and proxy, and its tokens.
  const userNpmrc = path.join(dir, 'user.npmrc');
  fs.writeFileSync(
    userNpmrc,
    [
      `//${REGISTRY_HOST}:${registry.port}/:_authToken=${SECRET}-npmrc`,
      `_auth=${Buffer.from(`me:${SECRET}`).toString('base64')}`,
      `email=me@example.com`,
      'strict-ssl=true',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  for (const name of ['NO_PROXY', 'no_proxy', 'HTTP_PROXY', 'http_proxy', 'https_proxy']) delete process.env[name];
  Object.assign(process.env, {
    NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem'),
    NPM_CONFIG_CAFILE: path.join(dir, 'ca.pem'),
    HTTPS_PROXY: `http://${lanAddress}:${proxy.port}`,
    NPM_CONFIG_USERCONFIG: userNpmrc,
    GITHUB_TOKEN: `${SECRET}-github`,
    NPM_TOKEN: `${SECRET}-npm-token`,
    NPM_CONFIG__AUTHTOKEN: `${SECRET}-npm-env`,
    [`npm_config_//${REGISTRY_HOST}:${registry.port}/:_authToken`]: `${SECRET}-npm-env-scoped`,
    npm_config_https_proxy: `http://me:${SECRET}@${lanAddress}:${proxy.port}`,
  });
  host = await startBoxHost({ stateDir: path.join(dir, 'state') });
  features = await hostFeatures();
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
});

after(async () => {
  configureSandbox({});
  await host?.close();
  registry?.close();
  proxy?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("a Definition whose dependency comes from a registry behind the app's proxy and CA installs through them", {
  skip: SKIP,
}, async (t) => {
  t.diagnostic(
    `isolation ${host.isolation ?? '?'}, Box network ${features.netTool ?? 'none (shares the host network)'}, proxy at ${lanAddress}:${proxy.port}`,
  );
  const resolved = `https://${REGISTRY_HOST}:${registry.port}/tiny/-/tiny-1.0.0.tgz`;
  const lock = {
    name: 'corporate',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'corporate', dependencies: { tiny: '1.0.0' } },
      'node_modules/tiny': { version: '1.0.0', resolved, integrity: tarball.integrity },
    },
  };
  registerSandbox('corporate', {
    files: [
      {
        path: 'package.json',
        content: JSON.stringify({ name: 'corporate', private: true, type: 'module', dependencies: { tiny: '1.0.0' } }),
      },
      { path: 'package-lock.json', content: JSON.stringify(lock, null, 2) },
      { path: 'index.mjs', content: "import tiny from 'tiny';\nexport default () => tiny;" },
    ],
  });
  const response = await runSandbox('corporate');
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.equal(JSON.parse(text), 'tiny from the corporate registry');
  assert.ok(
    tunnels.some((tunnel) => tunnel.target === `${REGISTRY_HOST}:${registry.port}`),
    `the install went through the app's proxy: ${JSON.stringify(tunnels)}`,
  );
  assert.ok(registryRequests.some((r) => r.url === '/tiny/-/tiny-1.0.0.tgz'));
  // Neither the registry nor the proxy was sent a credential.
  assert.deepEqual(
    [...registryRequests, ...tunnels].filter((r) => r.authorization !== null),
    [],
  );
});

test('no token of the app reaches a Box: its environment and the npm configs it sees hold none', {
  skip: SKIP || NO_BWRAP,
}, async () => {
  const index = `import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
export default ({ parts }) => {
  const secret = parts.join('');
  const read = (file) => { try { return fs.readFileSync(file, 'utf8'); } catch { return ''; } };
  const globalConfig = execFileSync('npm', ['config', 'get', 'globalconfig'], { encoding: 'utf8' }).trim();
  // Every file the Box can write or was given (the staged input holds the secret in two parts).
  const found = execFileSync('sh', ['-c', 'grep -rl -e "$0" /opt /home /tmp /vercel /proc/self/environ 2>/dev/null || true', secret], { encoding: 'utf8' });
  return {
    env: { ...process.env },
    userConfig: read(process.env.NPM_CONFIG_USERCONFIG ?? ''),
    globalConfig: read(globalConfig),
    ca: read(process.env.NODE_EXTRA_CA_CERTS ?? ''),
    found,
  };
};`;
  registerSandbox('no-token', {
    files: [
      { path: 'package.json', content: JSON.stringify({ name: 'no-token', private: true, type: 'module' }) },
      { path: 'index.mjs', content: index },
    ],
  });
  const response = await runSandbox('no-token', { parts: [SECRET.slice(0, 6), SECRET.slice(6)] });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  assert.ok(!text.includes(SECRET), `a token of the app reached the Box: ${text}`);
  const seen = JSON.parse(text);
  assert.equal(seen.found, '');
  // What it gets instead: the proxy and the CA (by its content, readable in the Box).
  assert.equal(seen.env.HTTPS_PROXY, `http://${lanAddress}:${proxy.port}`);
  assert.equal(seen.ca, fs.readFileSync(path.join(dir, 'ca.pem'), 'utf8'));
  assert.match(seen.userConfig, /^strict-ssl=true$/m);
  for (const name of ['GITHUB_TOKEN', 'NPM_TOKEN', 'NPM_CONFIG__AUTHTOKEN', 'npm_config_https_proxy'])
    assert.equal(seen.env[name], undefined, name);
});

test("the app environment a Box gets: CA and proxy variables only, npm's in any case, never a credential", async () => {
  const { installNetwork } = await import('../../pkg-template/box-host/engine/install-network.mjs');
  const { spawnSpec } = await import('../../pkg-template/box-host/engine/isolation.mjs');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-install-network-unit-'));
  try {
    const ca = path.join(scratch, 'corp.pem');
    fs.writeFileSync(ca, 'PEM');
    const network = installNetwork({
      HTTPS_PROXY: 'http://proxy.corp:3128',
      http_proxy: 'http://user:pass@proxy.corp:3128',
      NO_PROXY: '.corp,localhost',
      NODE_EXTRA_CA_CERTS: path.join(scratch, 'missing.pem'),
      NPM_CONFIG_CAFILE: ca,
      'NPM_CONFIG_STRICT-SSL': 'true',
      npm_config_registry: 'https://npm.corp/',
      npm_config_https_proxy: 'http://me:secret@proxy.corp:3128',
      npm_config__authToken: 'secret',
      'npm_config_//npm.corp/:_authToken': 'secret',
      npm_config_cache: '/home/me/.npm',
      NPM_TOKEN: 'secret',
      GITHUB_TOKEN: 'secret',
      YARN_CA_FILE_PATH: 'relative.pem',
    });
    assert.deepEqual(network.env, {
      HTTPS_PROXY: 'http://proxy.corp:3128',
      NO_PROXY: '.corp,localhost',
      npm_config_cafile: ca,
      npm_config_strict_ssl: 'true',
      npm_config_registry: 'https://npm.corp/',
    });
    assert.deepEqual(network.caFiles, [{ named: ca, file: fs.realpathSync(ca), data: 'PEM' }]);
    // Without isolation a Box command's environment is built, never inherited: it gets them too.
    const root = path.join(scratch, 'box');
    const spec = spawnSpec({
      isolation: 'none',
      root,
      workDir: '/vercel/sandbox',
      command: 'npm',
      args: ['ci'],
      cwd: '/vercel/sandbox',
      cwdHost: root,
      env: { A: '1' },
      features: { rlimits: null, toolchain: { binDirs: [], network } },
    });
    assert.deepEqual(
      [spec.env.HTTPS_PROXY, spec.env.npm_config_cafile, spec.env.A, spec.env.GITHUB_TOKEN],
      ['http://proxy.corp:3128', ca, '1', undefined],
    );
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
