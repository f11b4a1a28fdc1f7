//! A Session's snapshots and forks in JS: `session.snapshot({ expiration? })`,
//! `forkSandboxSession(idOrSession, { timeout?, signal? })`, `listSandboxSnapshots()` and
//! `deleteSandboxSnapshot(id)` (and `openSandboxSession({ snapshotId })`, read in `mod.rs`).
//! Every rule is [`SessionCore`]'s and the provider's; this reads arguments and shapes answers.
//!
//! Source: vercel-sandbox-protocol.md §6.5, §7.1 (fork), §7.5 (snapshots).

use std::rc::Rc;

use js_sys::{Array, Object, Promise};
use wasm_bindgen::prelude::*;

use super::options::{check_keys, option, signal_option, timeout_option};
use super::{abort_or, invalid, js_promise, rejected, set, Inner, SandboxSession};
use crate::error::js::into_js;
use crate::provider::box_session::SnapshotInfo;
use crate::provider::BoxSpec;
use crate::session::SessionCore;
use vite_hub_sandbox_core::error::{Error, Result};
use vite_hub_sandbox_core::session::MAX_TIMEOUT_MS;

/// A snapshot as JS sees it: `{ snapshotId, sourceSessionId, sizeBytes, createdAt, expiresAt? }`
/// (bytes; ms since the Unix epoch; `expiresAt` absent when it never expires).
fn snapshot_object(info: &SnapshotInfo) -> JsValue {
    let object = Object::new();
    set(&object, "snapshotId", &info.id.as_str().into());
    set(&object, "sourceSessionId", &info.source_session_id.as_str().into());
    set(&object, "sizeBytes", &JsValue::from(info.size_bytes as f64));
    set(&object, "createdAt", &JsValue::from(info.created_at as f64));
    if let Some(at) = info.expires_at {
        set(&object, "expiresAt", &JsValue::from(at as f64));
    }
    object.into()
}

/// A snapshot id argument: a non-empty string of at most 256 characters without `/`, `?`, `#`, NUL.
pub(super) fn snapshot_id(value: &JsValue, what: &str) -> Result<String> {
    value
        .as_string()
        .filter(|id| !id.is_empty() && id.len() <= 256 && !id.contains(['/', '?', '#', '\0']))
        .ok_or_else(|| invalid(format!("{what} must be a snapshot id (a non-empty string without '/', '?' or '#')")))
}

/// The configured provider.
fn provider() -> Result<Rc<dyn crate::provider::Provider>> {
    let resolved = super::super::runtime_config()?;
    resolved.provider.as_ref().map(Rc::clone).map_err(Error::to_public)
}

#[wasm_bindgen]
impl SandboxSession {
    /// `snapshot({ expiration? }) → Promise<{ snapshotId, sourceSessionId, sizeBytes, createdAt,
    /// expiresAt? }>`: keeps the Box's files as a snapshot to open Sessions from
    /// (`openSandboxSession({ snapshotId })`). It **stops the Box** (every provider's snapshot
    /// does; Vercel protocol `POST …/snapshot`, §7.5): `status` is then `'stopped'` and every
    /// later operation rejects with `SANDBOX_INVALID_STATE`. `expiration`: ms the provider keeps it
    /// (0 = never; integer ≤ 2147483647). `SANDBOX_INVALID_STATE` (409) on a closed or expired
    /// Session; `SANDBOX_NOT_SUPPORTED` on Cloudflare.
    pub fn snapshot(&self, options: JsValue) -> Promise {
        let what = "snapshot options";
        let read = self.inner.check_open("snapshot").and_then(|()| {
            check_keys(&options, &["expiration"], what)?;
            let value = option(&options, "expiration", what)?;
            if value.is_undefined() {
                return Ok(None);
            }
            match value.as_f64() {
                Some(ms) if ms.fract() == 0.0 && (0.0..=MAX_TIMEOUT_MS as f64).contains(&ms) => Ok(Some(ms as u64)),
                _ => Err(invalid(format!(
                    "{what} expiration must be an integer of ms from 0 (never) to {MAX_TIMEOUT_MS}"
                ))),
            }
        });
        let expiration = match read {
            Ok(expiration) => expiration,
            Err(error) => return rejected(error),
        };
        let inner = self.inner.clone();
        js_promise(Box::pin(async move {
            let info = inner.core.snapshot_checked(expiration).await.map_err(into_js)?;
            Ok(snapshot_object(&info))
        }))
    }
}

/// The fork's options, `{ timeout?, signal? }`: its spec and signal.
fn fork_options(options: &JsValue) -> Result<(BoxSpec, Option<web_sys::AbortSignal>)> {
    let what = "forkSandboxSession options";
    check_keys(options, &["timeout", "signal"], what)?;
    let lifetime_ms = timeout_option(options, what)?;
    let signal = signal_option(options, what)?;
    Ok((BoxSpec { lifetime_ms, name: "session".to_owned(), ..BoxSpec::default() }, signal))
}

