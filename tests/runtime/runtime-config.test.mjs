// configureSandbox resolves the config once, and the isolate has one owner of its in-process local
// Box host: configuring again never starts a second host, nor does warmUp(). The run that starts
// the host shows it as `host` and `connect` phases in Server-Timing. (This file uses the in-process host: no fixture host.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { configureSandbox, runSandbox, closeLocalBoxHost, warmUp } from '@vite-hub/sandbox';
import { defineTestSandbox, timingPhases } from '../support/local-host.mjs';
import { listeningSockets as listeningServers } from '../support/sockets.mjs';

after(async () => {
  await closeLocalBoxHost();
});

test('the run that starts the in-process host shows host and connect phases; later runs do not', async () => {
  await closeLocalBoxHost();
  configureSandbox({ provider: 'local' });
  defineTestSandbox('config/first', 'export default (p) => ({ p });');
  const first = await runSandbox('config/first', 1);
  assert.equal(first.status, 200, await first.clone().text());
  assert.deepEqual(timingPhases(first), ['host', 'connect', 'box', 'stage', 'exec']);
  const second = await runSandbox('config/first', 2);
  assert.deepEqual(timingPhases(second), ['box', 'stage', 'exec']);
});

test('warmUp() starts the one in-process host ahead: idempotent, and the first Run shows no host phase', async () => {
  await closeLocalBoxHost();
  const before = listeningServers();
  configureSandbox({ provider: 'local' });
  await Promise.all([warmUp(), warmUp()]);
  await warmUp();
  assert.equal(listeningServers() - before, 1, 'exactly one Box host listens');
  defineTestSandbox('config/warm', 'export default (p) => ({ p });');
  const first = await runSandbox('config/warm', 1);
  assert.equal(first.status, 200, await first.clone().text());
  assert.deepEqual(timingPhases(first), ['box', 'stage', 'exec']);
  assert.equal(listeningServers() - before, 1, 'the Run used the warmed host');
  await closeLocalBoxHost();
  assert.equal(listeningServers(), before);
});

test('warmUp({ onlyIfUsed: true }) starts nothing when Runs go elsewhere, and the in-process host when they go to it', async () => {
  await closeLocalBoxHost();
  const before = listeningServers();
  configureSandbox({ provider: 'local', local: { baseUrl: 'http://127.0.0.1:9', token: 'a-token-of-16-chars' } });
  assert.equal(await warmUp({ onlyIfUsed: true }), false);
  configureSandbox({
    provider: 'vercel',
    vercel: { token: 'a-token-of-16-chars', teamId: 'team', projectId: 'project' },
  });
  assert.equal(await warmUp({ onlyIfUsed: true }), false);
  assert.equal(listeningServers(), before, 'no Box host was started');
  const refused = (got) => ({
    name: 'SandboxError',
    code: 'SANDBOX_INVALID_ARGUMENT',
    status: 400,
    message: `warmUp(options) takes no options or { onlyIfUsed?: boolean } (got ${got})`,
  });
  await assert.rejects(warmUp({ onlyIfUsed: 'yes' }), refused('onlyIfUsed: string'));
  await assert.rejects(warmUp(null), refused('null'));
  await assert.rejects(warmUp(true), refused('a boolean'));
  await assert.rejects(warmUp([]), refused('an array'));
  await assert.rejects(warmUp(new Map()), refused('an object that is not a plain object'));
  // A misspelt key would otherwise start the host whatever the configuration says.
  await assert.rejects(warmUp({ onlyIfUsd: true }), refused('the unknown key "onlyIfUsd"'));
  await assert.rejects(
    warmUp(
      new Proxy(
        {},
        {
          get() {
            throw new Error('boom');
          },
        },
      ),
    ),
    refused('options that could not be read: boom'),
  );
  assert.equal(listeningServers(), before, 'no refused call started a Box host');
  configureSandbox({ provider: 'local' });
  assert.equal(await warmUp({ onlyIfUsed: true }), true);
  assert.equal(listeningServers() - before, 1, 'exactly one Box host listens');
  defineTestSandbox('config/only-if-used', 'export default (p) => ({ p });');
  const first = await runSandbox('config/only-if-used', 1);
  assert.equal(first.status, 200, await first.clone().text());
  assert.deepEqual(timingPhases(first), ['box', 'stage', 'exec']);
  await closeLocalBoxHost();
  assert.equal(listeningServers(), before);
});

test('ten configureSandbox + run cycles leave one host and one listening socket', async () => {
  await closeLocalBoxHost();
  const before = listeningServers();
  defineTestSandbox('config/cycle', 'export default (p) => ({ p });');
  for (let i = 0; i < 10; i += 1) {
    configureSandbox({ provider: 'local', transfer: { maxDepth: 16 + i } });
    const response = await runSandbox('config/cycle', i);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { p: i });
  }
  assert.equal(listeningServers() - before, 1, 'exactly one Box host listens');
  await closeLocalBoxHost();
  assert.equal(listeningServers(), before, 'closing it leaves none');
});

