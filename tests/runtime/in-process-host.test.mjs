// The Run's own path on the in-process local Box host (issue 34, item 3): its requests are calls
// into the host (the host's `fetch`, box-host/server/in-process.mjs), no loopback socket nor HTTP
// request; a parked Node runs the harness it imported before the Run (parked-node.mjs); a plain
// JSON result is the Response body byte for byte as the entry's JSON.stringify wrote it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { closeLocalBoxHost, configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
import { NO_BWRAP } from '../support/local-host.mjs';

after(async () => {
  configureSandbox({});
  await closeLocalBoxHost();
});

/** Sockets this process opens as a client, and HTTP requests its servers receive, while counted. */
const seen = { clientSockets: 0, serverRequests: 0 };
diagnostics.subscribe('net.client.socket', () => {
  seen.clientSockets += 1;
});
diagnostics.subscribe('http.server.request.start', () => {
  seen.serverRequests += 1;
});

function define(name, index) {
  registerSandbox(name, {
    files: [
      { path: 'package.json', content: JSON.stringify({ name: name.replaceAll('/', '-'), type: 'module' }) },
      { path: 'index.mjs', content: index },
    ],
  });
}

/** Doubles of every magnitude JSON carries, and strings JSON escapes: what a decode and encode again could change. */
const VALUES = `(() => {
  const numbers = [];
  let seed = 7;
  for (let i = 0; i < 4000; i += 1) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    numbers.push((seed / 2147483648 - 0.5) * 10 ** ((i % 600) - 300));
  }
  numbers.push(5e-324, 1.7976931348623157e308, 0.1 + 0.2, 2 ** 53 + 2, -1e21, 123456789012345680000);
  return { numbers, text: 'tab\\t quote" back\\\\ nul\\u0000 line\\u2028 e\\u0301 \\ud83d\\ude00', nested: [[{ a: null, b: true }]] };
})()`;

test('an in-process Run opens no loopback socket and sends no HTTP request; its plain JSON result passes byte for byte', {
  timeout: 120_000,
}, async () => {
  configureSandbox({ provider: 'local' });
  define('in-process/json', `export default () => ${VALUES};`);
  seen.clientSockets = 0;
  seen.serverRequests = 0;
  // The first Run starts the host; both go to it in process.
  for (let i = 0; i < 2; i += 1) {
    const response = await runSandbox('in-process/json');
    const text = await response.text();
    assert.equal(response.status, 200, text.slice(0, 500));
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.match(response.headers.get('server-timing') ?? '', /exec;dur=/);
    // What the entry's own JSON.stringify writes for the value, byte for byte.
    // biome-ignore lint/security/noGlobalEval: the entry's own expression, evaluated here for the expected bytes
    assert.equal(text, JSON.stringify(globalThis.eval(VALUES)));
  }
  assert.deepEqual(seen, { clientSockets: 0, serverRequests: 0 });
});

test('a result with a value marker keeps every double exactly (the core decodes and encodes it)', {
  timeout: 120_000,
}, async () => {
  configureSandbox({ provider: 'local' });
  // A lone surrogate is carried as a string marker, so this result is not plain JSON: the core
  // revives it and encodes the Response body itself.
  define('in-process/marked', `export default () => ({ ...${VALUES}, lone: 'x\\ud800' });`);
  const response = await runSandbox('in-process/marked');
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body).slice(0, 500));
  // biome-ignore lint/security/noGlobalEval: the entry's own expression, evaluated here for the expected value
  const expected = globalThis.eval(VALUES).numbers;
  const changed = expected.filter((n, i) => !Object.is(body.numbers[i], n));
  assert.deepEqual(changed, [], `${changed.length} doubles changed`);
});

test('a parked Node imported the harness before its Run: the entry is called from the preloaded harness', {
  skip: NO_BWRAP,
  timeout: 120_000,
}, async () => {
  configureSandbox({ provider: 'local', local: { isolation: 'bubblewrap' } });
  define(
    'in-process/stack',
    `export default () => ({ stack: new Error('where').stack, argv: process.argv.slice(1), cwd: process.cwd() });`,
  );
  // A spare is made when the host starts and again after each Run's Box stops: within a few
  // Runs one is taken by a Run (the first may come before it is ready).
  let body;
  for (let i = 0; i < 20; i += 1) {
    const response = await runSandbox('in-process/stack');
    body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    if (body.stack.includes('file:///opt/vite-hub-sandbox/harness.mjs')) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.match(body.stack, /at callEntry \(file:\/\/\/opt\/vite-hub-sandbox\/harness\.mjs:/, body.stack);
  // The entry still sees the command it would see in a process started for it.
  assert.equal(body.argv.length, 1, JSON.stringify(body.argv));
  assert.match(body.argv[0], /^\/vercel\/sandbox\/.*\.vite-hub\/harness\.mjs$/);
  assert.match(body.cwd, /^\/vercel\/sandbox\//);
});
