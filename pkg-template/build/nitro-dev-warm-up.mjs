// A Nitro runtime plugin that the Vite plugin adds in `vite dev` when Runs go to the in-process
// local Box host. Nitro v3 serves dev requests from a worker thread. That worker loads its own
// copy of the runtime only when the first request imports a route, so its first Run used to pay
// for borrowing the host from Vite's thread (runtime/shared-host.mjs) and for its first
// connection: the `host` and `connect` phases, 10-16 ms measured in a fresh app. Nitro runs its plugins
// when the worker starts, so this plugin lets the worker pay those costs before any request.
//
// '@vite-hub/sandbox/runtime' stays external in dev (vite.mjs `sandboxEnvironmentOptions`), so
// Node loads the same module instance that the routes' Runs use. Only the Node entry has
// `warmUp`; under another condition there is no in-process host to warm. A failed warm-up is not
// reported here: Vite's thread reports a host that did not start, and the first Run starts it
// again and answers with its own error.

/** The Nitro plugin: `(nitroApp) => void`. Nitro does not wait for it; requests start at once. */
export default function warmUpSandboxInDevWorker() {
  import('@vite-hub/sandbox/runtime')
    .then((runtime) => runtime.warmUp?.())
    .catch(() => {});
}
