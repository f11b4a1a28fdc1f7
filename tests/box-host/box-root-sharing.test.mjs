// Two Box hosts in different pid namespaces sharing one Box root (a host in a container and one
// outside it, both with TMPDIR on the same disk): a pid means nothing in the other namespace, so
// the sweep of stale Box directories at a host's start must leave the other's live Boxes alone.
import assert from 'node:assert/strict';
import { execFile, execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startBoxHost } from '@vite-hub/sandbox/box-host';

test('a host started in another pid namespace does not sweep the live Box directories of this one', {
  timeout: 60_000,
}, async (t) => {
  if (process.getuid() !== 0) return t.skip('a pid namespace of the same uid needs root here');
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-pidns-'));
  fs.chmodSync(boxRoot, 0o701);
  const host = await startBoxHost({ boxRoot, isolation: 'none' });
  t.after(async () => {
    await host.close();
    fs.rmSync(boxRoot, { recursive: true, force: true });
  });
  const created = await fetch(`${host.baseUrl}/v3/sandboxes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${host.token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(created.status, 200);
  const [live] = fs.readdirSync(boxRoot);
  assert.ok(live, 'the Box directory exists');

  const entry = import.meta.resolve('@vite-hub/sandbox/box-host');
  const script = `const { startBoxHost } = await import(${JSON.stringify(entry)});
    const host = await startBoxHost({ boxRoot: ${JSON.stringify(boxRoot)}, isolation: 'none' });
    console.log(JSON.stringify(await host.swept));
    await host.close();`;
  let stdout;
  try {
    ({ stdout } = await promisify(execFile)(
      'unshare',
      ['--pid', '--fork', '--mount-proc', process.execPath, '--input-type=module', '-e', script],
      { timeout: 30_000 },
    ));
  } catch (error) {
    if (/unshare: /.test(error.stderr ?? '')) return t.skip(`no pid namespace here: ${error.stderr.trim()}`);
    throw error;
  }
  assert.deepEqual(JSON.parse(stdout.trim().split('\n').pop()), [], 'the other host swept nothing');
  assert.ok(fs.existsSync(path.join(boxRoot, live)), `${live} is still there`);
});

test('a host that sees every process sweeps the Box directories of a pid namespace that is gone', {
  timeout: 60_000,
}, async (t) => {
  if (process.getuid() !== 0) return t.skip('only root in the initial pid namespace sees every pid namespace');
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-pidns-'));
  fs.chmodSync(boxRoot, 0o701);
  t.after(() => fs.rmSync(boxRoot, { recursive: true, force: true }));
  // A host in a pid namespace of its own makes a Box, then the whole namespace is killed from
  // outside (SIGKILL to its init): no exit handler runs, its Box directory stays behind.
  const entry = import.meta.resolve('@vite-hub/sandbox/box-host');
  const script = `const { startBoxHost } = await import(${JSON.stringify(entry)});
    const host = await startBoxHost({ boxRoot: ${JSON.stringify(boxRoot)}, isolation: 'none' });
    const created = await fetch(host.baseUrl + '/v3/sandboxes', { method: 'POST', headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' }, body: '{}' });
    console.log('created', created.status);
    await new Promise(() => {});`;
  const child = spawn(
    'unshare',
    ['--pid', '--fork', '--kill-child', '--mount-proc', process.execPath, '--input-type=module', '-e', script],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (data) => (stderr += data));
  const line = await new Promise((resolve) => {
    child.stdout.on('data', (data) => resolve(String(data)));
    child.on('exit', () => resolve(''));
  });
  if (/unshare: /.test(stderr)) return t.skip(`no pid namespace here: ${stderr.trim()}`);
  assert.match(line, /created 200/, stderr);
  const [left] = fs.readdirSync(boxRoot);
  assert.match(left, /^vite-hub-box-\d+-1-/, 'the Box directory of pid 1 of the other namespace');
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  // The namespace is gone once its last process is.
  const pidns = left.split('-')[3];
  for (
    let i = 0;
    i < 100 && execSync(`ls -l /proc/*/ns/pid 2>/dev/null || true`, { encoding: 'utf8' }).includes(`pid:[${pidns}]`);
    i += 1
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const host = await startBoxHost({ boxRoot, isolation: 'none' });
  t.after(() => host.close());
  assert.deepEqual(await host.swept, [left]);
  assert.equal(fs.existsSync(path.join(boxRoot, left)), false);
});
