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

test('a script that runs Definitions on the local provider exits on its own after its last Run', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  const { phases, held } = JSON.parse(stdout);
  assert.ok(!held.includes('TCPServerWrap'), `the host's server holds the event loop after the last Run: ${held.join(', ')}`);
  assert.ok(phases[0].includes('connect'), `the first Run set up the connection: ${phases[0]}`);
  assert.ok(!phases[1].includes('connect') && !phases[1].includes('host'), `the second Run was warm: ${phases[1]}`);
});
