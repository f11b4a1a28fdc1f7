// sandboxId end to end (issue 11 item 4): one Box reused across Runs on the local provider, Runs
// on one id serialized, each Run's directory removed after it, closeSandbox. The built package, a
// real local Box host, real processes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runSandbox, startSandbox, closeSandbox, configureSandbox } from '@vite-hub/sandbox';
import { useLocalHost, defineTestSandbox, hostApi } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
  // cwd is <Box cwd>/.vite-hub-runs/<run>/project: three levels up is the kept Box's cwd.
  defineTestSandbox(
    'kept/files',
    `import fs from 'node:fs';
    export default (payload) => {
      const before = fs.existsSync('../../../kept.txt') ? fs.readFileSync('../../../kept.txt', 'utf8') : null;
      if (payload.write) fs.writeFileSync('../../../kept.txt', payload.write);
      fs.writeFileSync('scratch.txt', 'run files');
      return { before, runs: fs.readdirSync('../..'), run: fs.readdirSync('..').sort() };
    };`,
  );
  defineTestSandbox(
    'kept/slow',
    `export default async (payload) => {
      const start = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 600));
      return { id: payload, start, end: Date.now() };
    };`,
  );
});
after(async () => {
  await host.close();
});

const stops = () => host.counters().requests.stop ?? 0;

test('two Runs with one sandboxId share the Box; each Run starts in a clean directory of its own', async () => {
  host.resetCounters();
  const first = await runSandbox('kept/files', { write: 'from run 1' }, { sandboxId: 'share-a' });
  assert.equal(first.status, 200);
  const one = await first.json();
  assert.equal(one.before, null);
  assert.deepEqual(one.run, ['.vite-hub', 'project']);
  const second = await runSandbox('kept/files', {}, { sandboxId: 'share-a' });
  const two = await second.json();
  assert.equal(two.before, 'from run 1', 'a file written outside the Run directory is seen by the next Run');
  assert.equal(two.runs.length, 1, `only this Run's directory is there: ${JSON.stringify(two.runs)}`);
  assert.notEqual(two.runs[0], one.runs[0]);
  assert.deepEqual(two.run, ['.vite-hub', 'project']);
  assert.equal(host.counters().requests.create, 1, 'one Box for both Runs');
  assert.equal(stops(), 0, 'the kept Box is not stopped after a Run');
  // Another id is another Box.
  const other = await (await runSandbox('kept/files', {}, { sandboxId: 'share-b' })).json();
  assert.equal(other.before, null);
  assert.equal(host.counters().requests.create, 2);
  assert.equal(await closeSandbox('share-a'), true);
  assert.equal(await closeSandbox('share-b'), true);
  assert.equal(stops(), 2);
  assert.equal(await closeSandbox('share-a'), false, 'nothing is kept under a closed id');
  // After closeSandbox the id starts a fresh Box.
  const fresh = await (await runSandbox('kept/files', {}, { sandboxId: 'share-a' })).json();
  assert.equal(fresh.before, null);
  assert.equal(await closeSandbox('share-a'), true);
});

test('concurrent Runs on one sandboxId take turns; other ids run alongside', async () => {
  host.resetCounters();
  const results = await Promise.all([
    runSandbox('kept/slow', 'a', { sandboxId: 'turns' }),
    runSandbox('kept/slow', 'b', { sandboxId: 'turns' }),
    runSandbox('kept/slow', 'c', { sandboxId: 'turns' }),
    runSandbox('kept/slow', 'x', { sandboxId: 'elsewhere' }),
  ]);
  const runs = await Promise.all(results.map((r) => r.json()));
  const turns = runs.filter((r) => r.id !== 'x').sort((p, q) => p.start - q.start);
  for (let i = 1; i < turns.length; i += 1) {
    assert.ok(
      turns[i].start >= turns[i - 1].end,
      `Run ${turns[i].id} started at ${turns[i].start}, before ${turns[i - 1].id} ended at ${turns[i - 1].end}`,
    );
  }
  const other = runs.find((r) => r.id === 'x');
  assert.ok(other.start < turns.at(-1).start, 'a Run on another id does not wait for them');
  assert.equal(host.counters().requests.create, 2);
  assert.equal(await closeSandbox('turns'), true);
  assert.equal(await closeSandbox('elsewhere'), true);
});

test('waiting for a kept Box is abortable with the caller signal', async () => {
  const busy = runSandbox('kept/slow', 'holder', { sandboxId: 'abortable' });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const controller = new AbortController();
  const waiting = runSandbox('kept/slow', 'waiter', { sandboxId: 'abortable', signal: controller.signal });
  setTimeout(() => controller.abort(new Error('stop waiting')), 100);
  await assert.rejects(waiting, /stop waiting/);
  assert.equal((await busy).status, 200);
  assert.equal(await closeSandbox('abortable'), true);
});