test('a config that fails validation keeps the previous one in force', async () => {
  configureSandbox({ provider: 'local' });
  assert.throws(
    () => configureSandbox({ provider: 'local', transfer: { maxDepth: 0 } }),
    (error) => {
      assert.equal(error.name, 'SandboxError');
      assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
      assert.equal(error.status, 400);
      return true;
    },
  );
  defineTestSandbox('config/kept', 'export default () => "still local";');
  const response = await runSandbox('config/kept');
  assert.equal(response.status, 200);
  assert.equal(await response.json(), 'still local');
});

test('a provider that cannot be chosen is reported by the run, with its own status', async () => {
  configureSandbox({ provider: 'cloudflare' });
  defineTestSandbox('config/cloudflare', 'export default () => 1;');
  const response = await runSandbox('config/cloudflare');
  // No Worker env with the Durable Object binding here: the run names the binding to add.
  assert.equal(response.status, 500);
  const { error } = await response.json();
  assert.equal(error.code, 'SANDBOX_PROVIDER_REQUIRED');
  assert.match(error.message, /binding "SANDBOX"/);
  configureSandbox({ provider: 'local' });
});

/** Asserts that `configureSandbox(config)` throws SANDBOX_INVALID_ARGUMENT (400) matching `message`, never naming a password. */
function assertConfigRefused(config, message, label) {
  assert.throws(
    () => configureSandbox(config),
    (error) => {
      assert.equal(error.name, 'SandboxError');
      assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', error.message);
      assert.equal(error.status, 400);
      assert.match(error.message, message);
      assert.doesNotMatch(error.message, /pw_secret/);
      return true;
    },
    label,
  );
}

