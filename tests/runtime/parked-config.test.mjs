// `local.parked` reaches the in-process Box host (crates/core/src/provider/local/options.rs,
// index.node.mjs's starter): by default a Run after the host's spare Boxes are made runs in a
// process started before it asked; `{ size: 0 }` turns that off; a bad value is named. So does
// `local.memoryRequestBytes`.
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
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify(config)], {
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

test('the in-process host parks Node processes by default, and local.parked { size: 0 } turns it off', {
  skip: NO_BWRAP,
}, async () => {
  const [parked, off] = await Promise.all([
    child({ provider: 'local' }),
    child({ provider: 'local', local: { parked: { size: 0 } } }),
  ]);
  // The second Run's process waited in a spare Box made when the first Run's Box stopped, 2 s before.
  assert.ok(parked.second >= 1500, `default: the second Run's process was ${parked.second} ms old`);
  assert.ok(off.second < 1000, `size 0: the second Run's process was ${off.second} ms old`);
});

test('a bad local.parked number is SANDBOX_INVALID_ARGUMENT naming the key and its range', async () => {
  const cases = [
    [{ size: 17 }, /local\.parked\.size is 17; it must be an integer from 0 to 16/],
    [{ size: -1 }, /local\.parked\.size is -1; it must be an integer from 0 to 16/],
    [{ size: 1.5 }, /local\.parked\.size is 1\.5; it must be an integer from 0 to 16/],
    [{ idleMs: 0 }, /local\.parked\.idleMs is 0; it must be an integer from 1 to 3600000 ms/],
    [{ idleMs: -5 }, /local\.parked\.idleMs is -5; it must be an integer from 1 to 3600000 ms/],
  ];
  const refused = await Promise.all(cases.map(([parked]) => child({ provider: 'local', local: { parked } })));
  for (const [index, [parked, words]] of cases.entries()) {
    assert.equal(
      refused[index].refused,
      'SANDBOX_INVALID_ARGUMENT',
      `${JSON.stringify(parked)}: ${JSON.stringify(refused[index])}`,
    );
    assert.match(refused[index].message, words);
  }
});

test('local.memoryRequestBytes reaches the in-process host; a bad one is SANDBOX_INVALID_ARGUMENT naming the key and its range', {
  skip: NO_BWRAP,
}, async () => {
  const [accepted, ...refused] = await Promise.all([
    child({ provider: 'local', local: { memoryRequestBytes: 64 * 1024 * 1024 } }),
    ...[5, 1048576.5, 2 ** 41, '512'].map((memoryRequestBytes) =>
      child({ provider: 'local', local: { memoryRequestBytes } }),
    ),
  ]);
  // The host started with it (startBoxHost checks it too) and ran both Runs.
  assert.equal(typeof accepted.second, 'number', JSON.stringify(accepted));
  for (const [index, shown] of ['5', '1048576.5', '2199023255552', '"512"'].entries()) {
    assert.equal(refused[index].refused, 'SANDBOX_INVALID_ARGUMENT', JSON.stringify(refused[index]));
    assert.ok(
      refused[index].message.includes(
        `local.memoryRequestBytes is ${shown}; it must be an integer from 1048576 to 1099511627776 bytes`,
      ),
      refused[index].message,
    );
  }
});

test('startBoxHost refuses a bad parked number naming parked.size / parked.idleMs and the range', async () => {
  const { startBoxHost } = await import('@vite-hub/sandbox/box-host');
  await assert.rejects(
    startBoxHost({ isolation: 'none', parked: { size: 1.5 } }),
    /parked\.size must be an integer from 0 to 16, got 1\.5/,
  );
  await assert.rejects(
    startBoxHost({ isolation: 'none', parked: { size: -1 } }),
    /parked\.size must be an integer from 0 to 16, got -1/,
  );
  await assert.rejects(
    startBoxHost({ isolation: 'none', parked: { idleMs: 0 } }),
    /parked\.idleMs must be an integer number of ms from 1 to 3600000, got 0/,
  );
});
