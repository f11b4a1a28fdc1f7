/**
 * `@vite-hub/sandbox/cloudflare`: the `Sandbox` Durable Object class to export from a Worker that
 * uses the cloudflare provider (`export { Sandbox } from '@vite-hub/sandbox/cloudflare'`). It is
 * `@cloudflare/sandbox`'s `Sandbox` with four more RPC methods, through which an instance named
 * `vitehub-prepared-<install digest[..40]>` keeps the prepared project of that digest in its
 * Durable Object storage (at most 8 MiB; it runs no Command and starts no container). Source:
 * docs/internals/prepared-projects.md. With the SDK's class itself every Run installs.
 */
export { Sandbox } from '@cloudflare/sandbox';
