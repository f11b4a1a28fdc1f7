// The Box network made ahead (box-spares.mjs, issue 12's warm-run target): a create takes a
// network started before it was asked for, each goes to one Box only, a new one is made once the
// taking Box runs its first command, and a closed host leaves none behind.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { BoxRegistry } from '../../pkg-template/box-host/engine/registry.mjs';
import { BoxSpares } from '../../pkg-template/box-host/engine/box-spares.mjs';
import { bubblewrapWorks, hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { until } from '../support/local-host.mjs';

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

async function output(command) {
  await command.waitExit();
  return command.logs
    .filter((entry) => entry.stream === 'stdout')
    .map((entry) => entry.data)
    .join('');
}

test('a create takes the network made ahead; each goes to one Box, and a new one follows', {
  skip: !canBwrap || !features.netTool,
}, async () => {
  const registry = new BoxRegistry({
    boxRoot: tempDir(),
    isolation: 'bubblewrap',
    maxBoxes: 4,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features,
    spares: true,
  });
  try {
    const { spares } = registry;
    assert.ok(await until(() => spares.networks.ready !== undefined, 4000), 'timed out waiting for the first spare');
    const readyNetwork = spares.networks.ready;
    const first = await registry.create({});
    assert.equal(first.network, readyNetwork);
    // Not made anew before the Box runs a command (the create and the file writes go first).
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(spares.networks.ready, undefined);
    const firstOut = await output(
      first.runCommand({ command: 'sh', args: ['-c', 'readlink /proc/self/ns/net; echo secret > /tmp/mark'] }),
    );
    assert.ok(await until(() => spares.networks.ready !== undefined, 4000), 'timed out waiting for the next spare');
    assert.notEqual(spares.networks.ready.netns, first.network.netns);
    const second = await registry.create({});
    assert.notEqual(second.root, first.root);
    assert.notEqual(second.network.netns, first.network.netns);
    const secondOut = await output(
      second.runCommand({
        command: 'sh',
        args: ['-c', 'readlink /proc/self/ns/net; cat /tmp/mark 2>/dev/null || echo no-mark'],
      }),
    );
    assert.notEqual(secondOut.split('\n')[0], firstOut.split('\n')[0], 'two Boxes share a network namespace');
    assert.equal(secondOut.split('\n')[1], 'no-mark');
    await first.stop();
    await second.stop();
  } finally {
    await registry.stopAll();
  }
});

/** The slirp4netns helpers of this process (one per Box network). */
function slirpHelpers() {
  return execFileSync('ps', ['-o', 'comm=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((name) => name === 'slirp4netns');
}

test('a create that finds the spare network still being made waits for it instead of starting a second', {
  skip: !canBwrap || !features.netTool,
}, async () => {
  assert.ok(
    await until(() => slirpHelpers().length === 0, 4000),
    'timed out waiting for the helpers of earlier tests to end',
  );
  const spares = new BoxSpares({ networks: true });
  let network;
  try {
    assert.ok(spares.networks.making, 'a spare is on its way from the start');
    network = await spares.network();
    assert.ok(network?.alive(), 'the network being made was handed over once up');
    assert.equal(spares.networks.ready, undefined, 'it went to this caller');
    assert.equal(slirpHelpers().length, 1, 'no second network was started');
  } finally {
    network?.stop();
    await spares.close();
  }
  assert.ok(await until(() => slirpHelpers().length === 0, 4000), 'timed out waiting for the helpers to end');
  // The same through a create right after the registry (and its spare) was made.
  const registry = new BoxRegistry({
    boxRoot: tempDir(),
    isolation: 'bubblewrap',
    maxBoxes: 2,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features,
    spares: true,
  });
  try {
    const box = await registry.create({});
    assert.ok(box.network?.alive());
    assert.equal(slirpHelpers().length, 1, 'the create took the spare being made');
    await box.stop();
  } finally {
    await registry.stopAll();
  }
});

test('a closed host leaves no Box directory, mount or spare network helper behind, of its spare Boxes either', {
  skip: !canBwrap || !features.netTool,
}, async () => {
  const boxRoot = tempDir();
  const real = fs.realpathSync(boxRoot);
  const host = await startBoxHost({ boxRoot, isolation: 'bubblewrap' });
  try {
    // The spare Boxes with a parked process (parked-boxes.mjs), each on a Box network of its own.
    assert.ok(
      await until(() => host.parked().ready === 2, 4000),
      `timed out waiting for the spare Boxes: ${JSON.stringify(host.parked())}`,
    );
    assert.equal(fs.readdirSync(boxRoot).length, 2);
    assert.ok(slirpHelpers().length >= 2, 'the spare Boxes have no networks');
  } finally {
    await host.close();
  }
  assert.deepEqual(fs.readdirSync(boxRoot), []);
  assert.ok(!fs.readFileSync('/proc/self/mountinfo', 'utf8').includes(real));
  assert.ok(
    await until(() => slirpHelpers().length === 0, 4000),
    'timed out waiting for the spare network helpers to end',
  );
});
