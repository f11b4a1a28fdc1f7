/**
 * `@vite-hub/sandbox`: run a named JS package project (a Definition) inside an isolated Box on the
 * configured Provider and get a Web `Response`.
 *
 * Source of the rules: DESIGN.md (§4 providers, §5 Response contract, §6 transfer) and
 * docs/internals/architecture.md in the repository.
 *
 * What every runtime's entry exports (Node, workerd, Workers, browsers). Node's entry adds the
 * folder, discovery and in-process host functions: index.node.d.ts, which the package's `node`
 * condition (and the plain `types` fallback) names.
 */

/**
 * Stable error codes of failed Runs, with their HTTP status (DESIGN.md §5; input / output side
 * where they differ). Generated at build time from the core's table (crates/tooling/src/facts.rs).
 */
export type SandboxErrorCode = /*@generated:error-codes*/ never;

/**
 * The Providers that supply Boxes (generated from the core's `ProviderKind` into the built
 * package; `string` only in the unbuilt source).
 */
export type SandboxProviderName = /*@generated:provider-names*/ string;

/** Names of the limits an error's `details.limit` can name (generated from crates/tooling/src/facts.rs). */
export type SandboxLimitName = /*@generated:limit-names*/ never;

/** Body of every non-2xx Response of `runSandbox`. `details` keys are an allowlist. */
export interface SandboxErrorBody {
  error: {
    code: SandboxErrorCode;
    /** Bounded to 16 KiB; never a stack trace, a host path or a secret. */
    message: string;
    details?: {
      operation?:
        | 'create'
        | 'write'
        | 'exec'
        | 'install'
        | 'read'
        | 'stop'
        | 'stage'
        | 'resolve'
        | 'snapshot'
        | 'mkdir'
        | 'remove'
        | 'stdin'
        | 'extendTimeout';
      provider?: SandboxProviderName;
      /** Upstream HTTP status. */
      status?: number;
      /** The Definition timeout that passed, in ms. */
      timeoutMs?: number;
      /** Exit code of the failed Box process. */
      exitCode?: number;
      /** Which transfer limit was exceeded, the value seen and the maximum (bytes or counts). */
      limit?: SandboxLimitName;
      value?: number;
      maximum?: number;
      /** The last 4 KiB of a failed command's stdout (the entry's own output, without the result frame). */
      stdout?: string;
      /** The last 4 KiB of a failed command's stderr. */
      stderr?: string;
      /** `SANDBOX_HANDLER_ERROR`: the `name` of what the entry threw, e.g. `"TypeError"`. */
      name?: string;
      /**
       * `SANDBOX_HANDLER_ERROR`, only with `configureSandbox({ debug: true })`: the thrown error's
       * stack (first 4 KiB). As the Box printed it (Box paths), except in `vite dev` and
       * `vite-hub-sandbox run`, which map its frames to the Definition's source files
       * (`server/sandboxes/<name>/index.ts:3:9`, paths relative to the app root).
       */
      stack?: string;
    };
  };
}

/** Error thrown by the synchronous functions (`registerSandbox`, `configureSandbox`). */
export interface SandboxError extends Error {
  name: 'SandboxError';
  code: SandboxErrorCode;
  /** The HTTP status the code maps to. */
  status: number;
  details?: SandboxErrorBody['error']['details'];
}

export interface RunSandboxOptions {
  /** Second argument of the entry. JSON semantics; Blob/Uint8Array/Buffer travel as sidecar files. */
  context?: unknown;
  /** Aborting stops the Run, stops the Box, and rejects `runSandbox` with `signal.reason` (`null`: none, as in fetch). */
  signal?: AbortSignal | null;
  /**
   * Reuse one Box across Runs with this id (every provider). Runs on one id take turns in this
   * isolate (the wait is abortable with `signal`); each works in a fresh directory, removed after
   * it. local/vercel: the Box is kept by this isolate, closed after 5 minutes (300000 ms) without
   * a Run, by {@link closeSandbox}, or replaced when its 30-minute provider lifetime would end
   * during a Run. cloudflare: the id's Durable Object (idle shutdown after `sleepAfter`).
   */
  sandboxId?: string;
  /**
   * Called live with each line the entry prints on stdout/stderr (outside the result frames), and
   * with `stream: 'stderr'` and a `[vite-hub-sandbox]` line when giving the Box back after the
   * Response fails. Without it that failure goes to `console.warn`. Wins over the `onLog` of
   * {@link configureSandbox}.
   * A `line` is at most 65536 UTF-16 code units: a longer one comes in pieces of that length.
   */
  onLog?: (entry: { name: string; stream: 'stdout' | 'stderr'; line: string }) => void;
}

/** One piece of output as the Box delivered it: a Run's entry (`SandboxRun.logs()`) or a Session's Command (`SandboxProcess.logs()`). */
export interface SandboxLogEntry {
  stream: 'stdout' | 'stderr';
  data: string;
  /**
   * Present (`true`) on the one marker entry that ends a cut history: a Run handle's `logs()` keeps
   * 16 MiB (16777216 bytes, UTF-8) of its entry's output, then gives this `stderr` entry and ends
   * (`onLog` still gets every line; `runSandbox`, which has no handle, keeps none). A Session
   * Command's replay on the local Box host keeps 4 MiB (4194304 bytes) of output (less when the
   * host-wide budget of 32 MiB is spent), then one `stderr` line
   * starting `[vite-hub-sandbox] log replay cut`; later output reaches only readers that followed live.
   */
  truncated?: true;
}

/** The handle of one Run (`startSandbox`). */
export interface SandboxRun {
  /** `pending` until the entry starts, `running`, then `stopped` (its result) or `failed` (an error Response, a failed body or an abort). */
  readonly status: 'pending' | 'running' | 'stopped' | 'failed';
  /** The Response `runSandbox` would give (the same promise on every call). A returned streaming Response streams as the entry produces it. */
  response(): Promise<Response>;
  /**
   * The entry's own stdout/stderr: replayed from the start, then live until the Run ends. Kept in
   * memory up to 16 MiB (16777216 bytes, UTF-8); past it a final `{ stream: 'stderr', data,
   * truncated: true }` entry ends every reader's loop.
   */
  logs(): AsyncIterableIterator<SandboxLogEntry>;
  /**
   * Resolves once the Box was given back after the Response; rejects otherwise with a
   * {@link SandboxError} naming the failure (its code: the stop's own, e.g.
   * `SANDBOX_TRANSPORT_ERROR`, or `SANDBOX_RUNTIME_ERROR` for a failed clean-up).
   */
  closed(): Promise<void>;
}

