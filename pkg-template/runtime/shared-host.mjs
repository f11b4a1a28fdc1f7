// One in-process local Box host for the threads of one process. `vite dev` warms the host up in
// Vite's thread, but a server framework may run the app in a worker thread (Nitro v3's dev server
// does), which loads its own copy of the runtime. The thread that offers (the Vite plugin, before
// any worker exists) marks the process in the env that workers copy, and answers on a
// BroadcastChannel; a worker's first Run asks there before starting a host of its own. Host URL
// and token travel between threads of this process only (never through the env, a file or a log).
// `node:worker_threads` is loaded on the first offer or ask, not when the runtime is imported
// (about 3-4 ms of a fresh import on a 2-core Xeon; tests/runtime/runtime-imports.test.mjs).

const CHANNEL = 'vite-hub-sandbox:local-box-host';
/** Env mark of the offering process: its pid (a child process inherits the env, not the offer). */
const OFFERED = 'VITE_HUB_SANDBOX_LOCAL_HOST_OFFERED';
/** How long a worker waits for the offering thread's answer (it answers after its warm-up). */
const ASK_TIMEOUT_MS = 30_000;

let source = null;
let offering = false;
let asks = 0;

/**
 * Sets what this thread offers: `() => Promise<{ baseUrl, token } | null>` (the Node entry's
 * warmed host, or null when it warmed none).
 */
export function setOfferedHost(get) {
  source = get;
}

/**
 * Offers this thread's warmed host to the worker threads created from now on (idempotent). The
 * env mark is set once the channel listens (after `node:worker_threads` loads, a few ms later): a
 * worker created before that sees no mark and starts a host of its own, rather than asking a
 * channel nobody answers yet.
 * @returns {Promise<void>} resolves once the offer stands (or this thread cannot offer)
 */
export async function offerLocalBoxHost() {
  if (offering) return;
  offering = true;
  const { BroadcastChannel, isMainThread } = await import('node:worker_threads');
  if (!isMainThread) return;
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  process.env[OFFERED] = String(process.pid);
  channel.onmessage = async ({ data }) => {
    if (typeof data?.ask !== 'string') return;
    let host = null;
    try {
      host = (await source?.()) ?? null;
    } catch {
      host = null;
    }
    channel.postMessage({ answer: data.ask, host });
  };
}

/**
 * The host the offering thread of this process shares, or null (none offered, none warmed, or no
 * answer within ASK_TIMEOUT_MS): `{ baseUrl, token }`.
 */
export async function borrowLocalBoxHost() {
  if (process.env[OFFERED] !== String(process.pid)) return null;
  const { BroadcastChannel, isMainThread, threadId } = await import('node:worker_threads');
  if (isMainThread) return null;
  const channel = new BroadcastChannel(CHANNEL);
  asks += 1;
  const ask = `${threadId}:${asks}`;
  try {
    return await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), ASK_TIMEOUT_MS);
      channel.onmessage = ({ data }) => {
        if (data?.answer !== ask) return;
        clearTimeout(timer);
        const host = data.host;
        resolve(typeof host?.baseUrl === 'string' && typeof host?.token === 'string' ? host : null);
      };
      channel.postMessage({ ask });
    });
  } finally {
    channel.close();
  }
}
