// Public entry of the local Box host: `startBoxHost(options)`.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_DISK_BYTES } from './engine/box-disk.mjs';
import { DEFAULT_MAX_QUEUED, DEFAULT_MEMORY_REQUEST_BYTES } from './engine/box-queue.mjs';
import { CloudflareContainers } from './protocols/cloudflare-containers.mjs';
import { RequestCounters } from './server/counters.mjs';
import { hostFeatures, resolveIsolation, syscallFilter } from './engine/isolation.mjs';
import { describeHost, hostGaps } from './engine/host-probe.mjs';
import { BoxRegistry } from './engine/registry.mjs';
import { parkedOption } from './engine/parked-boxes.mjs';
import { createBoxHostServer, createDispatch } from './server/server.mjs';
import { inProcessFetch } from './server/in-process.mjs';
import { terminalsOf } from './protocols/vercel-interactive.mjs';
import { corsPolicy } from './server/cors.mjs';
import { DEFAULT_MAX_SNAPSHOT_BYTES, DEFAULT_MAX_SNAPSHOTS, SnapshotStore } from './engine/snapshots.mjs';
import { livePidNamespaces, sweepStaleBoxDirs } from './engine/stale-boxes.mjs';
import { sweepStaleCgroups } from './engine/box-limits.mjs';

/** `$XDG_CACHE_HOME/vite-hub-sandbox/box-host`, else `~/.cache/vite-hub-sandbox/box-host`. */
export function defaultStateDir() {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'vite-hub-sandbox', 'box-host');
}

/**
 * The default total of Box memory requests a host admits at once: this machine's memory, but at
 * least one Box of `memoryRequestBytes`.
 */
export function defaultMaxTotalMemoryBytes(memoryRequestBytes = DEFAULT_MEMORY_REQUEST_BYTES) {
  return Math.max(os.totalmem(), memoryRequestBytes);
}

/** Smallest and largest `memoryRequestBytes` (1 MiB, 1 TiB). */
const MEMORY_REQUEST_RANGE = [1024 ** 2, 1024 ** 4];

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address());
    });
  });
}

/**
 * Starts a local Box host on a loopback address. See index.d.ts for the options and the result.
 */
