// Run handles end to end (issue 11 item 2, issue 8 item 4, issue 12 item 2): startSandbox's status,
// live logs and response from one Run; a streamed Response reaching the caller while the entry
// still produces it; the request budget of a Run and the Box given back after the Response.
// The built package, a real local Box host, real processes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startSandbox, runSandbox, configureSandbox, resolveSandboxRunner } from '@vite-hub/sandbox';
import { useLocalHost, defineTestSandbox, until } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

test('a streamed Response reaches the caller as the entry produces it (4 events 500 ms apart)', async () => {
  defineTestSandbox(
    'stream/sse',
    `export default () => {
      const encoder = new TextEncoder();
      let sent = 0;
      const body = new ReadableStream({
        async pull(controller) {
          if (sent === 4) return controller.close();
          if (sent > 0) await new Promise((resolve) => setTimeout(resolve, 500));
          controller.enqueue(encoder.encode('data: ' + JSON.stringify({ n: sent++, at: Date.now() }) + '\\n\\n'));
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };`,
  );
  const response = await runSandbox('stream/sse');
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/event-stream');
  const arrivals = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body) {
    text += decoder.decode(chunk, { stream: true });
    const events = text.split('\n\n');
    text = events.pop();
    for (const event of events) arrivals.push({ ...JSON.parse(event.slice('data: '.length)), arrived: Date.now() });
  }
  assert.deepEqual(
    arrivals.map((e) => e.n),
    [0, 1, 2, 3],
  );
  const [first, , , last] = arrivals;
  // Live: the first event arrived before the entry even produced the last one (one clock: the
  // Box is a process of this machine). How soon is the bench's business, not an assertion here.
  assert.ok(first.arrived < last.at, `first event arrived at ${first.arrived}, the last was sent at ${last.at}`);
});

test('logs() follows the entry live, replays for a late reader, and status moves pending → running → stopped', async () => {
  defineTestSandbox(
    'logs/ticks',
    `export default async () => {
      for (let i = 0; i < 5; i += 1) {
        console.log('tick ' + i);
        if (i === 2) console.error('halfway');
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      return { done: true, lastAt: Date.now() };
    };`,
  );
  const lines = [];
  const run = startSandbox('logs/ticks', undefined, { onLog: (entry) => lines.push({ ...entry, at: Date.now() }) });
  assert.equal(run.status, 'pending');
  const seen = [];
  const statuses = new Set();
  let answeredAt = null;
  run.response().then(() => (answeredAt = Date.now()));
  for await (const entry of run.logs()) {
    seen.push({ ...entry, at: Date.now() });
    statuses.add(run.status);
  }
  const response = await run.response();
  const { done, lastAt } = await response.json();
  assert.equal(done, true);
  assert.equal(run.status, 'stopped');
  assert.deepEqual([...statuses], ['running'], 'every entry arrived while the entry ran');
  const stdout = seen
    .filter((e) => e.stream === 'stdout')
    .map((e) => e.data)
    .join('');
  assert.equal(stdout, 'tick 0\ntick 1\ntick 2\ntick 3\ntick 4\n');
  assert.equal(
    seen
      .filter((e) => e.stream === 'stderr')
      .map((e) => e.data)
      .join(''),
    'halfway\n',
  );
  // Live: the first entry came before the entry finished its last tick (one clock: the Box is a
  // process of this machine), and before the Response.
  assert.ok(seen[0].at < lastAt, `the first entry arrived at ${seen[0].at}, the entry ended at ${lastAt}`);
  assert.ok(answeredAt === null || seen[0].at < answeredAt);
  // A late reader gets the same entries from the start.
  const replay = [];
  for await (const entry of run.logs()) replay.push(entry);
  assert.deepEqual(
    replay,
    seen.map(({ stream, data }) => ({ stream, data })),
  );
  // onLog: one call per line, named, stderr as stderr.
  assert.deepEqual(
    lines.map(({ name, stream, line }) => ({ name, stream, line })),
    [
      ...['tick 0', 'tick 1', 'tick 2'].map((line) => ({ name: 'logs/ticks', stream: 'stdout', line })),
      { name: 'logs/ticks', stream: 'stderr', line: 'halfway' },
      ...['tick 3', 'tick 4'].map((line) => ({ name: 'logs/ticks', stream: 'stdout', line })),
    ],
  );
  assert.ok(lines[0].at < lastAt, 'onLog is called live, before the entry ended');
  await run.closed();
});

