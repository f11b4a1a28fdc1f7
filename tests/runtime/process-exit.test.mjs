// A Node script that runs Definitions on the in-process local Box host exits on its own when its
// work is done: nothing of the host (its server, the kept-alive connection's server side) holds
// the event loop after the last Run, and the Runs before still share that connection (warm runs).
// How soon it exits is a bench figure (`firstRun.cold.exitMs` of scripts/bench.mjs); here the
// test's `timeout` only catches a process that a ref'd handle keeps alive (a Box's lifetime timer
// is minutes), and the handles left after the last Run are read directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

const SCRIPT = `
import { registerSandbox, runSandbox } from '@vite-hub/sandbox';
registerSandbox('exit/one', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: 'export default (n) => n * 2;' },
] });
const phases = [];
for (const n of [1, 2]) {
  const response = await runSandbox('exit/one', n);
  phases.push((response.headers.get('server-timing') ?? '').split(',').map((p) => p.trim().split(';')[0]));
  if ((await response.json()) !== n * 2) throw new Error('wrong result');
}
// What keeps the event loop alive right after the last Run (ref'd handles only): the host's
// server must not be among them.
const held = process.getActiveResourcesInfo();
process.on('exit', () => process.stdout.write(JSON.stringify({ phases, held })));
`;

test('a script that runs Definitions on the local provider exits on its own after its last Run', {
  timeout: 60_000,
}, async () => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  const { phases, held } = JSON.parse(stdout);
  assert.ok(
    !held.includes('TCPServerWrap'),
    `the host's server holds the event loop after the last Run: ${held.join(', ')}`,
  );
  assert.ok(phases[0].includes('connect'), `the first Run set up the connection: ${phases[0]}`);
  assert.ok(!phases[1].includes('connect') && !phases[1].includes('host'), `the second Run was warm: ${phases[1]}`);
});

// The same script ending in `await closeLocalBoxHost()` (what the CLI's `run` does) exits 0 every
// time: closing keeps the event loop alive until it is done. Before, it exited 13 ("unsettled
// top-level await") after a 200 in 6 of 10 tries as a normal user on Node 22 (issue 32), when the
// loop emptied while close() waited for a spare's unref'd process; the user lane runs this file
// as such a user.
const CLOSING_SCRIPT = `
import { closeLocalBoxHost, registerSandbox, runSandbox } from '@vite-hub/sandbox';
registerSandbox('exit/close', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: 'export default (n) => n * 2;' },
] });
const response = await runSandbox('exit/close', 21);
if (response.status !== 200 || (await response.json()) !== 42) throw new Error('wrong result');
await closeLocalBoxHost();
process.stdout.write('closed');
`;

test('a script ending in await closeLocalBoxHost() exits 0, ten times in a row', { timeout: 180_000 }, async () => {
  for (let attempt = 1; attempt <= 10; attempt += 1) {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLOSING_SCRIPT], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, `attempt ${attempt} exited ${code}: ${stderr}`);
    assert.equal(stdout, 'closed', `attempt ${attempt}`);
  }
});
