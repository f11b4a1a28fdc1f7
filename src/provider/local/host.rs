//! The isolate's in-process local Box host: one owner, started once, on first use.
//!
//! In Node the glue registers a starter (`setLocalBoxHostStarter`) that starts the host
//! in-process; the first Run that needs it starts it and every later Run (whatever
//! `configureSandbox` said in between) shares it, until the glue closes it and calls
//! [`forget_started`]. Elsewhere (Workers, browsers) there is no starter: `local.baseUrl` and
//! `local.token` must name a running host (`vite-hub-sandbox host`).

use std::cell::RefCell;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::error::js::js_message;
use crate::provider::box_session::HostStart;
use crate::provider::local::options::InProcessHost;
use crate::sys;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// Where a local Box host listens (what the starter resolves to: `{ baseUrl, token, fetch? }`).
#[derive(Clone)]
pub struct LocalHost {
    /// e.g. `http://127.0.0.1:40123`.
    pub base_url: String,
    /// Bearer token (secret).
    pub token: String,
    /// The host's routes called in process (`(Request) => Promise<Response>`, its
    /// `startBoxHost().fetch`): set when this thread started the host, so the Runs send their
    /// requests through it instead of a loopback socket; `None` for a borrowed host (HTTP).
    pub fetch: Option<js_sys::Function>,
}

impl std::fmt::Debug for LocalHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHost")
            .field("base_url", &self.base_url)
            .field("token", &"[redacted]")
            .field("in_process", &self.fetch.is_some())
            .finish()
    }
}

thread_local! {
    static STARTER: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    static STARTED: RefCell<Option<js_sys::Promise>> = const { RefCell::new(None) };
}

/// Registers the function that starts an in-process host: `({ isolation, parked?,
/// memoryRequestBytes?, production, shareHostNetwork, harness }) => Promise<{ baseUrl, token,
/// fetch?, connectMs? }>` ([`InProcessHost`]: `local.isolation`, `"auto"` when unset,
/// `local.parked`, `local.memoryRequestBytes`, the config's production flag and
/// `local.shareHostNetwork`; `fetch`: the host's in-process Fetch handler, when this thread
/// started it, [`LocalHost::fetch`]; `connectMs`: ms of the first request the starter sent to the
/// host).
pub fn set_starter(starter: Option<js_sys::Function>) {
    STARTER.with(|s| *s.borrow_mut() = starter);
}

/// Forgets the started host (after the glue closed it), so the next Run starts a new one.
pub fn forget_started() {
    STARTED.with(|s| *s.borrow_mut() = None);
}

fn unavailable(message: String) -> Error {
    Error::new(ErrorCode::ProviderUnavailable, message)
        .with_provider(ProviderKind::Local)
        .with_operation(Operation::Create)
}

/// `{ isolation, parked?: { size?, idleMs? }, memoryRequestBytes?, production, shareHostNetwork,
/// harness }`, as `startBoxHost` takes them (`harness`: the source a Run stages as its harness).
fn starter_options(options: InProcessHost) -> js_sys::Object {
    let object = js_sys::Object::new();
    let set = |target: &js_sys::Object, key: &str, value: JsValue| {
        // Setting a property of a plain object made here cannot throw.
        let _ = js_sys::Reflect::set(target, &JsValue::from_str(key), &value);
    };
    set(&object, "isolation", JsValue::from_str(options.isolation.as_str()));
    set(&object, "production", options.production.into());
    set(&object, "shareHostNetwork", options.share_host_network.into());
    // The harness every Run stages, byte for byte: the host's parked processes import it ahead.
    set(&object, "harness", JsValue::from_str(vite_hub_sandbox_core::harness::HARNESS_SOURCE));
    if let Some(parked) = options.parked {
        let value = js_sys::Object::new();
        if let Some(size) = parked.size {
            set(&value, "size", size.into());
        }
        if let Some(ms) = parked.idle_ms {
            set(&value, "idleMs", ms.into());
        }
        set(&object, "parked", value.into());
    }
    if let Some(bytes) = options.memory_request_bytes {
        // At most 2^40 (MemoryRequest::MAX): exact as a JS number.
        set(&object, "memoryRequestBytes", JsValue::from_f64(bytes as f64));
    }
    object
}

/// The in-process host, started on first use. The second value is what this call spent starting
/// it: `Some` only for the call that started it (concurrent callers wait on the same start and
/// get `None`).
///
/// # Errors
/// `SANDBOX_PROVIDER_REQUIRED` when this runtime has no starter; `SANDBOX_PROVIDER_UNAVAILABLE`
/// when starting failed (the next call tries again).
pub async fn in_process_host(options: InProcessHost) -> Result<(LocalHost, Option<HostStart>)> {
    let started_at = sys::performance_now();
    let (promise, starting) = match STARTED.with(|s| s.borrow().clone()) {
        Some(promise) => (promise, false),
        None => {
            let starter = STARTER.with(|s| s.borrow().clone()).ok_or_else(|| {
                Error::new(
                    ErrorCode::ProviderRequired,
                    "the local provider needs a running Box host here: set local.baseUrl and local.token (see `vite-hub-sandbox host`)",
                )
                .with_provider(ProviderKind::Local)
            })?;
            // No RefCell borrow is held while JS runs: the starter may call back into the module.
            let value = starter
                .call1(&JsValue::UNDEFINED, &starter_options(options))
                .map_err(|e| unavailable(format!("the local Box host did not start: {}", js_message(&e))))?;
            let promise = js_sys::Promise::resolve(&value);
            STARTED.with(|s| *s.borrow_mut() = Some(promise.clone()));
            (promise, true)
        }
    };
    match JsFuture::from(promise).await {
        Ok(value) => {
            let field =
                |key: &str| js_sys::Reflect::get(&value, &JsValue::from_str(key)).ok().and_then(|v| v.as_string());
            let (Some(base_url), Some(token)) = (field("baseUrl"), field("token")) else {
                return Err(unavailable(
                    "the local Box host starter returned no { baseUrl, token } strings".to_owned(),
                ));
            };
            let start = starting.then(|| {
                let total_ms = sys::performance_now() - started_at;
                let connect_ms = js_sys::Reflect::get(&value, &JsValue::from_str("connectMs"))
                    .ok()
                    .and_then(|v| v.as_f64())
                    .filter(|ms| ms.is_finite() && *ms >= 0.0 && *ms <= total_ms);
                HostStart { host_ms: total_ms - connect_ms.unwrap_or(0.0), connect_ms }
            });
            let fetch = js_sys::Reflect::get(&value, &JsValue::from_str("fetch"))
                .ok()
                .and_then(|v| v.dyn_into::<js_sys::Function>().ok());
            Ok((LocalHost { base_url, token, fetch }, start))
        }
        Err(error) => {
            if starting {
                forget_started();
            }
            Err(unavailable(format!("the local Box host did not start: {}", js_message(&error))))
        }
    }
}
