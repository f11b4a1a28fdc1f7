//! Sending HTTP requests through the Fetch API, with the crate's [`RetryPolicy`].
//!
//! A [`Fetcher`] is the global `fetch`, a user-injected `fetch` function, or anything with a
//! structural `fetch(Request)` method (a Durable Object stub). Requests are built and responses
//! wrapped with `gloo-net` (`RequestBuilder`, `Response`); the send itself goes through
//! [`crate::sys`] bindings declared with `catch`, because gloo-net's `Request::send` only knows
//! the global `fetch` and panics when it resolves to something that is not a `Response`
//! (docs/internals/architecture.md, "Transport"). Bodies are read as bytes or as a stream of byte chunks;
//! decoding is the caller's business.

use gloo_net::http::{Method, RequestBuilder, Response};
use js_sys::{Promise, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, ReadableStreamDefaultReader, Request};

use crate::http::timer::Sleep;
use crate::sys;
use vite_hub_sandbox_core::http::retry::{AttemptOutcome, RequestSafety, RetryDecision, RetryPolicy};

pub use crate::error::js::js_message;

/// Who performs HTTP requests.
#[derive(Debug, Clone)]
pub enum Fetcher {
    /// `globalThis.fetch`.
    Global,
    /// An injected `fetch(request) → Promise<Response>` function.
    Function(js_sys::Function),
    /// An object with a `fetch(request)` method (Durable Object stub, service binding).
    Target(sys::FetchTarget),
}

/// One HTTP request, before it becomes a `Request`.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// `GET`, `POST`, ...
    pub method: &'static str,
    /// Absolute URL.
    pub url: String,
    /// Header name/value pairs.
    pub headers: Vec<(&'static str, String)>,
    /// Request body bytes; `None` sends no body.
    pub body: Option<Vec<u8>>,
}

/// Why a request produced no `Response`.
#[derive(Debug)]
pub enum SendError {
    /// The signal fired before or during the request.
    Aborted,
    /// `fetch` rejected (connection refused, DNS, TLS, ...) or a body read failed.
    Network(JsValue),
    /// The server answered a redirect (HTTP 3xx; `0` where the runtime hides it as an opaque
    /// redirect), which is never followed: requests carry the provider's bearer token, which
    /// must reach no other URL (and workerd's fetch keeps `Authorization` across origins).
    /// Never retried.
    Redirected(u16),
}

impl SendError {
    /// A short, secret-free description (the JS error's `message`, if any).
    pub fn describe(&self) -> String {
        match self {
            SendError::Aborted => "the request was aborted".to_owned(),
            SendError::Network(value) => js_message(value),
            SendError::Redirected(0) => "the server answered a redirect, which is not followed (a request carrying the provider's token goes to the configured base URL only)".to_owned(),
            SendError::Redirected(status) => format!("the server answered a redirect (HTTP {status}), which is not followed (a request carrying the provider's token goes to the configured base URL only)"),
        }
    }
}

fn is_aborted(signal: Option<&AbortSignal>) -> bool {
    signal.is_some_and(AbortSignal::aborted)
}

impl Fetcher {
    fn build_request(request: &HttpRequest, signal: Option<&AbortSignal>) -> Result<Request, JsValue> {
        let method =
            Method::from_bytes(request.method.as_bytes()).map_err(|_| JsValue::from_str("invalid HTTP method"))?;
        // Redirects come back as answers (`manual`), never followed: see SendError::Redirected.
        let mut builder = RequestBuilder::new(&request.url)
            .method(method)
            .abort_signal(signal)
            .redirect(web_sys::RequestRedirect::Manual);
        for (name, value) in &request.headers {
            // gloo-net's `header` throws (unwrap_throw) on a value the Fetch API refuses (a
            // control character, or one above U+00FF): check first.
            if value.chars().any(|c| matches!(c, '\0' | '\r' | '\n') || u32::from(c) > 0xFF) {
                return Err(JsValue::from_str(&format!(
                    "the {name} header value holds a character an HTTP header cannot carry"
                )));
            }
            builder = builder.header(name, value);
        }
        let built = match &request.body {
            // A Blob, not a Uint8Array: Node's fetch detaches a typed array's buffer when it sends
            // it (a body that can be read again costs nothing here).
            Some(body) => {
                let parts = js_sys::Array::of1(&Uint8Array::from(body.as_slice()));
                let blob = web_sys::Blob::new_with_u8_array_sequence(&parts)?;
                builder.body(blob)
            }
            None => builder.build(),
        };
        built.map(Request::from).map_err(|e| JsValue::from_str(&e.to_string()))
    }