test('a failed Run: status failed, the error Response from the same handle, its name and no stack (production)', async () => {
  defineTestSandbox('logs/throws', `export default () => { console.log('before'); throw new TypeError('no notes'); };`);
  const run = startSandbox('logs/throws', {});
  const response = await run.response();
  assert.equal(response.status, 500);
  const { error } = await response.json();
  assert.equal(error.code, 'SANDBOX_HANDLER_ERROR');
  assert.equal(error.message, 'no notes');
  assert.equal(error.details.name, 'TypeError');
  assert.equal(error.details.stack, undefined, 'no stack without configureSandbox({ debug: true })');
  assert.equal(run.status, 'failed');
  const entries = [];
  for await (const entry of run.logs()) entries.push(entry);
  assert.deepEqual(entries, [{ stream: 'stdout', data: 'before\n' }]);
});

test('configureSandbox({ debug: true }) keeps the stack in details; a later config without it drops it again', async () => {
  const local = { baseUrl: host.baseUrl, token: host.token };
  configureSandbox({ provider: 'local', local, debug: true });
  try {
    const { error } = await (await runSandbox('logs/throws', {})).json();
    assert.equal(error.details.name, 'TypeError');
    assert.match(error.details.stack, /^TypeError: no notes\n\s+at .*index\.mjs:1:/);
  } finally {
    configureSandbox({ provider: 'local', local });
  }
  const { error } = await (await runSandbox('logs/throws', {})).json();
  assert.equal(error.details.name, 'TypeError');
  assert.equal(error.details.stack, undefined);
});

test("configureSandbox({ onLog }): every Run's lines (a runner's too), named, stderr as stderr; a Run's own onLog wins", async () => {
  defineTestSandbox(
    'logs/both',
    `export default () => { console.log('out 1'); console.error('err 1'); process.stdout.write('no newline'); return 1; };`,
  );
  const local = { baseUrl: host.baseUrl, token: host.token };
  const configured = [];
  configureSandbox({ provider: 'local', local, onLog: (entry) => configured.push(entry) });
  try {
    const response = await runSandbox('logs/both', {});
    assert.equal(response.status, 200);
    assert.equal(await response.text(), '1', 'the result frame is not a line');
    await until(() => configured.length === 3);
    assert.deepEqual(
      [...configured].sort((a, b) => (a.line < b.line ? -1 : 1)),
      [
        { name: 'logs/both', stream: 'stderr', line: 'err 1' },
        { name: 'logs/both', stream: 'stdout', line: 'no newline' },
        { name: 'logs/both', stream: 'stdout', line: 'out 1' },
      ],
    );
    const own = [];
    await (await runSandbox('logs/both', {}, { onLog: (entry) => own.push(entry) })).text();
    await until(() => own.length === 3);
    assert.equal(own.length, 3);
    assert.equal(configured.length, 3, 'the configured onLog is not called for a Run with its own');
    // A runner's Runs too: the configured onLog, or the call's own.
    const runner = await resolveSandboxRunner('logs/both');
    assert.equal(await runner.run({}), 1);
    await until(() => configured.length === 6);
    assert.deepEqual(
      configured
        .slice(3)
        .map((entry) => entry.line)
        .sort(),
      ['err 1', 'no newline', 'out 1'],
    );
    const ownRunner = [];
    await runner.run({}, { onLog: (entry) => ownRunner.push(entry) });
    await until(() => ownRunner.length === 3);
    assert.equal(ownRunner.length, 3);
    assert.equal(configured.length, 6);
    assert.throws(
      () => configureSandbox({ provider: 'local', local, onLog: 'yes' }),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT' && /onLog must be a function/.test(error.message),
    );
  } finally {
    configureSandbox({ provider: 'local', local });
  }
  // configureSandbox without onLog removes it (default: nothing). Read once the Run has closed,
  // after which no line of it can reach a callback (an event, not a wait).
  const unlogged = startSandbox('logs/both', {});
  await (await unlogged.response()).text();
  await unlogged.closed();
  assert.equal(configured.length, 6);
});