/**
 * Starts the Definition `name` with `payload` and returns its handle at once: `status`, live
 * `logs()` and `response()` of one Run. `runSandbox(...)` is `startSandbox(...).response()`.
 */
export function startSandbox<N extends SandboxName>(name: N, ...args: SandboxRunArguments<N>): SandboxRun;

/**
 * Closes the Box kept for `sandboxId`, once the Run holding it (if any) gave it back. Resolves
 * to `true` when a Box was closed, `false` when this isolate kept none under that id (cloudflare:
 * destroys the id's container, `true`). Rejects with a `SandboxError` when the close fails.
 */
export function closeSandbox(sandboxId: string, options?: { signal?: AbortSignal | null }): Promise<boolean>;

/**
 * Runs the Definition `name` with `payload` (its entry's first argument).
 *
 * Resolves to: `200` JSON of the entry's return value; `204` for `undefined`; a binary body for a
 * top-level `Blob`/`Uint8Array`/`Buffer`; the entry's own `Response` revived. Failures resolve to a
 * non-2xx `Response` whose JSON body is {@link SandboxErrorBody}. Every Response carries
 * `Server-Timing` with the Run's phases (`host`, `box`, `stage`, `install`, `exec`, `recover`) in ms; the Box is given back after the Response.
 * Rejects only with the reason of an aborted `options.signal`.
 */
export function runSandbox<N extends SandboxName>(name: N, ...args: SandboxRunArguments<N>): Promise<Response>;

/**
 * The typed registry: the Vite plugin's generated `.vite-hub/sandbox/sandbox.d.ts` adds one key
 * per Definition name, `{ payload, result }`. Empty without the plugin, and then `runSandbox`
 * takes any name and payload.
 */
// biome-ignore lint/suspicious/noEmptyInterface: an interface, so the generated .vite-hub/sandbox/sandbox.d.ts can merge the app's Definitions into it
export interface SandboxDefinitions {}

/** The Definition names `runSandbox` accepts: the keys of {@link SandboxDefinitions}, or any string while it is empty. */
export type SandboxName = keyof SandboxDefinitions extends never ? string : keyof SandboxDefinitions & string;

/**
 * `runSandbox`'s arguments after the name: the Definition's payload type, then options. The
 * payload may be left out where the entry may be called without one (its type admits `undefined`:
 * an optional or defaulted first parameter, or none), as TypeScript allows for the entry itself.
 */
export type SandboxRunArguments<N> = keyof SandboxDefinitions extends never
  ? [payload?: unknown, options?: RunSandboxOptions]
  : N extends keyof SandboxDefinitions
    ? SandboxDefinitions[N] extends { payload: infer P }
      ? undefined extends P
        ? [payload?: P, options?: RunSandboxOptions]
        : [payload: P, options?: RunSandboxOptions]
      : never
    : never;

/** A Definition's callable: a package entry's default export, or `run` of a free-form `defineSandbox({ run })`. */
type SandboxEntryFunction<M> = M extends { run: infer R } ? R : M;

/** Payload type of a Definition's default export: its first parameter; `unknown` for a zero-argument function. */
export type SandboxPayloadOf<M> =
  SandboxEntryFunction<M> extends (...args: infer A) => unknown ? (A extends [] ? unknown : A[0]) : unknown;

/** Result type of a Definition's default export: its awaited return type. */
export type SandboxResultOf<M> = SandboxEntryFunction<M> extends (...args: never[]) => infer R ? Awaited<R> : unknown;

/**
 * The lazy registry seam (set by the Vite plugin's generated facade): `runSandbox(name)` calls
 * `loader(name)` when `name` is not registered with `registerSandbox`. The loader resolves to a
 * {@link DefinitionSource} plus an optional `digest` (a Definition is parsed once per name +
 * digest), or `undefined` for an unknown name (`SANDBOX_NOT_FOUND`). A rejection becomes a
 * `SANDBOX_RUNTIME_ERROR` Response. `null` removes the loader.
 *
 * `describe`, optional, is asked only on a miss so that `SANDBOX_NOT_FOUND` explains itself:
 * `names` (the closest ones are proposed, then up to ten are listed) and `invalid` (name → the
 * reason its Definition is not in the registry).
 */
export function setSandboxDefinitionLoader(
  loader: ((name: string) => Promise<(DefinitionSource & { digest?: string }) | undefined>) | null,
  describe?: (() => SandboxRegistryDescription | Promise<SandboxRegistryDescription>) | null,
): void;

/** What a Definition loader's registry holds (see {@link setSandboxDefinitionLoader}). */
export interface SandboxRegistryDescription {
  names: string[];
  invalid?: Record<string, string>;
}

/** One file of a Definition package. `mode` is a POSIX file mode such as `0o755`. */
export interface DefinitionFile {
  /** POSIX path relative to the install root (the package root unless `packagePath` is set), e.g. `index.ts` or `packages/util/index.js`. */
  path: string;
  /** UTF-8 text or bytes; base64 text when `encoding` is `'base64'`. */
  content: string | Uint8Array;
  /** How a string `content` is encoded (default `'utf8'`). */
  encoding?: 'utf8' | 'base64';
  mode?: number;
}

/**
 * A Definition project in memory. TypeScript files need their compiled `<file>.mjs` siblings.
 * Rules: contract §4.3 (vitehub-sandbox-contract.md) and docs/internals/build-steps.md "Project resolution".
 */
export interface DefinitionSource {
  /** Every file, relative to the install root (the Box dir `project/`, where dependencies are installed). */
  files: DefinitionFile[];
  /** The package directory relative to the install root, e.g. `server/sandboxes/report` inside a pnpm workspace. Default `""`. */
  packagePath?: string;
  /** An explicit entry module relative to the package directory (`.js`, `.mjs`, `.ts`, `.mts`), e.g. `.vite-hub-sandbox/definition.mjs`; skips the `index.*` lookup. */
  entry?: string;
  /** The Definition timeout in ms (positive integer ≤ 2147483647); overrides `vitehub.sandbox.timeout`. */
  timeout?: number;
}