export async function startBoxHost(options = {}) {
  const {
    port = 0,
    host = '127.0.0.1',
    token,
    isolation = 'auto',
    maxBoxes = 64,
    boxRoot,
    stateDir = defaultStateDir(),
    maxSnapshots = DEFAULT_MAX_SNAPSHOTS,
    maxSnapshotBytes = DEFAULT_MAX_SNAPSHOT_BYTES,
    allowOrigins,
    diskBytes = DEFAULT_DISK_BYTES,
    production = process.env.NODE_ENV === 'production',
    shareHostNetwork = false,
    memoryRequestBytes = DEFAULT_MEMORY_REQUEST_BYTES,
    maxTotalMemoryBytes = defaultMaxTotalMemoryBytes(
      Number.isSafeInteger(memoryRequestBytes) ? memoryRequestBytes : DEFAULT_MEMORY_REQUEST_BYTES,
    ),
  } = options;
  // Native Windows has none of the process, namespace and file tools a Box needs: WSL 2 has them.
  if (process.platform === 'win32') {
    throw new Error(
      'the local Box host needs Linux or macOS: on Windows, run the app in WSL 2 (wsl --install), or configure the vercel or cloudflare provider',
    );
  }
  const { maxQueued = DEFAULT_MAX_QUEUED, maxQueueWaitMs } = options;
  const cors = corsPolicy(allowOrigins);
  const parked = parkedOption(options.parked);
  if (!LOOPBACK.has(host)) throw new TypeError(`host must be 127.0.0.1, localhost or ::1, got ${JSON.stringify(host)}`);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError('port must be an integer 0-65535');
  if (token !== undefined && (typeof token !== 'string' || token.length < 8)) {
    throw new TypeError('token must be a string of at least 8 characters');
  }
  if (!Number.isInteger(maxBoxes) || maxBoxes < 1) throw new TypeError('maxBoxes must be a positive integer');
  if (typeof production !== 'boolean') throw new TypeError('production must be a boolean');
  if (typeof shareHostNetwork !== 'boolean') throw new TypeError('shareHostNetwork must be a boolean');
  const { harness } = options;
  if (harness !== undefined && (typeof harness !== 'string' || harness === ''))
    throw new TypeError('harness must be the source text of the runtime harness');
  if (typeof stateDir !== 'string' || !path.isAbsolute(stateDir))
    throw new TypeError('stateDir must be an absolute path');
  if (!Number.isInteger(maxSnapshots) || maxSnapshots < 1)
    throw new TypeError('maxSnapshots must be a positive integer');
  if (!Number.isSafeInteger(maxSnapshotBytes) || maxSnapshotBytes < 1)
    throw new TypeError('maxSnapshotBytes must be a positive integer of bytes');
  if (!Number.isSafeInteger(diskBytes) || diskBytes < 1024 * 1024)
    throw new TypeError('diskBytes must be an integer number of bytes, at least 1 MiB');
  if (
    !Number.isSafeInteger(memoryRequestBytes) ||
    memoryRequestBytes < MEMORY_REQUEST_RANGE[0] ||
    memoryRequestBytes > MEMORY_REQUEST_RANGE[1]
  )
    throw new TypeError(
      `memoryRequestBytes must be an integer number of bytes from ${MEMORY_REQUEST_RANGE[0]} (1 MiB) to ${MEMORY_REQUEST_RANGE[1]} (1 TiB), got ${JSON.stringify(memoryRequestBytes)}`,
    );
  if (!Number.isSafeInteger(maxTotalMemoryBytes) || maxTotalMemoryBytes < 1)
    throw new TypeError('maxTotalMemoryBytes must be a positive integer of bytes');
  if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new TypeError('maxQueued must be a non-negative integer');
  if (
    maxQueueWaitMs !== undefined &&
    !(Number.isInteger(maxQueueWaitMs) && maxQueueWaitMs >= 0 && maxQueueWaitMs <= 2_147_483_647)
  ) {
    throw new TypeError('maxQueueWaitMs must be an integer number of ms from 0 to 2147483647');
  }
  // The probes (bwrap, the namespace and network tools, a tmpfs mount) are child processes: run
  // side by side, and once per process (isolation.mjs), so a second host starts without them.
  const [features, root] = await Promise.all([hostFeatures(), fs.promises.realpath(boxRoot ?? os.tmpdir())]);
  const mode = resolveIsolation(isolation, features, { production });
  // Box directories left by processes that are gone (a host in a worker thread sees no `exit`
  // event when the main thread calls process.exit()): removed in the background, never blocking
  // the start; `swept` tells when (and what). Their Box cgroups (box-limits.mjs) go with them.
  // /proc is read once for the pid namespaces both sweeps judge.
  const live = livePidNamespaces();
  const swept = Promise.all([sweepStaleBoxDirs(root, live), sweepStaleCgroups(features.cgroup, live)]).then(
    ([dirs]) => dirs,
  );
  const secret = token ?? randomBytes(32).toString('hex');
  const snapshots = new SnapshotStore({
    dir: path.join(stateDir, 'snapshots'),
    maxSnapshots,
    maxBytes: maxSnapshotBytes,
  });
  const registry = new BoxRegistry({
    boxRoot: root,
    isolation: mode,
    maxBoxes,
    maxTotalMemoryBytes,
    memoryRequestBytes,
    maxQueued,
    maxQueueWaitMs,
    features,
    snapshots,
    diskBytes,
    spares: true,
    parked: harness === undefined ? parked : { ...parked, harness },
    production,
    shareHostNetwork,
  });
  const counters = new RequestCounters();
  const containers = new CloudflareContainers(registry);
  const dispatch = createDispatch({ registry, containers, counters });
  const server = createBoxHostServer({ token: secret, dispatch, cors });
  const address = await listen(server, port, host === 'localhost' ? '127.0.0.1' : host);
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // Interactive terminals (vercel-interactive.mjs): their WebSockets on this loopback listener.
  const terminals = terminalsOf(registry);
  terminals.baseUrl = `http://${hostPart}:${address.port}`;
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => {});
    if (!terminals.upgrade(req, socket, head, counters)) {
      counters.count('unknown');
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    }
  });
  // When the process exits mid-Run (Ctrl-C of `vite dev`: Vite's SIGINT handler calls
  // process.exit), no asynchronous stop can run any more: kill the Box process groups and remove
  // the Box directories synchronously. Removed again by close().
  const onExit = () => registry.removeAllNow();
  process.on('exit', onExit);
  let closing;
  return {
    baseUrl: `http://${hostPart}:${address.port}`,
    token: secret,
    // The same routes called in process (no socket, no HTTP parse, no token): for the runtime of
    // this process only (runtime/index.node.mjs); never handed to another thread or process.
    fetch: inProcessFetch(dispatch),
    // The rule of create for the default policy (registry.mjs), not a second copy of it; what such
    // a Box gets even where production refuses one (the create says so).
    executionAuthority: registry.executionAuthorityFor(undefined, { refusals: false }),
    boxUsers: mode === 'bubblewrap' && features.boxUsers === true,
    isolation: mode,
    // What every Box's `limits.syscallFilter` says (isolation.mjs).
    syscallFilter: syscallFilter(mode, features),
    /** One line: the isolation Boxes get here and what is missing for more (host-probe.mjs). */
    description: describeHost(features, mode),
    /** Whether Boxes run with less than this machine could give them or a tool is missing. */
    degraded: hostGaps(features, mode).length > 0,
    stateDir,
    counters: () => counters.snapshot(),
    /** The parked Node processes (parked-boxes.mjs): what is kept, ready, used, why fewer are ready and why a spare failed. */
    parked: () => ({
      size: registry.parked?.size ?? 0,
      idleMs: parked.idleMs,
      ready: registry.parked?.readyCount ?? 0,
      handedOver: registry.handedOver,
      lastError: registry.parked?.lastError ?? null,
      limitedBy: registry.parked?.limitedBy ?? (parked.size > 0 ? registry.parkingOff : null),
    }),
    resetCounters: () => counters.reset(),
    swept,
    /**
     * Lets the process exit while the host listens (the in-process host of a script): the server
     * and every connection it accepts (a kept-alive connection's server side would otherwise hold
     * the event loop until the keep-alive timeout, seconds after the last Run).
     */
    unref() {
      server.unref();
      server.on('connection', (socket) => socket.unref());
    },
    close() {
      closing ??= (async () => {
        await Promise.all([registry.stopAll(), swept]);
        terminals.closeAll();
        // Only now: until every Box is stopped, an exit still removes them synchronously.
        process.off('exit', onExit);
        await new Promise((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
