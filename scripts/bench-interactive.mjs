// The interactive terminal's latencies on a local Box host (docs/sessions.md#interactive-terminal):
// from `session.openInteractive()` to the first output of a shell in the terminal (its prompt),
// and one keystroke round trip (a line typed, its output read back). Printed as min / median /
// max with n; never asserted. `node scripts/bench-interactive.mjs [n]` after a build.
import { configureSandbox, openSandboxSession } from '@vite-hub/sandbox';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import WebSocket from 'ws';
import { show, stats } from './bench-stats.mjs';

const n = Number(process.argv[2] ?? 10);
const host = await startBoxHost();
configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token } });
const session = await openSandboxSession();
const first = [];
const roundTrip = [];
try {
  for (let i = 0; i < n; i += 1) {
    const started = performance.now();
    const { url, token } = await session.openInteractive({ command: 'sh' });
    const ws = new WebSocket(url);
    let output = '';
    const waitFor = (pattern) =>
      new Promise((resolve) => {
        const check = () => {
          if (!pattern.test(output)) return;
          ws.off('message', onMessage);
          resolve();
        };
        const onMessage = (data, isBinary) => {
          if (isBinary) output += data.toString();
          check();
        };
        ws.on('message', onMessage);
        check();
      });
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(JSON.stringify({ type: 'start', token }));
    await waitFor(/\S/);
    first.push(performance.now() - started);
    output = '';
    const typed = performance.now();
    ws.send(Buffer.from(`echo m${i}""k\n`));
    await waitFor(new RegExp(`m${i}k\\r\\n`));
    roundTrip.push(performance.now() - typed);
    ws.close();
    await new Promise((resolve) => ws.once('close', resolve));
  }
} finally {
  await session.close();
  await host.close();
}
console.log(`openInteractive → first output: ${show(stats(first))}`);
console.log(`line typed → its output:        ${show(stats(roundTrip))}`);
