// A bare `node` command in a Box of the host's own code (scripts/bench.mjs `warmVsBare`):
// BoxRegistry → Box → runCommand from dist/, with the same isolation, Box network, limits and
// clean environment as every Box command, but without the HTTP protocol, the Definition staging
// or the harness: what a warm runSandbox is compared with.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { packTar } from 'modern-tar';

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
    harnessOnce,
    close: async () => {
      await box.stop();
      rmSync(boxRoot, { recursive: true, force: true });
    },
  };
}
