// A Box process the host cannot start is an error answer, never the app's crash (issue 32, item
// 2). Round 4: at the app's fd limit, `spawn` failed with EMFILE, BoxCommand touched the stdio it
// never got before it listened for the spawn's 'error', and the unhandled 'error' event ended the
// `vite dev` or built server. Here a Box host runs in a child process that fills its fd table,
// leaving only what the HTTP exchange needs: the command's request must answer 503 naming the
// cause, and once the fds are free again the same Box runs a command and the host closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NO_BWRAP } from '../support/local-host.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));

const HOST_SCRIPT = `
import fs from 'node:fs';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
const host = await startBoxHost({ isolation: process.env.SPAWN_TEST_ISOLATION });
const api = async (route, body) => {
  const res = await fetch(host.baseUrl + route, { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
};
const sid = JSON.parse((await api('/v3/sandboxes', { projectId: 'p', ports: [] })).text).session.id;
const cmd = { command: 'sh', args: ['-c', 'echo ran'], wait: true };
// One exchange first, so the client's connection pool and the server's socket exist.
const before = await api('/v2/sandboxes/sessions/' + sid + '/cmd', cmd);
const held = [];
try {
  for (;;) held.push(fs.openSync('/dev/null', 'r'));
} catch (err) {
  if (err.code !== 'EMFILE') throw err;
}
// Room for a connection and a listing of /proc/self/fd, not for a process's pipes.
for (let i = 0; i < 3; i++) fs.closeSync(held.pop());
const atLimit = await api('/v2/sandboxes/sessions/' + sid + '/cmd', cmd);
// A create at the limit too (its disk, its network's helpers, the spare network it refills):
// whatever it answers, the process lives on.
const created = await api('/v3/sandboxes', { projectId: 'p', ports: [] });
const second = created.status === 200 ? JSON.parse(created.text).session.id : null;
const secondCmd = second ? await api('/v2/sandboxes/sessions/' + second + '/cmd', cmd) : null;
for (const fd of held) fs.closeSync(fd);
if (second) await api('/v2/sandboxes/sessions/' + second + '/stop', {});
const after = await api('/v2/sandboxes/sessions/' + sid + '/cmd', cmd);
await api('/v2/sandboxes/sessions/' + sid + '/stop', {});
await host.close();
process.stdout.write(JSON.stringify({ before, atLimit, after, created, secondCmd }));
`;

for (const isolation of ['bubblewrap', 'none']) {
  test(`a spawn that fails at the fd limit answers 503 and the process lives on (${isolation})`, {
    skip: isolation === 'bubblewrap' && NO_BWRAP,
    timeout: 120_000,
  }, async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', HOST_SCRIPT], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SPAWN_TEST_ISOLATION: isolation },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, `the host's process ended: ${err}`);
    const { before, atLimit, after, created, secondCmd } = JSON.parse(out);
    assert.equal(before.status, 200, before.text);
    assert.equal(atLimit.status, 503, atLimit.text);
    const { error } = JSON.parse(atLimit.text);
    assert.equal(error.code, 'spawn_failed');
    assert.match(error.message, /limit of open files.*\(EMFILE\)/);
    assert.equal(after.status, 200, after.text);
    // The create at the limit was refused as this machine's failure, or made a Box whose command was.
    assert.ok(
      created.status === 503 || (created.status === 200 && secondCmd.status === 503),
      JSON.stringify({ created, secondCmd }),
    );
    assert.match(after.text, /"data":"ran\\n"/);
  });
}
