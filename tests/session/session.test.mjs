// Sessions (openSandboxSession) end to end: the built package, a real local Box host, real
// processes. Live logs with their timing, exit state and outputs from one handle, files, the
// after-close rule, `await using`, and argument checks that send nothing to the host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { transform } from 'esbuild';
import { openSandboxSession, configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { useLocalHost, processesMatching, defineTestSandbox, NO_BWRAP } from '../support/local-host.mjs';

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

test('a spawned Command streams its output live: each entry arrives while it runs, before it goes on', {
  timeout: 120_000,
}, async () => {
  const session = await openSandboxSession();
  try {
    // After each line the command waits for the reader's answer (a file ack-<i> in the Box) and
    // gives up after 60 s: output held back until the command ends would never be answered, and
    // the command would say so. Live, not a duration: no clock is read.
    const command = await session.spawn('sh', [
      '-c',
      'for i in 1 2 3 4; do echo "tick $i"; n=0; while [ ! -e ack-$i ]; do n=$((n+1)); if [ $n -gt 1200 ]; then echo "no ack $i" >&2; exit 1; fi; sleep 0.05; done; done; echo done >&2',
    ]);
    const arrivals = [];
    for await (const entry of command.logs()) {
      arrivals.push(entry);
      const tick = /^tick (\d)\n$/.exec(entry.data);
      if (tick) await session.write(`ack-${tick[1]}`, '');
    }
    assert.deepEqual(
      arrivals.map(({ stream, data }) => ({ stream, data })),
      [
        { stream: 'stdout', data: 'tick 1\n' },
        { stream: 'stdout', data: 'tick 2\n' },
        { stream: 'stdout', data: 'tick 3\n' },
        { stream: 'stdout', data: 'tick 4\n' },
        { stream: 'stderr', data: 'done\n' },
      ],
    );
    assert.deepEqual(await command.wait(), { exitCode: 0, ok: true });
  } finally {
    await session.close();
  }
});

test('logs() replays from the start for a late reader, and wait/kill give the exit state', async () => {
  const session = await openSandboxSession();
  try {
    const command = await session.spawn('sh', ['-c', 'echo early; sleep 0.3; echo late; exit 4']);
    assert.deepEqual(await command.wait(), { exitCode: 4, ok: false });
    const replayed = [];
    for await (const entry of command.logs()) replayed.push(entry.data);
    assert.deepEqual(replayed, ['early\n', 'late\n']);

    const sleeper = await session.spawn('sleep', ['60']);
    await sleeper.kill('SIGKILL');
    assert.deepEqual(await sleeper.wait(), { exitCode: 137, ok: false });
    const stubborn = await session.spawn('sleep', ['60']);
    await stubborn.kill();
    assert.deepEqual(await stubborn.wait(), { exitCode: 143, ok: false }, 'SIGTERM by default');
  } finally {
    await session.close();
  }
});

test('exec gives exit state and both outputs from one handle; cwd, env and timeout apply', {
  timeout: 120_000,
}, async () => {
  const session = await openSandboxSession({ timeout: 60_000 });
  try {
    assert.equal(session.provider, 'local');
    assert.equal(session.status, 'running');
    assert.equal(session.cwd, '/vercel/sandbox');
    const result = await session.exec('sh', ['-c', 'echo "out $GREETING"; echo err >&2; pwd; exit 3'], {
      env: { GREETING: 'hé' },
      cwd: '/tmp',
    });
    assert.deepEqual(result, { exitCode: 3, ok: false, stdout: 'out hé\n/tmp\n', stderr: 'err\n' });
    assert.deepEqual(await session.exec('true'), { exitCode: 0, ok: true, stdout: '', stderr: '' });
    assert.deepEqual(
      await session.exec('true', [], { signal: null }),
      { exitCode: 0, ok: true, stdout: '', stderr: '' },
      'signal: null is none, as in fetch',
    );
    // The exec timeout ends `sleep 30`: SANDBOX_TIMEOUT with its 500 ms, not the command's end
    // (the test's own timeout only catches a hang).
    await assert.rejects(session.exec('sleep', ['30'], { timeout: 500 }), (error) => {
      assert.equal(error.name, 'SandboxError');
      assert.equal(error.code, 'SANDBOX_TIMEOUT');
      assert.equal(error.details?.timeoutMs, 500);
      return true;
    });
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 300);
    await assert.rejects(session.exec('sleep', ['37.25'], { signal: controller.signal }), (error) => error === reason);
    // The aborted Command does not run on in the Box.
    const deadline = Date.now() + 5000;
    while ((await processesMatching('sleep 37.25')).length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await processesMatching('sleep 37.25'), [], 'the aborted Command was killed');
  } finally {
    await session.close();
  }
});

