// The in-Box harness run as a real child process in a directory laid out like a Box.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HARNESS = fileURLToPath(new URL('../../crates/core/src/harness/harness.mjs', import.meta.url));
const NONCE = '0123456789abcdef0123456789abcdef';
const MARKER = 'vitehub:sandbox:value';

/** Temporary folders made here; removed when the file's tests end. */
const temporary = [];
after(() => {
  for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
});

/** Lays out `<tmp>/project` + `<tmp>/.vite-hub/{harness.mjs,input.json,input.json.files/}` and runs it. */
function runBox({ files, entry = 'index.mjs', payload, context, limits, sidecars = {}, rawInput, nodeOptions = [] }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-harness-'));
  temporary.push(root);
  const project = path.join(root, 'project');
  const box = path.join(root, '.vite-hub');
  fs.mkdirSync(project);
  fs.mkdirSync(box);
  fs.writeFileSync(path.join(project, 'package.json'), '{"type":"module"}');
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(project, name), text);
  fs.copyFileSync(HARNESS, path.join(box, 'harness.mjs'));
  const envelope = { version: 1, nonce: NONCE, entry };
  if (payload !== undefined) envelope.payload = payload;
  if (context !== undefined) envelope.context = context;
  envelope.limits = { maxOutputBytes: 4194304, maxDepth: 32, maxSidecars: 64, maxSidecarBytes: 67108864, ...limits };
  fs.writeFileSync(path.join(box, 'input.json'), rawInput ?? JSON.stringify(envelope));
  if (Object.keys(sidecars).length > 0) {
    fs.mkdirSync(path.join(box, 'input.json.files'));
    for (const [id, bytes] of Object.entries(sidecars)) fs.writeFileSync(path.join(box, 'input.json.files', id), bytes);
  }
  const child = spawnSync(process.execPath, [...nodeOptions, '../.vite-hub/harness.mjs', '../.vite-hub/input.json'], {
    cwd: project,
    encoding: 'utf8',
    timeout: 20000,
    maxBuffer: 64 * 1024 * 1024,
  });
  // Every frame (`<prefix><json>\n`, the prefix anywhere in a line); `frame` is the last one, with
  // a thrown error's `stack` moved to `stack` (its text depends on the machine).
  const prefix = `<<vite-hub-sandbox:${NONCE}>>`;
  const frames = [];
  for (let at = child.stdout.indexOf(prefix); at !== -1; at = child.stdout.indexOf(prefix, at + 1)) {
    frames.push(child.stdout.slice(at + prefix.length, child.stdout.indexOf('\n', at)));
  }
  let frame = frames.at(-1) ?? null;
  let stack;
  if (frame !== null) {
    const parsed = JSON.parse(frame);
    if (parsed.error?.stack !== undefined) {
      stack = parsed.error.stack;
      delete parsed.error.stack;
      frame = JSON.stringify(parsed);
    }
  }
  return { root, box, status: child.status, stdout: child.stdout, stderr: child.stderr, frame, frames, stack };
}

const entryReturning = (expression) => ({ 'index.mjs': `export default async () => ${expression};\n` });

test('success: frame with the nonce, exact JSON, output.json, exit 0', () => {
  const run = runBox({
    files: { 'index.mjs': 'export default (payload) => ({ echo: payload, n: 1.5, list: [1, "two", null, true] });\n' },
    payload: { a: 'b' },
  });
  assert.equal(run.status, 0);
  assert.equal(run.frame, '{"version":1,"ok":true,"result":{"echo":{"a":"b"},"n":1.5,"list":[1,"two",null,true]}}');
  assert.equal(run.stdout, `<<vite-hub-sandbox:${NONCE}>>${run.frame}\n`);
  assert.equal(fs.readFileSync(path.join(run.box, 'output.json'), 'utf8'), run.frame);
});

test('undefined result: result absent; JSON semantics for toJSON, boxed primitives, nested undefined', () => {
  const none = runBox({ files: entryReturning('undefined') });
  assert.equal(none.frame, '{"version":1,"ok":true}');
  const run = runBox({
    files: entryReturning(
      '({ date: new Date(0), boxed: [Object(1), Object("s"), Object(false)], gone: undefined, holes: [undefined, 2],' +
        ' custom: { toJSON(key) { return { key, inner: { toJSON: () => "once" } }; } } })',
    ),
  });
  assert.equal(
    run.frame,
    '{"version":1,"ok":true,"result":{"date":"1970-01-01T00:00:00.000Z","boxed":[1,"s",false],' +
      '"holes":[null,2],"custom":{"key":"custom","inner":"once"}}}',
  );
});

