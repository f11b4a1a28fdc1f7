// executionAuthority per provider, from resolveSandboxRunner (before any Box exists) and from an
// opened Session: the local Box host under bubblewrap and without it (its own report, one rule for
// both), Vercel per networkPolicy form (contract §2 table), and Cloudflare in real workerd
// (miniflare, the workerd entry of the package, the real Sandbox Durable Object whose container is
// a Box of the local Box host), where a Session also runs Commands and file operations.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { configureSandbox, openSandboxSession, resolveSandboxRunner } from '@vite-hub/sandbox';
import { defineTestSandbox, hasBwrap } from '../support/local-host.mjs';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';
import { hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';

/** An allow-all Box has a network of its own (slirp4netns installed): reported 'restricted'. */
const boxNetwork = (await hostFeatures()).netTool !== null;

const MANAGED = {
  credentials: 'unknown',
  environment: 'selected',
  filesystem: { access: 'read-write', scope: 'sandbox' },
  processes: 'arbitrary',
};

function assertFrozen(authority) {
  assert.ok(Object.isFrozen(authority), 'frozen');
  assert.ok(Object.isFrozen(authority.filesystem), 'filesystem frozen');
  assert.throws(() => {
    authority.network = 'none';
  }, TypeError);
}

before(() => {
  defineTestSandbox('authority/echo', 'export default (payload) => payload;');
});

const isolations = hasBwrap ? ['bubblewrap', 'none'] : ['none'];

for (const isolation of isolations) {
  describe(`local Box host (isolation: ${isolation})`, () => {
    let host;
    before(async () => {
      host = await startBoxHost({ isolation });
    });
    after(async () => {
      await host?.close();
    });

    for (const networkPolicy of [undefined, 'deny-all']) {
      test(`networkPolicy ${networkPolicy ?? 'unset'}: the runner (no Box opened) and a Session report what the host applies`, async () => {
        configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token, networkPolicy } });
        // The Boxes of earlier Runs are stopped after their Responses: wait for those stops.
        const until = Date.now() + 5000;
        while ((host.counters().requests.stop ?? 0) < (host.counters().requests.create ?? 0) && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        host.resetCounters();
        if (isolation === 'none' && networkPolicy === 'deny-all') {
          // A policy the host cannot enforce is refused, never silently ignored.
          for (const attempt of [() => resolveSandboxRunner('authority/echo'), () => openSandboxSession()]) {
            await assert.rejects(attempt(), (error) => {
              assert.equal(error.code, 'SANDBOX_PROVIDER_UNAVAILABLE');
              assert.match(
                error.message,
                /deny-all' cannot be enforced: the local Box host runs Boxes without isolation/,
              );
              return true;
            });
          }
          return;
        }
        const runner = await resolveSandboxRunner('authority/echo');
        assert.deepEqual(
          host.counters().requests,
          { 'execution-authority': 1 },
          'the runner asked the host and opened no Box',
        );
        assert.equal(runner.name, 'authority/echo');
        assert.equal(runner.provider, 'local');
        assertFrozen(runner.executionAuthority);
        const expected =
          isolation === 'bubblewrap'
            ? {
                credentials: 'none',
                environment: 'selected',
                filesystem: { access: 'read-write', scope: 'sandbox' },
                isolation: 'process',
                network: networkPolicy === 'deny-all' ? 'none' : boxNetwork ? 'restricted' : 'unrestricted',
                processes: 'restricted',
              }
            : {
                credentials: 'ambient',
                environment: 'ambient',
                filesystem: { access: 'read-write', scope: 'host' },
                isolation: 'none',
                network: 'unrestricted',
                processes: 'arbitrary',
              };
        assert.deepEqual(runner.executionAuthority, expected);

        const session = await openSandboxSession();
        try {
          assert.deepEqual(session.executionAuthority, expected, 'the Box got what the runner said');
          assertFrozen(session.executionAuthority);
          if (isolation === 'bubblewrap' && networkPolicy === 'deny-all') {
            // The report is backed by the Box: no network interface but loopback.
            const { stdout } = await session.exec('cat', ['/proc/net/dev']);
            assert.deepEqual(
              stdout
                .split('\n')
                .slice(2)
                .filter(Boolean)
                .map((l) => l.trim().split(':')[0]),
              ['lo'],
            );
          }
        } finally {
          await session.close();
        }
        assert.deepEqual(await runner.run({ ok: 1 }), { ok: 1 }, 'run resolves to the decoded result');
      });
    }
  });
}

