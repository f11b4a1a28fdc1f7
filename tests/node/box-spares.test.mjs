// Box parts made ahead (box-spares.mjs, issue 12's warm-run target): a create takes a directory
// and a network made before it was asked for, each goes to one Box only, new ones are made once
// the taking Box runs its first command, and a closed host leaves none behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { BoxRegistry } from '../../pkg-template/box-host/registry.mjs';
import { bubblewrapWorks, hostFeatures } from '../../pkg-template/box-host/isolation.mjs';

const features = await hostFeatures();
const canBwrap = await bubblewrapWorks();
const temps = [];
after(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-spares-'));
  temps.push(dir);
  return dir;
}

async function until(check, what) {
  for (let i = 0; i < 400; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function output(command) {
  await command.waitExit();
  return command.logs.filter((entry) => entry.stream === 'stdout').map((entry) => entry.data).join('');
}

test('a create takes the directory and network made ahead; each goes to one Box, and new ones follow', { skip: !canBwrap || !features.netTool }, async () => {
  const registry = new BoxRegistry({ boxRoot: tempDir(), isolation: 'bubblewrap', maxBoxes: 4, maxQueued: 0, maxQueueWaitMs: 0, features, spares: true });
  try {
    const { spares } = registry;
    await until(() => spares.roots.ready !== undefined && spares.networks.ready !== undefined, 'the first spares');
    const readyRoot = spares.roots.ready;
    const readyNetwork = spares.networks.ready;
    const first = await registry.create({});
    assert.equal(first.root, readyRoot);
    assert.equal(first.network, readyNetwork);
    // Not made anew before the Box runs a command (the create and the file writes go first).
    assert.equal(spares.roots.ready, undefined);
    const firstOut = await output(first.runCommand({ command: 'sh', args: ['-c', 'readlink /proc/self/ns/net; echo secret > /tmp/mark'] }));
    await until(() => spares.roots.ready !== undefined && spares.networks.ready !== undefined, 'the next spares');
    const second = await registry.create({});
    assert.notEqual(second.root, first.root);
    assert.notEqual(second.network.netns, first.network.netns);
    const secondOut = await output(second.runCommand({ command: 'sh', args: ['-c', 'readlink /proc/self/ns/net; cat /tmp/mark 2>/dev/null || echo no-mark'] }));
    assert.notEqual(secondOut.split('\n')[0], firstOut.split('\n')[0], 'two Boxes share a network namespace');
    assert.equal(secondOut.split('\n')[1], 'no-mark');
    await first.stop();
    await second.stop();
  } finally {
    await registry.stopAll();
  }
});

test('a closed host leaves no spare directory, mount or network helper behind', { skip: !canBwrap }, async () => {
  const boxRoot = tempDir();
  const host = await startBoxHost({ boxRoot, isolation: 'bubblewrap' });
  const real = fs.realpathSync(boxRoot);
  await until(() => fs.readdirSync(boxRoot).length === 1, 'the spare directory');
  if (features.diskBound) await until(() => fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(real), 'the spare disk mount');
  const helpers = () => execFileSync('ps', ['-o', 'comm=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n').filter((name) => name === 'slirp4netns');
  if (features.netTool) await until(() => helpers().length === 1, 'the spare network');
  await host.close();
  assert.deepEqual(fs.readdirSync(boxRoot), []);
  await until(() => helpers().length === 0, 'the spare network helpers to end');
  assert.ok(!fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(real));
});