test('bad sandboxId and closeSandbox arguments are clear errors', async () => {
  const response = await runSandbox('kept/slow', 'x', { sandboxId: '' });
  assert.equal(response.status, 400);
  assert.match((await response.json()).error.message, /sandboxId must be a non-empty string/);
  await assert.rejects(closeSandbox(''), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
  await assert.rejects(closeSandbox(42), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
});

/**
 * Configures the local provider through a fetch that records each Box session id the runtime
 * talks to (in first-use order); `intercept(request)` may answer a request itself.
 */
function recordingProvider(intercept = () => null) {
  const sessions = [];
  const fetch = (input, init) => {
    const request = new Request(input, init);
    const sid = new URL(request.url).pathname.match(/^\/v2\/sandboxes\/sessions\/([^/]+)\//)?.[1];
    if (sid && !sessions.includes(sid)) sessions.push(sid);
    return intercept(request) ?? globalThis.fetch(request);
  };
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, fetch });
  return sessions;
}

test('a kept Box its provider stopped is replaced once by the Run that finds out, and that Run succeeds', async () => {
  const sessions = recordingProvider();
  try {
    const first = startSandbox('kept/files', { write: 'old Box' }, { sandboxId: 'vanish' });
    assert.equal((await first.response()).status, 200);
    await first.closed();
    // Stopped behind the runtime's back, as a provider does (its host restarted, its lifetime ended).
    assert.equal((await hostApi(host, 'POST', `/v2/sandboxes/sessions/${sessions[0]}/stop`)).status, 200);
    const response = await runSandbox('kept/files', {}, { sandboxId: 'vanish' });
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(body.before, null, "a new Box, without the old one's files");
    assert.equal(sessions.length, 2);
    assert.equal((await runSandbox('kept/files', {}, { sandboxId: 'vanish' })).status, 200);
    assert.equal(sessions.length, 2, 'the new Box is the kept one');
  } finally {
    await closeSandbox('vanish');
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test('a Run on a kept Box cut by its timeout while a request was in transit: that Box is closed, so the late request leaves nothing for the next Run', {
  timeout: 60_000,
}, async () => {
  defineTestSandbox(
    'kept/runs',
    `import fs from 'node:fs'; export default () => ({ runs: fs.readdirSync('../..') });`,
    {
      manifest: { vitehub: { sandbox: { timeout: 1500 } } },
    },
  );
  let delivered;
  const late = new Promise((resolve) => (delivered = resolve));
  let holdNext = false;
  // The file write of the cut Run leaves before the deadline and arrives after it, and after the
  // Run's directory was removed: the runtime's abort rejects its fetch, but cannot call back a
  // request the provider already has. Sent 2.5 s later without the Run's signal.
  const sessions = recordingProvider((request) => {
    if (!holdNext || !request.url.endsWith('/fs/write')) return null;
    holdNext = false;
    const copy = new Request(request, { signal: new AbortController().signal });
    setTimeout(
      () =>
        globalThis
          .fetch(copy)
          .then(
            (answer) => answer.arrayBuffer(),
            () => {},
          )
          .finally(delivered),
      2500,
    );
    return new Promise((resolve, reject) =>
      request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }),
    );
  });
  try {
    assert.equal((await runSandbox('kept/runs', {}, { sandboxId: 'in-transit' })).status, 200);
    holdNext = true;
    const cut = await runSandbox('kept/runs', {}, { sandboxId: 'in-transit' });
    assert.equal(cut.status, 504, await cut.clone().text());
    await late;
    const next = await runSandbox('kept/runs', {}, { sandboxId: 'in-transit' });
    const body = await next.json();
    assert.equal(next.status, 200, JSON.stringify(body));
    assert.equal(body.runs.length, 1, `the late write made a Run directory in a Box a later Run got: ${body.runs}`);
    assert.equal(sessions.length, 2, "the cut Run's Box was closed, the next Run got a new one");
  } finally {
    await closeSandbox('in-transit');
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

for (const when of ['before its rm arrives', 'while its rm runs']) {
  test(`a kept Box its provider stops while the Run gives it back (${when}) is no failure to report: closed() resolves and the next Run gets a new Box`, async () => {
    let armed = true;
    const stop = (request) =>
      hostApi(host, 'POST', `/v2/sandboxes/sessions/${new URL(request.url).pathname.split('/')[4]}/stop`);
    const sessions = recordingProvider((request) => {
      if (!armed || !request.url.endsWith('/cmd')) return null;
      return (async () => {
        if ((await request.clone().json()).command !== 'rm') return fetch(request);
        armed = false;
        if (when === 'before its rm arrives') {
          assert.equal((await stop(request)).status, 200);
          return fetch(request);
        }
        const answer = fetch(request);
        setTimeout(() => stop(request), 0);
        return answer;
      })();
    });
    const id = `stopped-at-release-${sessions.length}-${when.length}`;
    try {
      const run = startSandbox('kept/files', {}, { sandboxId: id });
      assert.equal((await run.response()).status, 200);
      await run.closed();
      assert.equal(armed, false, 'the Box was stopped as the Run gave it back');
      assert.equal((await runSandbox('kept/files', {}, { sandboxId: id })).status, 200);
      assert.equal(sessions.length, 2);
    } finally {
      await closeSandbox(id);
      configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
    }
  });
}