test('the input file and its sidecars are gone before the entry runs; argv is clean', () => {
  const run = runBox({
    files: {
      'index.mjs': `import fs from 'node:fs';
export default () => {
  let read = 'readable';
  try { fs.readFileSync('../.vite-hub/input.json', 'utf8'); } catch (error) { read = error.code; }
  return { read, sidecars: fs.existsSync('../.vite-hub/input.json.files'), argv: process.argv.slice(2) };
};
`,
    },
    payload: { [MARKER]: { tag: 'binary', id: 0, kind: 'uint8array' } },
    sidecars: { 0: Buffer.from([1]) },
  });
  assert.equal(run.frame, '{"version":1,"ok":true,"result":{"read":"ENOENT","sidecars":false,"argv":[]}}');
});

test('user stdout/stderr, including a forged frame, does not corrupt the result', () => {
  const run = runBox({
    files: {
      'index.mjs': `export default () => {
  console.log('hello');
  process.stdout.write('no newline <<vite-hub-sandbox:');
  console.log('\\n<<vite-hub-sandbox:ffffffffffffffffffffffffffffffff>>{"version":1,"ok":true,"result":"forged"}');
  console.error('to stderr');
  return 'real';
};
`,
    },
  });
  assert.equal(run.status, 0);
  assert.equal(run.frame, '{"version":1,"ok":true,"result":"real"}');
  assert.ok(
    run.stdout.endsWith(
      `no newline <<vite-hub-sandbox:\n<<vite-hub-sandbox:ffffffffffffffffffffffffffffffff>>` +
        `{"version":1,"ok":true,"result":"forged"}\n<<vite-hub-sandbox:${NONCE}>>{"version":1,"ok":true,"result":"real"}\n`,
    ),
  );
  assert.equal(run.stdout.split(`<<vite-hub-sandbox:${NONCE}>>`).length, 2);
  assert.equal(run.stderr, 'to stderr\n');
});

test('an entry that replaces Buffer.from, fs.writeSync and fs.writeFileSync never sees a frame nor its nonce', () => {
  // Found by the hardening pass: an entry hooking Buffer.from saw the frame text (nonce included)
  // and swapped the result. The harness encodes and writes frames with functions it captured first.
  const run = runBox({
    files: {
      'index.mjs': `import fs from 'node:fs';
import { Buffer } from 'node:buffer';
const seen = [];
const from = Buffer.from;
Buffer.from = function (value, ...rest) {
  if (typeof value === 'string' && value.includes('vite-hub-sandbox')) { seen.push(value); value = value.replace(/"real"/, '"FORGED"'); }
  return from.call(this, value, ...rest);
};
const writeSync = fs.writeSync;
fs.writeSync = function (...args) { seen.push('writeSync'); return writeSync.apply(this, args); };
const writeFileSync = fs.writeFileSync;
fs.writeFileSync = function (file, data, ...rest) { seen.push('writeFileSync'); return writeFileSync.call(this, file, String(data).replace(/"real"/, '"FORGED"'), ...rest); };
process.on('exit', () => { if (seen.length > 0) process.stderr.write('SEEN ' + seen.join(',')); });
export default () => 'real';
`,
    },
  });
  assert.equal(run.status, 0);
  assert.equal(run.frame, '{"version":1,"ok":true,"result":"real"}');
  assert.equal(fs.readFileSync(path.join(run.box, 'output.json'), 'utf8'), run.frame);
  assert.doesNotMatch(run.stderr, /SEEN/);
});

