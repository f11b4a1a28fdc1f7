// runSandbox end to end: the built package, a real local Box host, real processes in real Boxes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { runSandbox, startSandbox, resolveSandboxRunner } from '@vite-hub/sandbox';
import { useLocalHost, defineTestSandbox, timingPhases, processesMatching, until } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

test('a Definition result comes back as 200 JSON with Server-Timing', async () => {
  defineTestSandbox('ok/echo', 'export default (payload, context) => ({ got: payload, context, n: 1.5 });');
  const response = await runSandbox('ok/echo', { notes: 'héllo €𝄞' });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'application/json');
  assert.deepEqual(await response.json(), { got: { notes: 'héllo €𝄞' }, n: 1.5 });
  // The Box is given back after the Response: no `close` phase in its timing; a plain JSON result
  // is answered at its result frame, with nothing to recover (run/follow.rs).
  assert.deepEqual(timingPhases(response), ['box', 'stage', 'exec']);
});

test('a lone surrogate survives both ways, in values and keys, as JSON keeps it', async () => {
  // What truncating user text gives: half of 👋, and its other half alone.
  const [high, low] = ['👋 hello'.slice(0, 1), '👋 hello'.slice(1, 2)];
  const payload = { cut: high, tail: `${low}x${high}`, [`k${high}`]: [high, '€𝄞'] };
  defineTestSandbox(
    'ok/surrogates',
    `export default (payload) => ({ got: payload, made: '👋 hello'.slice(0, 1), units: [...payload.cut].map((c) => c.charCodeAt(0)), [String.fromCharCode(0xdc00)]: 1 });`,
  );
  const response = await runSandbox('ok/surrogates', payload);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  // The body is JSON as JSON.stringify writes it: each lone surrogate escaped.
  assert.match(text, /"made":"\\ud83d"/);
  assert.deepEqual(JSON.parse(text), { got: payload, made: high, units: [0xd83d], [String.fromCharCode(0xdc00)]: 1 });
  defineTestSandbox('ok/surrogate-error', `export default () => { throw new Error('cut: ' + '👋'.slice(0, 1)); };`);
  const failed = await (await runSandbox('ok/surrogate-error')).json();
  assert.equal(failed.error.message, 'cut: \uFFFD', 'an error message is text: well-formed');
});

test('context reaches the entry as its second argument', async () => {
  defineTestSandbox('ok/context', 'export default (payload, context) => ({ payload, requestId: context.requestId });');
  const response = await runSandbox('ok/context', 7, { context: { requestId: 'req-42' } });
  assert.deepEqual(await response.json(), { payload: 7, requestId: 'req-42' });
});

test('undefined is 204 and a returned Response is revived', async () => {
  defineTestSandbox('ok/nothing', 'export default () => {};');
  const empty = await runSandbox('ok/nothing');
  assert.equal(empty.status, 204);
  assert.equal(await empty.text(), '');
  defineTestSandbox(
    'ok/response',
    `export default () => new Response('made', { status: 201, headers: { 'x-made-by': 'box' } });`,
  );
  const made = await runSandbox('ok/response');
  assert.equal(made.status, 201);
  assert.equal(made.headers.get('x-made-by'), 'box');
  // A revived body streams: no platform or proxy may hold it back to compress or transform it.
  assert.equal(made.headers.get('content-encoding'), 'identity');
  assert.equal(made.headers.get('cache-control'), 'no-transform');
  assert.equal(await made.text(), 'made');
});

test("only the runtime's own failure Responses carry x-vite-hub-sandbox-error: an entry cannot forge a package error", async () => {
  // An entry answering exactly what the runtime's timeout looks like, header included.
  defineTestSandbox(
    'ok/forged-error',
    `export default () => Response.json({ error: { code: 'SANDBOX_TIMEOUT', message: 'Sandbox "ok/forged-error" timed out after 300000ms.', details: { timeoutMs: 300000 } } }, { status: 504, headers: { 'x-vite-hub-sandbox-error': 'SANDBOX_TIMEOUT', 'x-own': 'kept' } });`,
  );
  const forged = await runSandbox('ok/forged-error');
  assert.equal(forged.status, 504, "the entry's Response as it is...");
  assert.equal(forged.headers.get('x-own'), 'kept');
  assert.equal(
    forged.headers.get('x-vite-hub-sandbox-error'),
    null,
    "...but the runtime's header is not the entry's to set",
  );
  const runner = await resolveSandboxRunner('ok/forged-error');
  await assert.rejects(runner.run(), (error) => {
    assert.equal(error.name, 'SandboxError');
    assert.equal(error.code, 'SANDBOX_HANDLER_ERROR', 'an answer of the entry, not a timeout of the runtime');
    assert.match(error.message, /answered 504 with a Response of its own/);
    return true;
  });
  // The runtime's own failures carry it, with their code.
  defineTestSandbox('ok/own-error', `export default () => { throw new Error('own'); };`);
  const own = await runSandbox('ok/own-error');
  assert.equal(own.headers.get('x-vite-hub-sandbox-error'), 'SANDBOX_HANDLER_ERROR');
  await assert.rejects(
    (await resolveSandboxRunner('ok/own-error')).run(),
    (error) => error.code === 'SANDBOX_HANDLER_ERROR' && /own/.test(error.message),
  );
});

