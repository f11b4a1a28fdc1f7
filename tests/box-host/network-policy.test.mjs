// A running Box's network policy (engine/network-policy.mjs): the registry's create rule decides
// what a change means and what this host refuses, the Box reports the executionAuthority of the
// new policy, and a parked Node process started under the old policy serves no later command.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BoxRegistry } from '../../pkg-template/box-host/engine/registry.mjs';
import { hostFeatures } from '../../pkg-template/box-host/engine/isolation.mjs';
import { applyNetworkPolicy } from '../../pkg-template/box-host/engine/network-policy.mjs';
import { NO_BWRAP, until } from '../support/local-host.mjs';

const registries = [];
const temps = [];
after(async () => {
  await Promise.all(registries.map((registry) => registry.stopAll()));
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

async function registryWith(options) {
  const boxRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-policy-'));
  temps.push(boxRoot);
  const registry = new BoxRegistry({ boxRoot, maxBoxes: 2, features: await hostFeatures(), ...options });
  registries.push(registry);
  return registry;
}

test('deny-all retires the parked process and reports network none; allow-all reports the Box network again', {
  skip: NO_BWRAP,
}, async () => {
  const registry = await registryWith({ isolation: 'bubblewrap', spares: true, parked: { size: 1, idleMs: 60_000 } });
  assert.ok(await until(() => registry.parked.readyCount === 1));
  const box = await registry.create({});
  try {
    assert.ok(box.hasParked, 'the Box came from a spare with its parked Node');
    const before = box.executionAuthority;
    await applyNetworkPolicy(registry, box, { mode: 'deny-all' });
    assert.equal(box.hasParked, false, 'a parked process of the old policy is ended');
    assert.equal(box.executionAuthority.network, 'none');
    assert.deepEqual(box.sessionJSON().networkPolicy, { mode: 'deny-all' });
    assert.deepEqual(box.sandboxJSON().networkPolicy, { mode: 'deny-all' });
    const node = box.runCommand({ command: 'node', args: ['-e', 'console.log(1)'] });
    assert.equal(await node.waitExit(), 0);
    assert.equal(box.handedOver, undefined, 'no command took a process of the old policy');
    await applyNetworkPolicy(registry, box, 'allow-all');
    assert.deepEqual(box.executionAuthority, before);
    assert.deepEqual(registry.executionAuthorityFor(undefined), before, 'the same rule as a create');
  } finally {
    await box.stop();
  }
  await assert.rejects(applyNetworkPolicy(registry, box, 'deny-all'), { status: 410 });
});

test('what this host cannot express or enforce is refused as at create', async () => {
  const registry = await registryWith({ isolation: 'none' });
  const box = await registry.create({});
  try {
    assert.throws(() => applyNetworkPolicy(registry, box, { allow: ['example.com'] }), { status: 400 });
    assert.throws(() => applyNetworkPolicy(registry, box, 'deny-all'), { status: 503, code: 'isolation_unavailable' });
    assert.equal(box.networkDenied, false);
  } finally {
    await box.stop();
  }
});
