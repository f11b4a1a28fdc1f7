// The in-process local Box host started by the Node entry cleans up when the process exits in
// the middle of a Run (Ctrl-C of `vite dev`: Vite's SIGINT handler calls process.exit), leaving
// neither a Box directory (with the staged code) nor a Box process behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processesMatching } from './fixtures.mjs';

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
      assert.equal(boxDirs(scratch).length, 1, fs.readdirSync(scratch).join(', '));
      stop(proc);
    }
    assert.equal(await exited, 0, stderr);
    assert.deepEqual(boxDirs(scratch), []);
    await waitFor('the Box processes to go', async () => (await processesMatching(marker)).length === 0, 3000);
  });
}
