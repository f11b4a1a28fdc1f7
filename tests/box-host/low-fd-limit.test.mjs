// A host whose hard limit of open files is below the Box's own (4096) still runs Boxes (the
// fresh-user trial of issue 32): the Box's commands started under `prlimit --nofile=4096`, which
// a process that is not privileged cannot raise its hard limit to, so every Run answered 500
// SANDBOX_HANDLER_ERROR "prlimit: failed to set the NOFILE resource limit". The Box now takes the
// lower of the two.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openFilesWithin } from '../../pkg-template/box-host/engine/isolation.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const NOBODY = 65534;

test('the Box takes the lower of its own open-files limit and the host process hard limit', () => {
  const limits = (soft, hard) =>
    `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                 ${hard}                 files\n`;
  assert.equal(openFilesWithin(limits(1024, 524288)), 4096);
  assert.equal(openFilesWithin(limits(256, 512)), 512);
  assert.equal(openFilesWithin(limits('unlimited', 'unlimited')), 4096);
  assert.equal(openFilesWithin(''), 4096);
});

const HOST_SCRIPT = `
import { startBoxHost } from '@vite-hub/sandbox/box-host';
const host = await startBoxHost({ isolation: process.env.LIMIT_TEST_ISOLATION, parked: { size: 0 } });
const api = async (route, body) => (await fetch(host.baseUrl + route, { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
const sid = JSON.parse(await api('/v3/sandboxes', { projectId: 'p', ports: [] })).session.id;
const out = await api('/v2/sandboxes/sessions/' + sid + '/cmd', { command: 'sh', args: ['-c', 'ulimit -n'], wait: true });
await api('/v2/sandboxes/sessions/' + sid + '/stop', {});
await host.close();
process.stdout.write(out);
`;

for (const isolation of ['bubblewrap', 'none']) {
  test(`under a hard limit of 512 open files a Box command runs, with that limit (${isolation})`, {
    timeout: 60_000,
  }, async () => {
    const asNobody = process.getuid() === 0;
    // prlimit sets the host process's hard limit; as nobody it cannot raise it back.
    const child = spawn(
      'prlimit',
      ['--nofile=512:512', '--', process.execPath, '--input-type=module', '-e', HOST_SCRIPT],
      {
        cwd: repo,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(asNobody ? { uid: NOBODY, gid: NOBODY } : {}),
        env: {
          ...process.env,
          HOME: '/tmp',
          XDG_CACHE_HOME: '/tmp/low-fd-limit-cache',
          LIMIT_TEST_ISOLATION: isolation,
        },
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, err);
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(lines.at(-1).command.exitCode, 0, out);
    assert.equal(
      lines
        .filter((l) => l.stream === 'stdout')
        .map((l) => l.data)
        .join(''),
      '512\n',
    );
  });
}