/**
 * Adds (or replaces) a Definition in the programmatic registry. The package manager is the
 * package's (else the root's) `packageManager`, else the install root's lockfile
 * (`pnpm-lock.yaml`, `package-lock.json`, `yarn.lock`, `bun.lock`), else pnpm in a pnpm
 * workspace, else npm.
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` for a bad name, a bad `packagePath`, a missing
 *   or invalid `<packagePath>/package.json` (or root `package.json`), `"type": "module"` missing,
 *   zero or several entrypoints (`index.ts|mts|js|mjs`), an `entry` that is not a shipped module,
 *   an uncompiled TypeScript entry, an invalid `timeout` / `vitehub.sandbox.timeout`, or a
 *   malformed `packageManager`.
 */
export function registerSandbox(name: string, definition: DefinitionSource): void;

/** Removes a Definition; `true` when it was registered. */
export function unregisterSandbox(name: string): boolean;

/** How a Definition's dependencies are installed: `command ...args` run at the install root (`cwd` is always `"."`). */
export interface InstallPlan {
  command: 'npm' | 'pnpm' | 'yarn' | 'bun';
  args: string[];
  cwd: '.';
  /**
   * The install digest (64 lowercase hex chars): SHA-256 of the manager, the command, the
   * `packagePath` and the install inputs (every `package.json`, the root lockfiles and manager
   * config, `patches/` and `.yarn/`). The key of the prepared project (see README, "Prepared
   * projects"); editing a handler keeps it.
   */
  digest: string;
}

/**
 * The registered Definitions, sorted by name. `timeoutMs` is the Definition timeout in ms;
 * `entry` is relative to the package directory `packagePath` (relative to the install root);
 * `packageManager` is the chosen manager, also when nothing is installed (then `install` is `null`).
 */
export function listSandboxes(): Array<{
  name: string;
  entry: string;
  packagePath: string;
  timeoutMs: number;
  packageManager: 'npm' | 'pnpm' | 'yarn' | 'bun';
  install: InstallPlan | null;
  digest: string;
}>;

/**
 * The prepared projects (installed dependencies kept per install digest, see README "Prepared
 * projects") the configured provider keeps: Vercel and local Box host snapshots, newest first, at
 * most 100. `sizeBytes` in bytes, `createdAt` in ms since the epoch.
 * Rejects with a `SandboxError`: `SANDBOX_NOT_SUPPORTED` (cloudflare keeps none),
 * `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` when the provider's list fails.
 */
export function listPreparedProjects(): Promise<Array<{ id: string; sizeBytes: number; createdAt: number }>>;

/**
 * Deletes the prepared project of an install digest (`listSandboxes()[i].install.digest`): the
 * snapshots this process took for it and those the provider lists under `vitehub-prepared-<digest>`.
 * Resolves to how many were deleted; the next Run of that digest installs again.
 * Rejects with `SANDBOX_INVALID_ARGUMENT` for a digest that is not 64 hex characters.
 */
export function dropPreparedProject(digest: string): Promise<number>;

/**
 * Closes every Box of the warm pools (`configureSandbox({ warmPool })`), after the refills under
 * way (each closes the Box it opened). Resolves to how many waiting Boxes were closed; the next
 * Run of a Definition opens its own Box and fills its pool again. `configureSandbox` and
 * `dropPreparedProject` (for its digest) drain the pools too; `closeLocalBoxHost` calls it first.
 * Rejects with a `SandboxError` for the first close that failed (`SANDBOX_TRANSPORT_ERROR`, or
 * `SANDBOX_RUNTIME_ERROR` past 15000 ms); the other Boxes are closed anyway.
 */
export function closeWarmPools(): Promise<number>;

/**
 * The warm pools of this process (`configureSandbox({ warmPool })`), one per Definition that ran:
 * `idle` Boxes waiting for a Run, `opening` Boxes being opened. Empty without `warmPool`.
 */
export function listWarmPools(): Array<{ name: string; idle: number; opening: number }>;