/// The Promise of a fork of the running Box named `source`.
fn fork(source: String, spec: BoxSpec, signal: Option<web_sys::AbortSignal>) -> Promise {
    let provider = match provider() {
        Ok(provider) => provider,
        Err(error) => return rejected(error),
    };
    js_promise(Box::pin(async move {
        let core = SessionCore::fork(provider.as_ref(), &source, &spec, signal.as_ref())
            .await
            .map_err(|e| abort_or(e, signal.as_ref()))?;
        Ok(SandboxSession { inner: Inner::new(core) }.into())
    }))
}

/// `forkSandboxSession(id, { timeout?, signal? }) → Promise<SandboxSession>`: opens a new
/// Session on a fork of the running Box named `id` (on the local Box host a Session's `id`; on
/// Vercel the sandbox's name, the SDK's `sourceSandbox`); the source keeps running. With a
/// `SandboxSession` the JS layer calls its `fork` ([`SandboxSession::fork`]). `timeout`: the fork's
/// Box lifetime in ms (default 300000, not the source's). Vercel protocol `POST
/// /v2/sandboxes/{name}/fork` (§7.1). The local Box host copies the source's work directory as it
/// is now; Vercel starts the fork from the source's current snapshot (or from its image and
/// config when it has none, as its SDK's `Sandbox.fork`).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for bad arguments; `SANDBOX_NOT_FOUND` for an unknown source;
/// `SANDBOX_NOT_SUPPORTED` on Cloudflare (`operation` `fork`); the provider's errors
/// (`SANDBOX_TRANSPORT_ERROR` with `details.status` 410 for a stopped source, 422 for a work
/// directory the local Box host will not copy).
#[wasm_bindgen(js_name = forkSandboxSession)]
pub fn fork_sandbox_session(id: JsValue, options: JsValue) -> Promise {
    let read = || -> Result<(String, BoxSpec, Option<web_sys::AbortSignal>)> {
        let id = snapshot_id(&id, "forkSandboxSession(id)").map_err(|_| {
            invalid("forkSandboxSession(idOrSession) needs a SandboxSession or its id (a non-empty string without '/', '?' or '#')")
        })?;
        let (spec, signal) = fork_options(&options)?;
        Ok((id, spec, signal))
    };
    match read() {
        Ok((id, spec, signal)) => fork(id, spec, signal),
        Err(error) => rejected(error),
    }
}

#[wasm_bindgen]
impl SandboxSession {
    /// `fork({ timeout?, signal? }) → Promise<SandboxSession>`: `forkSandboxSession(this,
    /// options)` (its Box's sandbox name is the source). `SANDBOX_INVALID_STATE` on a closed
    /// Session.
    pub fn fork(&self, options: JsValue) -> Promise {
        let read = self.inner.check_open("fork").and_then(|()| fork_options(&options));
        match read {
            Ok((spec, signal)) => {
                let core = &self.inner.core;
                fork(core.sandbox_name().unwrap_or(core.id()).to_owned(), spec, signal)
            }
            Err(error) => rejected(error),
        }
    }
}

/// `listSandboxSnapshots() → Promise<Array<{ snapshotId, sourceSessionId, sizeBytes, createdAt,
/// expiresAt? }>>`: the Session snapshots the configured provider keeps for this project, newest
/// first, at most 100 (Vercel protocol `GET /v2/sandboxes/snapshots`). The local Box host lists
/// Session snapshots only (never a prepared project's, see `listPreparedProjects()`); Vercel lists
/// every snapshot of the project, prepared projects' included.
///
/// # Errors
/// `SANDBOX_NOT_SUPPORTED` on Cloudflare (`operation` `snapshot`); `SANDBOX_PROVIDER_REQUIRED`;
/// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` when the list request fails.
#[wasm_bindgen(js_name = listSandboxSnapshots)]
pub fn list_sandbox_snapshots() -> Promise {
    crate::sys::error_promise(async {
        let provider = provider()?;
        provider.ensure_ready().await?;
        let out = Array::new();
        for info in provider.list_snapshots(None).await? {
            out.push(&snapshot_object(&info));
        }
        Ok(out.into())
    })
}

/// `deleteSandboxSnapshot(snapshotId) → Promise<boolean>`: deletes a Session snapshot; `false`
/// when the provider has none of that id (on the local Box host: nor a Session's, so a prepared
/// project's snapshot is never deleted here). Opening a deleted snapshot rejects with
/// `SANDBOX_NOT_FOUND`. Vercel protocol `DELETE /v2/sandboxes/snapshots/{id}` (§7.5).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for a bad id; `SANDBOX_NOT_SUPPORTED` on Cloudflare; the provider's
/// request errors.
#[wasm_bindgen(js_name = deleteSandboxSnapshot)]
pub fn delete_sandbox_snapshot(id: JsValue) -> Promise {
    let id = match snapshot_id(&id, "deleteSandboxSnapshot(snapshotId)") {
        Ok(id) => id,
        Err(error) => return rejected(error),
    };
    crate::sys::error_promise(async move {
        let provider = provider()?;
        provider.ensure_ready().await?;
        Ok(provider.delete_snapshot(&id, None).await?.into())
    })
}