describe('resolveSandboxRunner', () => {
  let host;
  before(async () => {
    host = await startBoxHost({});
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  });
  after(async () => {
    await host?.close();
  });

  test("an unknown name is SANDBOX_NOT_FOUND with runSandbox's message, before any request", async () => {
    defineTestSandbox('authority/known', 'export default () => 1;');
    host.resetCounters();
    await assert.rejects(resolveSandboxRunner('authority/knwon'), (error) => {
      assert.equal(error.name, 'SandboxError');
      assert.equal(error.code, 'SANDBOX_NOT_FOUND');
      assert.match(error.message, /authority\/knwon/);
      assert.match(error.message, /authority\/known/, 'the closest name is suggested, as runSandbox does');
      return true;
    });
    await assert.rejects(resolveSandboxRunner(7), (error) => error.code === 'SANDBOX_INVALID_ARGUMENT');
    assert.equal(host.counters().total, 0);
  });

  test("run decodes 204, bytes and JSON, and throws the Run's SandboxError instead of a Response", async () => {
    defineTestSandbox('authority/nothing', 'export default () => {};');
    defineTestSandbox('authority/bytes', 'export default () => new Uint8Array([1, 2, 255]);');
    defineTestSandbox('authority/fails', 'export default () => { throw new RangeError("out of range here"); };');
    assert.equal(await (await resolveSandboxRunner('authority/nothing')).run(), undefined);
    assert.deepEqual(await (await resolveSandboxRunner('authority/bytes')).run(), new Uint8Array([1, 2, 255]));
    const failing = await resolveSandboxRunner('authority/fails');
    await assert.rejects(failing.run({}), (error) => {
      assert.ok(!(error instanceof Response));
      assert.equal(error.name, 'SandboxError');
      assert.equal(error.code, 'SANDBOX_HANDLER_ERROR');
      assert.equal(error.status, 500);
      assert.equal(error.message, 'out of range here');
      return true;
    });
    await assert.rejects(
      failing.run(1n),
      (error) => error.code === 'SANDBOX_SERIALIZATION_ERROR' && error.status === 400,
    );
  });
});

describe('Vercel', () => {
  let host;
  before(async () => {
    host = await startBoxHost({});
  });
  after(async () => {
    await host?.close();
  });

  const forms = [
    [undefined, 'unrestricted'],
    ['allow-all', 'unrestricted'],
    ['deny-all', 'none'],
    [{ allow: ['api.example.com', '*'] }, 'unrestricted'],
    [{ allow: { '*': [] } }, 'unrestricted'],
    [{ allow: ['api.example.com'] }, 'restricted'],
    [{ allow: { 'api.example.com': [{ transform: [{ headers: { 'x-key': 'k' } }] }] } }, 'restricted'],
    [{ subnets: { deny: ['10.0.0.0/8'] } }, 'restricted'],
    [{ subnets: { allow: ['192.168.0.0/16'] } }, 'restricted'],
    [{ allow: [] }, 'unknown'],
  ];
  for (const [networkPolicy, network] of forms) {
    test(`networkPolicy ${JSON.stringify(networkPolicy) ?? 'unset'} → network '${network}', microvm, nothing sent`, async () => {
      configureSandbox({
        provider: 'vercel',
        vercel: {
          token: 'vercel-test-token',
          teamId: 'team_test',
          projectId: 'prj_test',
          baseUrl: host.baseUrl,
          networkPolicy,
        },
      });
      host.resetCounters();
      const runner = await resolveSandboxRunner('authority/echo');
      assert.equal(runner.provider, 'vercel');
      assert.deepEqual(runner.executionAuthority, { ...MANAGED, isolation: 'microvm', network });
      assertFrozen(runner.executionAuthority);
      assert.equal(host.counters().total, 0, 'resolving asked no provider');
    });
  }

  test('a Vercel Session carries the same executionAuthority (the local Box host speaking the Vercel REST)', async () => {
    configureSandbox({
      provider: 'vercel',
      vercel: {
        token: host.token,
        teamId: 'team_test',
        projectId: 'prj_test',
        baseUrl: host.baseUrl,
        networkPolicy: 'deny-all',
      },
    });
    const session = await openSandboxSession({ provider: 'vercel' });
    try {
      assert.equal(session.provider, 'vercel');
      assert.deepEqual(session.executionAuthority, { ...MANAGED, isolation: 'microvm', network: 'none' });
      assert.equal((await session.exec('echo', ['vercel'])).stdout, 'vercel\n');
    } finally {
      await session.close();
    }
  });
});

