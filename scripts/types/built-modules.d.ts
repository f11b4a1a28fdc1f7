// The modules pkg-template/ imports that only the build makes (scripts/build.mjs: wasm-pack's
// bindings and the .wasm files in dist/wasm/, runtime/facts.mjs from scripts/generate-facts.mjs)
// or that only workerd provides: declared loosely for `npm run typecheck` (tsconfig.check.json),
// which runs on a checkout before any build. The built package's own declarations are checked by
// tests/package/runtime-types.test.mjs.

declare module '*/wasm/vite_hub_sandbox.js' {
  const bindings: Record<string, any>;
  export = bindings;
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
  export const EXCLUDED_NAMES: Readonly<{ directories: string[]; files: string[]; filePrefixes: string[]; rootFiles: string[] }>;
}

declare module 'cloudflare:workers' {
  export const env: Record<string, unknown>;
}