test('configureSandbox checks at once: an unknown provider, a baseUrl that is no URL, a token under 8 characters, a bad limit named by its key, a config that is no object', () => {
  configureSandbox({ provider: 'local' });
  const cases = [
    [{ provider: 'docker' }, /config provider is "docker"; expected "vercel", "cloudflare" or "local"/],
    [
      { provider: 'local', local: { baseUrl: 'not a url', token: 'long-enough-token' } },
      /local\.baseUrl must be an absolute http:\/\/ or https:\/\/ URL with a host, got "not a url"/,
    ],
    [
      {
        provider: 'vercel',
        vercel: { baseUrl: 'api.vercel.com', token: 'long-enough-token', teamId: 't', projectId: 'p' },
      },
      /vercel\.baseUrl must be/,
    ],
    [
      { provider: 'local', local: { baseUrl: 'http://127.0.0.1:9', token: 'a' } },
      /^local\.token has 1 character; a token must have at least 8 \(a shorter one cannot be redacted/,
    ],
    [{ transfer: { maxDepth: -1 } }, /transfer\.maxDepth must be a positive integer <= 1073741824 \(got -1\)/],
    [
      { transfer: { maxSidecarBytes: 'lots' } },
      /transfer\.maxSidecarBytes must be a positive integer <= 1073741824 \(got "lots"\)/,
    ],
    [null, /configureSandbox\(config\) expects an object, got null/],
    [['local'], /expects an object, got an array/],
    ['local', /expects an object, got string/],
    [{ env: 'x' }, /configureSandbox config\.env must be an object \(process\.env or a Worker's env\), got string/],
    [{ env: null }, /config\.env must be an object .*got null/],
    [{ env: ['A=1'] }, /config\.env must be an object .*got an array/],
  ];
  for (const [config, message] of cases) assertConfigRefused(config, message, JSON.stringify(config));
});

test('configureSandbox refuses a non-finite limit (JSON text would turn it into null, read as unset) and a baseUrl with user info (fetch refuses it at the Run, whose message carried the password)', () => {
  configureSandbox({ provider: 'local' });
  const cases = [
    [{ transfer: { maxDepth: NaN } }, /config\.transfer\.maxDepth must be a finite number \(got NaN\)/],
    [
      { transfer: { maxInputBytes: Infinity } },
      /config\.transfer\.maxInputBytes must be a finite number \(got Infinity\)/,
    ],
    [
      { provider: 'local', local: { baseUrl: 'http://me:pw_secret@127.0.0.1:9/', token: 'long-enough-token' } },
      /^local\.baseUrl must not carry user info/,
    ],
    [
      {
        provider: 'vercel',
        vercel: { baseUrl: 'https://pw_secret@api.example', token: 'long-enough-token', teamId: 't', projectId: 'p' },
      },
      /^vercel\.baseUrl must not carry user info/,
    ],
  ];
  for (const [config, message] of cases) {
    assertConfigRefused(
      config,
      message,
      String(config.transfer?.maxDepth ?? config.transfer?.maxInputBytes ?? JSON.stringify(config)),
    );
  }
  configureSandbox({ provider: 'local' });
});

test('what comes from the env is still answered by each Run, so a bad env never breaks configureSandbox (nor the import, which configures from process.env)', async () => {
  configureSandbox({ env: { SANDBOX_PROVIDER: 'docker' } });
  defineTestSandbox('config/env-provider', 'export default () => 1;');
  const response = await runSandbox('config/env-provider');
  assert.equal(response.status, 400);
  const { error } = await response.json();
  assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.match(error.message, /SANDBOX_PROVIDER is "docker"/);
  configureSandbox({ provider: 'local' });
});

test('a token with a character an HTTP header cannot carry is SANDBOX_INVALID_ARGUMENT, from the config at once and from the env per Run, never a crash', async () => {
  assert.throws(
    () => configureSandbox({ vercel: { token: 'tok\u0100en_long', teamId: 't', projectId: 'p' } }),
    (error) =>
      error.code === 'SANDBOX_INVALID_ARGUMENT' &&
      /vercel\.token has a character at position 4 that is not visible ASCII/.test(error.message) &&
      !error.message.includes('tok\u0100en'),
  );
  configureSandbox({
    provider: 'vercel',
    env: { VERCEL_TOKEN: 'vercel_tok\u{1F600}en', VERCEL_TEAM_ID: 't', VERCEL_PROJECT_ID: 'p' },
  });
  defineTestSandbox('config/env-token', 'export default () => 1;');
  const response = await runSandbox('config/env-token');
  const { error } = await response.json();
  assert.equal(response.status, 400, JSON.stringify(error));
  assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
  assert.match(error.message, /the vercel token .* has a character at position 11/);
  assert.doesNotMatch(error.message, /vercel_tok/);
  configureSandbox({ provider: 'local' });
});

test('with no env in the config, each Run reads the runtime env again: a refreshed VERCEL_OIDC_TOKEN is used by the next Run, without configureSandbox', async () => {
  // An OIDC token as Vercel issues it: a JWT whose claims name the team (owner_id) and project.
  const oidc = (serial) =>
    `e30.${Buffer.from(JSON.stringify({ owner_id: 'team_oidc', project_id: 'prj_oidc', serial })).toString('base64url')}.sig`;
  const seen = [];
  // The Vercel API, stubbed at the fetch: it answers 401 (the Run's SANDBOX_PROVIDER_AUTH); the bearer is what counts.
  const fetch = async (input, init) => {
    seen.push(new Request(input, init).headers.get('authorization'));
    return Response.json({ error: { code: 'forbidden', message: 'stub' } }, { status: 401 });
  };
  const saved = process.env.VERCEL_OIDC_TOKEN;
  try {
    process.env.VERCEL_OIDC_TOKEN = oidc(1);
    configureSandbox({ provider: 'vercel', fetch });
    defineTestSandbox('config/oidc', 'export default () => 1;');
    const authFailure = async () => (await (await runSandbox('config/oidc')).json()).error.code;
    assert.equal(await authFailure(), 'SANDBOX_PROVIDER_AUTH');
    process.env.VERCEL_OIDC_TOKEN = oidc(2);
    assert.equal(await authFailure(), 'SANDBOX_PROVIDER_AUTH');
    assert.deepEqual([...new Set(seen)], [`Bearer ${oidc(1)}`, `Bearer ${oidc(2)}`]);
    // A config that names its env owns that snapshot: the process env is not read.
    seen.length = 0;
    configureSandbox({ provider: 'vercel', fetch, env: { VERCEL_OIDC_TOKEN: oidc(3) } });
    process.env.VERCEL_OIDC_TOKEN = oidc(4);
    assert.equal(await authFailure(), 'SANDBOX_PROVIDER_AUTH');
    assert.deepEqual([...new Set(seen)], [`Bearer ${oidc(3)}`]);
  } finally {
    if (saved === undefined) delete process.env.VERCEL_OIDC_TOKEN;
    else process.env.VERCEL_OIDC_TOKEN = saved;
    configureSandbox({ provider: 'local' });
  }
});

test('a Vercel network-policy object on the local provider is refused at configureSandbox, naming the key and the shapes the host supports', () => {
  for (const [networkPolicy, what] of [
    [{ allow: ['example.com'] }, 'an object with keys allow'],
    [{ mode: 'custom', allow: ['secret-host.example'] }, 'an object with keys mode, allow'],
    [{ subnets: { deny: ['10.0.0.0/8'] } }, 'an object with keys subnets'],
    ['no-access', 'a string other than "allow-all" and "deny-all"'],
  ]) {
    assert.throws(
      () => configureSandbox({ provider: 'local', local: { networkPolicy } }),
      (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT', error.message);
        assert.ok(error.message.includes(`local.networkPolicy is ${what};`), error.message);
        assert.ok(
          error.message.includes('supports only "allow-all", "deny-all" or { mode: "allow-all" | "deny-all" }'),
          error.message,
        );
        assert.ok(
          !error.message.includes('example') && !error.message.includes('10.0.0.0'),
          `no policy value in: ${error.message}`,
        );
        return true;
      },
    );
  }
  // The shapes the host enforces are kept, the SDK's object form too.
  for (const networkPolicy of ['allow-all', 'deny-all', { mode: 'allow-all' }, { mode: 'deny-all' }, null]) {
    configureSandbox({ provider: 'local', local: { networkPolicy } });
  }
});
