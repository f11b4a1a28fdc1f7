/**
 * `@vite-hub/sandbox/vite`: the Vite plugin. Source of the rules: vitehub-sandbox-contract.md
 * §4.1 (options, precedence), §4.7 (generated files), §4.8 (types); docs/internals/build-steps.md "Vite plugin".
 */
import type { SandboxConfig, SandboxProviderName } from '../runtime/index.d.ts';

/**
 * Options of `hubSandbox()`: the non-secret part of {@link SandboxConfig}. They are written into
 * the generated facade, so credentials are rejected (use env `VERCEL_TOKEN`, `VERCEL_TEAM_ID`,
 * `VERCEL_PROJECT_ID` or `VERCEL_OIDC_TOKEN` at runtime).
 */
export interface SandboxOptions {
  /** Explicit provider. Else env `SANDBOX_PROVIDER`, then Vercel credentials, then `local` outside production. */
  provider?: SandboxProviderName;
  /** Default: `NODE_ENV === 'production'` at runtime. */
  production?: boolean;
  vercel?: { baseUrl?: string; networkPolicy?: 'allow-all' | 'deny-all' | object };
  /**
   * `isolation` and `parked`: see {@link SandboxConfig}'s `local` (e.g. `isolation: 'none'` to run a
   * built server's Boxes without isolation on purpose, `parked: { size: 0 }` to keep no spare Boxes).
   */
  local?: SandboxConfig['local'] & { token?: never };
  /** Transfer limits (bytes, depth, counts); see {@link SandboxConfig}. */
  transfer?: SandboxConfig['transfer'];
  /** Boxes opened ahead per Definition (`{ size?, idleMs? }`, off by default); see {@link SandboxConfig}'s `warmPool`. */
  warmPool?: SandboxConfig['warmPool'];
  /**
   * `true`: the built server's handler error Responses keep the thrown stack (Box paths), as
   * `configureSandbox({ debug: true })`. Default `false` (message and name only). `vite dev`
   * always keeps it, mapped to the Definition's sources.
   */
  debug?: boolean;
}

/** Minimal structural type of a Vite plugin (avoids a hard dependency on `vite`'s types). */
export interface HubSandboxPlugin {
  name: 'vite-hub-sandbox';
  [hook: string]: unknown;
}

/**
 * The Vite plugin. Discovers `server/sandboxes/<name>/` packages (and `*.sandbox.*` files), writes
 * the registry under `<root>/.vite-hub/sandbox/`, and makes server code's `@vite-hub/sandbox`
 * resolve `runSandbox(name)` against it (dev, built server, Worker bundle). Precedence:
 * `options` < the Vite config key `sandbox` < env `SANDBOX_PROVIDER` (when neither names a provider).
 * `false` disables the plugin.
 *
 * In a Worker build the runtime `.wasm` stays a WebAssembly module import, copied beside the
 * bundle. With `provider: 'cloudflare'` and Nitro's `cloudflare-module` preset, `vite build` also
 * writes the Provider Output: the Worker exports `Sandbox` from `@cloudflare/sandbox` (install it),
 * and `.output/server/wrangler.json` (Nitro's copy of the app's wrangler config) gets the Durable
 * Object binding, its SQLite migration, the container (`docker.io/cloudflare/sandbox:<version>`)
 * and `nodejs_compat`, with a `Dockerfile` beside it.
 * @throws {SandboxError} `SANDBOX_INVALID_ARGUMENT` when the config is resolved (Vite's
 *   `configResolved`): credentials in options, unknown keys, bad values, unknown provider name.
 */
export function hubSandbox(options?: SandboxOptions | false): HubSandboxPlugin;
export default hubSandbox;

/** The merged, validated config (what the facade passes to `configureSandbox`) and the providers. */
export function resolveSandboxPluginConfig(
  options: SandboxOptions | undefined,
  viteKey: SandboxOptions | undefined,
  env?: Record<string, string | undefined>,
): { config: SandboxOptions; provider: SandboxProviderName | null; devProvider: SandboxProviderName };

/**
 * Writes the generated registry of the app at `root` without Vite: `.vite-hub/sandbox/sandbox.d.ts`
 * and `.vite-hub/sandbox/<mode>/` (the registry modules and facade). `registryJson` (mode `'build'`
 * only) also writes `build/registry.json`, `{ "<name>": <Definition> }`, which a Rust Worker
 * `include_str!`s (docs/providers/cloudflare-rust.md). `config` is the plugin config the facade
 * hands to `configureSandbox` (no secrets).
 *
 * Resolves to `{ dir, facade, names, changed, inputs, errors }`: the output folder and facade file,
 * the Definitions in the registry, the files that changed, the source files outside Definition
 * folders they were built from (relative to `root`), and in `'dev'` each Definition that failed
 * (`name` null for a folder without a valid name), which keeps its last good version.
 *
 * Rejects with a `SandboxError` (`SANDBOX_INVALID_ARGUMENT`) for a malformed app root,
 * `registryJson` outside `'build'`, and in `'build'` every discovery or preparation error at once.
 */
export function generateSandboxArtifacts(options: {
  root: string;
  mode: 'dev' | 'build';
  config?: SandboxOptions;
  registryJson?: boolean;
}): Promise<{
  dir: string;
  facade: string;
  names: string[];
  changed: string[];
  inputs: string[];
  errors: Array<{ name: string | null; error: Error & { code?: string } }>;
}>;

/** Whether a changed app-root-relative file can change the generated registry. */
export function isSandboxInput(relative: string): boolean;

declare module 'vite' {
  interface UserConfig {
    /** Overrides `hubSandbox(options)` (see {@link SandboxOptions}). */
    sandbox?: SandboxOptions;
  }
}
