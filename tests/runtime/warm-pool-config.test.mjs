// The warm pool across configureSandbox (issue 34 item 2): a Run under one config never takes a
// Box a Run of the config it replaced opened. Two real local Box hosts and their counters.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { closeWarmPools, configureSandbox, listWarmPools, startSandbox } from '@vite-hub/sandbox';
import { defineTestSandbox, until } from '../support/local-host.mjs';

let first;
let second;
let stateDir;

before(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-warm-pool-config-test-'));
  first = await startBoxHost({ stateDir: path.join(stateDir, 'first') });
  second = await startBoxHost({ stateDir: path.join(stateDir, 'second') });
});

after(async () => {
  configureSandbox({});
  await closeWarmPools();
  await first?.close();
  await second?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

const use = (host) =>
  configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, warmPool: { size: 1 } });
const count = (host, route) => host.counters().requests[route] ?? 0;

test('a Run in flight across configureSandbox fills no pool the new config takes from', async () => {
  use(first);
  // The handler holds its Box until the test has replaced the config.
  defineTestSandbox(
    'pool/switch',
    'export default async (n) => { await new Promise((r) => setTimeout(r, 1500)); return n; };',
  );
  const inFlight = startSandbox('pool/switch', 1);
  assert.ok(await until(() => count(first, 'cmd') === 1, 20_000), JSON.stringify(first.counters()));
  use(second);
  const response = await inFlight.response();
  assert.deepEqual([response.status, await response.json()], [200, 1]);
  await inFlight.closed();
  // Whatever the old config's Run refilled has landed.
  assert.ok(await until(() => listWarmPools().every((p) => p.opening === 0), 20_000));
  const cmdsOnFirst = count(first, 'cmd');
  const next = startSandbox('pool/switch', 2);
  const answer = await next.response();
  assert.deepEqual([answer.status, await answer.json()], [200, 2]);
  await next.closed();
  assert.equal(count(first, 'cmd'), cmdsOnFirst, 'the Run under the new config ran on the replaced config host');
  assert.equal(count(second, 'cmd'), 1);
  await closeWarmPools();
  for (const host of [first, second]) {
    assert.ok(
      await until(() => count(host, 'create') === count(host, 'stop'), 20_000),
      JSON.stringify(host.counters()),
    );
  }
});

test('a Run in flight across closeWarmPools refills no pool (closeLocalBoxHost drains first)', async () => {
  use(first);
  defineTestSandbox(
    'pool/drained',
    'export default async (n) => { await new Promise((r) => setTimeout(r, 1500)); return n; };',
  );
  const cmds = count(first, 'cmd');
  const inFlight = startSandbox('pool/drained', 1);
  assert.ok(await until(() => count(first, 'cmd') === cmds + 1, 20_000), JSON.stringify(first.counters()));
  await closeWarmPools();
  const response = await inFlight.response();
  assert.deepEqual([response.status, await response.json()], [200, 1]);
  await inFlight.closed();
  // A refill would be under way (or landed) by now: it starts before the Run's Box is given back.
  assert.deepEqual(listWarmPools(), []);
  assert.ok(
    await until(() => count(first, 'create') === count(first, 'stop'), 20_000),
    JSON.stringify(first.counters()),
  );
});

test('an edited Definition (same name, new digest) closes the pool of its old version', async () => {
  use(first);
  const answer = async () => {
    const run = startSandbox('pool/edited');
    const response = await run.response();
    const body = await response.json();
    await run.closed();
    assert.ok(await until(() => listWarmPools().every((p) => p.opening === 0), 20_000));
    return body;
  };
  defineTestSandbox('pool/edited', 'export default () => 1;');
  assert.equal(await answer(), 1);
  defineTestSandbox('pool/edited', 'export default () => 2;');
  assert.equal(await answer(), 2);
  assert.deepEqual(
    listWarmPools().filter((p) => p.name === 'pool/edited'),
    [{ name: 'pool/edited', idle: 1, opening: 0 }],
  );
  // Only the new version's pooled Box is open.
  assert.ok(
    await until(() => count(first, 'create') === count(first, 'stop') + 1, 20_000),
    JSON.stringify(first.counters()),
  );
  await closeWarmPools();
});
