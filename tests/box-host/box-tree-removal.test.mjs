// A Box cannot leave its directory on disk for good (issue 32, item 4). Round 4: on a host that
// is not root, a Box took its directories' rwx from their owner (`chmod 0`); `fs.rm` failed with
// EACCES, `host.close()` rejected and every later sweep left the tree behind (151 MiB). Here the
// host runs as an unprivileged user (nobody, when this test runs as root): a Box's chmod 0 tree is
// removed when the Box stops, and when the host closes with the Box still running; so is a tree
// nested deeper than PATH_MAX, which Node's fs.rm refuses with ENAMETOOLONG (the fresh-user trial).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const NOBODY = 65534;

const HOST_SCRIPT = `
import fs from 'node:fs';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
const boxRoot = process.env.TREE_TEST_ROOT;
const host = await startBoxHost({ isolation: process.env.TREE_TEST_ISOLATION, boxRoot, parked: { size: 0 } });
const api = async (route, body) => (await fetch(host.baseUrl + route, { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
const lock = 'mkdir -p locked/deeper/deepest && echo x > locked/deeper/deepest/file && chmod 0 locked/deeper/deepest locked/deeper locked';
const box = async () => {
  const sid = JSON.parse(await api('/v3/sandboxes', { projectId: 'p', ports: [] })).session.id;
  const out = await api('/v2/sandboxes/sessions/' + sid + '/cmd', { command: 'sh', args: ['-c', lock + ' && echo locked'], wait: true });
  if (!out.includes('locked\\\\n')) throw new Error('the Box did not lock its tree: ' + out);
  // A tree nested deeper than PATH_MAX (100 directories of 50 characters), made by relative steps.
  const deep = "const fs = require('node:fs'); const d = 'd'.repeat(50); for (let i = 0; i < 100; i++) { fs.mkdirSync(d); process.chdir(d); } fs.writeFileSync('f', 'x'); console.log('deep');";
  const deepOut = await api('/v2/sandboxes/sessions/' + sid + '/cmd', { command: 'node', args: ['-e', deep], wait: true });
  if (!deepOut.includes('deep\\\\n')) throw new Error('the Box did not make its deep tree: ' + deepOut);
  return sid;
};
const stopped = await box();
await api('/v2/sandboxes/sessions/' + stopped + '/stop', {});
const afterStop = fs.readdirSync(boxRoot);
await box();
let closeError = null;
await host.close().catch((err) => (closeError = err.code ?? err.message));
process.stdout.write(JSON.stringify({ afterStop, afterClose: fs.readdirSync(boxRoot), closeError }));
`;

for (const isolation of ['none', 'auto']) {
  test(`a Box's chmod 0 tree and one deeper than PATH_MAX are removed on stop and on host.close() by a host that is not root (isolation ${isolation})`, {
    timeout: 60_000,
  }, async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'box-tree-removal-'));
    const asNobody = process.getuid() === 0;
    if (asNobody) fs.chownSync(root, NOBODY, NOBODY);
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const child = spawn(process.execPath, ['--input-type=module', '-e', HOST_SCRIPT], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(asNobody ? { uid: NOBODY, gid: NOBODY } : {}),
      env: {
        ...process.env,
        HOME: root,
        XDG_CACHE_HOME: path.join(root, '.cache'),
        TREE_TEST_ROOT: root,
        TREE_TEST_ISOLATION: isolation,
      },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, err);
    const { afterStop, afterClose, closeError } = JSON.parse(out);
    const boxDirs = (names) => names.filter((name) => name.startsWith('vite-hub-box-'));
    assert.deepEqual(boxDirs(afterStop), [], 'the stopped Box left its directory');
    assert.equal(closeError, null);
    assert.deepEqual(boxDirs(afterClose), [], 'host.close() left a Box directory');
  });
}
