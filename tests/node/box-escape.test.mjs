// Attacks from inside a Box on the local Box host under bubblewrap (issue 9, item 3): the Box
// must not read the host env or /proc/1/environ, write /proc/sys, reach the host's Box host
// port under deny-all, see its env on the host's command lines, fork without bound, or queue
// runs into failures at the Box limit. Skipped where bubblewrap cannot run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { bubblewrapWorks } from '../../pkg-template/box-host/isolation.mjs';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox } from './fixtures.mjs';

const canBwrap = await bubblewrapWorks();
let host;

async function api(method, route, body) {
  const res = await fetch(`${host.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text };
}

async function box(extra = {}) {
  const created = await api('POST', '/v3/sandboxes', { projectId: 'p', ports: [], ...extra });
  return JSON.parse(created.text).session.id;
}

async function run(sid, script, env) {
  const res = await api('POST', `/v2/sandboxes/sessions/${sid}/cmd`, { command: 'sh', args: ['-c', script], env, wait: true, timeout: 20_000 });
  const lines = res.text.trim().split('\n').map((line) => JSON.parse(line));
  const out = (stream) => lines.filter((l) => l.stream === stream).map((l) => l.data).join('');
  return { exitCode: lines.at(-1).command.exitCode, stdout: out('stdout'), stderr: out('stderr') };
}

before(async () => {
  if (!canBwrap) return;
  process.env.VITE_HUB_ESCAPE_SECRET = 'host-secret-value';
  host = await startBoxHost({ isolation: 'bubblewrap' });
});
after(async () => {
  configureSandbox({});
  await host?.close();
});

test('a Box command is not root, has no capabilities and cannot write /proc/sys', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(sid, 'id -u; grep CapEff /proc/self/status; echo x > /proc/sys/kernel/core_pattern && echo WROTE');
  assert.match(res.stdout, /^1000\n/);
  assert.match(res.stdout, /CapEff:\s+0000000000000000/);
  assert.doesNotMatch(res.stdout, /WROTE/);
  assert.match(res.stderr, /Read-only file system/);
});

test('a Box sees neither the host env nor /proc/1/environ of the host', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(sid, 'env; cat /proc/1/environ 2>/dev/null | tr "\\0" "\\n"; true');
  assert.doesNotMatch(res.stdout, /host-secret-value/);
});

test('the env given to a command is not on any host command line (ps)', { skip: !canBwrap }, async () => {
  const sid = await box();
  const marker = `envmark${Date.now()}`;
  const pending = run(sid, 'sleep 1', { TOKENISH: marker });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  await pending;
  assert.doesNotMatch(ps, new RegExp(marker));
});

test('under deny-all the Box cannot reach the Box host port on 127.0.0.1', { skip: !canBwrap }, async () => {
  const sid = await box({ networkPolicy: { mode: 'deny-all' } });
  const { port } = new URL(host.baseUrl);
  const script = `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>console.log('CONNECTED')).on('error',e=>console.log(e.code))"`;
  const res = await run(sid, script);
  assert.doesNotMatch(res.stdout, /CONNECTED/);
  assert.match(res.stdout, /ECONNREFUSED|ENETUNREACH/);
});

test('a fork bomb is bounded by the process limit and the host stays usable', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(sid, 'i=0; while [ $i -lt 2000 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null; echo started $(jobs -p | wc -l)');
  // Either the shell reports fewer than 2000 background jobs or it could not fork at all.
  assert.doesNotMatch(res.stdout, /started 2000/);
  const after = await run(sid, 'echo alive');
  assert.equal(after.stdout, 'alive\n');
});

test('a file larger than the file size limit cannot be written', { skip: !canBwrap }, async () => {
  const sid = await box();
  const res = await run(sid, 'head -c 1100M /dev/zero > big 2>/dev/null; echo rc=$?; stat -c %s big; rm -f big');
  assert.match(res.stdout, /rc=1\d\d|rc=1\n/);
  assert.ok(Number(res.stdout.trim().split('\n')[1]) <= 1024 * 1024 * 1024);
});

test('128 concurrent runs at the default Box limit all answer 200 (FIFO queue, no 503)', { skip: !canBwrap, timeout: 240_000 }, async () => {
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  defineTestSandbox('escape/trivial', 'export default (n) => n + 1;');
  const answers = await Promise.all(Array.from({ length: 128 }, (_, i) => runSandbox('escape/trivial', i)));
  const statuses = answers.map((r) => r.status);
  assert.deepEqual(statuses.filter((s) => s !== 200), []);
  assert.deepEqual(await Promise.all(answers.map((r) => r.json())), Array.from({ length: 128 }, (_, i) => i + 1));
});
