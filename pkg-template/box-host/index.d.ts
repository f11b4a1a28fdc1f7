/**
 * The local Box host: a small HTTP server on a loopback address that speaks the subset of the
 * Vercel Sandbox REST API used by `@vercel/sandbox` 3.5.0 (create, writeFiles, runCommand waiting
 * and detached, wait, logs, kill, readFile, mkDir, stop, snapshot, Snapshot.get/list/delete, create
 * from a snapshot) and, under `/cloudflare/<containerId>/`,
 * the Cloudflare Sandbox container control API that the `@cloudflare/sandbox` 0.12.10 `Sandbox`
 * Durable Object sends to its container (one container id = one Box), over Boxes that are private
 * host directories running real processes, isolated with bubblewrap when available.
 */

/** What commands running in a Box may do, as actually enforced (never more optimistic). */
export interface ExecutionAuthority {
  /** 'process' with bubblewrap (namespaces, read-only system, private dirs) or Seatbelt (macOS: a profile that writes only the Box dir, hides the home); 'none' otherwise. */
  isolation: 'process' | 'none';
  /**
   * 'none' for a bubblewrap or Seatbelt Box created with networkPolicy 'deny-all' (refused without isolation); 'restricted' for a
   * bubblewrap Box with a network of its own (slirp4netns: outbound only, not the host's
   * loopback); 'unrestricted' otherwise (the host's network, loopback included).
   */
  network: 'none' | 'restricted' | 'unrestricted';
  /** scope 'sandbox': only the Box dirs are writable/visible; 'host': plain processes see the host. */
  filesystem: { access: 'read-write'; scope: 'sandbox' | 'host' };
  /** Commands see only PATH, HOME and the env given at create / per command, never the host env. */
  environment: 'selected';
  credentials: 'none';
  /**
   * 'restricted' under bubblewrap (uid 1000, no capabilities, per-Box limits: 512 processes and
   * the session's memory through one cgroup v2 or v1 per Box where writable; files up to 1 GiB per
   * process (rlimit); the session's
   * `limits` says which apply); 'arbitrary' otherwise.
   */
  processes: 'restricted' | 'arbitrary';
}

/**
 * The limits of a Box's commands as applied on this host: `session.limits` of the host's create
 * answer (a local-host addition to the Vercel Session object; isolation.mjs `limitsReport`).
 */
export interface BoxLimits {
  /** What bounds processes and memory: one cgroup per Box (v2 first, else v1), else rlimits only. */
  enforcedBy: 'cgroup-v2' | 'cgroup-v1' | 'rlimit';
  /** Processes and threads per Box, all its commands together (cgroup pids.max; also the RLIMIT_NPROC value); null when neither a cgroup nor prlimit bounds them. */
  processes: number | null;
  /** Memory per Box in bytes, all its commands together (the session's `memory`); null when no cgroup applies (not bounded). */
  memoryBytes: number | null;
  /** The Box's writable space in bytes (a tmpfs); null when the host cannot mount one (not bounded). */
  diskBytes: number | null;
  /** Largest file a command may write, in bytes (RLIMIT_FSIZE, by prlimit or /bin/sh's ulimit); null when neither works here. */
  fileBytes: number | null;
  /** Open files per process (RLIMIT_NOFILE); null when neither prlimit nor /bin/sh's ulimit works here. */
  openFiles: number | null;
  /**
   * 'seccomp': every command runs under the Box's seccomp filter (bubblewrap only): io_uring,
   * the kernel key store, namespaces (unshare, setns, clone with a namespace flag; clone3 answers
   * ENOSYS), mounts, bpf, perf_event_open, userfaultfd, kernel and module loading and the host's
   * administrative calls answer EPERM, a call of another ABI (i386 on x86_64) kills the process.
   * 'none': no filter (no bubblewrap; or the package has no programs for this architecture, or
   * bwrap older than 0.5.0: the host's `description` says which).
   */
  syscallFilter: 'seccomp' | 'none';
}

