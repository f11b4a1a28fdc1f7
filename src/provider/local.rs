//! The `local` provider: the Vercel protocol against the local Box host.
//!
//! In Node the glue registers a starter (`setLocalBoxHostStarter`) that starts the host in-process
//! on first use; elsewhere (Workers, browsers) `local.baseUrl` + `local.token` must name a running
//! host (`vite-hub-sandbox host`). The host is started once per isolate and shared by every Run.

use std::cell::RefCell;

use serde::Deserialize;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::config::LocalOptions;
use crate::error::{Error, ErrorCode, Operation, Result};
use crate::http::fetch::js_message;
use crate::provider::ProviderKind;

/// Where a local Box host listens.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalHost {
    /// e.g. `http://127.0.0.1:40123`.
    pub base_url: String,
    /// Bearer token (secret).
    pub token: String,
}

impl std::fmt::Debug for LocalHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHost").field("base_url", &self.base_url).field("token", &"[redacted]").finish()
    }
}

thread_local! {
    static STARTER: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    static STARTED: RefCell<Option<js_sys::Promise>> = const { RefCell::new(None) };
}

/// Registers the function that starts an in-process host: `() => Promise<{ baseUrl, token }>`.
pub fn set_starter(starter: Option<js_sys::Function>) {
    STARTER.with(|s| *s.borrow_mut() = starter);
    STARTED.with(|s| *s.borrow_mut() = None);
}

/// Forgets the started host (after the glue closed it), so the next Run starts a new one.
pub fn forget_started() {
    STARTED.with(|s| *s.borrow_mut() = None);
}

fn unavailable(message: String) -> Error {
    Error::new(ErrorCode::ProviderUnavailable, message).with_provider(ProviderKind::Local).with_operation(Operation::Create)
}

/// The host to talk to: the configured one, else the in-process one (started on first use).
///
/// # Errors
/// `SANDBOX_PROVIDER_REQUIRED` when no host is configured and this runtime cannot start one;
/// `SANDBOX_PROVIDER_UNAVAILABLE` when starting it failed.
pub async fn resolve_host(options: &LocalOptions) -> Result<LocalHost> {
    if let Some(base_url) = &options.base_url {
        return Ok(LocalHost { base_url: base_url.clone(), token: options.token.clone().unwrap_or_default() });
    }
    let promise = STARTED.with(|started| -> Result<js_sys::Promise> {
        if let Some(promise) = started.borrow().as_ref() {
            return Ok(promise.clone());
        }
        let starter = STARTER.with(|s| s.borrow().clone()).ok_or_else(|| {
            Error::new(
                ErrorCode::ProviderRequired,
                "the local provider needs a running Box host here: set local.baseUrl and local.token (see `vite-hub-sandbox host`)",
            )
        })?;
        let value = starter
            .call0(&JsValue::UNDEFINED)
            .map_err(|e| unavailable(format!("the local Box host did not start: {}", js_message(&e))))?;
        let promise = js_sys::Promise::resolve(&value);
        *started.borrow_mut() = Some(promise.clone());
        Ok(promise)
    })?;
    match JsFuture::from(promise).await {
        Ok(value) => serde_wasm_bindgen::from_value(value)
            .map_err(|e| unavailable(format!("the local Box host starter returned an invalid value: {e}"))),
        Err(error) => {
            forget_started();
            Err(unavailable(format!("the local Box host did not start: {}", js_message(&error))))
        }
    }
}
