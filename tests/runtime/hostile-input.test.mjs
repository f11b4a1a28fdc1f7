// No hostile input reaches a panic (a trap would leave the wasm instance unusable and, in an
// async export, kill the caller's process): every export answers bad values, throwing getters,
// Proxy traps, cycles and deep nesting with a SandboxError or an error Response, and the module
// still runs Definitions afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  configureSandbox,
  registerSandbox,
  runSandbox,
  setSandboxDefinitionLoader,
  listSandboxes,
} from '@vite-hub/sandbox';
import { useLocalHost, defineTestSandbox } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  setSandboxDefinitionLoader(null);
  await host.close();
});

const thrower = () => {
  throw new Error('trap');
};
const trapAll = new Proxy(
  {},
  { get: thrower, ownKeys: thrower, getPrototypeOf: thrower, has: thrower, getOwnPropertyDescriptor: thrower },
);
const trappedGetters = (keys) =>
  Object.defineProperties({}, Object.fromEntries(keys.map((key) => [key, { get: thrower, enumerable: true }])));
const deep = (levels) => {
  let value = {};
  for (let i = 0; i < levels; i += 1) value = { next: value };
  return value;
};
const cyclic = () => {
  const value = { a: 1 };
  value.self = value;
  return value;
};
const file = (path, content) => ({ path, content });

function assertSandboxError(fn, label) {
  try {
    fn();
  } catch (error) {
    assert.equal(error?.name, 'SandboxError', `${label}: ${error?.stack ?? error}`);
    assert.match(error.code, /^SANDBOX_/, label);
    assert.equal(typeof error.status, 'number', label);
    return;
  }
  assert.fail(`${label}: did not throw`);
}

test('registerSandbox refuses hostile names and definitions with a SandboxError', () => {
  const good = { files: [file('package.json', '{"type":"module"}'), file('index.mjs', 'export default () => 1')] };
  const cases = {
    'symbol name': [Symbol('x'), good],
    'bigint name': [10n, good],
    'proxy name': [trapAll, good],
    'megabyte name': ['a'.repeat(1 << 20), good],
    'proxy definition': ['h/a', trapAll],
    'throwing files getter': ['h/b', trappedGetters(['files'])],
    'proxy files': ['h/c', { files: new Proxy([], { get: thrower }) }],
    'files claiming a billion entries': [
      'h/d',
      { files: new Proxy([], { get: (t, k) => (k === 'length' ? 1e9 : undefined) }) },
    ],
    'throwing path getter': ['h/e', { files: [trappedGetters(['path', 'content'])] }],
    'proxy file': ['h/f', { files: [trapAll] }],
    'content is a number': ['h/g', { files: [file('index.mjs', 42)] }],
    'mode is NaN': ['h/h', { files: [{ ...file('index.mjs', ''), mode: Number.NaN }] }],
    'mode is huge': ['h/i', { files: [{ ...file('index.mjs', ''), mode: 2 ** 53 }] }],
    'timeout is a bigint': ['h/j', { ...good, timeout: 5n }],
    'timeout is a symbol': ['h/k', { ...good, timeout: Symbol('t') }],
    'timeout is Infinity': ['h/l', { ...good, timeout: Infinity }],
    'bad base64': ['h/m', { files: [{ path: 'index.mjs', content: '!!!', encoding: 'base64' }] }],
    'path escapes': ['h/n', { files: [file('../../etc/passwd', 'x')] }],
    'NUL in path': ['h/o', { files: [file('a\0b', 'x')] }],
    'packagePath is an object': ['h/p', { ...good, packagePath: {} }],
  };
  for (const [label, [name, definition]] of Object.entries(cases)) {
    assertSandboxError(() => registerSandbox(name, definition), label);
  }
});