export interface SandboxConfig {
  /** Explicit provider. Else env `SANDBOX_PROVIDER`, then the Cloudflare binding in `env`, then Vercel credentials, then `local` outside production. */
  provider?: SandboxProviderName;
  /**
   * Default: `NODE_ENV === 'production'`. In production `local` is never chosen implicitly, and
   * the in-process local Box host refuses Boxes without isolation (`local.isolation`) and
   * `allow-all` Boxes that would share this machine's network (`local.shareHostNetwork`).
   */
  production?: boolean;
  /** Vercel Sandbox. Credentials fall back to env `VITE_SANDBOX_*`, `VERCEL_TOKEN`/`VERCEL_TEAM_ID`/`VERCEL_PROJECT_ID`, then `VERCEL_OIDC_TOKEN`. */
  vercel?: {
    token?: string;
    teamId?: string;
    projectId?: string;
    baseUrl?: string;
    networkPolicy?: 'allow-all' | 'deny-all' | object;
  };
  /**
   * A running local Box host (Node starts one in-process when `baseUrl` is unset).
   * `isolation` (in-process host only): 'auto' (default) takes the strongest this machine gives
   * (bubblewrap on Linux, Seatbelt on macOS) and, in production, makes the first Run reject with
   * SANDBOX_PROVIDER_UNAVAILABLE when there is none; 'bubblewrap' / 'seatbelt' require theirs;
   * 'none' runs Boxes as plain processes, also in production. A `networkPolicy: 'deny-all'` the
   * host cannot enforce is SANDBOX_PROVIDER_UNAVAILABLE (see docs/providers/local.md).
   * `parked` (in-process host, bubblewrap only): spare Boxes kept with a `node` started ahead,
   * which a Run's harness becomes (one Run each): `size` 0–16 (default 2; 0 turns it off),
   * `idleMs` 1–3600000 before an unused one is retired (default 300000); out of range is
   * SANDBOX_INVALID_ARGUMENT. The host starts once per process with the first Run's options.
   * A busy host queues a Run's Box until one fits: the Run waits as long as its own `timeout`
   * and `signal` allow (then SANDBOX_TIMEOUT, or the abort), never SANDBOX_PROVIDER_UNAVAILABLE
   * for being busy; only a queue of 1024 waiting Runs refuses more (SANDBOX_PROVIDER_UNAVAILABLE).
   */
  local?: {
    baseUrl?: string;
    token?: string;
    /** What the local Box host enforces; a Vercel policy object is SANDBOX_INVALID_ARGUMENT. */
    networkPolicy?: 'allow-all' | 'deny-all' | { mode: 'allow-all' | 'deny-all' };
    isolation?: 'auto' | 'bubblewrap' | 'seatbelt' | 'none';
    parked?: { size?: number; idleMs?: number };
    /**
     * In-process host only. What each Box counts against the host's memory bound (this
     * machine's memory), in bytes: what a Box is expected to use. Default 536870912 (512 MiB);
     * a whole number from 1048576 (1 MiB) to 1099511627776 (1 TiB), else SANDBOX_INVALID_ARGUMENT
     * naming `local.memoryRequestBytes`. Boxes past the bound wait in the host's queue. Each
     * Box's memory limit (`vcpus` × 2048 MiB, enforced by its cgroup where one applies) is
     * unchanged: a Box above its request keeps running up to its limit.
     */
    memoryRequestBytes?: number;
    /**
     * In-process host only. Without a Box network (no slirp4netns, or no `/dev/net/tun` this user
     * can open; always under Seatbelt), an `allow-all` Box shares this machine's network: it
     * reaches this machine's loopback (other Boxes' ports, the Box host's port, the app's dev
     * server) and this user's abstract Unix sockets (D-Bus, X11). Outside production that is
     * allowed and the host's start-up line says it; in production such a Run is
     * SANDBOX_PROVIDER_UNAVAILABLE naming this option unless it is `true`. Default `false`.
     * `isolation: 'none'` accepts everything of this user, its network included.
     */
    shareHostNetwork?: boolean;
  };
  /**
   * Cloudflare Sandbox through the Worker's Durable Object binding (pass the Worker `env`). `binding`
   * default `SANDBOX`; `sandboxId` keeps one Box for every Run (Runs wait in turn in the isolate);
   * `sleepAfter` seconds or `"30s" | "5m" | "1h"`, default `"5m"`; `keepAlive` default false;
   * `normalizeId` lower-cases the id. `SANDBOX_LOCAL_URL` + `SANDBOX_LOCAL_TOKEN` in `env` send the
   * container traffic to a local Box host instead (development without Docker).
   */
  cloudflare?: {
    binding?: string;
    sandboxId?: string;
    sleepAfter?: number | string;
    keepAlive?: boolean;
    normalizeId?: boolean;
  };
  /** Transfer limits. Defaults: 4 MiB in, 4 MiB out (bytes of the JSON envelope), depth 32, 64 sidecars, 64 MiB of sidecars. Each ≤ 1 GiB. */
  transfer?: {
    maxInputBytes?: number;
    maxOutputBytes?: number;
    maxDepth?: number;
    maxSidecars?: number;
    maxSidecarBytes?: number;
  };
  /**
   * Environment; default: the runtime's env (Node: `process.env`). The core reads only its string
   * names; in a Worker pass the fetch handler's `env`: the `cloudflare.binding` namespace is taken from it.
   */
  env?: Record<string, unknown>;
  /** Replaces the global `fetch` for provider calls. */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Every Run's handler output, live, one call per line: `name` is the Definition, `stream` the
   * stream the entry wrote on (`console.log` → `'stdout'`, `console.error` → `'stderr'`), `line`
   * without its newline (the last line without one comes when the Run ends). The result frames
   * are never passed. Also called with `stream: 'stderr'` and a `[vite-hub-sandbox]` line when
   * giving a Box back after the Response fails. A Run's own `onLog` option wins. A throw is
   * ignored. Default: none, nothing is printed (production). `vite dev` and
   * `vite-hub-sandbox run` set one that prints `[<name>] <line>` on the same stream.
   * A `line` is at most 65536 UTF-16 code units: a longer one comes in pieces of that length.
   */
  onLog?: (entry: { name: string; stream: 'stdout' | 'stderr'; line: string }) => void;
  /**
   * `true`: a handler error's Response keeps the thrown error's stack (`error.details.stack`).
   * Default `false`: its `message` and `details.name` only, what production sends. `vite dev` and
   * `vite-hub-sandbox run` set it (and map the stack to the Definition's source files).
   */
  debug?: boolean;
  /**
   * Boxes opened ahead per Definition (`vercel` and `local` providers; off by default): after a
   * Run's Response, up to `size` Boxes are opened as its next Run would open them (from its
   * prepared project when it has dependencies) with its files and harness written, so a Run that
   * takes one makes 2 requests before its Response (write its input, exec). `size` 0–16 (default
   * 1; 0 turns it off), `idleMs` 1000–3600000 ms (default 60000) before an unused Box is closed.
   * A pooled Box is opened with a provider lifetime of `idleMs` + the Definition timeout + 90000
   * ms. `Server-Timing` has `box;desc="warm"` when the Run ran on one. A refill that failed is
   * told to the next Run's `onLog` (else `console.warn`). Out of range or an unknown key is
   * SANDBOX_INVALID_ARGUMENT; with the `cloudflare` provider SANDBOX_NOT_SUPPORTED. See
   * docs/configure.md "Warm pool".
   */
  warmPool?: { size?: number; idleMs?: number } | null;
}

/**
 * Replaces the sandbox config of this isolate (`onLog` and `debug` included: a call without them
 * removes them).
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` for a config that is no object, unknown keys,
 *   an `env` that is no object, an unknown `provider`, a `baseUrl` that is no http(s) URL or carries
 *   user info, a token under 8 characters, a number that is not finite, out-of-range limits or an
 *   `onLog` that is not a function; `SANDBOX_NOT_SUPPORTED` for a `warmPool` on the `cloudflare`
 *   provider. Every call closes the Boxes of the warm pools (see {@link closeWarmPools}).
 */
export function configureSandbox(config?: SandboxConfig): void;

/** Browser: loads the wasm once (`runSandbox` does it on first use). Elsewhere a no-op. */
export function initSandbox(input?: URL | string | Response | BufferSource): Promise<void>;

/** What a free-form Definition's `run` receives besides the payload: `runSandbox`'s `context` option. */
export type SandboxRunContext = unknown;

/**
 * The argument of {@link defineSandbox}. Only these keys are accepted; every option but `input`
 * must be a literal (static JSON), because it is read from the source when the file is prepared.
 */
