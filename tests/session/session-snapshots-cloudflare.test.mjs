// Session snapshots and forks on Cloudflare (workerd, the real Sandbox Durable Object on a local
// Box host): its container API has no snapshots (the SDK's backups need an R2 bucket and run in
// its Durable Object), so every row answers SANDBOX_NOT_SUPPORTED naming the provider and the
// operation, and nothing is silently done: the Session keeps running after a refused snapshot.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sandboxWorkerOnBoxHost } from '../fixtures/cloudflare/bundle-worker.mjs';

const WORKER = `
import { Sandbox as RealSandbox } from '@cloudflare/sandbox';
import { sandboxOnBoxHost } from './tests/fixtures/cloudflare/box-host-container.mjs';
import { configureSandbox, openSandboxSession, forkSandboxSession, listSandboxSnapshots, deleteSandboxSnapshot } from '@vite-hub/sandbox';

export const Sandbox = sandboxOnBoxHost(RealSandbox);

const attempt = async (f) => {
  try {
    return { value: await f() };
  } catch (error) {
    return { error: { code: error.code, message: error.message, details: error.details } };
  }
};

export default {
  async fetch(request, env) {
    configureSandbox({ provider: 'cloudflare', env });
    const steps = {};
    const session = await openSandboxSession();
    try {
      await session.write('kept.txt', 'k');
      steps.snapshot = await attempt(() => session.snapshot());
      steps.statusAfter = session.status;
      steps.stillReads = await session.readText('kept.txt');
      steps.fork = await attempt(() => forkSandboxSession(session));
      steps.forkById = await attempt(() => forkSandboxSession(session.id));
      steps.list = await attempt(() => listSandboxSnapshots());
      steps.delete = await attempt(() => deleteSandboxSnapshot('snap_x'));
      steps.open = await attempt(() => openSandboxSession({ snapshotId: 'snap_x' }));
    } finally {
      await session.close();
    }
    return Response.json(steps);
  },
};
`;

let worker;
before(async () => {
  worker = await sandboxWorkerOnBoxHost(WORKER, 'cf-snapshots');
});
after(async () => {
  await worker?.close();
});

test('cloudflare: snapshot, fork, list, delete and open from a snapshot are SANDBOX_NOT_SUPPORTED, naming the operation', async () => {
  const response = await worker.miniflare.dispatchFetch('http://worker.test/session');
  const steps = await response.json();
  assert.equal(response.status, 200, JSON.stringify(steps));
  const refused = (step, operation) => {
    assert.equal(step.error?.code, 'SANDBOX_NOT_SUPPORTED', JSON.stringify(step));
    assert.equal(step.error.details.operation, operation);
    assert.equal(step.error.details.provider, 'cloudflare');
    assert.match(step.error.message, /cloudflare provider does not support (snapshot|fork)/);
  };
  refused(steps.snapshot, 'snapshot');
  assert.equal(steps.statusAfter, 'running', 'a refused snapshot leaves the Session as it was');
  assert.equal(steps.stillReads, 'k');
  refused(steps.fork, 'fork');
  refused(steps.forkById, 'fork');
  refused(steps.list, 'snapshot');
  refused(steps.delete, 'snapshot');
  refused(steps.open, 'snapshot');
});