export interface BoxHostOptions {
  /** TCP port; default 0 (a random free port). */
  port?: number;
  /** Loopback address to bind: '127.0.0.1' (default), 'localhost' (binds 127.0.0.1) or '::1'. Anything else throws TypeError. */
  host?: '127.0.0.1' | 'localhost' | '::1';
  /** Bearer token required on every request (at least 8 characters); default: 32 random bytes as hex. */
  token?: string;
  /**
   * 'auto' (default): the strongest isolation the start-up probe finds here (bubblewrap on
   * Linux, Seatbelt `sandbox-exec` on macOS), else plain processes, except in production.
   * 'bubblewrap' / 'seatbelt': require it (the returned promise rejects naming what is missing).
   * 'none': plain processes in the Box directory with a scrubbed env, the rlimits /bin/sh can
   * set and a process-group kill (no isolation; reported as such; `deny-all` Boxes are refused
   * with 503 `isolation_unavailable`).
   */
  isolation?: 'auto' | 'bubblewrap' | 'seatbelt' | 'none';
  /**
   * Default `process.env.NODE_ENV === 'production'`. In production, 'auto' never degrades
   * silently: without isolation the start rejects, and only an explicit 'none' runs plain processes;
   * an `allow-all` Box that would share this machine's network is refused (see `shareHostNetwork`).
   */
  production?: boolean;
  /**
   * Whether, in production, `allow-all` Boxes may share this machine's network where this host
   * has no Box network for them (no slirp4netns, or no `/dev/net/tun` this user can open; always
   * under Seatbelt). Such a Box reaches this machine's loopback (other Boxes' ports, this host's
   * port, the app's dev server) and this user's abstract Unix sockets (D-Bus, X11). Default
   * `false`: in production such a create answers 503 `isolation_unavailable` naming this option
   * (the runtime's SANDBOX_PROVIDER_UNAVAILABLE). Outside production it is allowed, and
   * `description` says it. Plain processes (`isolation: 'none'`) always share it.
   */
  shareHostNetwork?: boolean;
  /**
   * The source text of the runtime's in-Box harness, exactly as a Run stages it at
   * `.vite-hub/harness.mjs` (the Node entry passes its own; crates/core/src/harness/harness.mjs
   * without comments). A parked Node process (`parked`) imports it before its handover, so a Run
   * whose staged harness is this text only imports its entry; any other staged text is imported
   * from the Box as before. Default: none (parked processes import the harness at the handover).
   * @throws {TypeError} when it is not a non-empty string.
   */
  harness?: string;
  /**
   * Live Boxes at most, spares included (default 64). A create beyond waits in a FIFO queue for
   * a Box to stop, as long as its own `timeout` (the Box's lifetime, ms; default 300000) allows
   * or until its client goes away: a Run waits as long as its own timeout and signal allow. It
   * answers 503 `{"error":{"code":"capacity"}}` (the runtime's SANDBOX_PROVIDER_UNAVAILABLE) only
   * when `maxQueued` creates already wait, or after `maxQueueWaitMs` when that is set.
   */
  maxBoxes?: number;
  /** Creates that may wait for a Box slot at once (default 1024); the next one is refused at once (503 `capacity`, its message says so). */
  maxQueued?: number;
  /** Longest a create waits for a Box slot, in ms (integer 0–2147483647); default: none but the create's own `timeout`. */
  maxQueueWaitMs?: number;
  /**
   * What each Box counts against `maxTotalMemoryBytes`, in bytes: what it is expected to use,
   * not its limit. Default 536870912 (512 MiB); integer from
   * 1048576 (1 MiB) to 1099511627776 (1 TiB), else TypeError. A Box whose memory limit is smaller
   * counts its limit. The limit itself (`vcpus × 2048` MiB, the session's `memory`) still
   * applies through the Box's cgroup: a Box past it is killed, whatever its request. A spare
   * Box (`parked`) counts 32 MiB (above what an idle one uses) until a create takes it.
   */
  memoryRequestBytes?: number;
  /**
   * The sum of the memory requests of all live Boxes and spares, in bytes (`memoryRequestBytes`
   * each); a create past it waits in the same queue as at `maxBoxes`, and one Box larger than it
   * is refused at once (503 `capacity`, SANDBOX_PROVIDER_UNAVAILABLE). Default: this machine's
   * memory (`os.totalmem()`), at least one Box's request.
   */
  maxTotalMemoryBytes?: number;
  /**
   * Parent directory of the Box directories, named `vite-hub-box-<pid>-XXXXXX` after the owning
   * process (`process.pid`, also in worker threads); default `os.tmpdir()`.
   */
  boxRoot?: string;
  /**
   * Browser origins allowed to call the host (CORS), each exactly a page's origin such as
   * `"http://localhost:5173"` (scheme://host[:port]; `*` is refused, TypeError). Requests from
   * these origins get `Access-Control-Allow-Origin: <origin>` and their preflight (`OPTIONS`) is
   * answered 204 without a token; every other request still needs the bearer token. Default:
   * none (no Access-Control-* header at all). Source: the Fetch standard, "CORS protocol".
   */
  allowOrigins?: string[];
  /**
   * Spare Boxes kept ready with a parked Node process each (bubblewrap hosts only): a create of
   * the default shape (no env, the default network policy, resources and work directory) takes
   * one, and its first command, when it is a Run's harness, becomes that process instead of
   * starting Node (about 45 ms on a 2-core Xeon). Each spare serves one Box and its process one
   * command, so Boxes share nothing more than without it. Spares hold Box slots (`maxBoxes`;
   * 32 MiB each of `maxTotalMemoryBytes`, above what an idle one uses) and give them up to a
   * create that needs the room. `size`: spares kept (integer 0–16, default 2; 0 turns parking off);
   * `idleMs`: a spare unused that long is retired and not replaced until a Box of the spares'
   * shape stops again (integer ms 1–3600000, default 300000). Bad values throw TypeError naming
   * the key. `parked().limitedBy` says why fewer than `size` are ready.
   */
  parked?: { size?: number; idleMs?: number };
  /**
   * Absolute directory of the host's state kept across restarts: `snapshots/` (Vercel protocol
   * snapshots, the prepared projects of Runs; layout in docs/internals/prepared-projects.md "Prepared projects").
   * Default `$XDG_CACHE_HOME/vite-hub-sandbox/box-host`, else `~/.cache/vite-hub-sandbox/box-host`.
   */
  stateDir?: string;
  /**
   * Writable space of each Box in bytes (work directory, /tmp and home together; default 1 GiB,
   * at least 1 MiB, else TypeError): a tmpfs of this size mounted on the Box directory, so a
   * write past it fails with ENOSPC. Needs a root host (elsewhere disk use is not bounded and the
   * session reports `limits.diskBytes: null`). A tmpfs is memory: `maxBoxes × diskBytes` at most.
   */
  diskBytes?: number;
  /** Snapshots kept at most (default 32); the least recently used are removed beyond. */
  maxSnapshots?: number;
  /** Bytes of snapshot files kept at most (default 2 GiB); the least recently used are removed beyond. */
  maxSnapshotBytes?: number;
}

