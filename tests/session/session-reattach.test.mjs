// Reattaching on the local provider (a real local Box host, real processes): `openSandboxSession({
// id })` from another Node process with the same config (a standalone host at local.baseUrl)
// reads a detached Command of the first process by its id; `listSandboxSessions()` lists the
// host's Boxes; a reattached Session's close() stops the Box; a stopped or unknown id is refused;
// and an in-process host, whose Boxes belong to its own process, says so.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { listSandboxSessions, openSandboxSession } from '@vite-hub/sandbox';
import { useLocalHost } from '../support/local-host.mjs';

let host;
before(async () => {
  host = await useLocalHost();
});
after(async () => {
  await host.close();
});

/** Runs `source` (an ES module) in a new Node process with `env`; its stdout parsed as JSON. */
function inChild(source, env) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', source],
      { env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) return reject(Object.assign(error, { stderr }));
        try {
          resolve(JSON.parse(stdout.trim().split('\n').at(-1)));
        } catch {
          reject(new Error(`the child printed no JSON: ${stdout}\n${stderr}`));
        }
      },
    );
  });
}

const CHILD = `
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
const { BASE_URL, TOKEN, BOX_ID, CMD_ID } = process.env;
configureSandbox({ provider: 'local', local: BASE_URL ? { baseUrl: BASE_URL, token: TOKEN } : {} });
try {
  const session = await openSandboxSession({ id: BOX_ID });
  const command = await session.command(CMD_ID);
  let stdout = '';
  for await (const entry of command.logs()) if (entry.stream === 'stdout') stdout += entry.data;
  const exit = await command.wait();
  console.log(JSON.stringify({ id: session.id, status: session.status, network: session.executionAuthority.network, stdout, exit }));
} catch (error) {
  console.log(JSON.stringify({ error: { code: error.code, message: error.message, details: error.details } }));
}
`;

test('a second process reattaches by id and reads a detached Command of the first by its id', async () => {
  const session = await openSandboxSession();
  try {
    const detached = await session.spawn('sh', ['-c', 'echo from the first process; echo line two']);
    const listed = await listSandboxSessions();
    const mine = listed.find((entry) => entry.id === session.id);
    assert.equal(mine?.status, 'running');
    assert.ok(mine.createdAt instanceof Date && mine.expiresAt instanceof Date);
    assert.ok(Object.isFrozen(mine));

    const child = await inChild(CHILD, {
      BASE_URL: host.baseUrl,
      TOKEN: host.token,
      BOX_ID: session.id,
      CMD_ID: detached.id,
    });
    assert.deepEqual(child, {
      id: session.id,
      status: 'running',
      network: session.executionAuthority.network,
      stdout: 'from the first process\nline two\n',
      exit: { exitCode: 0, ok: true },
    });
    // The second process did not close it: the Box still runs for this one.
    assert.equal((await session.exec('true')).exitCode, 0);
  } finally {
    await session.close();
  }
});

test("a reattached Session's close() stops the Box; a stopped or unknown id is refused", async () => {
  const first = await openSandboxSession();
  const again = await openSandboxSession({ id: first.id });
  assert.equal(again.id, first.id);
  assert.ok(again.expiresAt instanceof Date);
  assert.ok(Math.abs(again.expiresAt.getTime() - first.expiresAt.getTime()) < 60_000);
  await again.close();
  assert.equal(again.status, 'stopped');
  await assert.rejects(first.exec('true'), { code: 'SANDBOX_INVALID_STATE' });
  await first.close();
  await assert.rejects(openSandboxSession({ id: first.id }), (error) => {
    assert.equal(error.code, 'SANDBOX_INVALID_STATE');
    assert.match(error.message, /stopped/);
    return true;
  });
  await assert.rejects(openSandboxSession({ id: 'sbx_nothere' }), (error) => {
    assert.equal(error.code, 'SANDBOX_TRANSPORT_ERROR');
    assert.equal(error.details?.status, 404);
    assert.match(error.message, /local\.baseUrl has no Box/);
    return true;
  });
  await assert.rejects(openSandboxSession({ id: first.id, timeout: 1000 }), { code: 'SANDBOX_INVALID_ARGUMENT' });
  await assert.rejects(openSandboxSession({ id: 'a/b' }), { code: 'SANDBOX_INVALID_ARGUMENT' });
});

test("another process's in-process host does not have the Box, and the error says how to share one", async () => {
  const session = await openSandboxSession();
  try {
    const child = await inChild(CHILD, { BOX_ID: session.id, CMD_ID: 'cmd_x' });
    assert.equal(child.error?.code, 'SANDBOX_TRANSPORT_ERROR');
    assert.equal(child.error.details?.status, 404);
    assert.match(child.error.message, /in-process local Box host has no Box/);
    assert.match(child.error.message, /vite-hub-sandbox host/);
    assert.match(child.error.message, /baseUrl/);
  } finally {
    await session.close();
  }
});