test('onLog gets a line without newline in pieces of at most 65536 characters, so 8 MiB of it is never held whole', async () => {
  defineTestSandbox(
    'logs/no-newline',
    `export default () => { const piece = 'abcdefghijklmnop'.repeat(65536); for (let i = 0; i < 8; i++) process.stdout.write(piece); console.log('|end'); console.log('short'); return 1; };`,
  );
  const lines = [];
  const response = await runSandbox('logs/no-newline', {}, { onLog: (entry) => lines.push(entry.line) });
  assert.equal(await response.text(), '1');
  assert.ok(await until(() => lines.at(-1) === 'short'), `last line: ${String(lines.at(-1)).slice(0, 40)}`);
  assert.ok(
    lines.every((line) => line.length <= 65536),
    `longest line ${Math.max(...lines.map((line) => line.length))}`,
  );
  const joined = lines.slice(0, -1).join('');
  assert.equal(joined.length, 8 * 16 * 65536 + '|end'.length, 'every character arrives');
  assert.ok(joined.endsWith('p|end') && joined.startsWith('abcdefghijklmnopabcd'));
});

test('a bad onLog is a 400 SANDBOX_INVALID_ARGUMENT and no request', async () => {
  await startSandbox('logs/throws', {}).closed();
  host.resetCounters();
  const response = await runSandbox('logs/throws', {}, { onLog: 'yes' });
  assert.equal(response.status, 400);
  const { error } = await response.json();
  assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.match(error.message, /onLog must be a function/);
  assert.equal(host.counters().total, 0);
});

test('a Run without dependencies sends 3 requests before its Response (create, write, exec); the Box stops after it', async () => {
  defineTestSandbox('budget/json', 'export default (payload) => ({ twice: payload * 2 });');
  await startSandbox('budget/json', 1).closed(); // earlier Runs' Boxes are given back before counting
  host.resetCounters();
  const run = startSandbox('budget/json', 21);
  const response = await run.response();
  const atResponse = host.counters();
  assert.deepEqual(await response.json(), { twice: 42 });
  assert.ok(atResponse.total <= 3, `requests before the Response: ${JSON.stringify(atResponse)}`);
  assert.deepEqual(Object.keys(atResponse.requests).sort(), ['cmd', 'create', 'fs/write']);
  await run.closed();
  assert.deepEqual(host.counters().requests, { create: 1, 'fs/write': 1, cmd: 1, stop: 1 });
  // A streamed Response takes the same three requests before it arrives.
  host.resetCounters();
  const streamed = await runSandbox('stream/sse');
  assert.ok(host.counters().total <= 3, JSON.stringify(host.counters()));
  await streamed.text();
  assert.ok(await until(() => host.counters().requests.stop === 1), 'the Box of a streamed Run stops after its body');
});