    /// Sends `request` once.
    pub async fn send_once(&self, request: &HttpRequest, signal: Option<&AbortSignal>) -> Result<Response, SendError> {
        if is_aborted(signal) {
            return Err(SendError::Aborted);
        }
        let js_request = Self::build_request(request, signal).map_err(SendError::Network)?;
        let promise: Promise = match self {
            Fetcher::Global => sys::global_fetch(&js_request),
            Fetcher::Function(function) => {
                function.call1(&JsValue::UNDEFINED, &js_request).map(|value| Promise::resolve(&value))
            }
            Fetcher::Target(target) => target.fetch_with_request(&js_request),
        }
        .map_err(SendError::Network)?;
        match JsFuture::from(promise).await {
            Ok(value) => match value.dyn_into::<web_sys::Response>() {
                // A browser hides a manual redirect as `opaqueredirect` (status 0).
                Ok(response)
                    if (300..400).contains(&response.status())
                        || response.type_() == web_sys::ResponseType::Opaqueredirect =>
                {
                    let status = response.status();
                    if let Some(body) = response.body() {
                        settle_quietly(body.cancel());
                    }
                    Err(SendError::Redirected(status))
                }
                Ok(response) => Ok(Response::from(response)),
                Err(_) => {
                    Err(SendError::Network(JsValue::from_str("fetch resolved to a value that is not a Response")))
                }
            },
            Err(_) if is_aborted(signal) => Err(SendError::Aborted),
            Err(error) => Err(SendError::Network(error)),
        }
    }

    /// Sends `request`, retrying per `policy` (network errors, 429 honouring `Retry-After`, 5xx;
    /// never other 4xx; a [`RequestSafety::NonIdempotent`] request is not re-sent once it may have
    /// reached the server). When retries run out, the last `Response` is returned.
    pub async fn send(
        &self,
        request: &HttpRequest,
        policy: &RetryPolicy,
        safety: RequestSafety,
        signal: Option<&AbortSignal>,
    ) -> Result<Response, SendError> {
        let mut attempts_done = 0u32;
        loop {
            let result = self.send_once(request, signal).await;
            attempts_done += 1;
            let outcome = match &result {
                Err(SendError::Aborted | SendError::Redirected(_)) => return result,
                Err(SendError::Network(_)) => AttemptOutcome::NetworkError,
                Ok(response) => AttemptOutcome::Status {
                    status: response.status(),
                    retry_after: response.headers().get("retry-after"),
                },
            };
            match policy.decide(attempts_done, &outcome, safety, js_sys::Math::random()) {
                RetryDecision::GiveUp => return result,
                RetryDecision::Retry { delay_ms } => {
                    if let Ok(response) = &result {
                        // Release the connection of the response we are discarding.
                        if let Some(body) = response.body() {
                            settle_quietly(body.cancel());
                        }
                    }
                    sleep_unless_aborted(delay_ms as f64, signal).await?;
                }
            }
        }
    }
}

/// Sleeps `ms`, returning early with [`SendError::Aborted`] when `signal` fires.
pub async fn sleep_unless_aborted(ms: f64, signal: Option<&AbortSignal>) -> Result<(), SendError> {
    let sleep = Sleep::new(ms);
    let wait = signal.map(AbortWait::new);
    let race = match &wait {
        Some(wait) => Promise::race(&js_sys::Array::of2(sleep.promise(), wait.promise())),
        None => sleep.promise().clone(),
    };
    let _ = JsFuture::from(race).await;
    drop(wait);
    drop(sleep);
    if is_aborted(signal) {
        return Err(SendError::Aborted);
    }
    Ok(())
}

/// A wait for `signal`'s abort: [`AbortWait::promise`] resolves when it fires (at once if it
/// already has). Dropping the wait removes its listener, so a loop that waits on one signal again
/// and again (a poll, a stream read chunk by chunk) leaves none behind on it, and resolves its
/// promise, so a `JsFuture` of it left in a `select` is let go (else its two closures stay in the
/// externref table for good: issue 32, item 5). Check the signal, not the promise, for the abort.
#[derive(Debug)]
pub struct AbortWait {
    promise: Promise,
    signal: AbortSignal,
    resolve: js_sys::Function,
    listening: bool,
}

