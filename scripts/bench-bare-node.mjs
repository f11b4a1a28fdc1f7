// A bare `node` command in a Box of the host's own code (scripts/bench.mjs `warmVsBare`):
// BoxRegistry → Box → runCommand from dist/, with the same isolation, Box network, limits and
// clean environment as every Box command (parked or not: box.mjs #spec), but without the HTTP
// protocol, the Definition staging or the harness. Two ways: started on the clock (`once`), and
// pre-started before the clock, waiting for a signal (`prestartedOnce`: the physical limit of a
// parked exec, what a warm runSandbox is held to).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { packTar } from 'modern-tar';
import { descendantsOf } from './bench-settle.mjs';

const repo = new URL('..', import.meta.url);
/** The in-Box harness, from its one source (crates/core/build.rs embeds it without comments). */
const HARNESS = readFileSync(new URL('crates/core/src/harness/harness.mjs', repo), 'utf8');

const archive = async (files) =>
  gzipSync(await packTar(files.map(([name, body]) => ({ header: { name, size: Buffer.byteLength(body) }, body }))));

/**
 * Opens one Box holding `entry` (the trivial Definition's module, default export `(payload) =>
 * ({ sum })`). `once()` runs a three-line runner in it with `payload` and resolves to the
 * command's ms once it printed the right sum. In the same Box, `harnessOnce()` runs the harness as
 * a Run's command does (`node ../.vite-hub/harness.mjs ../.vite-hub/input.json` in the package
 * dir, its input envelope written first, untimed) and resolves to the command's ms: the in-Box
 * cost of the harness against the runner. `close()` stops the Box.
 * @param {{ isolation: 'bubblewrap' | 'none', entry: string, payload: { a: number, b: number } }} options
 */
export async function openBareNodeBox({ isolation, entry, payload }) {
  const { BoxRegistry } = await import(new URL('dist/box-host/engine/registry.mjs', repo).href);
  const { hostFeatures } = await import(new URL('dist/box-host/engine/isolation.mjs', repo).href);
  const boxRoot = mkdtempSync(path.join(os.tmpdir(), 'vite-hub-bench-bare-'));
  const registry = new BoxRegistry({
    boxRoot,
    isolation,
    maxBoxes: 1,
    maxQueued: 0,
    maxQueueWaitMs: 0,
    features: await hostFeatures(),
  });
  const box = await registry.create({});
  const sum = payload.a + payload.b;
  try {
    await box.writeArchive(
      '/vercel/sandbox',
      await archive([
        ['index.mjs', entry],
        ['project/package.json', '{"type":"module"}'],
        ['project/index.mjs', entry],
        ['.vite-hub/harness.mjs', HARNESS],
      ]),
    );
  } catch (error) {
    await box.stop();
    rmSync(boxRoot, { recursive: true, force: true });
    throw error;
  }
  const script = `const m = await import('./index.mjs'); process.stdout.write(JSON.stringify(await m.default(${JSON.stringify(payload)})));`;
  // The same import and write, on SIGUSR1; the interval keeps the process until then.
  const PRESTARTED_SCRIPT = `const keep = setInterval(() => {}, 1 << 30);
process.once('SIGUSR1', async () => { clearInterval(keep); ${script} });
process.stdout.write('ready\\n');`;
  /** Runs one command in the Box; resolves to its stdout once it exited 0. */
  const command = (spec) =>
    new Promise((resolve, reject) => {
      const started = box.runCommand(spec);
      const finish = (code) => {
        const out = started.logs
          .filter((line) => line.stream === 'stdout')
          .map((line) => line.data)
          .join('');
        if (code === 0) resolve(out);
        else
          reject(
            new Error(
              `${spec.args[0]} exited ${code}: ${out} ${started.logs
                .filter((line) => line.stream === 'stderr')
                .map((line) => line.data)
                .join('')}`,
            ),
          );
      };
      if (started.exitCode !== null) finish(started.exitCode);
      else started.once('exit', finish);
    });
  const once = async () => {
    const started = performance.now();
    const out = await command({ command: 'node', args: ['--input-type=module', '-e', script] });
    const parsed = JSON.parse(out);
    const ms = performance.now() - started;
    if (parsed.sum !== sum) throw new Error(`bare node printed ${out}`);
    return ms;
  };
  /**
   * A `node` started in the Box by the engine's own runCommand (the spec every process of a Box
   * gets, a parked one included) that imports nothing, says `ready` and waits; on SIGUSR1 it
   * imports the entry, writes the same JSON as the runner and exits. Untimed: its start, its
   * `ready`, and `settle()` (no CPU use of the host's processes: its start-up is over). Timed:
   * from the signal (sent to the node process itself, found under the command's sandbox
   * wrapper in /proc) to its parsed stdout once it exited, the end point of `once`.
   */
  const prestartedOnce = async (settle) => {
    const started = box.runCommand({ command: 'node', args: ['--input-type=module', '-e', PRESTARTED_SCRIPT] });
    const exited = new Promise((resolve) => {
      if (started.exitCode !== null) resolve(started.exitCode);
      else started.once('exit', resolve);
    });
    const stdout = () =>
      started.logs
        .filter((line) => line.stream === 'stdout')
        .map((line) => line.data)
        .join('');
    for (let waited = 0; !stdout().startsWith('ready\n'); waited += 5) {
      if (started.exitCode !== null || waited > 30_000)
        throw new Error(`the pre-started node never said ready (exit ${started.exitCode}): ${stdout().slice(0, 300)}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const nodes = descendantsOf(started.child.pid).filter((proc) => proc.comm === 'node');
    if (nodes.length !== 1) throw new Error(`expected one node process under the command, found ${nodes.length}`);
    await settle();
    const t0 = performance.now();
    process.kill(nodes[0].pid, 'SIGUSR1');
    const code = await exited;
    const out = stdout().slice('ready\n'.length);
    const parsed = JSON.parse(out);
    const ms = performance.now() - t0;
    if (code !== 0 || parsed.sum !== sum) throw new Error(`the pre-started node exited ${code}, printed ${out}`);
    return ms;
  };
  let seq = 0;
  const harnessOnce = async () => {
    seq += 1;
    const nonce = `${process.pid}bench${seq}`.padEnd(32, '0');
    const envelope = { version: 1, nonce, entry: 'index.mjs', payload, limits: {} };
    await box.writeArchive('/vercel/sandbox', await archive([['.vite-hub/input.json', JSON.stringify(envelope)]]));
    const started = performance.now();
    const out = await command({
      command: 'node',
      args: ['../.vite-hub/harness.mjs', '../.vite-hub/input.json'],
      cwd: '/vercel/sandbox/project',
    });
    const frame = out.split('\n').find((line) => line.startsWith(`<<vite-hub-sandbox:${nonce}>>`));
    const result = frame && JSON.parse(frame.slice(nonce.length + 21)).result;
    const ms = performance.now() - started;
    if (result?.sum !== sum) throw new Error(`the harness framed no result: ${out.slice(0, 300)}`);
    return ms;
  };
  return {
    once,
    prestartedOnce,
    harnessOnce,
    close: async () => {
      await box.stop();
      rmSync(boxRoot, { recursive: true, force: true });
    },
  };
}