test('handler throws: ok false with name and message, exit 1', () => {
  const run = runBox({ files: { 'index.mjs': 'export default async () => { throw new RangeError("boom"); };\n' } });
  assert.equal(run.status, 1);
  assert.equal(run.frame, '{"version":1,"ok":false,"error":{"name":"RangeError","message":"boom"}}');
  const thrown = runBox({ files: { 'index.mjs': 'export default () => { throw 42; };\n' } });
  assert.equal(thrown.frame, '{"version":1,"ok":false,"error":{"name":"Error","message":"42"}}');
  // A plain object is shown as Node shows it uncaught, not as "[object Object]"; a message is kept.
  const object = runBox({ files: { 'index.mjs': 'export default () => { throw { code: 42, reason: "nope" }; };\n' } });
  assert.equal(
    object.frame,
    '{"version":1,"ok":false,"error":{"name":"Error","message":"{ code: 42, reason: \'nope\' }"}}',
  );
  const shaped = runBox({ files: { 'index.mjs': 'export default () => { throw { message: "bad input" }; };\n' } });
  assert.equal(shaped.frame, '{"version":1,"ok":false,"error":{"name":"Error","message":"bad input"}}');
  const long = runBox({ files: { 'index.mjs': 'export default () => { throw new Error("x".repeat(20000)); };\n' } });
  assert.equal(JSON.parse(long.frame).error.message, 'x'.repeat(16384));
});

test('a default export that is not a function', () => {
  const run = runBox({ files: { 'index.mjs': 'export default { run() {} };\n' } });
  assert.equal(run.status, 1);
  assert.equal(
    run.frame,
    '{"version":1,"ok":false,"error":{"name":"TypeError","message":"Definition index.mjs must default-export a function"}}',
  );
});

test('unsupported results: SANDBOX_SERIALIZATION_ERROR with type and path', () => {
  const cases = [
    ['({ big: 1n })', 'bigint', 'result.big'],
    ['({ list: [Object(2n)] })', 'bigint', 'result.list.0'],
    ['({ a: { "b c": () => 1 } })', 'function', 'result.a.b c'],
    ['[Symbol("s")]', 'symbol', 'result.0'],
    ['({ n: NaN })', 'non-finite number', 'result.n'],
    ['(() => { const o = { x: {} }; o.x.self = o; return o; })()', 'cycle', 'result.x.self'],
    // What JSON.stringify would silently turn into {} or null: refused like payloads are.
    ['({ tags: new Map([["a", 1]]) })', 'Map', 'result.tags'],
    ['({ ids: new Set([1]) })', 'Set', 'result.ids'],
    ['({ at: new (class Point { constructor() { this.x = 1; } })() })', 'Point instance', 'result.at'],
    ['({ floats: new Float32Array(2) })', 'Float32Array', 'result.floats'],
    ['({ raw: new ArrayBuffer(4) })', 'ArrayBuffer', 'result.raw'],
    ['({ failure: new Error("x") })', 'Error', 'result.failure'],
    ['[new WeakMap()]', 'WeakMap', 'result.0'],
    ['({ meta: { [Symbol("k")]: 1 } })', 'symbol key', 'result.meta'],
    // A hole would become null (issue 8 item 5: sparse arrays are rejected naming the path).
    ['({ holes: [undefined, , 2] })', 'sparse array (a hole)', 'result.holes.1'],
    ['({ list: [[1, , 3]] })', 'sparse array (a hole)', 'result.list.0.1'],
    ['new Array(3)', 'sparse array (a hole)', 'result.0'],
  ];
  for (const [expression, type, where] of cases) {
    const run = runBox({ files: entryReturning(expression) });
    assert.equal(run.status, 1, expression);
    assert.equal(
      run.frame,
      JSON.stringify({
        version: 1,
        ok: false,
        error: {
          name: 'TypeError',
          message: `Sandbox result must be JSON-serializable; unsupported ${type} at "${where}".`,
          code: 'SANDBOX_SERIALIZATION_ERROR',
        },
      }),
      expression,
    );
  }
});