test('a cwd the Box does not have is SANDBOX_INVALID_ARGUMENT (400), not a transport error to retry', async () => {
  const session = await openSandboxSession();
  try {
    for (const cwd of ['/nonexistent', '../../..']) {
      const error = await session.exec('pwd', [], { cwd }).then(
        () => assert.fail(`cwd ${cwd} was accepted`),
        (reason) => reason,
      );
      assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', `${cwd}: ${error.message}`);
      assert.equal(error.status, 400);
    }
    assert.equal((await session.exec('pwd', [], { cwd: '/tmp' })).stdout, '/tmp\n');
  } finally {
    await session.close();
  }
});

test('file helpers round-trip bytes and text; exists, mkdir and remove', async () => {
  const session = await openSandboxSession();
  try {
    const bytes = new Uint8Array(256).map((_, i) => i);
    await session.write('data/all-bytes.bin', bytes);
    assert.deepEqual(await session.read('data/all-bytes.bin'), bytes);
    assert.deepEqual(await session.read('/vercel/sandbox/data/all-bytes.bin'), bytes, 'relative paths start at cwd');
    await session.write('/tmp/note.txt', 'héllo €𝄞');
    assert.equal(await session.readText('/tmp/note.txt'), 'héllo €𝄞');
    assert.equal(await session.read('missing.txt'), null);
    assert.equal(await session.readText('missing.txt'), null);
    assert.equal(await session.exists('data/all-bytes.bin'), true);
    assert.equal(await session.exists('missing.txt'), false);

    await session.mkdir('one');
    await assert.rejects(
      session.mkdir('two/three'),
      (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', error.message);
        assert.equal(error.operation ?? error.details?.operation, 'mkdir');
        assert.match(
          error.message,
          /answered 400 to mkdir: parent directory does not exist: \/vercel\/sandbox\/two\/three; mkdir\(path\) without \{ recursive: true \}/,
        );
        assert.doesNotMatch(error.message, /write/);
        return true;
      },
      'not recursive: the parent is missing',
    );
    await assert.rejects(
      session.mkdir('one'),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT' && /already exists/.test(error.message),
      'not recursive: it exists',
    );
    await session.mkdir('two/three/four', { recursive: true });
    await session.mkdir('two/three/four', { recursive: true });
    await session.write('two/three/four/f.txt', 'x');
    assert.equal((await session.exec('ls', ['two/three/four'])).stdout, 'f.txt\n');

    await assert.rejects(
      session.remove('two'),
      (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', error.message);
        assert.equal(error.status, 400);
        assert.equal(error.operation ?? error.details?.operation, 'remove');
        assert.match(
          error.message,
          /^remove\("\/vercel\/sandbox\/two"\): it is a directory; pass \{ recursive: true \} to remove it and its contents$/,
        );
        return true;
      },
      'a directory needs recursive',
    );
    assert.equal(await session.exists('two/three/four/f.txt'), true, 'the refused remove removed nothing');
    await session.remove('two', { recursive: true });
    assert.equal(await session.exists('two'), false);
    await session.remove('data/all-bytes.bin');
    assert.equal(await session.exists('data/all-bytes.bin'), false);
    await session.remove('data/never-there');
  } finally {
    await session.close();
  }
});