describe('Cloudflare (workerd, the real Sandbox Durable Object)', () => {
  const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, registerSandbox, resolveSandboxRunner, openSandboxSession } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

registerSandbox('cf/echo', { files: [{ path: 'package.json', content: '{"type":"module"}' }, { path: 'index.mjs', content: 'export default (p) => p;' }] });

const attempt = async (f) => {
  try {
    return { value: await f() };
  } catch (error) {
    return { error: { name: error.name, code: error.code, message: error.message } };
  }
};

export default {
  async fetch(request, env) {
    configureSandbox({ provider: 'cloudflare', env });
    const { pathname } = new URL(request.url);
    if (pathname === '/runner') {
      const runner = await resolveSandboxRunner('cf/echo');
      return Response.json({ name: runner.name, provider: runner.provider, executionAuthority: runner.executionAuthority,
        frozen: Object.isFrozen(runner.executionAuthority), result: await runner.run({ via: 'runner' }) });
    }
    const steps = {};
    const session = await openSandboxSession();
    steps.open = { id: session.id, provider: session.provider, cwd: session.cwd, status: session.status, executionAuthority: session.executionAuthority };
    steps.exec = await attempt(() => session.exec('sh', ['-c', 'echo "out $X"; echo err >&2; exit 2'], { env: { X: 'cf' } }));
    await session.write('dir/bytes.bin', new Uint8Array([0, 1, 254, 255]));
    steps.read = Array.from(await session.read('dir/bytes.bin'));
    steps.missing = await session.read('dir/none.bin');
    steps.exists = [await session.exists('dir/bytes.bin'), await session.exists('dir/none.bin')];
    await session.mkdir('a/b/c', { recursive: true });
    steps.mkdir = await session.exists('a/b/c');
    await session.remove('a', { recursive: true });
    await session.remove('dir/bytes.bin');
    steps.removed = [await session.exists('a'), await session.exists('dir/bytes.bin')];
    const command = await session.spawn('sh', ['-c', 'echo a; sleep 0.5; echo b >&2; exit 7']);
    const entries = [];
    for await (const entry of command.logs()) entries.push(entry);
    let replay = 0;
    for await (const entry of command.logs()) replay += entry.data.length;
    steps.spawn = { entries, wait: await command.wait(), replay };
    const again = await session.command(command.id);
    steps.command = { id: again.id === command.id, wait: await again.wait() };
    steps.stdin = await attempt(() => session.spawn('cat', [], { stdin: true }));
    steps.execStdin = await attempt(() => session.exec('cat', [], { stdin: 'x' }));
    steps.extendTimeout = await attempt(() => session.extendTimeout(60000));
    steps.openInteractive = await attempt(() => session.openInteractive());
    steps.expiresAt = session.expiresAt === undefined;
    const sleeper = await session.spawn('sleep', ['60']);
    steps.killSigkill = await attempt(() => sleeper.kill('SIGKILL'));
    await sleeper.kill();
    steps.killed = await sleeper.wait();
    await Promise.all([session.close(), session.close()]);
    steps.status = session.status;
    steps.afterClose = await attempt(() => session.exec('true'));
    return Response.json(steps);
  },
};
`;

  let host;
  let boxRoot;
  let miniflare;
  let worker;
  before(async () => {
    worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-session');
    ({ host, boxRoot, miniflare } = worker);
  });
  after(async () => {
    await worker?.close();
  });

  const boxes = () => fs.readdirSync(boxRoot).filter((n) => n.startsWith('vite-hub-box-'));

  test('the runner reports container / unknown network and opens no Box; run decodes the result', async () => {
    host.resetCounters();
    const response = await miniflare.dispatchFetch('http://worker.test/runner');
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.deepEqual(body.executionAuthority, { ...MANAGED, isolation: 'container', network: 'unknown' });
    assert.equal(body.frozen, true);
    assert.equal(body.provider, 'cloudflare');
    assert.deepEqual(body.result, { via: 'runner' });
    // The Box is destroyed after the Response (under waitUntil).
    const until = Date.now() + 5000;
    while (boxes().length > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.deepEqual(boxes(), []);
  });

  test('a Session in the workerd entry: exec, spawn with logs/wait/kill, files, close twice, after-close; its Box is destroyed', async () => {
    const response = await miniflare.dispatchFetch('http://worker.test/session');
    const steps = await response.json();
    assert.equal(response.status, 200, JSON.stringify(steps));
    assert.equal(steps.open.provider, 'cloudflare');
    assert.equal(steps.open.cwd, '/workspace');
    assert.equal(steps.open.status, 'running');
    assert.deepEqual(steps.open.executionAuthority, { ...MANAGED, isolation: 'container', network: 'unknown' });
    assert.deepEqual(steps.exec, { value: { exitCode: 2, ok: false, stdout: 'out cf\n', stderr: 'err\n' } });
    assert.deepEqual(steps.read, [0, 1, 254, 255]);
    assert.equal(steps.missing, null);
    assert.deepEqual(steps.exists, [true, false]);
    assert.equal(steps.mkdir, true);
    assert.deepEqual(steps.removed, [false, false]);
    assert.deepEqual(steps.spawn, {
      entries: [
        { stream: 'stdout', data: 'a\n' },
        { stream: 'stderr', data: 'b\n' },
      ],
      wait: { exitCode: 7, ok: false },
      replay: 4,
    });
    // Issue 35 rows: a process is found again by its id (GET /api/process/{id}); the container API
    // has no stdin and a Box has no lifetime to extend: SANDBOX_NOT_SUPPORTED naming both.
    assert.deepEqual(steps.command, { id: true, wait: { exitCode: 7, ok: false } });
    assert.equal(steps.stdin.error?.code, 'SANDBOX_NOT_SUPPORTED');
    assert.match(steps.stdin.error.message, /cloudflare provider does not support stdin/);
    assert.equal(steps.execStdin.error?.code, 'SANDBOX_NOT_SUPPORTED');
    assert.equal(steps.extendTimeout.error?.code, 'SANDBOX_NOT_SUPPORTED');
    assert.match(steps.extendTimeout.error.message, /cloudflare provider does not support extendTimeout/);
    assert.equal(steps.openInteractive.error?.code, 'SANDBOX_NOT_SUPPORTED');
    assert.match(
      steps.openInteractive.error.message,
      /cloudflare provider does not support openInteractive: .*sandbox\.terminal\(request\)/,
    );
    assert.equal(steps.expiresAt, true);
    assert.equal(steps.killSigkill.error?.code, 'SANDBOX_NOT_SUPPORTED', 'the container API kills with SIGTERM only');
    assert.deepEqual(steps.killed, { exitCode: 143, ok: false });
    assert.equal(steps.status, 'stopped');
    assert.equal(steps.afterClose.error.code, 'SANDBOX_INVALID_STATE');
    assert.deepEqual(boxes(), [], 'the Box was destroyed');
  });
});
