// `local.parked` reaches the in-process Box host (crates/core/src/provider/local/options.rs,
// index.node.mjs's starter): by default a Run after the host's spare Boxes are made runs in a
// process started before it asked; `{ size: 0 }` turns that off; a bad value is named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NO_BWRAP } from '../support/local-host.mjs';

const run = promisify(execFile);

/** A fresh Node process with its own in-process host, configured with `config`: two Runs' process uptime (ms), 2 s apart. */
const CHILD = `
import { configureSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
try {
  configureSandbox(JSON.parse(process.argv[1]));
} catch (error) {
  console.log(JSON.stringify({ refused: error.code, message: error.message }));
  process.exit(0);
}
registerSandbox('uptime', { files: [
  { path: 'package.json', content: '{"type":"module"}' },
  { path: 'index.mjs', content: 'export default () => process.uptime() * 1000' },
] });
const uptime = async () => {
  const response = await runSandbox('uptime');
  if (response.status !== 200) throw new Error(await response.text());
  return response.json();
};
const first = await uptime();
await new Promise((resolve) => setTimeout(resolve, 2000));
console.log(JSON.stringify({ first, second: await uptime() }));
process.exit(0);
`;

async function child(config) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify(config)], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

test('the in-process host parks Node processes by default, and local.parked { size: 0 } turns it off', { skip: NO_BWRAP }, async () => {
  const [parked, off] = await Promise.all([child({ provider: 'local' }), child({ provider: 'local', local: { parked: { size: 0 } } })]);
  // The second Run's process waited in a spare Box made when the first Run's Box stopped, 2 s before.
  assert.ok(parked.second >= 1500, `default: the second Run's process was ${parked.second} ms old`);
  assert.ok(off.second < 1000, `size 0: the second Run's process was ${off.second} ms old`);
});

test('an out-of-range local.parked is SANDBOX_INVALID_ARGUMENT naming the key', async () => {
  const refused = await child({ provider: 'local', local: { parked: { size: 17 } } });
  assert.equal(refused.refused, 'SANDBOX_INVALID_ARGUMENT', JSON.stringify(refused));
  assert.match(refused.message, /local\.parked\.size is 17; it must be from 0 to 16/);
});