test('configureSandbox refuses hostile configs with a SandboxError', () => {
  // A throwing getter at the top level throws the user's own error in the JS glue (its spread of
  // the config), before the wasm is called: that is the user's exception, not ours.
  assert.throws(() => configureSandbox(trappedGetters(['provider'])), { message: 'trap' });
  const cases = {
    'throwing nested getter': { local: trappedGetters(['baseUrl']) },
    'throwing vercel token getter': { vercel: trappedGetters(['token']) },
    'fetch is not a function': { fetch: 'yes' },
    'deep networkPolicy': { local: { networkPolicy: deep(100_000) } },
    'cyclic networkPolicy': { local: { networkPolicy: cyclic() } },
    'proxy local options': { local: trapAll },
    'bigint limit out of range': { transfer: { maxDepth: 2n ** 70n } },
    'unknown key': { provder: 'local' },
    'a function where JSON is expected': { provider: () => 'local' },
    'a symbol key': { local: { [Symbol('k')]: 1 } },
  };
  for (const [label, config] of Object.entries(cases)) {
    assertSandboxError(() => configureSandbox(config), label);
  }
  // The config in force is still the fixture's.
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
});

test('runSandbox answers hostile calls with a Response, never a trap', async () => {
  defineTestSandbox('hostile/echo', 'export default (p) => ({ ok: true, p: p ?? null });');
  const calls = {
    'symbol name': () => runSandbox(Symbol('x')),
    'proxy name': () => runSandbox(trapAll),
    'proxy options': () => runSandbox('hostile/echo', 1, trapAll),
    'symbol option key': () => runSandbox('hostile/echo', 1, { [Symbol('k')]: 1 }),
    'throwing signal getter': () => runSandbox('hostile/echo', 1, trappedGetters(['signal'])),
    'signal that is not a signal': () => runSandbox('hostile/echo', 1, { signal: {} }),
    'deep payload': () => runSandbox('hostile/echo', deep(100_000)),
    'cyclic payload': () => runSandbox('hostile/echo', cyclic()),
    'throwing toJSON': () => runSandbox('hostile/echo', { toJSON: thrower }),
    'proxy payload': () => runSandbox('hostile/echo', trapAll),
    'bigint in context': () => runSandbox('hostile/echo', 1, { context: { n: 1n } }),
  };
  for (const [label, call] of Object.entries(calls)) {
    const response = await call();
    assert.ok(response instanceof Response, label);
    assert.ok(response.status >= 400 && response.status < 600, `${label}: ${response.status}`);
    const body = await response.json();
    assert.match(body.error.code, /^SANDBOX_/, label);
  }
});

test('a hostile loader or fetch is an error Response, never a trap', async () => {
  const loaders = {
    'loader throws a symbol': () => {
      throw Symbol('nope');
    },
    'loader returns a proxy': () => trapAll,
    'loader returns a number': () => 42,
    'loader returns throwing getters': () => trappedGetters(['files', 'digest']),
  };
  for (const [label, loader] of Object.entries(loaders)) {
    setSandboxDefinitionLoader(loader);
    const response = await runSandbox('hostile/from-loader');
    assert.ok(response.status >= 400, `${label}: ${response.status}`);
    assert.match((await response.json()).error.code, /^SANDBOX_/, label);
  }
  setSandboxDefinitionLoader(null);
  const fetches = {
    'fetch resolves to a string': async () => 'not a response',
    'fetch throws synchronously': () => {
      throw Symbol('sync');
    },
    'fetch resolves to a proxy': async () => trapAll,
  };
  for (const [label, fetch] of Object.entries(fetches)) {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch });
    const response = await runSandbox('hostile/echo', 1);
    assert.equal(response.status, 502, label);
    assert.equal((await response.json()).error.code, 'SANDBOX_TRANSPORT_ERROR', label);
  }
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
});

test('after all of that, the module still runs Definitions', async () => {
  const response = await runSandbox('hostile/echo', { still: 'alive' });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { ok: true, p: { still: 'alive' } });
  assert.ok(listSandboxes().some((item) => item.name === 'hostile/echo'));
});
