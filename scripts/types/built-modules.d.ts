// The modules pkg-template/ imports that only the build makes (scripts/build.mjs: wasm-pack's
// bindings and the .wasm files in dist/wasm/, runtime/facts.mjs from scripts/generate-facts.mjs)
// or that only workerd provides: declared loosely for `npm run typecheck` (tsconfig.check.json),
// which runs on a checkout before any build. The built package's own declarations are checked by
// tests/package/runtime-types.test.mjs.

// The runtime bindings (src/api/): wasm-pack's init functions, and the bindings the JS calls on
// the module itself (runtime/api.mjs and session.mjs get it as a parameter). Loose signatures:
// the values are JS values the core checks.
declare module '*/wasm/vite_hub_sandbox.js' {
  /** `--target web`'s default export: fetches (or takes) and instantiates the .wasm. */
  export default function init(options?: {
    module_or_path?: RequestInfo | URL | Response | BufferSource | WebAssembly.Module;
  }): Promise<unknown>;
  export function initSync(options: { module: BufferSource | WebAssembly.Module }): unknown;
  export function configureSandbox(...args: any[]): any;
  export function registerSandbox(...args: any[]): any;
  export function unregisterSandbox(...args: any[]): any;
  export function listSandboxes(...args: any[]): any;
  export function runSandbox(...args: any[]): any;
  export function closeSandbox(...args: any[]): any;
  export function setSandboxDefinitionLoader(...args: any[]): any;
  export function setSandboxKeepAlive(...args: any[]): any;
  export function listPreparedProjects(...args: any[]): any;
  export function dropPreparedProject(...args: any[]): any;
  export function closeWarmPools(...args: any[]): any;
  export function listWarmPools(...args: any[]): any;
  export function openSandboxSession(...args: any[]): any;
  export function resolveSandboxRunner(...args: any[]): any;
  export function forkSandboxSession(...args: any[]): any;
  export function listSandboxSnapshots(...args: any[]): any;
  export function deleteSandboxSnapshot(...args: any[]): any;
  export function setLocalBoxHostStarter(...args: any[]): any;
  export function warmUpLocalBoxHost(...args: any[]): any;
  export function forgetLocalBoxHost(...args: any[]): any;
  export function validateSandboxDefinition(...args: any[]): any;
}

declare module '*/wasm/vite_hub_sandbox_tooling.js' {
  const bindings: Record<string, any>;
  export = bindings;
}

declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}

declare module '*/facts.mjs' {
  export const ERROR_STATUS: Readonly<Record<string, number>>;
  export const ERROR_OUTPUT_STATUS: Readonly<Record<string, number>>;
  export const SANDBOX_ENV_NAMES: readonly string[];
  export const TRANSFER_LIMITS: readonly { name: string; default: number; maximum: number; unit: string }[];
  export const DEFINITION_LIMITS: readonly { name: string; default: number; maximum: number; unit: string }[];
  export const ENTRY_NAMES: readonly string[];
  export const EXCLUDED_NAMES: Readonly<{
    directories: string[];
    files: string[];
    filePrefixes: string[];
    rootFiles: string[];
  }>;
}

declare module 'cloudflare:workers' {
  export const env: Record<string, unknown>;
  /** Keeps the request's Worker alive until `promise` settles (absent in older workerd). */
  export const waitUntil: ((promise: Promise<unknown>) => void) | undefined;
}