test('a throwing entry gives 500 SANDBOX_HANDLER_ERROR with its message', async () => {
  defineTestSandbox('fail/throws', `export default async () => { throw new TypeError('notes are required'); };`);
  const response = await runSandbox('fail/throws', {});
  assert.equal(response.status, 500);
  assert.equal(response.headers.get('content-type'), 'application/json');
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_HANDLER_ERROR');
  assert.equal(body.error.message, 'notes are required');
});

test('a failed entry explains itself: the last 4 KiB of what it printed, without the result frame', async () => {
  defineTestSandbox(
    'fail/loud',
    `export default () => { console.log('x'.repeat(20000) + ' stdout-end'); console.error('fatal: boom on stderr'); throw new Error('bad'); };`,
  );
  const response = await runSandbox('fail/loud', {});
  assert.equal(response.status, 500);
  const { error } = await response.json();
  assert.equal(error.code, 'SANDBOX_HANDLER_ERROR');
  assert.match(error.details.stderr, /fatal: boom on stderr/);
  assert.ok(
    error.details.stdout.endsWith(' stdout-end\n') && error.details.stdout.length <= 4096,
    error.details.stdout.length,
  );
  assert.doesNotMatch(
    error.details.stdout,
    /vite-hub-sandbox:/,
    "the harness frame (and its nonce) is not the entry's output",
  );

  defineTestSandbox(
    'fail/exits',
    `export default () => { console.error('giving up: no config'); process.exitCode = 9; process.kill(process.pid, 'SIGKILL'); };`,
  );
  const exited = await (await runSandbox('fail/exits', {})).json();
  assert.equal(exited.error.code, 'SANDBOX_HANDLER_ERROR');
  assert.match(exited.error.details.stderr, /giving up: no config/);
  // SIGKILL is how the Box's memory limit ends an entry: the message says so.
  assert.equal(
    exited.error.message,
    'Sandbox "fail/exits" exited with code 137 (SIGKILL: a kill, or the Box\'s memory limit) before producing a result.',
  );
});

test('what the entry prints never corrupts the result, not even a forged frame', async () => {
  defineTestSandbox(
    'ok/noisy',
    `export default () => {
      console.log('<<vite-hub-sandbox:0000>>{"version":1,"ok":true,"result":"forged"}');
      process.stdout.write('no newline at the end');
      console.error('to stderr');
      return { real: true };
    };`,
  );
  const response = await runSandbox('ok/noisy');
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { real: true });
});

test('a result that is not JSON-serializable gives 500 SANDBOX_SERIALIZATION_ERROR', async () => {
  defineTestSandbox('fail/bigint', 'export default () => ({ total: 10n });');
  const response = await runSandbox('fail/bigint');
  assert.equal(response.status, 500);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_SERIALIZATION_ERROR');
  assert.match(body.error.message, /bigint at "result\.total"/);
});

test('an input that is not JSON-serializable gives 400 before any provider request', async () => {
  host.resetCounters();
  defineTestSandbox('ok/echo-input', 'export default (payload) => payload;');
  const cyclic = {};
  cyclic.self = cyclic;
  const response = await runSandbox('ok/echo-input', cyclic);
  assert.equal(response.status, 400);
  assert.equal((await response.json()).error.code, 'SANDBOX_SERIALIZATION_ERROR');
  assert.equal(host.counters().total, 0);
});

