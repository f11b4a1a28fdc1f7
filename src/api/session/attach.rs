//! Reattaching: `openSandboxSession({ id })` (a running Box, from any request or process with the
//! same provider config) and `listSandboxSessions()` ([`SessionCore::attach`],
//! [`crate::provider::Provider::list_boxes`]).
//!
//! Source: the Vercel protocol's `GET /v2/sandboxes/{name}` and `GET /v2/sandboxes` (the SDK's
//! `Sandbox.get`, `Sandbox.list`; `shared/reference/vercel-sandbox-protocol.md` §7.1).

use js_sys::{Array, Object, Promise};
use wasm_bindgen::prelude::*;

use super::options::{check_keys, option, signal_option};
use super::{abort_or, configured_provider, invalid, js_promise, rejected, set, Inner, SandboxSession};
use crate::session::SessionCore;
use vite_hub_sandbox_core::error::Result;

/// A Box id as `openSandboxSession({ id })` takes it: non-empty, at most 256 characters,
/// without `/`, `?`, `#` or NUL (it travels in a URL path).
fn box_id(value: &JsValue, what: &str) -> Result<String> {
    value.as_string().filter(|id| !id.is_empty() && id.len() <= 256 && !id.contains(['/', '?', '#', '\0'])).ok_or_else(
        || invalid(format!("{what} id must be a Box id (a Session's id: a non-empty string without '/', '?' or '#')")),
    )
}

/// `openSandboxSession({ id, provider?, signal? })`: the Promise of the reattached Session, or
/// `None` when `options` has no `id` (a new Box is opened).
pub(super) fn reattach(options: &JsValue, what: &str) -> Option<Promise> {
    let id = option(options, "id", what).ok()?;
    if id.is_undefined() {
        return None;
    }
    let read = || {
        check_keys(options, &["id", "provider", "signal"], "openSandboxSession options with id")?;
        let id = box_id(&id, what)?;
        Ok::<_, vite_hub_sandbox_core::error::Error>((
            id,
            configured_provider(options, what)?,
            signal_option(options, what)?,
        ))
    };
    let (id, provider, signal) = match read() {
        Ok(read) => read,
        Err(error) => return Some(rejected(error)),
    };
    Some(js_promise(Box::pin(async move {
        let core = SessionCore::attach(provider.as_ref(), &id, signal.as_ref())
            .await
            .map_err(|e| abort_or(e, signal.as_ref()))?;
        Ok(SandboxSession { inner: Inner::new(core) }.into())
    })))
}

/// A `Date` of `ms` since the Unix epoch, or `undefined`.
fn date(ms: Option<f64>) -> JsValue {
    ms.map_or(JsValue::UNDEFINED, |ms| js_sys::Date::new(&JsValue::from_f64(ms)).into())
}

/// `listSandboxSessions({ provider?, signal? }) → Promise<{ id, status, createdAt?, expiresAt? }[]>`:
/// the provider's Boxes, newest first (at most 100), each frozen: `id` (what
/// `openSandboxSession({ id })` takes), `status` in the provider's words (`'running'`,
/// `'stopped'`, …), `createdAt` and `expiresAt` as `Date`s where the provider says. Vercel
/// protocol: `GET /v2/sandboxes` (the SDK's `Sandbox.list`): every sandbox of the project (those
/// of Runs too); the local Box host: its live Boxes and the last 256 stopped ones.
///
/// # Errors
/// `SANDBOX_NOT_SUPPORTED` on Cloudflare (`operation` `listSandboxSessions`: Durable Objects
/// cannot be listed); `SANDBOX_INVALID_ARGUMENT` for bad options; the provider's transport errors.
#[wasm_bindgen(js_name = listSandboxSessions)]
pub fn list_sandbox_sessions(options: JsValue) -> Promise {
    let what = "listSandboxSessions options";
    let read = || {
        check_keys(&options, &["provider", "signal"], what)?;
        Ok::<_, vite_hub_sandbox_core::error::Error>((
            configured_provider(&options, what)?,
            signal_option(&options, what)?,
        ))
    };
    let (provider, signal) = match read() {
        Ok(read) => read,
        Err(error) => return rejected(error),
    };
    js_promise(Box::pin(async move {
        let listed = async {
            provider.ensure_ready().await?;
            provider.list_boxes(signal.as_ref()).await
        };
        let boxes = listed.await.map_err(|e| abort_or(e, signal.as_ref()))?;
        let array = Array::new();
        for listing in boxes {
            let object = Object::new();
            set(&object, "id", &listing.id.as_str().into());
            set(&object, "status", &listing.status.as_str().into());
            set(&object, "createdAt", &date(listing.created_at_ms));
            set(&object, "expiresAt", &date(listing.expires_at_ms));
            array.push(&Object::freeze(&object));
        }
        Ok(array.into())
    }))
}
