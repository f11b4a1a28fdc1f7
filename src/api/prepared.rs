//! `listPreparedProjects()` and `dropPreparedProject(digest)`: what the configured provider keeps
//! as prepared projects (see [`crate::run::prepared`]) and how to remove them.

use js_sys::{Array, Object, Promise, Reflect};
use std::collections::BTreeSet;
use wasm_bindgen::prelude::*;

use super::{invalid, runtime_config};
use crate::run::prepared::{forget, prepared_name};
use vite_hub_sandbox_core::error::Error;

/// `listPreparedProjects() → Promise<Array<{ id, sizeBytes, createdAt }>>`: the snapshots the
/// configured provider keeps for this project (Vercel: `GET /v2/sandboxes/snapshots`, the local
/// Box host: the same route), newest first, at most 100; `sizeBytes` in bytes, `createdAt` in ms
/// since the epoch.
///
/// Rejects with `SANDBOX_NOT_SUPPORTED` for the `cloudflare` provider (it keeps none),
/// `SANDBOX_PROVIDER_REQUIRED` without a provider, `SANDBOX_TRANSPORT_ERROR` /
/// `SANDBOX_PROVIDER_UNAVAILABLE` when the list request fails.
#[wasm_bindgen(js_name = listPreparedProjects)]
pub fn list_prepared_projects() -> Promise {
    crate::sys::error_promise(list_prepared())
}

/// The Promise's work; its error crosses as a `SandboxError` ([`crate::sys::error_promise`]).
async fn list_prepared() -> vite_hub_sandbox_core::error::Result<JsValue> {
    let resolved = runtime_config()?;
    let provider = resolved.provider.as_ref().map_err(Error::to_public)?;
    provider.ensure_ready().await?;
    let out = Array::new();
    for (id, size, created) in provider.list_prepared(None).await? {
        let item = Object::new();
        let _ = Reflect::set(&item, &"id".into(), &id.as_str().into());
        let _ = Reflect::set(&item, &"sizeBytes".into(), &JsValue::from(size as f64));
        let _ = Reflect::set(&item, &"createdAt".into(), &JsValue::from(created as f64));
        out.push(&item);
    }
    Ok(out.into())
}

/// `dropPreparedProject(digest) → Promise<number>`: forgets the prepared project of an install
/// digest (`listSandboxes()[i].install.digest`, 64 hex chars) in this isolate and deletes its
/// snapshots at the provider (those this isolate took, and those found under the name
/// `vitehub-prepared-<digest>`); resolves to how many were deleted. The next Run of that digest
/// installs and prepares again. The warm pools of that digest are drained first (their Boxes
/// closed).
///
/// Rejects with `SANDBOX_INVALID_ARGUMENT` for a digest that is not 64 hex chars, and as
/// [`list_prepared_projects`] for the provider's failures.
#[wasm_bindgen(js_name = dropPreparedProject)]
pub fn drop_prepared_project(digest: JsValue) -> Promise {
    crate::sys::error_promise(drop_prepared(digest))
}

/// The Promise's work; its error crosses as a `SandboxError` ([`crate::sys::error_promise`]).
async fn drop_prepared(digest: JsValue) -> vite_hub_sandbox_core::error::Result<JsValue> {
    let digest = digest
        .as_string()
        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| invalid("dropPreparedProject(digest) expects an install digest: 64 hex characters (listSandboxes()[i].install.digest)"))?
        .to_ascii_lowercase();
    // The warm Boxes opened from it go first (closed, not left to their idle time).
    let detached = crate::run::warm_pool::detach(|pooled| pooled == Some(digest.as_str()));
    let resolved = runtime_config()?;
    let provider = resolved.provider.as_ref().map_err(Error::to_public)?;
    crate::run::warm_pool::close_detached(detached).await?;
    provider.ensure_ready().await?;
    let mut ids = forget(&digest);
    ids.extend(provider.list_prepared(Some(&prepared_name(&digest))).await?.into_iter().map(|(id, _, _)| id));
    let mut dropped = 0u32;
    // Each id once, in order.
    for id in ids.iter().map(String::as_str).collect::<BTreeSet<&str>>() {
        if provider.drop_prepared(id).await? {
            dropped += 1;
        }
    }
    Ok(dropped.into())
}