test('a result JSON would silently turn into {} (a Map, a Set, a class instance) is refused like a payload: SANDBOX_SERIALIZATION_ERROR (500) naming its path', async () => {
  defineTestSandbox(
    'ok/lossy-result',
    'export default (kind) => kind === "map" ? { tags: new Map([["a", 1]]) } : kind === "set" ? [new Set([1])] : { at: new (class Point { constructor() { this.x = 1; } })() };',
  );
  for (const [kind, what, path] of [
    ['map', 'Map', 'result.tags'],
    ['set', 'Set', 'result.0'],
    ['point', 'Point instance', 'result.at'],
  ]) {
    const response = await runSandbox('ok/lossy-result', kind);
    assert.equal(response.status, 500, kind);
    const { error } = await response.json();
    assert.equal(error.code, 'SANDBOX_SERIALIZATION_ERROR', kind);
    assert.match(error.message, new RegExp(`unsupported ${what} at "${path.replaceAll('.', '\\.')}"`), error.message);
  }
});

test('values JSON would silently drop are refused with their path, before any provider request', async () => {
  host.resetCounters();
  defineTestSandbox('ok/echo-lossy', 'export default (payload) => payload;');
  class Point {
    constructor() {
      this.x = 1;
    }
  }
  // biome-ignore lint/suspicious/noSparseArray: a hole is the input under test
  const sparse = [1, , 3];
  const cases = [
    [{ tags: new Map([['a', 1]]) }, 'Map', 'payload.tags'],
    [{ ids: new Set([1]) }, 'Set', 'payload.ids'],
    [{ at: new Point() }, 'Point instance', 'payload.at'],
    [{ floats: new Float32Array(2) }, 'Float32Array', 'payload.floats'],
    [{ list: sparse }, 'sparse array (a hole)', 'payload.list.1'],
    [{ meta: { [Symbol('k')]: 1 } }, 'symbol key', 'payload.meta'],
  ];
  for (const [payload, kind, path] of cases) {
    const response = await runSandbox('ok/echo-lossy', payload);
    assert.equal(response.status, 400, kind);
    const { error } = await response.json();
    assert.equal(error.code, 'SANDBOX_SERIALIZATION_ERROR', kind);
    assert.match(
      error.message,
      new RegExp(`unsupported ${kind.replace(/[()]/g, '\\$&')} at "${path.replaceAll('.', '\\.')}"`),
      error.message,
    );
  }
  assert.equal(host.counters().total, 0);
  // What JSON carries on purpose still travels: a Date as its ISO string, a class with toJSON,
  // an object without a prototype.
  const bare = Object.assign(Object.create(null), { k: 'v' });
  class Money {
    toJSON() {
      return '3 EUR';
    }
  }
  const ok = await runSandbox('ok/echo-lossy', { when: new Date(0), price: new Money(), bare });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { when: '1970-01-01T00:00:00.000Z', price: '3 EUR', bare: { k: 'v' } });
});

test('a File keeps its name, type and lastModified inside the Box', async () => {
  defineTestSandbox(
    'ok/file',
    'export default ({ upload }) => ({ isFile: upload instanceof File, name: upload.name, type: upload.type, lastModified: upload.lastModified, text: "" });',
  );
  const upload = new File(['héllo'], 'notes é.txt', { type: 'text/plain', lastModified: 1_700_000_000_000 });
  const response = await runSandbox('ok/file', { upload });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), {
    isFile: true,
    name: 'notes é.txt',
    type: 'text/plain',
    lastModified: 1_700_000_000_000,
    text: '',
  });
});

test('a payload over maxInputBytes gives 413 before any provider request', async () => {
  host.resetCounters();
  defineTestSandbox('ok/big', 'export default (payload) => payload.length;');
  const response = await runSandbox('ok/big', 'x'.repeat(4 * 1024 * 1024 + 1));
  assert.equal(response.status, 413);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_TRANSFER_LIMIT');
  assert.equal(body.error.details.limit, 'maxInputBytes');
  assert.equal(body.error.details.maximum, 4 * 1024 * 1024);
  assert.equal(host.counters().total, 0);
});

test('an unknown name gives 500 SANDBOX_NOT_FOUND naming it', async () => {
  const response = await runSandbox('does/not-exist', {});
  assert.equal(response.status, 500);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_NOT_FOUND');
  assert.match(body.error.message, /"does\/not-exist"/);
  assert.deepEqual(timingPhases(response), ['resolve']);
});