export interface SandboxDefinitionInput<P = unknown, R = unknown, C = SandboxRunContext> {
  /** The handler: called in the Box with `runSandbox`'s payload and `context`; its result becomes the Response. */
  run: (payload: P, context?: C) => R | Promise<R>;
  /** Timeout of one attempt in ms: a positive integer ≤ 2147483647 (default 300000). */
  timeout?: number;
  /**
   * Ship the nearest project (`package.json` + lockfile, installed in the Box): `true` forces it,
   * `false` forbids it (then importing an npm package is an error). Default: only when the file
   * imports a runtime package.
   */
  project?: boolean;
  /**
   * What the Definition does, for people and agents: its tool description (`@vite-hub/sandbox/mcp`,
   * `definitionTools()`). A non-empty string of at most 4096 bytes. Default: none.
   */
  description?: string;
  /**
   * The payload's schema: a Standard Schema that is also a Standard JSON Schema
   * (standardschema.dev; zod ≥ 4.2, valibot with `@valibot/to-json-schema`, arktype). Evaluated
   * once at build time for its JSON Schema (the tool's `inputSchema`); a tool call whose payload
   * it refuses is `SANDBOX_INVALID_ARGUMENT` naming the key, before any Box opens. Not shipped
   * as code: the handler still receives the payload as sent. Rules: docs/definitions.md.
   */
  input?: StandardSchemaV1<unknown, P>;
}

/**
 * Declares a free-form Definition in a `<path>.sandbox.{ts,mts,cts,js,mjs,cjs}` file:
 * `export default defineSandbox({ run(payload, context) { ... }, timeout?, project? })`.
 * The identity at run time. Rules, checked by `prepareFreeFormDefinition` (Node; source:
 * vitehub-sandbox-contract.md §4.2, §4.5, §4.6): the default export must be this call itself
 * (not a local binding), with one direct object literal holding a `run` handler; options are
 * static JSON; `project` is a boolean; `timeout` a positive integer ≤ 2147483647; other keys
 * (including the reference's `env` and `transfer`) are rejected.
 */
export function defineSandbox<
  A extends [payload?: unknown, context?: unknown] = [payload?: unknown, context?: SandboxRunContext],
  R = unknown,
>(definition: SandboxDefinitionOf<A, R>): SandboxDefinitionOf<A, R>;

/**
 * What {@link defineSandbox} takes and gives back: {@link SandboxDefinitionInput} with `run`'s
 * parameter list `A` kept as written, so a payload parameter that is optional or defaulted
 * (`run(payload: { text?: string } = {})`) stays optional for `runSandbox`; an unannotated one
 * is `unknown`.
 */
export interface SandboxDefinitionOf<A extends [payload?: unknown, context?: unknown], R>
  extends Omit<SandboxDefinitionInput, 'run'> {
  /** The handler: called in the Box with `runSandbox`'s payload and `context`; its result becomes the Response. */
  run: (...args: A) => R | Promise<R>;
}

// ---------------------------------------------------------------------------------------------
// Sessions, runners and executionAuthority (src/api/session/, src/api/runner.rs; contract §2, §3)
// ---------------------------------------------------------------------------------------------

/**
 * What code in a Box can reach (vitehub-sandbox-contract.md §2), a frozen object. Vercel:
 * `isolation: 'microvm'`, `network` from `networkPolicy` (`'none'` for `deny-all`;
 * `'unrestricted'` unset, `allow-all` or an allow list with `*`; `'restricted'` for a non-empty
 * allow list/record or subnet rules; else `'unknown'`). Cloudflare: `isolation: 'container'`,
 * `network: 'unknown'`. Local: the Box host's own report (bubblewrap: `isolation: 'process'`,
 * `filesystem.scope: 'sandbox'`, `processes: 'restricted'`, `network: 'none'` under `deny-all`,
 * `'restricted'` with the host's slirp4netns Box network (no host loopback); without bubblewrap
 * `isolation: 'none'`, `filesystem.scope: 'host'`, `network: 'unrestricted'`). Dimensions a
 * provider cannot establish are `'unknown'`.
 */
export interface ExecutionAuthority {
  readonly credentials: 'ambient' | 'none' | 'provisioned' | 'unknown';
  readonly environment: 'ambient' | 'none' | 'selected' | 'unknown';
  readonly filesystem: {
    readonly access: 'none' | 'read-only' | 'read-write' | 'unknown';
    readonly scope: 'host' | 'none' | 'sandbox' | 'unknown' | 'workspace';
  };
  readonly isolation: 'container' | 'microvm' | 'none' | 'process' | 'unknown';
  readonly network: 'none' | 'restricted' | 'unrestricted' | 'unknown';
  readonly processes: 'arbitrary' | 'none' | 'restricted' | 'unknown';
}

/** Options of {@link openSandboxSession}. */
export interface OpenSandboxSessionOptions {
  /** Must be the provider `configureSandbox` chose (else `SANDBOX_INVALID_ARGUMENT`). */
  provider?: SandboxProviderName;
  /** Box lifetime in ms (positive integer ≤ 2147483647); the provider's default (5 min on Vercel and the local Box host) when absent. */
  timeout?: number;
  /** Aborts the opening: the Promise rejects with `signal.reason` (a Box already opened is closed). */
  signal?: AbortSignal | null;
  /** Cloudflare only: the kept Box (Durable Object) to use; other providers reject it with `SANDBOX_NOT_SUPPORTED`. */
  sandboxId?: string;
  /**
   * Reattaches to the running Box of this id (a Session's `id`, or one of {@link listSandboxSessions})
   * instead of opening one; only `provider` and `signal` may go with it. Vercel protocol:
   * `GET /v2/sandboxes/{id}` (the SDK's `Sandbox.get`). A stopped Box rejects with
   * `SANDBOX_INVALID_STATE` (409), an unknown id with `SANDBOX_TRANSPORT_ERROR` (`details.status`
   * 404; on the in-process local Box host, whose Boxes belong to the process that opened them, the
   * message says to share a standalone host, `local: { baseUrl, token }`). Cloudflare: the Durable
   * Object of that name (as `sandboxId`).
   */
  id?: string;
}