test('the Cloudflare provider through the local Box host: request count per Run, the Box destroyed after the Response', async () => {
  configureSandbox({
    provider: 'cloudflare',
    env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
  });
  try {
    await startSandbox('budget/json', 4).closed();
    host.resetCounters();
    const run = startSandbox('budget/json', 4);
    const response = await run.response();
    const atResponse = host.counters();
    assert.deepEqual(await response.json(), { twice: 8 });
    // Every file of the Run in one archive, one write (it waits for the container; no mkdir),
    // then one streamed exec that unpacks it first; the result comes from the exec's own output
    // (no read).
    assert.deepEqual(atResponse.requests, { 'cloudflare/write': 1, 'cloudflare/execute/stream': 1 });
    await run.closed();
    assert.equal(host.counters().requests['cloudflare/destroy'], 1);
    const logs = [];
    defineTestSandbox(
      'cf/logs',
      `export default async () => { console.log('one'); await new Promise((r) => setTimeout(r, 600)); console.log('two'); return Date.now(); };`,
    );
    const live = startSandbox('cf/logs');
    for await (const entry of live.logs()) logs.push({ ...entry, at: Date.now() });
    const answer = await live.response();
    assert.equal(answer.status, 200);
    const endedAt = await answer.json();
    assert.equal(logs.map((e) => e.data).join(''), 'one\ntwo\n');
    // One clock (the Box is a process of this machine): the first line arrived before the entry ended.
    assert.ok(logs[0].at < endedAt, 'Cloudflare logs arrive live too');
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test('a streamed body past maxOutputBytes fails its read with SANDBOX_TRANSFER_LIMIT and the limit, as a plain result does', async () => {
  // Found by the fresh-user trial: the same overflow was SANDBOX_HANDLER_ERROR without details.
  defineTestSandbox(
    'stream/too-long',
    `export default () => {
      let sent = 0;
      const body = new ReadableStream({
        pull(controller) {
          if (sent++ === 3) return controller.close();
          controller.enqueue(new Uint8Array(600).fill(120));
        },
      });
      return new Response(body, { headers: { 'content-type': 'application/octet-stream' } });
    };`,
  );
  configureSandbox({
    provider: 'local',
    local: { baseUrl: host.baseUrl, token: host.token },
    transfer: { maxOutputBytes: 1000 },
  });
  try {
    const response = await runSandbox('stream/too-long');
    assert.equal(response.status, 200);
    await assert.rejects(response.arrayBuffer(), (error) => {
      assert.equal(error.code, 'SANDBOX_TRANSFER_LIMIT', `${error.code}: ${error.message}`);
      assert.deepEqual(error.details, { limit: 'maxOutputBytes', value: 1200, maximum: 1000 });
      return true;
    });
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test("aborting while reading a streamed body rejects the read with the signal's reason, as fetch does", async () => {
  defineTestSandbox(
    'stream/endless',
    `export default () => {
      const encoder = new TextEncoder();
      const body = new ReadableStream({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          controller.enqueue(encoder.encode('tick\\n'));
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/plain' } });
    };`,
  );
  for (const [label, abort, check] of [
    [
      'abort(reason)',
      (c) => c.abort(new Error('enough ticks')),
      (error) => error instanceof Error && error.message === 'enough ticks',
    ],
    ['abort()', (c) => c.abort(), (error) => error instanceof DOMException && error.name === 'AbortError'],
  ]) {
    const controller = new AbortController();
    const response = await startSandbox('stream/endless', undefined, { signal: controller.signal }).response();
    const reader = response.body.getReader();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), 'tick\n', label);
    abort(controller);
    await assert.rejects(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
      (error) => {
        assert.ok(check(error), `${label}: rejected with ${error?.name}: ${error?.message} (${error?.code})`);
        return true;
      },
    );
  }
});

test("logs() keeps at most 16 MiB of the entry's output, then one truncated: true marker; onLog sees every line", async () => {
  defineTestSandbox(
    'logs/flood',
    // Written with backpressure, so all of it is out before the result (the harness waits for a
    // drain of at most 1 s, which a loaded machine can exceed with 17 MiB queued).
    `export default async () => {
      const line = 'x'.repeat(1023) + '\\n';
      for (let i = 0; i < 17 * 1024; i++) {
        if (!process.stdout.write(line)) await new Promise((resolve) => process.stdout.once('drain', resolve));
      }
      await new Promise((resolve) => process.stdout.write('last line\\n', resolve));
      return 'done';
    };`,
  );
  let onLogLines = 0;
  let sawLast = false;
  const run = startSandbox('logs/flood', undefined, {
    onLog({ line }) {
      onLogLines++;
      if (line === 'last line') sawLast = true;
    },
  });
  assert.equal(await (await run.response()).json(), 'done');
  let bytes = 0;
  const entries = [];
  for await (const entry of run.logs()) {
    bytes += Buffer.byteLength(entry.data);
    entries.push(entry);
  }
  const last = entries.at(-1);
  assert.equal(last.truncated, true);
  assert.equal(last.stream, 'stderr');
  assert.match(last.data, /logs\(\) stops here: the entry printed more than 16777216 bytes/);
  assert.ok(bytes - Buffer.byteLength(last.data) <= 16 * 1024 * 1024, `kept ${bytes} bytes`);
  assert.equal(entries.filter((entry) => entry.truncated).length, 1);
  assert.ok(sawLast && onLogLines >= 17 * 1024, `onLog saw ${onLogLines} lines`);
});