test('close() twice (and concurrently) shares one cleanup; every operation after close rejects with SANDBOX_INVALID_STATE', async () => {
  const session = await openSandboxSession();
  const command = await session.spawn('sleep', ['60']);
  host.resetCounters();
  const [first, second] = [session.close(), session.close()];
  assert.equal(first, second, 'concurrent callers get the same cleanup');
  await Promise.all([first, second]);
  await session.close();
  assert.equal(host.counters().requests.stop, 1, 'one stop request');
  assert.equal(session.status, 'stopped');
  assert.equal((await hostSession(session.id)).status, 'stopped');

  const after = [
    ['exec', () => session.exec('true')],
    ['spawn', () => session.spawn('true')],
    ['read', () => session.read('x')],
    ['readText', () => session.readText('x')],
    ['write', () => session.write('x', 'y')],
    ['exists', () => session.exists('x')],
    ['mkdir', () => session.mkdir('x')],
    ['remove', () => session.remove('x')],
    [
      'logs',
      async () => {
        for await (const entry of command.logs()) assert.fail(`no entry expected, got ${JSON.stringify(entry)}`);
      },
    ],
    ['wait', () => command.wait()],
    ['kill', () => command.kill()],
  ];
  host.resetCounters();
  for (const [name, operation] of after) {
    await assert.rejects(operation(), (error) => {
      assert.equal(error.name, 'SandboxError', name);
      assert.equal(error.code, 'SANDBOX_INVALID_STATE', name);
      assert.equal(error.status, 409);
      assert.match(
        error.message,
        new RegExp(`^Session ${session.id} is closed; \\w+\\(\\) needs an open Session`),
        name,
      );
      return true;
    });
  }
  assert.equal(host.counters().total, 0, 'nothing reached the host after close');
});

test('`await using` closes the Box at the end of the block', async () => {
  // Node 20 cannot parse `await using` yet: esbuild lowers it to Symbol.asyncDispose calls.
  const source = `
    export async function scoped(openSandboxSession) {
      let seen;
      {
        await using session = await openSandboxSession();
        seen = session;
        await session.write('inside.txt', 'in');
      }
      return seen;
    }`;
  const { code } = await transform(source, { format: 'esm', target: 'node20', loader: 'js' });
  const { scoped } = await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
  const session = await scoped(openSandboxSession);
  assert.equal(session.status, 'stopped');
  assert.equal((await hostSession(session.id)).status, 'stopped');
});

