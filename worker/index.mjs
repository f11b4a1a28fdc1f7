// The repository's Worker's main module (top-level wrangler.toml): the Rust Worker of
// worker/src/lib.rs as worker-build writes it (`node worker/build.mjs`), and the Sandbox Durable
// Object class the cloudflare provider's binding SANDBOX names: @cloudflare/sandbox's, with the
// store of prepared projects of @vite-hub/sandbox/cloudflare (a Durable Object class must be
// exported by the main module).
export { default } from './build/index.js';
export { Sandbox } from '@vite-hub/sandbox/cloudflare';