/** One Box of {@link listSandboxSessions}. */
export interface SandboxSessionListing {
  /** What {@link OpenSandboxSessionOptions.id} takes. */
  readonly id: string;
  /** The provider's status: `'running'`, `'stopped'`, `'stopping'`, `'snapshotting'`, `'failed'`, … */
  readonly status: string;
  readonly createdAt: Date | undefined;
  /** When a running Box's lifetime ends. */
  readonly expiresAt: Date | undefined;
}

/**
 * The provider's Boxes, newest first (at most 100): Vercel protocol `GET /v2/sandboxes` (the SDK's
 * `Sandbox.list`; every sandbox of the project, those of Runs too); the local Box host lists its
 * live Boxes and the last 256 stopped ones (an in-process host: those of this process).
 * @throws SandboxError (rejects) `SANDBOX_NOT_SUPPORTED` on Cloudflare (`details.operation`
 *   `'listSandboxSessions'`), `SANDBOX_INVALID_ARGUMENT` for bad options, the provider's transport errors.
 */
export function listSandboxSessions(options?: {
  provider?: SandboxProviderName;
  signal?: AbortSignal | null;
}): Promise<SandboxSessionListing[]>;

/** Options of {@link SandboxSession.exec} and {@link SandboxSession.spawn}. */
export interface SandboxCommandOptions {
  /** Working directory in the Box (absolute, or relative to the Session's `cwd`). */
  cwd?: string;
  /** Extra environment variables of this Command (names without `=`; string values). */
  env?: Record<string, string>;
  /** Kills the Command after this many ms (positive integer ≤ 2147483647); `exec` then rejects with `SANDBOX_TIMEOUT`. */
  timeout?: number;
  /**
   * `exec`: aborts it (rejects with `signal.reason` at once; on Vercel and the local Box host the
   * Command is killed, also when the abort came before the provider answered its id: that answer
   * is read on in the background, at most 30000 ms, and the Command killed when it arrives; on
   * Cloudflare its request is cancelled, which the local Box host answers by killing it). `spawn`: bounds the
   * start only (stop a spawned Command with `kill`).
   */
  signal?: AbortSignal | null;
}

/** Options of {@link SandboxSession.exec}: those of every Command, and `stdin`. */
export interface SandboxExecOptions extends SandboxCommandOptions {
  /**
   * What the Command reads on stdin, then end of input: a string (UTF-8), bytes, or a
   * ReadableStream of those, read while the Command runs (locked while read; never cancelled). Vercel protocol:
   * `attachStdin` and `POST …/cmd/{id}/stdin` writes of at most 524288 bytes. A Command that stops
   * reading ends the feed without error; a stream that errors, or a chunk of another type, kills
   * the Command and rejects with `SANDBOX_INVALID_ARGUMENT`. Absent: an empty stdin. Cloudflare:
   * `SANDBOX_NOT_SUPPORTED` (`details.operation` `'stdin'`).
   */
  stdin?: string | Uint8Array | ReadableStream<string | Uint8Array>;
}

/** Options of {@link SandboxSession.spawn}: those of every Command, and `stdin`. */
export interface SandboxSpawnOptions extends SandboxCommandOptions {
  /**
   * `true`: the Command reads a pipe that {@link SandboxProcess.writeStdin},
   * {@link SandboxProcess.closeStdin} and {@link SandboxProcess.stdin} write (Vercel protocol:
   * `attachStdin: true` on `POST …/cmd`). Absent or `false`: it reads an empty stdin. Cloudflare's
   * container API has no stdin: `SANDBOX_NOT_SUPPORTED` (`details.operation` `'stdin'`).
   */
  stdin?: boolean;
}

/** What `exec` resolves to: exit state and outputs (the last 16 MiB, 16777216 bytes, of each stream, UTF-8). */
export interface SandboxExecResult {
  exitCode: number;
  ok: boolean;
  stdout: string;
  stderr: string;
  /** Present (`true`) when stdout or stderr printed more than 16777216 bytes and lost its beginning. */
  truncated?: true;
}

/** A Command started by {@link SandboxSession.spawn}, or looked up by {@link SandboxSession.command}. */
export interface SandboxProcess {
  /** The provider's Command id (keep it to pick the Command up again with `session.command(id)`). */
  readonly id: string;
  /**
   * Writes to the stdin of a Command spawned with `stdin: true` (a string as UTF-8), in call order;
   * resolves once the Command's pipe took the bytes (Vercel protocol: `POST …/cmd/{id}/stdin`
   * `{ data: base64, offset }`, at most 524288 bytes a request). Rejects with
   * `SANDBOX_TRANSPORT_ERROR` when its stdin is not open (`details.status` 400: not spawned with
   * `stdin`, or closed; 404: exited) or the Command did not read for 30000 ms (504; its stdin is
   * closed then); `SANDBOX_NOT_SUPPORTED` on Cloudflare.
   */
  writeStdin(data: string | Uint8Array): Promise<void>;
  /** Closes the Command's stdin: it reads end of input after what was written (`{ close: true }`). Idempotent while it runs. */
  closeStdin(): Promise<void>;
  /** The Command's stdin as a WritableStream (the same one per handle): a chunk is a `writeStdin`, `close()` a `closeStdin()`. */
  readonly stdin: WritableStream<string | Uint8Array>;
  /**
   * The Command's output: every entry from its start, then live entries as they are produced,
   * ending when it exits (Vercel protocol: `GET …/cmd/{id}/logs`, NDJSON; Cloudflare:
   * `GET /api/process/{id}/stream`, SSE). Each call replays
   * from the start. Leaving the loop early cancels the stream.
   */
  logs(): AsyncIterableIterator<SandboxLogEntry>;
  /** Waits for the exit: `{ exitCode, ok }` (a signal's exit code is 128 + its number). */
  wait(): Promise<{ exitCode: number; ok: boolean }>;
  /**
   * Sends a signal (default `'SIGTERM'`; `'SIGKILL'`, `'SIGINT'`, `'SIGHUP'`, `'SIGQUIT'`, `'SIGCONT'`,
   * `'SIGSTOP'` or 1–64). Cloudflare's container API kills with SIGTERM only: another signal is
   * `SANDBOX_NOT_SUPPORTED`.
   */
  kill(signal?: string | number): Promise<void>;
}

/** `Symbol.asyncDispose` where the TypeScript lib declares it (`esnext.disposable`), else no key. */
type SandboxAsyncDisposeKey = SymbolConstructor extends { readonly asyncDispose: infer S extends symbol } ? S : never;

