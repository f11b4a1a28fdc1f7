// Session rows of issue 35 on the local provider (a real local Box host, real processes): stdin
// (`spawn(…, { stdin: true })`, `writeStdin`, `closeStdin`, the `stdin` WritableStream), a
// Command picked up again by its id (`session.command(id)`), and `extendTimeout` moving the
// Box's end of lifetime.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openSandboxSession } from '@vite-hub/sandbox';
import { useLocalHost } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

/** The session as the host describes it (`GET /v2/sandboxes/sessions/:id`). */
async function hostSession(id) {
  const response = await fetch(`${host.baseUrl}/v2/sandboxes/sessions/${id}`, {
    headers: { authorization: `Bearer ${host.token}` },
  });
  assert.equal(response.status, 200);
  return (await response.json()).session;
}

async function output(command) {
  let stdout = '';
  let stderr = '';
  for await (const entry of command.logs()) {
    if (entry.stream === 'stdout') stdout += entry.data;
    else stderr += entry.data;
  }
  return { stdout, stderr };
}

test('a cat spawned with stdin: true echoes what writeStdin sends, live, and exits after closeStdin', async () => {
  const session = await openSandboxSession();
  try {
    const cat = await session.spawn('cat', [], { stdin: true });
    const logs = cat.logs();
    await cat.writeStdin('hello\n');
    // Echoed while cat still runs: its stdin is a pipe that stays open between writes.
    assert.deepEqual((await logs.next()).value, { stream: 'stdout', data: 'hello\n' });
    await cat.writeStdin(new Uint8Array([0xc3, 0xa9, 0x0a]));
    assert.deepEqual((await logs.next()).value, { stream: 'stdout', data: 'é\n' });
    await cat.closeStdin();
    assert.deepEqual(await cat.wait(), { exitCode: 0, ok: true });
    assert.equal((await logs.next()).done, true);
    // Closed: a later write is refused by the host (404 once the command exited).
    await assert.rejects(cat.writeStdin('late'), (error) => error.code === 'SANDBOX_TRANSPORT_ERROR');
  } finally {
    await session.close();
  }
});

test('the stdin WritableStream pipes a ReadableStream into the Command; without stdin the Command reads an empty stdin', async () => {
  const session = await openSandboxSession();
  try {
    const wc = await session.spawn('wc', ['-c'], { stdin: true });
    const big = new Uint8Array(700 * 1024).fill(97); // over one request's 512 KiB: two writes, in order
    await new ReadableStream({
      start(controller) {
        controller.enqueue('abc');
        controller.enqueue(big);
        controller.close();
      },
    }).pipeTo(wc.stdin);
    assert.deepEqual(await wc.wait(), { exitCode: 0, ok: true });
    assert.equal((await output(wc)).stdout.trim(), String(3 + big.length));

    const plain = await session.spawn('cat');
    assert.deepEqual(await plain.wait(), { exitCode: 0, ok: true });
    assert.equal((await output(plain)).stdout, '');
    await assert.rejects(plain.writeStdin('x'), (error) => {
      assert.equal(error.code, 'SANDBOX_TRANSPORT_ERROR');
      return true;
    });
    await assert.rejects(
      session.spawn('cat', [], { stdin: 'yes' }),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT',
    );
  } finally {
    await session.close();
  }
});

test('exec with stdin: a string, bytes and a ReadableStream reach the Command, then end of input', async () => {
  const session = await openSandboxSession();
  try {
    assert.deepEqual(await session.exec('cat', [], { stdin: 'from a string\n' }), {
      exitCode: 0,
      ok: true,
      stdout: 'from a string\n',
      stderr: '',
    });
    const bytes = await session.exec('wc', ['-c'], { stdin: new Uint8Array(600 * 1024) });
    assert.equal(bytes.stdout.trim(), String(600 * 1024));
    const encoder = new TextEncoder();
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue('one\n');
        controller.enqueue(encoder.encode('two\n'));
        controller.close();
      },
    });
    const sorted = await session.exec('sort', ['-r'], { stdin: stream });
    assert.equal(sorted.stdout, 'two\none\n');
    assert.equal(stream.locked, true, 'the stream was read by exec');
    // A Command that stops reading ends the feed without error.
    const head = await session.exec('head', ['-c', '3'], { stdin: 'abcdef'.repeat(200_000) });
    assert.deepEqual(head, { exitCode: 0, ok: true, stdout: 'abc', stderr: '' });
    // A stream that errors kills the Command.
    const failing = new ReadableStream({
      pull(controller) {
        controller.error(new Error('source broke'));
      },
    });
    await assert.rejects(session.exec('cat', [], { stdin: failing }), (error) => {
      assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
      assert.match(error.message, /source broke/);
      return true;
    });
    await assert.rejects(session.exec('cat', [], { stdin: 42 }), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
  } finally {
    await session.close();
  }
});

test('command(id) from a second handle reads a detached Command output, waits for it and kills another', async () => {
  const session = await openSandboxSession();
  try {
    const first = await session.spawn('sh', ['-c', 'echo one; echo two >&2; exit 3']);
    await first.wait();
    const again = await session.command(first.id);
    assert.equal(again.id, first.id);
    assert.deepEqual(await output(again), { stdout: 'one\n', stderr: 'two\n' });
    assert.deepEqual(await again.wait(), { exitCode: 3, ok: false });

    const sleeper = await session.spawn('sleep', ['60']);
    const handle = await session.command(sleeper.id);
    await handle.kill('SIGKILL');
    assert.deepEqual(await sleeper.wait(), { exitCode: 137, ok: false });

    await assert.rejects(session.command('cmd_missing'), (error) => {
      assert.equal(error.code, 'SANDBOX_TRANSPORT_ERROR');
      assert.equal(error.details?.status, 404);
      return true;
    });
    await assert.rejects(session.command('a/b'), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
  } finally {
    await session.close();
  }
});

test('extendTimeout moves the end of the lifetime: expiresAt and the host session both move by ms', async () => {
  const session = await openSandboxSession({ timeout: 60_000 });
  try {
    const before = session.expiresAt;
    assert.ok(before instanceof Date);
    const hostBefore = (await hostSession(session.id)).timeout;
    await session.extendTimeout(120_000);
    const moved = session.expiresAt.getTime() - before.getTime();
    // The same clock reading difference, give or take the rounding of Date.now() (1 ms each).
    assert.ok(Math.abs(moved - 120_000) <= 2, `expiresAt moved by ${moved} ms`);
    assert.equal((await hostSession(session.id)).timeout, hostBefore + 120_000);
    assert.equal(session.status, 'running');
    await assert.rejects(session.extendTimeout(0), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
  } finally {
    await session.close();
  }
  await assert.rejects(session.extendTimeout(1000), (error) => error.code === 'SANDBOX_INVALID_STATE');
});
