// The bench's server figures (scripts/bench.mjs `servers`): the first and second request of a
// freshly started server of examples/app, with the packed package installed from its tarball as a
// user installs it (tests/support/tarball-app.mjs): the built Nitro server (`SANDBOX_PROVIDER=local`)
// and `vite dev`. Each start sends its first request as soon as the server answers at all, then a
// second one; both measured from the client (`requestMs`) and by the Run's own Server-Timing total
// (`runMs`: in `vite dev` the first request also waits for Vite to transform the route, which is
// no cost of this package). Then what a user sees of `vite dev` (`devListening`, a start of its
// own): from the moment its port accepts a TCP connection (polled every 5 ms, the connection
// closed at once) to the first 200 of that request, sent right then (a non-200 answer is sent
// again, and counted), framework included, nothing warmed before it. Starts of all kinds are
// interleaved (rotated from one round to the next), all with the same environment.
import { execFile, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { installTarballApp } from '../tests/support/tarball-app.mjs';
import { serverTiming, stats } from './bench-stats.mjs';
import { eventually, freePort, postJson, removeDir, stopChild } from '../tests/support/vite-app.mjs';

const run = promisify(execFile);
const PAYLOAD = { notes: '# v1\n- ship it\n- fix the login bug' };

/** Resolves once `port` on 127.0.0.1 accepts a TCP connection (tried every 5 ms, each closed at once). */
async function accepting(port, deadlineMs, what) {
  const until = performance.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (performance.now() > until) throw new Error(`${what}: port ${port} never accepted a connection`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * `vite dev` started fresh; from its port accepting a connection to the first 200 of
 * /api/release-notes, sent at once: `{ ms, attempts }` (attempts: requests sent until the 200).
 */
async function listeningStart(app, env) {
  const port = await freePort();
  const vite = path.join(app, 'node_modules/vite/bin/vite.js');
  const args = [vite, 'dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'];
  const server = spawn(process.execPath, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  try {
    await accepting(port, 60_000, `vite dev (${output.slice(-300)})`);
    const started = performance.now();
    for (let attempts = 1; ; attempts += 1) {
      const answer = await postJson(`http://127.0.0.1:${port}/api/release-notes`, PAYLOAD);
      if (answer.status === 200) return { ms: performance.now() - started, attempts };
      if (performance.now() - started > 60_000)
        throw new Error(`vite dev: no 200 within 60 s of listening: ${answer.status} ${answer.text.slice(0, 300)}`);
    }
  } finally {
    await stopChild(server);
  }
}

/** Starts one server (`args` after node, in `app`), waits until it answers, then times two requests. */
async function oneStart(app, kind, env) {
  const port = await freePort();
  const vite = path.join(app, 'node_modules/vite/bin/vite.js');
  const args =
    kind === 'built'
      ? ['.output/server/index.mjs']
      : [vite, 'dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'];
  const serverEnv =
    kind === 'built' ? { ...env, PORT: String(port), HOST: '127.0.0.1', SANDBOX_PROVIDER: 'local' } : env;
  const server = spawn(process.execPath, args, { cwd: app, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  const base = `http://127.0.0.1:${port}`;
  try {
    await eventually(
      () => fetch(`${base}/__bench-ready`).then(() => true),
      60_000,
      `the ${kind} server to answer (${output.slice(-500)})`,
    );
    const requests = [];
    for (let i = 0; i < 2; i += 1) {
      const started = performance.now();
      const answer = await postJson(`${base}/api/release-notes`, PAYLOAD);
      const requestMs = performance.now() - started;
      if (answer.status !== 200)
        throw new Error(`${kind} server: /api/release-notes answered ${answer.status}: ${answer.text.slice(0, 300)}`);
      const phases = serverTiming(answer.headers.get('server-timing'));
      const total = Object.values(phases).reduce((sum, ms) => sum + ms, 0);
      requests.push({ requestMs, total, firstUse: 'host' in phases || 'connect' in phases });
    }
    return requests;
  } finally {
    await stopChild(server);
  }
}

/**
 * The `servers` figures: per kind (`built`, `dev`), `firstRequestMs`, `secondRequestMs`,
 * `firstRunMs`, `secondRunMs`, `firstOverSecondRun` (min / median / max of `reps` starts) and
 * `firstUsePhases` (how many first requests still showed a `host` or `connect` phase); and
 * `devListening`: `{ listenToFirst200Ms, attempts }` (`vite dev`, from its port accepting to the
 * first 200; attempts: requests sent per start until that 200).
 * @param {{ reps: number, env: Record<string, string> }} options
 */
export async function serverFirstRequests({ reps, env }) {
  const { app, packDir } = await installTarballApp('bench');
  try {
    await run(process.execPath, [path.join(app, 'node_modules/vite/bin/vite.js'), 'build'], {
      cwd: app,
      env,
      timeout: 300_000,
      maxBuffer: 16 << 20,
    });
    const samples = { built: [], dev: [] };
    const listening = [];
    const kinds = ['built', 'dev', 'devListening'];
    for (let i = 0; i < reps; i += 1) {
      const rotated = [...kinds.slice(i % 3), ...kinds.slice(0, i % 3)];
      for (const kind of i % 2 === 0 ? rotated : rotated.reverse()) {
        if (kind === 'devListening') listening.push(await listeningStart(app, env));
        else samples[kind].push(await oneStart(app, kind, env));
      }
    }
    const figures = {};
    for (const [kind, starts] of Object.entries(samples)) {
      figures[kind] = {
        firstRequestMs: stats(starts.map(([first]) => first.requestMs)),
        secondRequestMs: stats(starts.map(([, second]) => second.requestMs)),
        firstRunMs: stats(starts.map(([first]) => first.total)),
        secondRunMs: stats(starts.map(([, second]) => second.total)),
        firstOverSecondRun: stats(starts.map(([first, second]) => first.total / second.total)),
        firstUsePhases: starts.filter(([first]) => first.firstUse).length,
      };
    }
    figures.devListening = {
      listenToFirst200Ms: stats(listening.map((start) => start.ms)),
      attempts: stats(listening.map((start) => start.attempts)),
    };
    return figures;
  } finally {
    removeDir(app);
    removeDir(packDir);
  }
}
