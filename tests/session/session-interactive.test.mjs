// `session.openInteractive()` on the local provider (a real local Box host, real processes): a
// terminal (PTY) in the Box behind a WebSocket. Input typed in comes back through the terminal,
// `tty` names one, resize reaches it, the token opens one socket once, and the socket ends when the
// Session closes or the Box's lifetime ends.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { useLocalHost } from '../support/local-host.mjs';
import { connectTerminal, outputMatching, type } from '../support/terminal-client.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

test('a shell in the terminal: echo comes back, tty names a terminal, resize reaches it, exit is reported', async () => {
  const session = await openSandboxSession();
  try {
    const { url, token } = await session.openInteractive();
    assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/v2\/sandboxes\/sessions\/[^/]+\/interactive\/pty_[^/?]+$/);
    assert.ok(!url.includes(token), 'the token is not in the URL');
    const terminal = await connectTerminal(url);
    terminal.ws.send(JSON.stringify({ type: 'start', token, cols: 90, rows: 30 }));
    type(terminal, 'echo h""i\n');
    await outputMatching(terminal, /[\r\n]hi\r\n/);
    type(terminal, 'tty; stty size\n');
    await outputMatching(terminal, /\/dev\/pts\/\d+\r\n30 90\r\n/);
    terminal.ws.send(JSON.stringify({ type: 'resize', cols: 120, rows: 40 }));
    // The new size is set by the Box's driver; asked until the shell sees it.
    let size;
    for (let i = 0; i < 50 && !size; i += 1) {
      terminal.output = '';
      type(terminal, 'stty size\n');
      size = (await outputMatching(terminal, /[\r\n](\d+ \d+)\r\n/))[1];
      if (size !== '40 120') size = undefined;
    }
    assert.equal(size, '40 120');
    type(terminal, 'exit 3\n');
    assert.deepEqual(await terminal.closed, { code: 1000, reason: 'exited' });
    assert.deepEqual(terminal.exit, { type: 'exit', code: 3 });
  } finally {
    await session.close();
  }
});

test('command, args, cols and rows fixed by openInteractive; a node reader sees a TTY of that size and gets the line', async () => {
  const session = await openSandboxSession();
  try {
    const { url, token } = await session.openInteractive({
      command: 'node',
      args: [
        '-e',
        "process.stdout.write([process.stdin.isTTY, process.stdout.columns, process.stdout.rows].join(' ') + '\\n'); process.stdin.once('data', (d) => { process.stdout.write('got:' + String(d).trim() + '\\n'); process.exit(0); })",
      ],
      cols: 100,
      rows: 33,
    });
    const terminal = await connectTerminal(url, token, { queryToken: true });
    terminal.ws.send(JSON.stringify({ type: 'start' }));
    await outputMatching(terminal, /true 100 33\r\n/);
    type(terminal, 'hi\n');
    await outputMatching(terminal, /got:hi\r\n/);
    await terminal.closed;
    assert.deepEqual(terminal.exit, { type: 'exit', code: 0 });
  } finally {
    await session.close();
  }
});

test('a wrong, reused or stale token is refused; start may not name another command', async () => {
  const session = await openSandboxSession();
  try {
    const { url, token } = await session.openInteractive({ command: 'cat' });
    await assert.rejects(connectTerminal(url, `${token}x`, { queryToken: true }), (error) => error.status === 401);
    // A wrong token in the start message: the socket is closed with 1008 and nothing starts.
    const wrong = await connectTerminal(url);
    wrong.ws.send(JSON.stringify({ type: 'start', token: token.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }));
    assert.equal((await wrong.closed).code, 1008);
    assert.deepEqual(wrong.messages, [{ type: 'error', message: 'invalid or expired token' }]);
    // Input before start is not taken either.
    const early = await connectTerminal(url);
    early.ws.send(JSON.stringify({ type: 'resize', cols: 10, rows: 10 }));
    assert.equal((await early.closed).code, 1008);
    // The right token still opens it (the wrong ones did not use it up), once.
    const right = await connectTerminal(url, token, { queryToken: true });
    await assert.rejects(
      connectTerminal(url, token, { queryToken: true }),
      (error) => error.status === 404 || error.status === 401,
    );
    right.ws.send(JSON.stringify({ type: 'start', command: 'sh' }));
    assert.equal((await right.closed).code, 1008);
    assert.match(right.messages[0].message, /runs the command given to openInteractive/);
    // One terminal's token does not open another.
    const other = await session.openInteractive();
    await assert.rejects(connectTerminal(other.url, token, { queryToken: true }), (error) => error.status === 401);
    // A token of a Box that stopped.
    const late = await session.openInteractive();
    await session.close();
    await assert.rejects(
      connectTerminal(late.url, late.token, { queryToken: true }),
      (error) => error.status === 410 || error.status === 404,
    );
  } finally {
    await session.close();
  }
});