/** `await using session = await openSandboxSession()` closes the Box at the end of the block. */
export type SandboxAsyncDisposable = { [K in SandboxAsyncDisposeKey]: () => Promise<void> };

/**
 * One open Box, driven by hand. Every method returns a Promise and checks its arguments before any
 * request (`SANDBOX_INVALID_ARGUMENT`); after `close()` every operation rejects with
 * `SANDBOX_INVALID_STATE` (409). Relative paths start at `cwd`.
 */
export interface SandboxSession extends SandboxAsyncDisposable {
  /** The provider's Box id: what `openSandboxSession({ id })` reattaches with (Vercel protocol: the sandbox name). */
  readonly id: string;
  readonly provider: SandboxProviderName;
  /** What the Box can reach now; a new frozen object after {@link SandboxSession.updateNetworkPolicy}. */
  readonly executionAuthority: ExecutionAuthority;
  /**
   * The network of the Commands started from now on (those running keep theirs); the shapes of
   * the config's `networkPolicy`. Vercel protocol: `POST …/network-policy` (the SDK's
   * `updateNetworkPolicy`). The local Box host takes `'allow-all' | 'deny-all' | { mode }` only
   * (else `SANDBOX_INVALID_ARGUMENT` before any request) and refuses what it cannot enforce
   * (`SANDBOX_PROVIDER_UNAVAILABLE`); `SANDBOX_NOT_SUPPORTED` on Cloudflare
   * (`details.operation` `'updateNetworkPolicy'`).
   */
  updateNetworkPolicy(
    policy: 'allow-all' | 'deny-all' | { mode: 'allow-all' | 'deny-all' } | Record<string, unknown>,
  ): Promise<void>;
  /** The Box working directory, e.g. `/vercel/sandbox` (Vercel, local) or `/workspace` (Cloudflare). */
  readonly cwd: string;
  /**
   * Live: `'running'` once open, `'stopped'` after `close()`, `'failed'` when the close failed (call
   * `close()` again), `'expired'` once the Box lifetime (`openSandboxSession({ timeout })`, default
   * 300000 ms on Vercel and the local Box host; Cloudflare has none) ran out or the provider
   * answered 410: every operation then rejects with `SANDBOX_INVALID_STATE` (409) naming the
   * lifetime (`details.timeoutMs`).
   */
  readonly status: 'pending' | 'running' | 'stopped' | 'failed' | 'expired';
  /** Runs `command` with `args` (argv, no shell) and waits for it. */
  exec(command: string, args?: string[], options?: SandboxExecOptions): Promise<SandboxExecResult>;
  exec(command: string, options?: SandboxExecOptions): Promise<SandboxExecResult>;
  /** Starts `command` without waiting (Vercel protocol: a detached `cmd`; Cloudflare: `/api/process/start`). */
  spawn(command: string, args?: string[], options?: SandboxSpawnOptions): Promise<SandboxProcess>;
  spawn(command: string, options?: SandboxSpawnOptions): Promise<SandboxProcess>;
  /**
   * The handle of Command `id` of this Box, running or finished, whichever handle of this Session
   * started it (Vercel protocol: `GET …/cmd/{id}`, the SDK's `getCommand`): its `logs()` replay
   * from the start, `wait()` and `kill()` work as on the spawned handle. An unknown id rejects with
   * `SANDBOX_TRANSPORT_ERROR` (`details.status` 404); `SANDBOX_NOT_SUPPORTED` on Cloudflare.
   */
  command(id: string): Promise<SandboxProcess>;
  /**
   * Moves the end of the Box lifetime `ms` later (positive integer ≤ 2147483647; Vercel protocol:
   * `POST …/extend-timeout` `{ duration: ms }`, which adds to the deadline); `expiresAt` moves by
   * `ms`. `SANDBOX_NOT_SUPPORTED` on Cloudflare, whose Boxes have no lifetime (they sleep after
   * `sleepAfter` of inactivity).
   */
  extendTimeout(ms: number): Promise<void>;
  /** When the Box lifetime ends (`undefined` on Cloudflare); moves with `extendTimeout`. */
  readonly expiresAt: Date | undefined;
  /** The file's bytes, or `null` when it does not exist; a file over 256 MiB (268435456 bytes) is `SANDBOX_TRANSFER_LIMIT`. */
  read(path: string): Promise<Uint8Array | null>;
  /** The file as UTF-8 text, or `null`. */
  readText(path: string): Promise<string | null>;
  /** Writes (replaces) a file, creating its parent directories. */
  write(path: string, data: string | Uint8Array): Promise<void>;
  exists(path: string): Promise<boolean>;
  /** Creates a directory; `recursive` also creates its parents and accepts an existing one. */
  mkdir(path: string, options?: { recursive?: boolean }): Promise<void>;
  /** Removes a file, or with `recursive` a directory tree; a missing path is no error. */
  remove(path: string, options?: { recursive?: boolean }): Promise<void>;
  /** Stops the Box. Idempotent: concurrent and later calls share the first cleanup (retried after a failure). */
  close(): Promise<void>;
}

/**
 * Opens one Box on the configured provider and resolves to its {@link SandboxSession}. Close it
 * (`close()` or `await using`); a Box left open stops at the end of its lifetime.
 * @throws SandboxError (rejects) `SANDBOX_INVALID_ARGUMENT` for bad options, `SANDBOX_NOT_SUPPORTED`
 *   for `sandboxId` outside Cloudflare, and the provider's errors (`SANDBOX_PROVIDER_REQUIRED`,
 *   `SANDBOX_PROVIDER_UNAVAILABLE`, `SANDBOX_TRANSPORT_ERROR`).
 */
export function openSandboxSession(options?: OpenSandboxSessionOptions): Promise<SandboxSession>;

/** A Definition's runner, resolved before anything runs (see {@link resolveSandboxRunner}). */
export interface SandboxRunner<N extends SandboxName = SandboxName> {
  readonly name: N;
  readonly provider: SandboxProviderName;
  /** What its Runs' Boxes can reach. */
  readonly executionAuthority: ExecutionAuthority;
  /**
   * A Run, decoded: `undefined` for 204, the parsed JSON for `application/json`, else the bytes.
   * Rejects with the Run's {@link SandboxError} (never a Response), or `signal.reason`. Its handler
   * lines go to the call's `onLog`, else to the one of {@link configureSandbox}.
   */
  run(
    ...args: SandboxRunArguments<N>
  ): Promise<
    N extends keyof SandboxDefinitions ? (SandboxDefinitions[N] extends { result: infer R } ? R : unknown) : unknown
  >;
}