// The test's timeout (30 s, 20 times the Definition's) is below the Box lifetime (timeout + 60 s):
// a Run that waited for the Box to be killed instead of answering at its own deadline fails here.
test('a busy loop past the Definition timeout gives 504 and leaves no process behind', {
  timeout: 30_000,
}, async () => {
  const marker = `vite-hub-busy-${randomUUID()}`;
  defineTestSandbox('fail/busy', `export default (payload) => { process.title = payload.marker; for (;;) {} };`, {
    manifest: { vitehub: { sandbox: { timeout: 1500 } } },
  });
  const response = await runSandbox('fail/busy', { marker });
  assert.equal(response.status, 504);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_TIMEOUT');
  assert.equal(body.error.details.timeoutMs, 1500);
  // The host kills the command at the Run's remaining time, a hair before the Run's own deadline
  // fires: under load the exit can arrive first, and the deadline then ends the `recover` phase.
  assert.deepEqual(
    timingPhases(response).filter((phase) => phase !== 'recover'),
    ['box', 'stage', 'exec'],
  );
  // The Box is stopped right after the Response.
  assert.ok(await until(async () => (await processesMatching(marker)).length === 0), 'no process is left behind');
});

test('an entry whose promise never settles gets a clear 500, not a bare exit code', async () => {
  defineTestSandbox('fail/pending', 'export default () => new Promise(() => {});');
  const response = await runSandbox('fail/pending');
  assert.equal(response.status, 500);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_HANDLER_ERROR');
  assert.equal(
    body.error.message,
    'The entry returned a promise that never settled: nothing was left running to settle it.',
  );
});

test('a __proto__ key in a result stays an own data key', async () => {
  defineTestSandbox('ok/proto', `export default () => JSON.parse('{"__proto__":{"polluted":true},"a":1}');`);
  const response = await runSandbox('ok/proto');
  assert.equal(await response.text(), '{"__proto__":{"polluted":true},"a":1}');
  assert.equal({}.polluted, undefined);
});

test('binary values cross as sidecar files both ways', async () => {
  defineTestSandbox(
    'ok/binary',
    `export default async (payload) => {
      if (payload.mode === 'describe') {
        return {
          blobType: payload.blob.type,
          blobText: await payload.blob.text(),
          isBuffer: Buffer.isBuffer(payload.buffer),
          buffer: [...payload.buffer],
          u8: payload.nested.u8 instanceof Uint8Array && !Buffer.isBuffer(payload.nested.u8) ? [...payload.nested.u8] : 'wrong type',
        };
      }
      return new Blob([new Uint8Array([0, 1, 2, 255])], { type: 'image/x-test' });
    };`,
  );
  const described = await runSandbox('ok/binary', {
    mode: 'describe',
    blob: new Blob(['héllo'], { type: 'text/plain' }),
    buffer: Buffer.from([9, 8, 7]),
    nested: { u8: new Uint8Array([1, 2, 3]) },
  });
  assert.equal(described.status, 200);
  assert.deepEqual(await described.json(), {
    blobType: 'text/plain',
    blobText: 'héllo',
    isBuffer: true,
    buffer: [9, 8, 7],
    u8: [1, 2, 3],
  });
  const binary = await runSandbox('ok/binary', { mode: 'blob' });
  assert.equal(binary.status, 200);
  assert.equal(binary.headers.get('content-type'), 'image/x-test');
  assert.deepEqual([...new Uint8Array(await binary.arrayBuffer())], [0, 1, 2, 255]);
});

test('a binary value nested in a result is SANDBOX_SERIALIZATION_ERROR naming its path, not JSON-stringified away', async () => {
  defineTestSandbox(
    'fail/nested-binary',
    `export default (payload) => payload === 'blob' ? { list: [1, new Blob(['x'])] } : { b: new Uint8Array([1, 2]) };`,
  );
  for (const [payload, at] of [
    ['u8', 'result.b'],
    ['blob', 'result.list.1'],
  ]) {
    const response = await runSandbox('fail/nested-binary', payload);
    assert.equal(response.status, 500);
    const { error } = await response.json();
    assert.equal(error.code, 'SANDBOX_SERIALIZATION_ERROR');
    assert.equal(
      error.message,
      `Sandbox result must be JSON-serializable; unsupported binary value at "${at}" (a Blob, Uint8Array or Buffer is carried only as the whole result).`,
    );
  }
});