test('closing the Session closes the terminal socket; so does the end of the Box lifetime', async () => {
  const session = await openSandboxSession();
  const { url, token } = await session.openInteractive({ command: 'sh', args: ['-c', 'echo ready; sleep 600'] });
  const terminal = await connectTerminal(url, token, { queryToken: true });
  terminal.ws.send(JSON.stringify({ type: 'start' }));
  await outputMatching(terminal, /ready/);
  // A socket that took its token but started nothing yet.
  const idle = await session.openInteractive();
  const waiting = await connectTerminal(idle.url, idle.token, { queryToken: true });
  await session.close();
  const closed = await terminal.closed;
  assert.equal(closed.code, 1000);
  assert.equal(terminal.exit?.type, 'exit');
  assert.notEqual(terminal.exit.code, 0);
  assert.deepEqual(await waiting.closed, { code: 1001, reason: 'the Box has stopped' });

  const short = await openSandboxSession({ timeout: 8_000 });
  try {
    const access = await short.openInteractive({ command: 'sh', args: ['-c', 'echo ready; sleep 600'] });
    const expiring = await connectTerminal(access.url, access.token, { queryToken: true });
    expiring.ws.send(JSON.stringify({ type: 'start' }));
    await outputMatching(expiring, /ready/);
    const ended = await expiring.closed;
    assert.equal(ended.code, 1000);
    assert.equal(expiring.exit?.type, 'exit');
  } finally {
    await short.close();
  }
});

test('a start the Box refuses (a long non-ASCII cwd) closes the socket with its reason, cut to what a close frame holds', async () => {
  const session = await openSandboxSession();
  try {
    const { url, token } = await session.openInteractive();
    const terminal = await connectTerminal(url, token, { queryToken: true });
    terminal.ws.send(JSON.stringify({ type: 'start', cwd: `/vercel/sandbox/${'é'.repeat(100)}` }));
    const closed = await terminal.closed;
    assert.equal(closed.code, 1008);
    assert.ok(Buffer.byteLength(closed.reason) <= 123);
    assert.match(terminal.messages[0].message, /cwd/);
    // The host is still serving.
    assert.deepEqual((await session.exec('echo', ['alive'])).stdout, 'alive\n');
  } finally {
    await session.close();
  }
});

test('bad options are refused before any request; after close the Session refuses', async () => {
  const session = await openSandboxSession();
  const bad = [
    { cols: 0 },
    { rows: 70000 },
    { cols: 1.5 },
    { args: ['x'] },
    { command: '' },
    { command: 'sh', args: 'x' },
    { shell: 'sh' },
  ];
  for (const options of bad) {
    await assert.rejects(
      session.openInteractive(options),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT',
      JSON.stringify(options),
    );
  }
  await session.close();
  await assert.rejects(session.openInteractive(), (error) => error.code === 'SANDBOX_INVALID_STATE');
});

test("isolation 'none': the terminal is a plain process of the app's user, with its input and size; stdin pipes work there too", async () => {
  const plain = await startBoxHost({ isolation: 'none' });
  configureSandbox({ provider: 'local', local: { baseUrl: plain.baseUrl, token: plain.token } });
  try {
    const session = await openSandboxSession();
    try {
      const { url, token } = await session.openInteractive({ command: 'sh', cols: 70, rows: 20 });
      const terminal = await connectTerminal(url, token, { queryToken: true });
      terminal.ws.send(JSON.stringify({ type: 'start' }));
      type(terminal, 'tty; stty size\n');
      await outputMatching(terminal, /\/dev\/pts\/\d+\r\n20 70\r\n/);
      type(terminal, 'exit 0\n');
      await terminal.closed;
      assert.deepEqual(terminal.exit, { type: 'exit', code: 0 });
      // Without isolation a Command's stdin pipe reached it as /dev/null before (spawnSpec kept it
      // for bubblewrap only): the terminal's input is that pipe.
      const cat = await session.spawn('cat', [], { stdin: true });
      await cat.writeStdin('plain\n');
      await cat.closeStdin();
      let stdout = '';
      for await (const entry of cat.logs()) stdout += entry.data;
      assert.equal(stdout, 'plain\n');
    } finally {
      await session.close();
    }
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
    await plain.close();
  }
});
