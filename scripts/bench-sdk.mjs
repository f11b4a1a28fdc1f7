// The official `@vercel/sandbox` SDK used by hand against a local Box host: what runSandbox is
// compared with (scripts/bench.mjs). Each flow resolves to its own ms, from its first request to
// its parsed result; the Box's `stop()` comes after that clock stopped, and is awaited before the
// flow resolves (CLOCK_RULE in bench-comparisons.mjs). Also the proxy that adds a fixed delay to
// every request, a stand-in for a provider's round trip.
import http from 'node:http';
import { Sandbox } from '@vercel/sandbox';

const VERCEL_API = 'https://vercel.com/api';
/** The runner a user writes next to the Definition's files: import the entry, print its JSON. */
const RUNNER =
  "const m = await import('./index.mjs'); process.stdout.write(JSON.stringify(await m.default(JSON.parse(process.argv[2]))));\n";

/** Options of `Sandbox.create` for the host at `baseUrl` (its requests rewritten to it). */
const connection = (baseUrl, token) => ({
  token,
  teamId: 'team_local',
  projectId: 'prj_local',
  fetch: (url, init) => globalThis.fetch(String(url).replace(VERCEL_API, baseUrl), init),
});

/** The Definition's files and the runner, as `writeFiles` takes them. */
const withRunner = (files) =>
  [...files, { path: 'runner.mjs', content: RUNNER }].map((f) => ({ path: f.path, content: Buffer.from(f.content) }));

async function checked(sandbox, command, args) {
  const done = await sandbox.runCommand(command, args);
  if (done.exitCode !== 0)
    throw new Error(`${command} ${args[0]} exited ${done.exitCode}: ${(await done.stderr()).slice(-300)}`);
  return done;
}

/** Runs the runner with `payload` in `sandbox`; its printed result, parsed. */
async function runAndRead(sandbox, payload) {
  return JSON.parse(await (await checked(sandbox, 'node', ['runner.mjs', JSON.stringify(payload)])).stdout());
}

/**
 * Times `work(sandbox)` (which ends at the parsed result) from the create of its Box (made by
 * `create`, inside the clock), then stops the Box outside the clock; resolves to the ms.
 */
async function timedToResult(create, work) {
  const started = performance.now();
  const sandbox = await create();
  try {
    await work(sandbox);
    return performance.now() - started;
  } finally {
    await sandbox.stop();
  }
}

/**
 * The SDK flow: create a Box, write the files and the runner, `npm ci` when `install`, run,
 * read; resolves to its ms.
 * @param {{ baseUrl: string, token: string, files: {path: string, content: string}[], payload: unknown, install: boolean }} flow
 */
export function sdkFlow({ baseUrl, token, files, payload, install }) {
  return timedToResult(
    () => Sandbox.create(connection(baseUrl, token)),
    async (sandbox) => {
      await sandbox.writeFiles(withRunner(files));
      if (install) await checked(sandbox, 'npm', ['ci', '--no-audit', '--no-fund']);
      await runAndRead(sandbox, payload);
    },
  );
}

/**
 * What a user does once by hand: a Box with the files written and `npm ci` run, then
 * `sandbox.snapshot()` (which stops it). Resolves to the snapshot's id.
 */
export async function sdkSnapshot({ baseUrl, token, files }) {
  const sandbox = await Sandbox.create(connection(baseUrl, token));
  try {
    await sandbox.writeFiles(withRunner(files));
    await checked(sandbox, 'npm', ['ci', '--no-audit', '--no-fund']);
    return (await sandbox.snapshot()).snapshotId;
  } catch (error) {
    await sandbox.stop();
    throw error;
  }
}

/** The SDK flow from that snapshot: create from it, write the files, run, read; resolves to its ms. */
export function sdkFromSnapshot({ baseUrl, token, snapshotId, files, payload }) {
  return timedToResult(
    () => Sandbox.create({ ...connection(baseUrl, token), source: { type: 'snapshot', snapshotId } }),
    async (sandbox) => {
      await sandbox.writeFiles(withRunner(files));
      await runAndRead(sandbox, payload);
    },
  );
}

/**
 * One `node` exec on an already prepared Box: the Box is created and its files written before the
 * clock starts; only `runCommand('node', ['runner.mjs', payload])` to its parsed result is timed.
 * Resolves to its ms once the Box is stopped.
 */
export async function sdkExecOnPreparedBox({ baseUrl, token, files, payload }) {
  const sandbox = await Sandbox.create(connection(baseUrl, token));
  try {
    await sandbox.writeFiles(withRunner(files));
    const started = performance.now();
    await runAndRead(sandbox, payload);
    return performance.now() - started;
  } finally {
    await sandbox.stop();
  }
}

/** A proxy to `target` that holds every request `delayMs` before passing it on; `{ url, close }`. */
export async function startDelayProxy(target, delayMs) {
  const targetUrl = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    setTimeout(() => {
      const upstream = http.request(
        {
          host: targetUrl.hostname,
          port: targetUrl.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent,
        },
        (answer) => {
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', (error) => res.destroy(error));
      req.pipe(upstream);
    }, delayMs);
  });
  await /** @type {Promise<void>} */ (new Promise((resolve) => server.listen(0, '127.0.0.1', resolve)));
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}