test('signal: null is no signal, as in fetch; any other value that is no AbortSignal is a 400', async () => {
  defineTestSandbox('ok/signal-null', 'export default (n) => n + 1;');
  const response = await runSandbox('ok/signal-null', 1, { signal: null });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(await response.json(), 2);
  const refused = await runSandbox('ok/signal-null', 1, { signal: 'stop' });
  assert.equal(refused.status, 400);
  const { error } = await refused.json();
  assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.equal(error.message, 'runSandbox option signal must be an AbortSignal');
});

test('a cold run without dependencies makes 3 requests before its Response (create, write, exec), then stop', async () => {
  defineTestSandbox('ok/count', 'export default () => 1;');
  await startSandbox('ok/count').closed(); // the Boxes of earlier Runs are given back before counting
  host.resetCounters();
  const response = await runSandbox('ok/count');
  assert.equal(response.status, 200);
  const counters = host.counters();
  assert.ok(counters.total <= 3, `requests: ${JSON.stringify(counters)}`);
  assert.deepEqual(
    Object.keys(counters.requests)
      .filter((k) => counters.requests[k] > 0)
      .sort(),
    ['cmd', 'create', 'fs/write'],
  );
  assert.ok(await until(() => host.counters().requests.stop === 1), 'the Box is stopped after the Response');
});

test('aborting rejects with the signal reason and stops the Box', async () => {
  const marker = `vite-hub-abort-${randomUUID()}`;
  defineTestSandbox(
    'ok/slow',
    `export default (payload) => { process.title = payload.marker; return new Promise(() => setInterval(() => {}, 1000)); };`,
  );
  host.resetCounters();
  const controller = new AbortController();
  const reason = new Error('the user went away');
  const running = runSandbox('ok/slow', { marker }, { signal: controller.signal });
  // Abort only once the entry's process is visible, which also proves the marker can be seen.
  const deadline = Date.now() + 10000;
  while ((await processesMatching(marker)).length === 0) {
    assert.ok(Date.now() < deadline, 'the entry process never appeared');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  controller.abort(reason);
  await assert.rejects(running, (error) => error === reason);
  assert.ok(await until(() => host.counters().requests.stop === 1), 'the Box is stopped after the abort');
  assert.ok(await until(async () => (await processesMatching(marker)).length === 0), 'the entry process is gone');
  const already = new AbortController();
  already.abort('early');
  await assert.rejects(runSandbox('ok/slow', { marker }, { signal: already.signal }), (error) => error === 'early');
});

test('bad options resolve to 400 SANDBOX_INVALID_ARGUMENT', async () => {
  defineTestSandbox('ok/opts', 'export default () => 1;');
  const response = await runSandbox('ok/opts', {}, { contxt: {} });
  assert.equal(response.status, 400);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.match(body.error.message, /contxt/);
});

// Install failures carry the package manager's own cause (npm writes it to stderr above a long
// usage text, pnpm to stdout) and nothing of the host.
async function installFailure(name, manifest, files) {
  defineTestSandbox(name, 'export default () => 1;', { manifest, files });
  const response = await runSandbox(name);
  const body = await response.json();
  assert.equal(body.error.code, 'SANDBOX_EXECUTION_ERROR', JSON.stringify(body));
  assert.ok(
    !body.error.message.includes(os.tmpdir()) && !body.error.message.includes(os.homedir()),
    body.error.message,
  );
  return body.error.message;
}

test('npm ci with a dependency missing from package-lock.json names it', async () => {
  const lock = {
    name: 'fail-npm-lock',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'fail-npm-lock' } },
  };
  const message = await installFailure(
    'fail/npm-lock',
    { dependencies: { 'left-pad': '^1.3.0' } },
    { 'package-lock.json': JSON.stringify(lock) },
  );
  assert.match(message, /^Package install failed: `npm ci --no-audit --no-fund` exited with code 1\.\n/);
  assert.match(message, /npm error Missing: left-pad@\S+ from lock file/);
  assert.doesNotMatch(message, /complete log of this run/);
});

test('pnpm install --frozen-lockfile with an outdated lockfile shows ERR_PNPM_OUTDATED_LOCKFILE', async () => {
  const lock =
    "lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n  .: {}\n";
  const message = await installFailure(
    'fail/pnpm-lock',
    { dependencies: { 'left-pad': '^1.3.0' } },
    { 'pnpm-lock.yaml': lock },
  );
  assert.match(message, /^Package install failed: `pnpm install --frozen-lockfile` exited with code 1\.\n/);
  assert.match(message, /ERR_PNPM_OUTDATED_LOCKFILE/);
  assert.match(message, /1 dependencies were added: left-pad@\^1\.3\.0/);
});
