// An aborted Session exec leaves no Command running, however early the abort comes: the Command's
// id arrives on the first line of the provider's answer, and an abort before that line is kept
// until it arrives, then the Command is killed (src/provider/vercel/client.rs, stream_command).
// The built package, a real local Box host, real processes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { openSandboxSession } from '@vite-hub/sandbox';
import { useLocalHost, processesMatching } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

/** Resolves on the first turn of the event loop at which `check()` holds (at most `ms`). */
async function turnWhen(check, ms = 20_000) {
  const until = Date.now() + ms;
  while (!check()) {
    assert.ok(Date.now() < until, 'the condition held in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The host's `cmd/kill` requests of this process (the test's only Session). */
const kills = () => host.counters().requests['cmd/kill'] ?? 0;

/** Waits for a kill request past `killsBefore`, then for the processes tagged `tag` to be gone; fails if one runs on. */
async function killedAfter(killsBefore, tag) {
  await turnWhen(() => kills() > killsBefore, 10_000);
  const deadline = Date.now() + 5_000;
  while ((await processesMatching(tag)).length > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await processesMatching(tag), [], 'no process of the aborted Command runs on');
}

test('an exec aborted after its request reached the host, before the Command id came back, kills the Command', {
  timeout: 120_000,
}, async () => {
  const session = await openSandboxSession();
  try {
    for (let round = 0; round < 3; round += 1) {
      const tag = `session-abort-${randomUUID()}`;
      // Runs until it is killed: an exec that waited for its end instead of rejecting on the abort
      // would hang (the test's timeout), and a Command never killed is still in \`ps\` below.
      const script = 'setInterval(() => {}, 1000)';
      const commands = () => host.counters().requests.cmd ?? 0;
      const [cmdBefore, killsBefore] = [commands(), kills()];
      const controller = new AbortController();
      const reason = new Error('caller gave up');
      const running = session.exec('node', ['-e', script, tag], { signal: controller.signal });
      // Abort on the first turn after the host received the request: the Command is being
      // started, its id not yet answered.
      await turnWhen(() => commands() > cmdBefore);
      controller.abort(reason);
      await assert.rejects(running, (error) => error === reason);
      // The kill follows once the id arrives.
      await killedAfter(killsBefore, tag);
    }
    // The Session outlives the aborts.
    assert.deepEqual(await session.exec('node', ['-e', 'console.log("again")']), {
      exitCode: 0,
      ok: true,
      stdout: 'again\n',
      stderr: '',
    });
  } finally {
    await session.close();
  }
});

test("an exec aborted after a garbage collection still rejects with the abort and kills its Command (the abort is held strongly for the request's life)", {
  timeout: 120_000,
}, async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const session = await openSandboxSession();
  try {
    for (let round = 0; round < 5; round += 1) {
      const tag = `session-abort-gc-${randomUUID()}`;
      const killsBefore = kills();
      const controller = new AbortController();
      const reason = new Error('caller gave up');
      // Runs until killed: a lost abort leaves the exec pending (the test's timeout) and the process in `ps`.
      const running = session.exec('node', ['-e', 'setInterval(() => {}, 1000)', tag], { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 300));
      gc();
      gc();
      controller.abort(reason);
      await assert.rejects(running, (error) => error === reason);
      await killedAfter(killsBefore, tag);
    }
  } finally {
    await session.close();
  }
});
