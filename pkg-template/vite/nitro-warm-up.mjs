// A Nitro runtime plugin that the Vite plugin adds where Runs may go to the in-process local Box
// host: in `vite dev` on the local provider, and in a build of a long-lived Node server whose
// provider is chosen at run time or is `local` (vite.mjs `nitroWarmUpModule`). Nitro runs its
// plugins when the server (in dev: its worker thread) starts, so the host's start, this isolate's
// first connection to it and its first Box are paid then, not by the first request: its
// `Server-Timing` has no `host` or `connect` phase (tests/e2e/vite-dev.test.mjs, vite-build.test.mjs).
//
// It imports `@vite-hub/sandbox`, which hubSandbox() resolves to the generated facade, so the
// app's configuration is in force when `warmUp({ onlyIfUsed: true })` asks whether Runs go to
// that host (`SANDBOX_PROVIDER=vercel` on a built server starts nothing). In dev, Nitro's worker
// borrows the host Vite's thread started (runtime/shared-host.mjs). Only the Node entry has
// `warmUp`. A failed warm-up is not reported here: the first Run starts the host again and
// answers with its own error (in dev, Vite's thread also reports it).

/** The Nitro plugin: `(nitroApp) => void`. Nitro does not wait for it; requests start at once. */
export default function warmUpSandboxHost() {
  import('@vite-hub/sandbox').then((sandbox) => sandbox.warmUp?.({ onlyIfUsed: true })).catch(() => {});
}