test('bad arguments are refused with a clear SANDBOX_INVALID_ARGUMENT before any host request', async () => {
  const session = await openSandboxSession();
  try {
    host.resetCounters();
    const cases = [
      [() => session.exec(42), /exec\(command\) needs a string command/],
      [() => session.exec(''), /command must be a non-empty string/],
      [() => session.exec('echo', ['a', 7]), /args\[1\] must be a string/],
      [() => session.exec('echo', 'a b'), /args must be an array of strings/],
      [
        () => session.exec('echo', [], { timeout: -1 }),
        /exec options timeout must be a positive integer number of ms up to 2147483647, got -1/,
      ],
      [() => session.exec('echo', [], { timeout: 1.5 }), /timeout must be a positive integer/],
      [() => session.exec('echo', [], { env: { 'A=B': 'x' } }), /env name "A=B" is invalid/],
      [() => session.exec('echo', [], { env: { A: 1 } }), /env "A" must be a string/],
      [() => session.exec('echo', [], { shell: true }), /unknown exec options key "shell"/],
      [() => session.exec('echo', [], { signal: 'stop' }), /signal must be an AbortSignal/],
      [() => session.spawn(null), /spawn\(command\) needs a string command/],
      [() => session.spawn('sleep', [], { timeout: 0 }), /spawn options timeout must be a positive integer/],
      [() => session.read(5), /read\(path\) needs a string path/],
      [() => session.read(''), /read\(path\) needs a non-empty path/],
      [() => session.write('f', { not: 'bytes' }), /data must be a string or a Uint8Array/],
      [() => session.mkdir('d', { recursive: 'yes' }), /recursive must be a boolean/],
      [() => session.remove('d', { force: true }), /unknown remove options key "force"/],
      [() => openSandboxSession({ timeout: -5 }), /openSandboxSession options timeout must be a positive integer/],
      [() => openSandboxSession({ provider: 'vercel' }), /configureSandbox chose 'local'/],
      [() => openSandboxSession({ sizes: 1 }), /unknown openSandboxSession options key "sizes"/],
    ];
    for (const [operation, message] of cases) {
      await assert.rejects(operation(), (error) => {
        assert.equal(error.name, 'SandboxError');
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', String(error.message));
        assert.match(error.message, message);
        return true;
      });
    }
    await assert.rejects(openSandboxSession({ sandboxId: 'kept' }), (error) => error.code === 'SANDBOX_NOT_SUPPORTED');
    const command = await session.spawn('true');
    host.resetCounters();
    await assert.rejects(
      command.kill('SIGWHATEVER'),
      (error) => error.code === 'SANDBOX_INVALID_ARGUMENT' && /unknown signal "SIGWHATEVER"/.test(error.message),
    );
    await assert.rejects(command.kill(99), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
    assert.deepEqual(host.counters(), { requests: {}, total: 0 }, 'no request reached the host');
  } finally {
    await session.close();
  }
});

test('a Session follows the provider configureSandbox chose: a host that is gone fails clearly', async () => {
  configureSandbox({ provider: 'local', local: { baseUrl: 'http://127.0.0.1:9', token: 'nope-nope-nope' } });
  try {
    await assert.rejects(openSandboxSession(), (error) => {
      assert.equal(error.name, 'SandboxError');
      assert.match(error.code, /SANDBOX_TRANSPORT_ERROR|SANDBOX_PROVIDER_UNAVAILABLE/);
      assert.equal(error.provider, 'local');
      assert.doesNotMatch(error.message, /nope-nope/, 'the token is not in the message');
      return true;
    });
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test('hostile arguments (throwing getters, Proxy traps, huge lengths) reject with a SandboxError and the Session still works', async () => {
  const thrower = () => {
    throw new Error('trap');
  };
  const trapAll = new Proxy(
    {},
    { get: thrower, ownKeys: thrower, getPrototypeOf: thrower, has: thrower, getOwnPropertyDescriptor: thrower },
  );
  const trapped = (keys) =>
    Object.defineProperties({}, Object.fromEntries(keys.map((key) => [key, { get: thrower, enumerable: true }])));
  const session = await openSandboxSession();
  try {
    host.resetCounters();
    const cases = {
      'args proxy': () => session.exec('echo', new Proxy(['a'], { get: thrower })),
      'args claiming a billion entries': () =>
        session.exec('echo', new Proxy([], { get: (t, k) => (k === 'length' ? 1e9 : undefined) })),
      'options proxy': () => session.exec('echo', [], trapAll),
      'throwing option getters': () => session.exec('echo', [], trapped(['cwd', 'env', 'timeout'])),
      'env proxy': () => session.exec('echo', [], { env: trapAll }),
      'throwing env value': () => session.exec('echo', [], { env: trapped(['A']) }),
      'spawn options proxy': () => session.spawn('echo', [], trapAll),
      'path proxy': () => session.read(trapAll),
      'write data proxy': () => session.write('f', trapAll),
      'mkdir options proxy': () => session.mkdir('d', trapAll),
      'remove options getters': () => session.remove('d', trapped(['recursive'])),
      'open options proxy': () => openSandboxSession(trapAll),
    };
    for (const [label, operation] of Object.entries(cases)) {
      let returned;
      assert.doesNotThrow(() => {
        returned = operation();
      }, label);
      await assert.rejects(
        returned,
        (error) => {
          assert.equal(error?.name, 'SandboxError', `${label}: ${error?.stack ?? error}`);
          assert.match(error.code, /^SANDBOX_/, label);
          return true;
        },
        label,
      );
    }
    assert.equal(host.counters().total, 0, 'nothing reached the host');
    assert.equal((await session.exec('echo', ['still fine'])).stdout, 'still fine\n');
  } finally {
    await session.close();
  }
});

test('a Session whose Box lifetime ran out is expired: status says so and operations reject with SANDBOX_INVALID_STATE naming the lifetime', async () => {
  // By the clock: the host stops the Box at its lifetime; the handle notices without a request.
  const short = await openSandboxSession({ timeout: 1500 });
  try {
    assert.equal(short.status, 'running');
    assert.equal((await short.exec('true')).ok, true);
    await new Promise((resolve) => setTimeout(resolve, 1800));
    assert.equal(short.status, 'expired');
    host.resetCounters();
    for (const operation of [
      () => short.exec('true'),
      () => short.read('x'),
      () => short.write('x', 'y'),
      () => short.spawn('true'),
    ]) {
      await assert.rejects(operation(), (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_STATE');
        assert.equal(error.status, 409);
        assert.equal(error.details?.timeoutMs ?? error.timeoutMs, 1500, JSON.stringify(error));
        assert.match(
          error.message,
          new RegExp(
            `^Session ${short.id} expired: its Box lifetime of 1500ms ran out; \\w+\\(\\) needs an open Session`,
          ),
        );
        return true;
      });
    }
    assert.equal(host.counters().total, 0, 'an expired Session sends nothing');
  } finally {
    await short.close();
  }
  assert.equal(short.status, 'stopped', 'close() after expiry still stops cleanly');

  // By the provider's 410 (the Box stopped before the clock said so): the first operation notices.
  const session = await openSandboxSession({ timeout: 60_000 });
  try {
    const stopped = await fetch(`${host.baseUrl}/v2/sandboxes/sessions/${session.id}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${host.token}` },
    });
    assert.equal(stopped.status, 200);
    assert.equal(session.status, 'running', 'nothing told the handle yet');
    await assert.rejects(session.exec('true'), (error) => {
      assert.equal(error.code, 'SANDBOX_INVALID_STATE', error.message);
      assert.doesNotMatch(error.message, /answered 410/);
      assert.match(
        error.message,
        /expired: the provider stopped its Box \(410: another handle of it closed it, or its lifetime of 60000ms ran out\); exec\(\) needs an open Session/,
      );
      return true;
    });
    assert.equal(session.status, 'expired');
    await assert.rejects(
      session.read('x'),
      (error) => error.code === 'SANDBOX_INVALID_STATE' && /expired/.test(error.message),
    );
  } finally {
    await session.close();
  }
});

test('exec says when an output lost its beginning: truncated: true past 16 MiB, absent otherwise', async () => {
  const session = await openSandboxSession({ timeout: 120_000 });
  try {
    const whole = await session.exec('sh', ['-c', 'head -c 1000 /dev/zero | tr "\\0" a']);
    assert.equal(whole.stdout.length, 1000);
    assert.equal('truncated' in whole, false);
    // 16 MiB + 10 bytes: the first 10 are dropped.
    const cut = await session.exec('sh', ['-c', 'printf 0123456789; head -c 16777216 /dev/zero | tr "\\0" b']);
    assert.equal(cut.truncated, true);
    assert.equal(cut.stdout.length, 16 * 1024 * 1024);
    assert.equal(cut.stdout.slice(0, 3), 'bbb');
  } finally {
    await session.close();
  }
});

test('absolute paths: the file helpers reach only where commands see the same files (work dir, /tmp, home); elsewhere a clear SANDBOX_INVALID_ARGUMENT', async (t) => {
  const session = await openSandboxSession();
  try {
    await session.write('/tmp/shared.txt', 'seen by both');
    assert.equal(await session.readText('/vercel/sandbox/../../tmp/shared.txt'), 'seen by both');
    // Under bubblewrap the commands see the Box's own /tmp and home (without it, the host's).
    await t.test("under bubblewrap, commands see the helpers' /tmp and home", { skip: NO_BWRAP }, async () => {
      assert.equal((await session.exec('cat', ['/tmp/shared.txt'])).stdout, 'seen by both');
      await session.exec('sh', ['-c', 'echo from-command > /home/box/from-command.txt']);
      assert.equal(await session.readText('/home/box/from-command.txt'), 'from-command\n');
    });

    // Commands see the host's read-only /etc; the helpers would have seen the Box's own empty root.
    assert.equal((await session.exec('test', ['-e', '/etc/passwd'])).exitCode, 0);
    host.resetCounters();
    const refused = [
      ['read', () => session.read('/etc/passwd')],
      ['exists', () => session.exists('/etc/passwd')],
      ['write', () => session.write('/etc/vite-hub-note', 'x')],
      ['mkdir', () => session.mkdir('/opt/vite-hub', { recursive: true })],
      ['remove', () => session.remove('/etc/passwd')],
      ['read', () => session.read('../../etc/passwd')],
    ];
    for (const [name, operation] of refused) {
      await assert.rejects(operation(), (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', `${name}: ${error.message}`);
        assert.match(
          error.message,
          new RegExp(
            `^${name}\\(".*"\\): on the local Box host the file helpers reach /vercel/sandbox, /tmp and /home/box only`,
          ),
        );
        return true;
      });
    }
    assert.equal(host.counters().total, 0, 'refused before any request');
  } finally {
    await session.close();
  }
});

test("a path the Box made unusable for the helpers (a symlink out of the Box, a directory, a FIFO) is the caller's SANDBOX_INVALID_ARGUMENT 400 naming the operation, not a 502 transport error", async () => {
  const session = await openSandboxSession();
  try {
    await session.exec('sh', ['-c', 'ln -s /etc/passwd out-link && mkdir a-dir && mkfifo a-fifo']);
    const refused = [
      ['read', () => session.read('out-link'), /path resolves outside the Box/],
      ['read', () => session.readText('a-dir'), /not a regular file/],
      ['read', () => session.read('a-fifo'), /not a regular file/],
      ['write', () => session.write('out-link', 'x'), /cannot write/],
      ['write', () => session.write('a-dir', 'x'), /cannot write/],
      ['write', () => session.write('a-fifo', 'x'), /not a regular file/],
    ];
    for (const [operation, call, message] of refused) {
      await assert.rejects(
        call(),
        (error) => {
          assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', `${operation}: ${error.message}`);
          assert.equal(error.status, 400);
          assert.equal(error.operation ?? error.details?.operation, operation);
          assert.match(error.message, message);
          return true;
        },
        `${operation} ${call}`,
      );
    }
    assert.equal((await session.exec('true')).exitCode, 0, 'the Session still works');
  } finally {
    await session.close();
  }
});

test('a wrong local Box host token is SANDBOX_PROVIDER_AUTH (the host answered 401), for a Run and a Session, without the token in the message', async () => {
  defineTestSandbox('auth/any', 'export default () => 1;');
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: 'wrong-token-1234' } });
  try {
    const response = await runSandbox('auth/any');
    assert.equal(response.status, 500);
    const { error } = await response.json();
    assert.equal(error.code, 'SANDBOX_PROVIDER_AUTH', error.message);
    assert.equal(error.details.status, 401);
    assert.match(error.message, /local answered 401 to create: a valid bearer token is required; check local\.token/);
    assert.doesNotMatch(error.message, /wrong-token/);
    await assert.rejects(openSandboxSession(), (thrown) => {
      assert.equal(thrown.code, 'SANDBOX_PROVIDER_AUTH');
      assert.equal(thrown.status, 500);
      return true;
    });
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test("a late logs() reader of a Command that printed past the host's 4 MiB replay history is told where the replay stops", async () => {
  const session = await openSandboxSession({ timeout: 120_000 });
  try {
    const command = await session.spawn('sh', [
      '-c',
      'head -c 8388608 /dev/zero | tr "\\0" a; echo; echo after-the-cut',
    ]);
    assert.deepEqual(await command.wait(), { exitCode: 0, ok: true });
    let bytes = 0;
    const markers = [];
    let sawAfter = false;
    for await (const entry of command.logs()) {
      if (entry.data.startsWith('[vite-hub-sandbox] log replay cut')) markers.push({ at: bytes, entry });
      else bytes += entry.data.length;
      if (entry.data.includes('after-the-cut')) sawAfter = true;
    }
    assert.equal(markers.length, 1, 'one marker');
    assert.equal(markers[0].entry.stream, 'stderr');
    assert.match(markers[0].entry.data, /printed more than the 4194304 bytes the Box host keeps/);
    assert.ok(bytes <= 4 * 1024 * 1024, `replayed ${bytes} bytes`);
    assert.equal(markers[0].at, bytes, 'the marker is the last entry of the replay');
    assert.equal(sawAfter, false, 'output past the cut is not replayed');
  } finally {
    await session.close();
  }
});

test('Cloudflare in local development (SANDBOX_LOCAL_URL/TOKEN, a Box of the local Box host) follows the same path rule, and a wrong token is SANDBOX_PROVIDER_AUTH', async (t) => {
  configureSandbox({
    provider: 'cloudflare',
    env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
  });
  try {
    const session = await openSandboxSession();
    try {
      assert.equal(session.provider, 'cloudflare');
      assert.equal(session.cwd, '/workspace');
      await session.write('/tmp/cf-note.txt', 'cf');
      assert.equal(await session.readText('/tmp/cf-note.txt'), 'cf');
      await session.write('notes/a.txt', 'in the work dir');
      assert.equal(await session.readText('/workspace/notes/a.txt'), 'in the work dir');
      await t.test("under bubblewrap, commands see the helpers' /tmp", { skip: NO_BWRAP }, async () => {
        assert.equal((await session.exec('cat', ['/tmp/cf-note.txt'])).stdout, 'cf');
      });
      await assert.rejects(session.read('/etc/passwd'), (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
        assert.match(error.message, /file helpers reach \/workspace, \/tmp and \/home\/box only/);
        return true;
      });
    } finally {
      await session.close();
    }
    configureSandbox({
      provider: 'cloudflare',
      env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: 'wrong-token-1234' },
    });
    await assert.rejects(openSandboxSession(), (error) => {
      assert.equal(error.code, 'SANDBOX_PROVIDER_AUTH', error.message);
      assert.match(error.message, /answered 401.*check SANDBOX_LOCAL_TOKEN/);
      assert.doesNotMatch(error.message, /wrong-token/);
      return true;
    });
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});