/**
 * Resolves the Definition `name` and the configured provider without running anything (no Box is
 * opened; the local provider asks its Box host for the executionAuthority it applies).
 * @throws SandboxError (rejects) `SANDBOX_NOT_FOUND` for an unknown name (the message of
 *   `runSandbox`), `SANDBOX_INVALID_ARGUMENT` for a bad name, `SANDBOX_PROVIDER_REQUIRED`.
 */
export function resolveSandboxRunner<N extends SandboxName>(name: N): Promise<SandboxRunner<N>>;

/** The payload type of the Definition `N` (from the generated `.vite-hub/sandbox/sandbox.d.ts`); `unknown` for a name it does not hold, or without it. */
export type SandboxPayload<N extends SandboxName> = N extends keyof SandboxDefinitions
  ? SandboxDefinitions[N] extends { payload: infer P }
    ? P
    : unknown
  : unknown;

/** The result type of the Definition `N`: its entry's awaited return value, the JSON of a `200` Response (`unknown` without the generated types). */
export type SandboxResult<N extends SandboxName> = N extends keyof SandboxDefinitions
  ? SandboxDefinitions[N] extends { result: infer R }
    ? R
    : unknown
  : unknown;

/** One problem a Standard Schema reports (standardschema.dev, v1). */
export interface StandardSchemaV1Issue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The result of a Standard Schema v1 `validate`: the output value, or the issues. */
export type StandardSchemaV1Result<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaV1Issue> };

/**
 * A Standard Schema v1 (https://standardschema.dev; zod ≥ 3.24, valibot ≥ 1, arktype ≥ 2 …): the
 * part of the interface {@link readValidatedPayload} calls.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** What {@link readValidatedPayload} checks a payload with: a Standard Schema v1, or a function that returns the payload (or throws to refuse it). */
export type SandboxPayloadSchema<T = unknown> = StandardSchemaV1<unknown, T> | ((value: unknown) => T | Promise<T>);

/** The payload type a {@link SandboxPayloadSchema} produces: the schema's output, or the function's awaited return type. */
export type SandboxSchemaOutput<S> = S extends { readonly '~standard': { readonly types?: infer T } }
  ? NonNullable<T> extends { readonly output: infer O }
    ? O
    : unknown
  : S extends (value: unknown) => infer R
    ? Awaited<R>
    : unknown;

/**
 * Where a route's payload comes from: a Web `Request`, an h3 v2 event (`event.req` is a Web
 * Request: Nitro v3, h3 2.x) or an h3 v1 event (`event.node.req`, a Node IncomingMessage: Nuxt 3, Nitro v2).
 */
export type SandboxRequestSource = Request | { readonly req: Request } | { readonly node: { readonly req: unknown } };

/** Options of {@link readRequestPayload} and {@link readValidatedPayload}. */
export interface ReadPayloadOptions {
  /** The body limit in bytes (default 4194304, the default `transfer.maxInputBytes`). */
  maxBytes?: number;
}

/**
 * Reads a route's JSON request body as the payload of the Definition `N`, unchecked:
 * `readRequestPayload<'hello'>(event)` is typed `SandboxPayload<'hello'>` (the body is trusted to
 * have that shape; use {@link readValidatedPayload} when it comes from outside). Without `N` the
 * type is `unknown`. An empty body is `undefined`; the content type is not consulted. On h3 v1
 * the raw body is cached where h3's `readBody` finds it.
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` (400) for a body that is not JSON or not UTF-8,
 *   already read, or an `event` that is none of {@link SandboxRequestSource}; `SANDBOX_TRANSFER_LIMIT`
 *   (413, `details: { limit: 'maxBytes', value, maximum }` in bytes) past `options.maxBytes`.
 *   For an h3 event (Nitro, Nuxt) the error is also h3's own kind (`name: 'HTTPError'`, the same
 *   `code`, `status` and message, `data: { code, message }`, the SandboxError as `cause`), so h3
 *   answers with the status, the code and the message instead of a logged "Server Error".
 */
export function readRequestPayload<N extends SandboxName = never>(
  event: SandboxRequestSource,
  options?: ReadPayloadOptions,
): Promise<[N] extends [never] ? unknown : SandboxPayload<N>>;

/**
 * {@link readRequestPayload}, then checks the payload with `schema` and resolves to the schema's
 * output, so `runSandbox('hello', await readValidatedPayload(event, Hello))` type-checks the
 * schema against the Definition's payload type.
 * @throws {SandboxError & { issues?: ReadonlyArray<StandardSchemaV1Issue> }} `SANDBOX_INVALID_ARGUMENT`
 *   (400) when the schema refuses the payload: the message lists up to 10 issues as
 *   `payload.<path>: <message>`, `issues` holds every one; a throwing function is the `cause`.
 *   Also every error of {@link readRequestPayload}. For an h3 event the message is the client's
 *   answer: a function schema should throw messages written for the client.
 * @throws {TypeError} when `schema` is neither a Standard Schema v1 nor a function.
 */
export function readValidatedPayload<S extends SandboxPayloadSchema>(
  event: SandboxRequestSource,
  schema: S,
  options?: ReadPayloadOptions,
): Promise<SandboxSchemaOutput<S>>;

/**
 * The AbortSignal of a route's client, for `runSandbox(name, payload, { signal: requestSignal(event) })`:
 * it aborts (reason: a DOMException `AbortError`) when the client closes its connection before the
 * response was sent in full, which stops the Run and its Box. For a Web Request it is the Request's
 * own `signal`. On Node (an h3 v2 event's `event.runtime.node.res`, an h3 v1 event's `event.node.res`)
 * it follows the Node response, because under srvx 0.8 (nitro 3.0.0) `event.req.signal` aborts as
 * soon as the body has been read. The same signal for the same event.
 * @throws {TypeError} when `event` is none of {@link SandboxRequestSource}.
 */
export function requestSignal(event: SandboxRequestSource): AbortSignal;
