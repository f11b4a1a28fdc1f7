// The in-process local Box host started by the Node entry cleans up when the process exits in
// the middle of a Run (Ctrl-C of `vite dev`: Vite's SIGINT handler calls process.exit), leaving
// neither a Box directory (with the staged code) nor a Box process behind; when it ran in a worker
// thread (no `exit` event there), the next Box host removes the directory left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { hasBwrap, processesMatching } from '../support/local-host.mjs';
import { boxDirPrefix } from '../../pkg-template/box-host/engine/stale-boxes.mjs';

// The marker travels in the environment, so only the entry's process (its title) carries it.
const CHILD = `
import { execFileSync } from 'node:child_process';
import { registerSandbox, runSandbox } from '@vite-hub/sandbox';
const marker = process.env.VHS_MARKER;
process.on('SIGINT', () => process.exit(0));
registerSandbox('slow', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: 'export default (p) => { process.title = p.marker; return new Promise(() => setInterval(() => {}, 1000)); };' },
] });
runSandbox('slow', { marker });
if (process.env.VHS_SELF_EXIT) {
  // Exits by itself once the entry's process is up (no signal involved).
  setInterval(() => { if (execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).includes(marker)) process.exit(0); }, 50);
}
`;

async function waitFor(what, check, ms = 15000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `${what} never happened`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const boxDirs = (dir) => fs.readdirSync(dir).filter((name) => name.startsWith('vite-hub-box-'));

for (const [how, stop] of [
  ['process.exit(0) from a SIGINT handler', (proc) => proc.kill('SIGINT')],
  ['process.exit() while a Box command runs', null],
]) {
  test(`${how} mid-Run removes the Box directories and kills the Box processes`, async (t) => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-exit-'));
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const marker = `vite-hub-exit-${randomUUID()}`;
    const env = { ...process.env, TMPDIR: scratch, VHS_MARKER: marker, ...(stop ? {} : { VHS_SELF_EXIT: '1' }) };
    const proc = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
      cwd: path.dirname(new URL(import.meta.url).pathname),
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)));
    t.after(() => proc.kill('SIGKILL'));
    if (stop) {
      await waitFor('the entry process', async () => (await processesMatching(marker)).length > 0);
      // The Run's Box, and the spare Boxes the host keeps (parked-boxes.mjs): all go at the exit.
      assert.ok(boxDirs(scratch).length >= 1, fs.readdirSync(scratch).join(', '));
      stop(proc);
    }
    assert.equal(await exited, 0, stderr);
    assert.deepEqual(boxDirs(scratch), []);
    await waitFor('the Box processes to go', async () => (await processesMatching(marker)).length === 0, 3000);
  });
}

// A process that exits while a Box is still being created (its directory made, its disk being
// mounted, its network starting; not yet a live Box) removes that directory and its mount too:
// the host exits the moment the directory appears.
const CREATING_CHILD = `
import fs from 'node:fs';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
const boxRoot = process.env.VHS_BOX_ROOT;
const host = await startBoxHost({ boxRoot });
fs.watch(boxRoot, () => process.exit(0));
fetch(host.baseUrl + '/v3/sandboxes', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + host.token, 'content-type': 'application/json' },
  body: JSON.stringify({ projectId: 'p', ports: [], networkPolicy: { mode: 'allow-all' } }),
}).catch(() => {});
`;

test('process.exit() while a Box is still being created leaves neither its directory nor its mount', async (t) => {
  for (let round = 0; round < 3; round += 1) {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-exit-'));
    t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const proc = spawn(process.execPath, ['--input-type=module', '-e', CREATING_CHILD], {
      cwd: path.dirname(new URL(import.meta.url).pathname),
      env: { ...process.env, VHS_BOX_ROOT: scratch },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = await new Promise((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)));
    assert.equal(exited, 0, stderr);
    const mounted = fs
      .readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((line) => line.split(' ')[4]?.startsWith(`${scratch}/`));
    assert.deepEqual(mounted, [], 'no Box disk left mounted');
    assert.deepEqual(boxDirs(scratch), [], `round ${round}`);
  }
});

// Nitro runs the server code (and so the in-process Box host) in a worker thread. When the main
// thread calls process.exit(), a worker's `exit` listeners never run (a Node limitation), so the
// Box directory stays behind; bubblewrap's --die-with-parent still ends the Box processes. The
// directory is named after the process (`vite-hub-box-<pidns>-<pid>-XXXXXX`), and the next Box host
// started on the same Box root removes it because that pid is gone.
const WORKER_CHILD = `
import { execFileSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
const marker = process.env.VHS_MARKER;
// CommonJS eval code (execArgv: [] drops the parent's --input-type=module) importing the package.
const worker = new Worker(\`
  const { workerData } = require('node:worker_threads');
  import(workerData.entry).then(({ registerSandbox, runSandbox }) => {
    registerSandbox('slow', { files: [
      { path: 'package.json', content: '{"type":"module"}' },
      { path: 'index.mjs', content: 'export default (p) => { process.title = p.marker; return new Promise(() => setInterval(() => {}, 1000)); };' },
    ] });
    runSandbox('slow', { marker: workerData.marker });
  });
\`, { eval: true, execArgv: [], workerData: { entry: import.meta.resolve('@vite-hub/sandbox'), marker } });
worker.on('error', (err) => { console.error(err); process.exit(3); });
// Exits from the main thread once the entry's process is up (Vite's Ctrl-C path, minus the signal).
setInterval(() => { if (execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).includes(marker)) process.exit(0); }, 50);
`;

test('process.exit() from the main thread while a worker thread runs the host leaves the Box dir for the next host to sweep', async (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vhs-exit-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const marker = `vite-hub-exit-${randomUUID()}`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', WORKER_CHILD], {
    cwd: path.dirname(new URL(import.meta.url).pathname),
    env: { ...process.env, TMPDIR: scratch, VHS_MARKER: marker },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal)));
  t.after(() => proc.kill('SIGKILL'));
  assert.equal(await exited, 0, stderr);

  // The Node limitation: the worker's exit listener did not run, the Box directories are still
  // there: the Run's (with its staged project) and the host's spare Boxes (parked-boxes.mjs).
  const left = boxDirs(scratch).sort();
  assert.ok(left.length >= 1, fs.readdirSync(scratch).join(', '));
  for (const dir of left) assert.match(dir, new RegExp(`^${boxDirPrefix(proc.pid)}[A-Za-z0-9]{6}$`));
  assert.equal(
    left.filter((dir) => fs.existsSync(path.join(scratch, dir, 'vercel', 'sandbox', 'project', 'index.mjs'))).length,
    1,
    'the staged Box layout of the Run',
  );
  if (hasBwrap) {
    await waitFor('the Box processes to go', async () => (await processesMatching(marker)).length === 0, 3000);
  } else {
    // Plain processes (no --die-with-parent) outlive the child: end them before sweeping.
    for (const line of await processesMatching(marker)) process.kill(Number(line.trim().split(/\s+/)[0]), 'SIGKILL');
  }

  // The next Box host on the same Box root (TMPDIR) removes it: the owning pid is gone.
  const host = await startBoxHost({ boxRoot: scratch, isolation: 'none' });
  try {
    assert.deepEqual((await host.swept).sort(), left);
    assert.deepEqual(boxDirs(scratch), []);
  } finally {
    await host.close();
  }
});
