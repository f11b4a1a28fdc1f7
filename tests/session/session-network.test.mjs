// `session.updateNetworkPolicy(policy)` on the local provider (a real local Box host, real
// processes, the Box network of slirp4netns where installed): the Commands started after a change
// get the new network, a Command already running keeps the one it started with, and
// `executionAuthority` follows. The Box reaches a TCP listener of this machine on its
// non-loopback address (the Box network has no host loopback).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import os from 'node:os';
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { NO_BWRAP, useLocalHost } from '../support/local-host.mjs';

let host;
let listener;
let address;
before(async () => {
  host = await useLocalHost();
  listener = net.createServer((socket) => socket.end('hello from the host\n'));
  await new Promise((resolve) => listener.listen(0, '0.0.0.0', resolve));
  const ipv4 = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  address = ipv4 && { host: ipv4.address, port: listener.address().port };
});
after(async () => {
  await new Promise((resolve) => listener.close(resolve));
  await host.close();
});

/** A Node script that connects to the listener and prints `connected` or the error code (exit 3). */
const connectScript = (to) =>
  `const s=require('net').connect(${to.port},${JSON.stringify(to.host)});` +
  `s.setTimeout(10000,()=>{console.log('ETIMEDOUT');process.exit(3)});` +
  `s.on('data',()=>{console.log('connected');process.exit(0)});` +
  `s.on('error',(e)=>{console.log(e.code);process.exit(3)})`;

const NO_ADDRESS = 'this machine has no non-loopback IPv4 address';

test('deny-all cuts the next Commands off, a running one keeps its network, allow-all gives it back', {
  skip: NO_BWRAP,
}, async (t) => {
  if (!address) return t.skip(NO_ADDRESS);
  const session = await openSandboxSession();
  try {
    const open = await session.exec('node', ['-e', connectScript(address)]);
    assert.deepEqual([open.exitCode, open.stdout.trim()], [0, 'connected'], open.stderr);
    const before = session.executionAuthority;
    assert.notEqual(before.network, 'none');

    // Started before the change: it connects when told to, after it.
    const running = await session.spawn('node', ['-e', `process.stdin.once('data',()=>{${connectScript(address)}})`], {
      stdin: true,
    });
    await session.updateNetworkPolicy('deny-all');
    assert.equal(session.executionAuthority.network, 'none');
    assert.ok(Object.isFrozen(session.executionAuthority));
    const cut = await session.exec('node', ['-e', connectScript(address)]);
    assert.equal(cut.exitCode, 3, cut.stdout + cut.stderr);
    assert.notEqual(cut.stdout.trim(), 'connected');
    await running.writeStdin('go\n');
    let kept = '';
    for await (const entry of running.logs()) kept += entry.data;
    assert.equal(kept.trim(), 'connected', 'a Command running before deny-all keeps its network');

    await session.updateNetworkPolicy({ mode: 'allow-all' });
    assert.deepEqual(session.executionAuthority, before);
    const again = await session.exec('node', ['-e', connectScript(address)]);
    assert.deepEqual([again.exitCode, again.stdout.trim()], [0, 'connected'], again.stderr);
  } finally {
    await session.close();
  }
});

test('a Box opened under deny-all gets a network with allow-all', { skip: NO_BWRAP }, async (t) => {
  if (!address) return t.skip(NO_ADDRESS);
  configureSandbox({
    provider: 'local',
    local: { baseUrl: host.baseUrl, token: host.token, networkPolicy: 'deny-all' },
  });
  try {
    const session = await openSandboxSession();
    try {
      assert.equal(session.executionAuthority.network, 'none');
      const cut = await session.exec('node', ['-e', connectScript(address)]);
      assert.equal(cut.exitCode, 3, cut.stdout + cut.stderr);
      await session.updateNetworkPolicy('allow-all');
      assert.notEqual(session.executionAuthority.network, 'none');
      const open = await session.exec('node', ['-e', connectScript(address)]);
      assert.deepEqual([open.exitCode, open.stdout.trim()], [0, 'connected'], open.stderr);
    } finally {
      await session.close();
    }
  } finally {
    configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
  }
});

test('what the local Box host cannot enforce is refused before any request, naming the argument', async () => {
  const session = await openSandboxSession();
  try {
    const before = host.counters().requests['network-policy'] ?? 0;
    for (const policy of [{ allow: ['example.com'] }, 'no-access', ['deny-all']]) {
      await assert.rejects(session.updateNetworkPolicy(policy), (error) => {
        assert.equal(error.code, 'SANDBOX_INVALID_ARGUMENT');
        assert.match(error.message, /updateNetworkPolicy\(policy\)/);
        assert.doesNotMatch(error.message, /example\.com/);
        return true;
      });
    }
    assert.equal(host.counters().requests['network-policy'] ?? 0, before);
    await session.close();
    await assert.rejects(session.updateNetworkPolicy('deny-all'), { code: 'SANDBOX_INVALID_STATE' });
  } finally {
    await session.close();
  }
});