/** Per-route request counts, e.g. `{ requests: { create: 1, cmd: 2, 'fs/write': 1 }, total: 4 }`. */
export interface BoxHostCounters {
  /**
   * Route names: create, session/get, sandbox/get, sandbox/list, stop, extend-timeout, network-policy, cmd, cmd/get, cmd/wait,
   * cmd/logs, cmd/kill, cmd/stdin, fs/write, fs/read, fs/mkdir, snapshot, snapshots/list, snapshots/get,
   * snapshots/delete, execution-authority (`GET
   * /_vite-hub/execution-authority[?networkPolicy=<JSON>]`: what a Box created with that policy gets,
   * without creating one), the Cloudflare container routes (`cloudflare/…`, process routes included),
   * unknown. Only authenticated requests count; the counter routes themselves are not counted.
   */
  requests: Record<string, number>;
  total: number;
}

/** Why a host keeps fewer spares than `parked.size` (see `BoxHost.parked`). */
export type ParkedLimit =
  | 'making'
  | 'taken'
  | 'idle'
  | 'queue'
  | 'maxBoxes'
  | 'memory'
  | 'error'
  | 'isolation'
  | 'network';

export interface BoxHost {
  /** e.g. `http://127.0.0.1:41234`; clients append `/v3/sandboxes` etc. (an `/api` prefix is also accepted). */
  baseUrl: string;
  /** The bearer token (keep it secret; the host never logs it). */
  token: string;
  /**
   * The host's routes called in process: `(Request) => Promise<Response>`, the same answers as
   * over HTTP at `baseUrl` (counted alike), without a socket, an HTTP parse or the token (so keep
   * it as secret as the token: it is what the Node entry's runtime sends its Runs through,
   * runtime/index.node.mjs). The Request's URL origin is ignored; its signal closes the answer as
   * a dropped connection would. Rejects (a network error) when a handler fails before answering.
   */
  fetch(request: Request): Promise<Response>;
  /** The host-wide isolation (network as for a Box with the default 'allow-all' policy). */
  executionAuthority: ExecutionAuthority;
  /**
   * True when each Box's commands run as an unprivileged host uid of their own (a random one
   * from 1879048192, which owns the Box's directories): the host runs as root under bubblewrap
   * and bwrap works as a non-root user. False otherwise: Box commands run as the host's own uid
   * (uid 1000 inside), so on a root host without unprivileged user namespaces root-owned files
   * of the read-only system directories (`/etc/shadow`) are readable in a Box. Needs `boxRoot`
   * to be searchable by other users: a private one the host owns that holds nothing but Box
   * directories (a fresh `mkdtemp` one) is given `o+x`; startBoxHost throws naming the directory
   * otherwise.
   */
  boxUsers: boolean;
  /** The isolation in force: what 'auto' resolved to. */
  isolation: 'bubblewrap' | 'seatbelt' | 'none';
  /** The syscall filter of every Box of this host (`BoxLimits.syscallFilter`); why 'none' is in `description`. */
  syscallFilter: 'seccomp' | 'none';
  /** One line: the isolation Boxes get here, and what is missing for more with how to get it (the start-up probe). */
  description: string;
  /** True when Boxes get less than isolation, their own network, rlimits, or a package manager is missing (see `description`). */
  degraded: boolean;
  /** The state directory in use (see `BoxHostOptions.stateDir`). */
  stateDir: string;
  /** Same as `GET /_vite-hub/counters`. */
  counters(): BoxHostCounters;
  /** Same as `POST /_vite-hub/counters/reset`. */
  resetCounters(): void;
  /**
   * The parked Node processes: `size` and `idleMs` (the option in force; `size` 0 when parking is
   * off or the host has no bubblewrap), `ready` (spares waiting now), `handedOver` (Boxes whose
   * first command was a parked process, counted when they stopped), `lastError` (why the last
   * spare could not be made, or null), `limitedBy`: why fewer than the `parked.size` asked for
   * are ready, or null when all are (or none was asked for): 'making' (on their way), 'taken'
   * (creates took them; made again when those Boxes stop), 'idle' (retired after `idleMs` unused;
   * made again when a Box of their shape stops), 'queue' (creates wait for Box slots: spares never
   * take one, and give theirs up), 'maxBoxes' (every Box slot is taken), 'memory'
   * (`maxTotalMemoryBytes` is spent), 'error' (see `lastError`), 'isolation' (no bubblewrap
   * here), 'network' (production refuses the spares' `allow-all` Boxes without a Box network).
   */
  parked(): {
    size: number;
    idleMs: number;
    ready: number;
    handedOver: number;
    lastError: string | null;
    limitedBy: ParkedLimit | null;
  };
  /**
   * The start-up sweep of `boxRoot`: every `vite-hub-box-<pid>-XXXXXX` directory of this user whose
   * `pid` is gone (`kill(pid, 0)` gives ESRCH) is removed; live pids (EPERM counts as live),
   * old-format `vite-hub-box-XXXXXX` names and anything else are kept. Runs in the background from
   * the start; resolves to the removed directory names (sorted), never rejects. `close()` awaits it.
   */
  swept: Promise<string[]>;
  /** Lets the Node process exit while the host is idle (for an in-process host started on demand). */
  unref(): void;
  /** Stops every Box (kills all process trees, removes the Box dirs), then closes the server. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a Box host.
 *
 * HTTP contract (see docs/internals/box-host.md and the Vercel protocol note): `Authorization: Bearer
 * <token>` on every request (401 otherwise); unknown or stopped sessions answer 410
 * `sandbox_stopped`; path escapes (`..`, symlinks out of the Box) answer 400 `bad_path`; JSON
 * bodies are capped at 1 MiB and `fs/write` archives at 256 MiB (413 `payload_too_large`);
 * command `timeout` is in ms and kills the whole process tree (exit code 137); a Box stops itself
 * after its `timeout` (ms, default 300000). Create responses carry `session.executionAuthority`.
 * Until `close()`, a process `exit` listener SIGKILLs every live Box's process trees and removes
 * their directories synchronously, so `process.exit()` mid-Run (Vite's Ctrl-C) leaves nothing.
 * A host in a worker thread (Nitro's dev server) never sees that event when the main thread calls
 * `process.exit()` (a Node limitation): its Box directories stay behind until the next host
 * started on the same Box root sweeps them (see `swept`).
 *
 * Cloudflare container API (see docs/internals/box-host.md): `<baseUrl>/cloudflare/<containerId><path>`
 * where `<path>` is the path the DO sends to port 3000 (`/api/execute`, `/api/read`, …); the Box
 * of an id is created on first use and removed by `DELETE <baseUrl>/cloudflare/<containerId>`,
 * after 10 minutes without requests, or by `close()`. Errors use the container's body shape
 * (`{ code, message, context, httpStatus, timestamp }`).
 *
 * Box commands run the host's own Node (`process.execPath`) and the npm/pnpm found beside it or
 * on its PATH (read-only in the sandbox); a command naming a package manager the host did not find
 * answers 503 `tool_missing` (SANDBOX_PROVIDER_UNAVAILABLE) naming it and how to install it.
 *
 * @throws TypeError for invalid options; Error when the isolation asked for is unavailable (or none
 * is in production with 'auto'), on native Windows (use WSL 2), or when the port is taken.
 */
export function startBoxHost(options?: BoxHostOptions): Promise<BoxHost>;
