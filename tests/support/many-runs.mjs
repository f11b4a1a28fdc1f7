// A process that runs many Runs on the `local` provider (the Box host given by BOX_HOST_URL and
// BOX_HOST_TOKEN, in another process, so only the runtime's objects are counted here) and prints
// the live counts (support/live-counts.mjs) after WARM_RUNS and after RUNS Runs, as one JSON
// line `{ warm, end }`. Started with `node --expose-gc`.
//
// The Runs cycle through the kinds whose clean-up differs (in eights): a value (3); a streamed
// Response read to its end (2); a streamed Response its reader cancels mid-body (1, the slowest);
// a Run on a kept Box (`sandboxId`, 2).
// Every Run carries one long-lived caller signal, as a server's shutdown signal would be.
import { liveCounts } from './live-counts.mjs';

const { configureSandbox, registerSandbox, runSandbox, closeSandbox } = await import('@vite-hub/sandbox');

const RUNS = Number(process.env.RUNS);
const WARM_RUNS = Number(process.env.WARM_RUNS);
configureSandbox({
  provider: 'local',
  local: { baseUrl: process.env.BOX_HOST_URL, token: process.env.BOX_HOST_TOKEN },
});
const define = (name, index) =>
  registerSandbox(name, {
    files: [
      {
        path: 'package.json',
        content: JSON.stringify({ name: name.replace('/', '-'), private: true, type: 'module' }),
      },
      { path: 'index.mjs', content: index },
    ],
  });
define('leaks/value', 'export default (n) => ({ n });');
define(
  'leaks/streamed',
  "export default () => new Response('streamed', { headers: { 'content-type': 'text/plain' } });",
);
define(
  'leaks/endless',
  `export default () => new Response(new ReadableStream({
    pull: (controller) => new Promise((resolve) => setTimeout(() => { controller.enqueue(new TextEncoder().encode('chunk')); resolve(); }, 20)),
  }));`,
);

const caller = new AbortController();
const signal = caller.signal;

async function oneRun(i) {
  switch (i % 8) {
    case 0:
    case 3:
    case 6: {
      const response = await runSandbox('leaks/value', i, { signal });
      if ((await response.json()).n !== i) throw new Error(`run ${i}: wrong value`);
      return;
    }
    case 1:
    case 4: {
      const response = await runSandbox('leaks/streamed', undefined, { signal });
      if ((await response.text()) !== 'streamed') throw new Error(`run ${i}: wrong body`);
      return;
    }
    case 2: {
      const response = await runSandbox('leaks/endless', undefined, { signal });
      const reader = response.body.getReader();
      await reader.read();
      await reader.cancel();
      return;
    }
    default: {
      const response = await runSandbox('leaks/value', i, { signal, sandboxId: 'leaks-kept' });
      if ((await response.json()).n !== i) throw new Error(`run ${i}: wrong kept value`);
    }
  }
}

for (let i = 0; i < WARM_RUNS; i += 1) await oneRun(i);
const warm = await liveCounts();
for (let i = WARM_RUNS; i < RUNS; i += 1) await oneRun(i);
await closeSandbox('leaks-kept');
// A cancelled body's Run gives its Box back in the background: let the last one finish.
await new Promise((resolve) => setTimeout(resolve, 500));
const end = await liveCounts();
process.stdout.write(`${JSON.stringify({ warm, end })}\n`);
