//! Every `extern "C"` binding of the crate: global `fetch`, timers, `crypto.getRandomValues`, the
//! duck-typed `fetch(Request)` target and the Durable Object namespace and stub; and the one way a
//! future becomes a JS Promise ([`js_promise`]). No logic lives here.
//!
//! These globals exist in Node 20+, workerd and browsers; nothing here touches `window` or Node APIs.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `globalThis.fetch(request)`, bound as a free function (works in every runtime, unlike
    /// `window.fetch`). [MDN documentation](https://developer.mozilla.org/docs/Web/API/fetch)
    #[wasm_bindgen(js_name = fetch, catch)]
    pub fn global_fetch(request: &web_sys::Request) -> Result<js_sys::Promise, JsValue>;

    /// `globalThis.setTimeout(callback, ms)`; returns the timer handle (a number or, in Node, an object).
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(callback: &js_sys::Function, ms: f64) -> JsValue;

    /// `globalThis.clearTimeout(handle)`.
    #[wasm_bindgen(js_name = clearTimeout)]
    pub fn clear_timeout(handle: &JsValue);

    /// `crypto.getRandomValues(bytes)`: fills `bytes` with cryptographically strong random values.
    #[wasm_bindgen(js_namespace = crypto, js_name = getRandomValues, catch)]
    pub fn get_random_values(bytes: &mut [u8]) -> Result<JsValue, JsValue>;

    /// `performance.now()`: milliseconds since the time origin, monotonic.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;

    /// `CompressionStream`: a `{ readable, writable }` transform pair (Node 18+, workerd,
    /// browsers). Bound here because web-sys marks it unstable.
    /// [MDN documentation](https://developer.mozilla.org/docs/Web/API/CompressionStream)
    #[wasm_bindgen(extends = js_sys::Object)]
    #[derive(Debug, Clone)]
    pub type CompressionStream;

    /// `new CompressionStream(format)`, `format` one of `"gzip"`, `"deflate"`, `"deflate-raw"`.
    #[wasm_bindgen(constructor, catch)]
    pub fn new(format: &str) -> Result<CompressionStream, JsValue>;

    /// Anything with a `fetch(Request) → Promise<Response>` method: a Durable Object stub or a
    /// service binding. Structural, so no `instanceof` check is made.
    #[wasm_bindgen(extends = js_sys::Object)]
    #[derive(Debug, Clone)]
    pub type FetchTarget;

    /// `target.fetch(request)`.
    #[wasm_bindgen(structural, method, catch, js_name = fetch)]
    pub fn fetch_with_request(this: &FetchTarget, request: &web_sys::Request) -> Result<js_sys::Promise, JsValue>;

    /// A Durable Object namespace binding of a Worker env (`env.SANDBOX`). Structural: any object
    /// with `idFromName` and `get` (workerd's `DurableObjectNamespace`, or a test double).
    ///
    /// ```ts
    /// interface DurableObjectNamespace { idFromName(name: string): DurableObjectId; get(id: DurableObjectId): DurableObjectStub }
    /// ```
    /// [Cloudflare documentation](https://developers.cloudflare.com/durable-objects/api/namespace/)
    #[wasm_bindgen(extends = js_sys::Object)]
    #[derive(Debug, Clone)]
    pub type DurableObjectNamespace;

    /// `namespace.idFromName(name)`: the same id for the same name, in every isolate.
    #[wasm_bindgen(structural, method, catch, js_name = idFromName)]
    pub fn id_from_name(this: &DurableObjectNamespace, name: &str) -> Result<JsValue, JsValue>;

    /// `namespace.get(id)`: a stub of that Durable Object.
    #[wasm_bindgen(structural, method, catch, js_name = get)]
    pub fn get_stub(this: &DurableObjectNamespace, id: &JsValue) -> Result<DurableObjectStub, JsValue>;

    /// A Durable Object stub: `fetch(Request)` to the object's fetch handler, and JS RPC to its
    /// public methods. Structural (an RPC stub is a proxy: no `instanceof`). Here the object is the
    /// `Sandbox` class of `@cloudflare/sandbox` (cloudflare-sandbox-protocol.md §2.1).
    #[wasm_bindgen(extends = FetchTarget, extends = js_sys::Object)]
    #[derive(Debug, Clone)]
    pub type DurableObjectStub;

    /// RPC `stub.configure(cfg)` (sandbox name, `sleepAfter`, `keepAlive`); returns a thenable.
    #[wasm_bindgen(structural, method, catch, js_name = configure)]
    pub fn configure(this: &DurableObjectStub, config: &JsValue) -> Result<JsValue, JsValue>;

    /// RPC `stub.destroy()`: kills the container (§6.6); returns a thenable.
    #[wasm_bindgen(structural, method, catch, js_name = destroy)]
    pub fn destroy(this: &DurableObjectStub) -> Result<JsValue, JsValue>;

    /// RPC `stub.getState()`: the container's state as the Durable Object recorded it
    /// (`{ status, lastChange, exitCode? }`, @cloudflare/containers); returns a thenable.
    #[wasm_bindgen(structural, method, catch, js_name = getState)]
    pub fn get_state(this: &DurableObjectStub) -> Result<JsValue, JsValue>;
}

/// Fills a new array with `N` random bytes from `crypto.getRandomValues`.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], JsValue> {
    let mut bytes = [0u8; N];
    get_random_values(&mut bytes)?;
    Ok(bytes)
}

/// A future of a JS value, boxed: every Promise the crate makes from a future (the exports, a
/// Run's work) is made by one instantiation of `future_to_promise` ([`js_promise`]).
pub type JsResultFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<JsValue, JsValue>>>>;

/// The Promise of `future`: it resolves with its `Ok` value and rejects with its `Err` value.
pub fn js_promise(future: JsResultFuture) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(future)
}

/// The Promise of a future that fails with an [`Error`](vite_hub_sandbox_core::error::Error): it rejects with the
/// error's `SandboxError` ([`crate::error::js::to_js_error`]).
pub fn error_promise(
    future: impl std::future::Future<Output = vite_hub_sandbox_core::error::Result<JsValue>> + 'static,
) -> js_sys::Promise {
    js_promise(Box::pin(async move { future.await.map_err(crate::error::js::into_js) }))
}