impl AbortWait {
    /// Starts waiting for `signal`.
    pub fn new(signal: &AbortSignal) -> AbortWait {
        let mut slot = None;
        let promise = Promise::new(&mut |resolve, _reject| slot = Some(resolve));
        // The Promise executor runs synchronously, so the slot is filled here.
        let resolve = slot.unwrap_or_else(|| js_sys::Function::new_no_args(""));
        let listening = !signal.aborted();
        if listening {
            let options = web_sys::AddEventListenerOptions::new();
            options.set_once(true);
            let _ = signal.add_event_listener_with_callback_and_add_event_listener_options("abort", &resolve, &options);
        } else {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
        AbortWait { promise, signal: signal.clone(), resolve, listening }
    }

    /// Resolves when the signal fires (or the wait is dropped).
    pub fn promise(&self) -> &Promise {
        &self.promise
    }
}

impl Drop for AbortWait {
    fn drop(&mut self) {
        if self.listening {
            let _ = self.signal.remove_event_listener_with_callback("abort", &self.resolve);
        }
        let _ = self.resolve.call0(&JsValue::UNDEFINED);
    }
}

/// Awaits `promise` in the background and ignores its outcome, so a rejection (e.g. cancelling
/// an aborted body) never surfaces as an unhandled rejection.
fn settle_quietly(promise: Promise) {
    wasm_bindgen_futures::spawn_local(async move {
        let _ = JsFuture::from(promise).await;
    });
}

/// Reads a whole response body as bytes.
pub async fn body_bytes(response: &Response) -> Result<Vec<u8>, SendError> {
    response.binary().await.map_err(|e| SendError::Network(JsValue::from_str(&e.to_string())))
}

/// Reads a whole response body, keeping at most `max_bytes`. `Ok(Err(size))` when the body is
/// larger: its `content-length` when the header says so (checked before anything is read), else
/// the bytes seen when the cap was passed (the rest is cancelled). Memory stays within
/// `max_bytes` plus one chunk, whatever the provider sends.
pub async fn body_bytes_capped(response: &Response, max_bytes: u64) -> Result<Result<Vec<u8>, u64>, SendError> {
    let declared = response.headers().get("content-length").and_then(|v| v.trim().parse::<u64>().ok());
    let mut chunks = BodyChunks::new(response)?;
    if let Some(len) = declared.filter(|&len| len > max_bytes) {
        chunks.cancel();
        return Ok(Err(len));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = chunks.next_chunk().await? {
        let seen = bytes.len() as u64 + chunk.len() as u64;
        if seen > max_bytes {
            chunks.cancel();
            return Ok(Err(seen));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Ok(bytes))
}

/// Reads a response body chunk by chunk (bytes as they arrive; a chunk may end anywhere, even
/// inside a UTF-8 character).
#[derive(Debug)]
pub struct BodyChunks {
    reader: Option<ReadableStreamDefaultReader>,
}

impl BodyChunks {
    /// Locks the body of `response` for reading. A body-less response yields no chunks.
    pub fn new(response: &Response) -> Result<BodyChunks, SendError> {
        let reader = match response.body() {
            Some(body) => Some(
                body.get_reader()
                    .dyn_into::<ReadableStreamDefaultReader>()
                    .map_err(|v| SendError::Network(v.into()))?,
            ),
            None => None,
        };
        Ok(BodyChunks { reader })
    }

    /// The next chunk, or `None` at the end of the body.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, SendError> {
        let Some(reader) = &self.reader else { return Ok(None) };
        let result = JsFuture::from(reader.read()).await.map_err(SendError::Network)?;
        let done = js_sys::Reflect::get(&result, &JsValue::from_str("done")).map_err(SendError::Network)?;
        if done.as_bool().unwrap_or(false) {
            self.reader = None;
            return Ok(None);
        }
        let value = js_sys::Reflect::get(&result, &JsValue::from_str("value")).map_err(SendError::Network)?;
        Ok(Some(Uint8Array::new(&value).to_vec()))
    }

    /// Cancels the rest of the body (frees the connection).
    pub fn cancel(&mut self) {
        if let Some(reader) = self.reader.take() {
            settle_quietly(reader.cancel());
        }
    }
}