test('what JSON carries on purpose still travels in a result: a Date, a class with toJSON, a prototype-less object, Buffer/Uint8Array sidecars', () => {
  const run = runBox({
    files: entryReturning(
      '({ when: new Date(0), price: new (class Money { toJSON() { return "3 EUR"; } })(), bare: Object.assign(Object.create(null), { k: "v" }) })',
    ),
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(
    run.frame,
    '{"version":1,"ok":true,"result":{"when":"1970-01-01T00:00:00.000Z","price":"3 EUR","bare":{"k":"v"}}}',
  );
});

test('shared (non-cyclic) references are allowed', () => {
  const run = runBox({ files: entryReturning('(() => { const s = { v: 1 }; return [s, s]; })()') });
  assert.equal(run.frame, '{"version":1,"ok":true,"result":[{"v":1},{"v":1}]}');
});

test('transfer limits: maxOutputBytes, maxDepth, maxSidecars, maxSidecarBytes', () => {
  const output = runBox({ files: entryReturning('"é".repeat(100)'), limits: { maxOutputBytes: 100 } });
  assert.equal(output.status, 1);
  assert.equal(
    output.frame,
    '{"version":1,"ok":false,"error":{"name":"RangeError","message":"Sandbox result exceeds maxOutputBytes (235 > 100).",' +
      '"code":"SANDBOX_TRANSFER_LIMIT","details":{"limit":"maxOutputBytes","value":235,"maximum":100}}}',
  );
  const depth = runBox({ files: entryReturning('[[[1]]]'), limits: { maxDepth: 2 } });
  assert.deepEqual(JSON.parse(depth.frame).error, {
    name: 'RangeError',
    message: 'Sandbox result exceeds maxDepth (3 > 2).',
    code: 'SANDBOX_TRANSFER_LIMIT',
    details: { limit: 'maxDepth', value: 3, maximum: 2 },
  });
  assert.equal(
    runBox({ files: entryReturning('[[1]]'), limits: { maxDepth: 2 } }).frame,
    '{"version":1,"ok":true,"result":[[1]]}',
  );
  const binaryDepth = runBox({ files: entryReturning('[new Uint8Array(1)]'), limits: { maxDepth: 1 } });
  assert.deepEqual(JSON.parse(binaryDepth.frame).error.details, { limit: 'maxDepth', value: 2, maximum: 1 });
  const count = runBox({ files: entryReturning('[new Uint8Array(1), new Uint8Array(1)]'), limits: { maxSidecars: 1 } });
  assert.deepEqual(JSON.parse(count.frame).error.details, { limit: 'maxSidecars', value: 2, maximum: 1 });
  const bytes = runBox({
    files: entryReturning('[new Uint8Array(6), new Blob(["12345"])]'),
    limits: { maxSidecarBytes: 10 },
  });
  assert.deepEqual(JSON.parse(bytes.frame).error.details, { limit: 'maxSidecarBytes', value: 11, maximum: 10 });
  assert.equal(fs.existsSync(path.join(bytes.box, 'output.json.files')), false);
});

test('a plain result loads no Node internal module that a three-line runner of the same entry does not', () => {
  // The entry records the process's loaded modules at exit, under the harness and under the runner.
  const recording = `import fs from 'node:fs';
process.on('exit', () => fs.writeFileSync('modules.txt', process.moduleLoadList.join('\\n')));
export default (payload) => ({ sum: payload.a + payload.b });
`;
  const run = runBox({ files: { 'index.mjs': recording }, payload: { a: 1, b: 2 } });
  assert.equal(run.frame, '{"version":1,"ok":true,"result":{"sum":3}}');
  const underHarness = fs.readFileSync(path.join(run.root, 'project', 'modules.txt'), 'utf8').split('\n');
  const runner =
    "const m = await import('./index.mjs'); process.stdout.write(JSON.stringify(await m.default({ a: 1, b: 2 })));";
  const bare = spawnSync(process.execPath, ['--input-type=module', '-e', runner], {
    cwd: path.join(run.root, 'project'),
    encoding: 'utf8',
  });
  assert.equal(bare.stdout, '{"sum":3}');
  const underRunner = new Set(fs.readFileSync(path.join(run.root, 'project', 'modules.txt'), 'utf8').split('\n'));
  // (Each load of a built-in's ESM facade reads every export, lazy ones included: buffer's File,
  // fs's streams, util's parseArgs; fs.rmSync loads rimraf. The harness avoids all of them.)
  assert.deepEqual(
    underHarness.filter((name) => !underRunner.has(name)),
    [],
  );
});

test('an entry that prints nothing gets no output stream made: the harness frames to fd 1 itself', () => {
  // process.stdout of a pipe is made on its first read and loads net and the streams (1.5-2 ms of
  // a Run on Node 20); the harness reads neither stream unless the entry made it.
  // (Not \`import fs\`: the ESM facade of fs reads its lazy streams.)
  const recording = `const fs = process.getBuiltinModule('node:fs');
process.on('exit', () => fs.writeFileSync('modules.txt', process.moduleLoadList.join('\\n')));
export default () => 'quiet';
`;
  const run = runBox({ files: { 'index.mjs': recording } });
  assert.equal(run.frame, '{"version":1,"ok":true,"result":"quiet"}');
  const loaded = fs.readFileSync(path.join(run.root, 'project', 'modules.txt'), 'utf8').split('\n');
  assert.ok(loaded.includes('NativeModule fs'), 'the recording lists built-ins');
  const streamModules = [
    'NativeModule net',
    'NativeModule internal/streams/writable',
    'NativeModule internal/streams/duplex',
  ];
  assert.deepEqual(
    loaded.filter((name) => streamModules.includes(name)),
    [],
  );
});

test('output the entry wrote is flushed before the frame even after it replaced process.stdout and its write', () => {
  const run = runBox({
    files: {
      'index.mjs': `export default () => {
  process.stdout.write('y'.repeat(2 * 1024 * 1024));
  process.stdout.write = () => true;
  Object.defineProperty(process, 'stdout', { value: { write: () => true, writableLength: 0 }, configurable: true });
  return 'flushed';
};
`,
    },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.frame, '{"version":1,"ok":true,"result":"flushed"}');
  assert.equal(run.stdout, `${'y'.repeat(2 * 1024 * 1024)}<<vite-hub-sandbox:${NONCE}>>${run.frame}\n`);
});

test('without process.getBuiltinModule (Node before 20.16) the harness imports its built-ins', () => {
  const preload = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-harness-preload-')), 'no-builtin-module.cjs');
  temporary.push(path.dirname(preload));
  fs.writeFileSync(preload, 'delete process.getBuiltinModule;\n');
  const run = runBox({
    files: entryReturning('({ ok: typeof process.getBuiltinModule })'),
    nodeOptions: ['--require', preload],
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.frame, '{"version":1,"ok":true,"result":{"ok":"undefined"}}');
});

test('binary sidecars in: Blob keeps its type, Buffer is a Buffer, Uint8Array is a plain Uint8Array', () => {
  const run = runBox({
    files: {
      'index.mjs': `import { Buffer } from 'node:buffer';
export default async ({ blob, buf, u8 }, context) => ({
  blob: [blob instanceof Blob, blob.type, await blob.text()],
  buf: [Buffer.isBuffer(buf), buf.toString('hex')],
  u8: [u8 instanceof Uint8Array, Buffer.isBuffer(u8), Array.from(u8)],
  ctx: [Buffer.isBuffer(context.bin), context.bin.toString()],
});
`,
    },
    payload: {
      blob: { [MARKER]: { tag: 'binary', id: 0, kind: 'blob', type: 'text/plain' } },
      buf: { [MARKER]: { tag: 'binary', id: 1, kind: 'buffer' } },
      u8: { [MARKER]: { tag: 'binary', id: 2, kind: 'uint8array' } },
    },
    context: { bin: { [MARKER]: { tag: 'binary', id: 3, kind: 'buffer' } } },
    sidecars: { 0: 'hi blob', 1: Buffer.from([0xde, 0xad]), 2: Buffer.from([1, 2, 255]), 3: 'ctx' },
  });
  assert.equal(
    run.frame,
    '{"version":1,"ok":true,"result":{"blob":[true,"text/plain","hi blob"],"buf":[true,"dead"],' +
      '"u8":[true,false,[1,2,255]],"ctx":[true,"ctx"]}}',
  );
});

test('invalid input descriptors: SANDBOX_SERIALIZATION_ERROR', () => {
  const invalid = [
    { tag: 'binary', id: -1, kind: 'buffer' },
    { tag: 'binary', id: 1.5, kind: 'buffer' },
    { tag: 'binary', id: 2 ** 53, kind: 'buffer' },
    { tag: 'binary', id: 0, kind: 'file' },
    { tag: 'nope' },
  ];
  for (const descriptor of invalid) {
    const run = runBox({ files: entryReturning('1'), payload: { x: { [MARKER]: descriptor } }, sidecars: { 0: 'x' } });
    assert.equal(
      run.frame,
      '{"version":1,"ok":false,"error":{"name":"TypeError",' +
        '"message":"Sandbox input contains an invalid value marker.","code":"SANDBOX_SERIALIZATION_ERROR"}}',
    );
  }
  // JSON.stringify writes -0 as 0, so -0 is only reachable in raw JSON text.
  const rawMinusZero = runBox({
    files: entryReturning('1'),
    rawInput: `{"version":1,"nonce":"${NONCE}","entry":"index.mjs","payload":{"${MARKER}":{"tag":"binary","id":-0,"kind":"blob"}}}`,
    sidecars: { 0: 'x' },
  });
  assert.equal(JSON.parse(rawMinusZero.frame).error.message, 'Sandbox input contains an invalid value marker.');
  const missing = runBox({ files: entryReturning('1'), payload: { [MARKER]: { tag: 'binary', id: 7, kind: 'blob' } } });
  assert.equal(
    missing.frame,
    '{"version":1,"ok":false,"error":{"name":"TypeError",' +
      '"message":"Sandbox input binary sidecar 7 does not exist.","code":"SANDBOX_SERIALIZATION_ERROR"}}',
  );
});

test('binary sidecars out: files with the right bytes and markers in walk order', () => {
  const run = runBox({
    files: entryReturning(
      '({ u8: new Uint8Array([1, 2, 3]).subarray(1), nested: [new Blob(["héllo"], { type: "text/x" })],' +
        ' buf: Buffer.from("buf"), viaToJSON: { toJSON: () => new Uint8Array([9]) } })',
    ),
  });
  assert.equal(run.status, 0);
  const marker = (descriptor) => ({ [MARKER]: descriptor });
  assert.equal(
    run.frame,
    JSON.stringify({
      version: 1,
      ok: true,
      result: {
        u8: marker({ tag: 'binary', id: 0, kind: 'uint8array' }),
        nested: [marker({ tag: 'binary', id: 1, kind: 'blob', type: 'text/x' })],
        buf: marker({ tag: 'binary', id: 2, kind: 'buffer' }),
        viaToJSON: marker({ tag: 'binary', id: 3, kind: 'uint8array' }),
      },
    }),
  );
  const filesDir = path.join(run.box, 'output.json.files');
  assert.deepEqual(fs.readdirSync(filesDir).sort(), ['0', '1', '2', '3']);
  assert.deepEqual([...fs.readFileSync(path.join(filesDir, '0'))], [2, 3]);
  assert.equal(fs.readFileSync(path.join(filesDir, '1'), 'utf8'), 'héllo');
  assert.equal(fs.readFileSync(path.join(filesDir, '2'), 'utf8'), 'buf');
  assert.deepEqual([...fs.readFileSync(path.join(filesDir, '3'))], [9]);
});

test('marker-shaped objects are escaped both ways', () => {
  const escaped = {
    [MARKER]: {
      tag: 'object',
      entries: [
        [MARKER, 'x'],
        ['n', { [MARKER]: { tag: 'object', entries: [[MARKER, 1]] } }],
      ],
    },
  };
  const run = runBox({
    files: {
      'index.mjs': `export default (payload) => ({ seen: [Object.keys(payload), payload['${MARKER}'], payload.n['${MARKER}']], back: payload });\n`,
    },
    payload: escaped,
  });
  assert.equal(
    run.frame,
    JSON.stringify({
      version: 1,
      ok: true,
      result: { seen: [[MARKER, 'n'], 'x', 1], back: escaped },
    }),
  );
});

test('a Response at the top level streams: head, body frames, end; a plain result never loads the Response global', () => {
  const run = runBox({
    files: entryReturning(
      'new Response("créé", { status: 201, statusText: "Created", headers: { "x-a": "1", "content-type": "text/plain" } })',
    ),
  });
  assert.equal(run.status, 0);
  assert.deepEqual(
    run.frames.map((f) => JSON.parse(f)),
    [
      {
        version: 1,
        frame: 'head',
        status: 201,
        statusText: 'Created',
        headers: [
          ['content-type', 'text/plain'],
          ['x-a', '1'],
        ],
      },
      { version: 1, frame: 'body', data: Buffer.from('créé').toString('base64') },
      { version: 1, frame: 'end' },
    ],
  );
  const empty = runBox({ files: entryReturning('new Response(null, { status: 204 })') });
  assert.deepEqual(empty.frames, [
    '{"version":1,"frame":"head","status":204,"statusText":"","headers":[]}',
    '{"version":1,"frame":"end"}',
  ]);
  // A body over maxOutputBytes ends with a limit error frame after the head.
  const big = runBox({ files: entryReturning('new Response("x".repeat(200))'), limits: { maxOutputBytes: 100 } });
  assert.equal(big.status, 1);
  assert.equal(JSON.parse(big.frames[0]).frame, 'head');
  assert.deepEqual(JSON.parse(big.frame).error.details, { limit: 'maxOutputBytes', value: 200, maximum: 100 });
  // A plain result never reads the lazy Response global (reading it loads undici on Node 20 and
  // turns its accessor into a data property), not even for an object with a `status`.
  const plain = runBox({
    files: {
      'index.mjs': `import fs from 'node:fs';
export default () => {
  process.on('exit', () => fs.writeFileSync('lazy.txt', typeof Object.getOwnPropertyDescriptor(globalThis, 'Response').get));
  return { nested: { status: 1, headers: {} }, n: 1, blob: null };
};
`,
    },
  });
  assert.equal(plain.status, 0);
  assert.equal(plain.frame, '{"version":1,"ok":true,"result":{"nested":{"status":1,"headers":{}},"n":1,"blob":null}}');
  assert.equal(
    fs.readFileSync(path.join(plain.root, 'project', 'lazy.txt'), 'utf8'),
    'function',
    'Response is still unloaded',
  );
});

test('a thrown error keeps its stack (the entry file and line)', () => {
  const run = runBox({ files: { 'index.mjs': `export default () => {\n  throw new TypeError('boom');\n};\n` } });
  assert.equal(run.frame, '{"version":1,"ok":false,"error":{"name":"TypeError","message":"boom"}}');
  assert.match(run.stack, /^TypeError: boom\n\s+at .*index\.mjs:2:9/);
});

test('context reaches the entry; a TypeScript-style entry path is resolved against cwd', () => {
  const run = runBox({
    files: { 'index.ts.mjs': 'export default (payload, context) => ({ payload, context });\n' },
    entry: 'index.ts.mjs',
    context: { requestId: 'r1', flags: [true] },
  });
  assert.equal(run.frame, '{"version":1,"ok":true,"result":{"context":{"requestId":"r1","flags":[true]}}}');
});

test('process.exit in user code is reported as an error frame, with its exit code kept', () => {
  const run = runBox({ files: { 'index.mjs': 'export default () => { process.exit(3); };\n' } });
  assert.equal(run.status, 3);
  assert.equal(
    run.frame,
    '{"version":1,"ok":false,"error":{"name":"Error","message":"The entry ended the process with exit code 3 before returning a result."}}',
  );
});

test('a promise that never settles is reported instead of a bare exit code 13', () => {
  const run = runBox({ files: { 'index.mjs': 'export default () => new Promise(() => {});\n' } });
  assert.equal(run.status, 1);
  assert.equal(
    run.frame,
    '{"version":1,"ok":false,"error":{"name":"Error","message":"The entry returned a promise that never settled: nothing was left running to settle it."}}',
  );
});

test('large user output before the result and a late unhandled rejection', () => {
  const run = runBox({
    files: {
      'index.mjs': `export default () => {
  process.stdout.write('x'.repeat(2 * 1024 * 1024));
  setTimeout(() => { Promise.reject(new Error('late')); }, 20);
  return { done: true };
};
`,
    },
  });
  assert.equal(run.status, 0);
  assert.equal(run.frame, '{"version":1,"ok":true,"result":{"done":true}}');
  assert.equal(run.stdout.length, 2 * 1024 * 1024 + `<<vite-hub-sandbox:${NONCE}>>`.length + run.frame.length + 1);
  assert.equal(run.stderr, '');
});

test('an entry that replaces Buffer.prototype.utf8Write never sees a frame, so it cannot learn the nonce', () => {
  const run = runBox({
    files: {
      'index.mjs': `import fs from 'node:fs';
const write = Buffer.prototype.utf8Write;
Buffer.prototype.utf8Write = function (text, ...rest) {
  if (String(text).includes('vite-hub-sandbox:')) fs.writeFileSync('leak.txt', String(text));
  return write.call(this, text, ...rest);
};
export default () => 'real result';
`,
    },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.frame, '{"version":1,"ok":true,"result":"real result"}');
  assert.equal(
    fs.existsSync(path.join(run.root, 'project', 'leak.txt')),
    false,
    'the frame went through the replaced method',
  );
});
