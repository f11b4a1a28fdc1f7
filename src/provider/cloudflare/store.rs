//! The store of a prepared project on Cloudflare: a `Sandbox` Durable Object of the same binding,
//! named [`prepared_name`](vite_hub_sandbox_core::run::install::prepared_name)`(digest)`, that
//! keeps the packed installed trees of one install digest in its Durable Object storage (the
//! class of `@vite-hub/sandbox/cloudflare`, `pkg-template/runtime/sandbox.workerd.mjs`). It runs
//! no Command and starts no container: `box_id_from` refuses its name as a `sandboxId`, and each
//! call here is one RPC that reads or writes storage only, so a Run never wakes a container to
//! learn that the store is empty.
//!
//! Why a store and not the SDK's backups: those need an R2 bucket, its S3 credentials and a
//! container that reaches R2 (cloudflare-sandbox-protocol.md §5.1 item 8). Why not Runs inside
//! one kept container per digest: unrelated requests would share its processes, `/tmp` and tree.

use js_sys::{Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::client::REQUEST_DEADLINE_MS;
use crate::http::deadline::Deadline;
use crate::http::fetch::{js_message, AbortWait};
use crate::sys::DurableObjectStub;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// The store of one prepared project.
#[derive(Debug, Clone)]
pub struct PreparedStore {
    /// The store's name: the prepared project's id.
    pub name: String,
    stub: DurableObjectStub,
}

impl PreparedStore {
    /// The store of `name` reached through `stub`; sends nothing.
    pub fn new(name: String, stub: DurableObjectStub) -> PreparedStore {
        PreparedStore { name, stub }
    }

    /// RPC `method(arg?)` on the store, bounded by [`REQUEST_DEADLINE_MS`] and `signal`.
    ///
    /// # Errors
    /// `SANDBOX_NOT_SUPPORTED` when the Worker's `Sandbox` class has no store (the SDK's own class,
    /// not `@vite-hub/sandbox/cloudflare`'s); `SANDBOX_PROVIDER_UNAVAILABLE` when it did not answer
    /// in time; `SANDBOX_TRANSPORT_ERROR` for another rejection or an abort. Operation `operation`.
    async fn call(
        &self,
        method: &str,
        arg: Option<&JsValue>,
        operation: Operation,
        signal: Option<&AbortSignal>,
    ) -> Result<JsValue> {
        let failed = |code: ErrorCode, message: String| {
            Error::new(code, message).with_provider(ProviderKind::Cloudflare).with_operation(operation)
        };
        let deadline = Deadline::new(signal, REQUEST_DEADLINE_MS);
        let bounded = deadline.signal();
        // Reflect.apply, not `f.call(…)`: an RPC stub's method is a proxy whose own properties
        // (`call` included) are RPC paths too.
        let args = arg.map_or_else(js_sys::Array::new, js_sys::Array::of1);
        let called = Reflect::get(&self.stub, &JsValue::from_str(method))
            .and_then(|f| f.dyn_into::<Function>())
            .and_then(|f| Reflect::apply(&f, &self.stub, &args))
            .map(|p| Promise::resolve(&p));
        let wait = bounded.as_ref().map(AbortWait::new);
        let answer = match (called, &wait) {
            (Ok(promise), Some(wait)) => {
                JsFuture::from(Promise::race(&js_sys::Array::of2(&promise, wait.promise()))).await
            }
            (Ok(promise), None) => JsFuture::from(promise).await,
            (Err(error), _) => Err(error),
        };
        drop(wait);
        if bounded.as_ref().is_some_and(AbortSignal::aborted) {
            return Err(if deadline.expired() {
                failed(
                    ErrorCode::ProviderUnavailable,
                    format!("the store {} did not answer within {REQUEST_DEADLINE_MS}ms", self.name),
                )
            } else {
                failed(ErrorCode::TransportError, format!("the call to the store {} was aborted", self.name))
            });
        }
        answer.map_err(|error| {
            let message = js_message(&error);
            if message.contains("does not implement") || message.contains("is not a function") {
                failed(
                    ErrorCode::NotSupported,
                    "the Worker's Sandbox class keeps no prepared projects: export { Sandbox } from '@vite-hub/sandbox/cloudflare' (the SDK's class with a store)".to_owned(),
                )
            } else {
                failed(ErrorCode::TransportError, format!("the store {} failed: {message}", self.name))
            }
        })
    }

    /// The kept archive's size in bytes, 0 when none is kept (one RPC, storage only).
    ///
    /// # Errors
    /// Those of [`PreparedStore::call`], operation `snapshot`.
    pub async fn size(&self) -> Result<u64> {
        let size = self.call("vitehubPreparedSize", None, Operation::Snapshot, None).await?;
        Ok(size.as_f64().unwrap_or(0.0) as u64)
    }

    /// The kept archive; `None` when none is kept (one RPC, storage only).
    ///
    /// # Errors
    /// Those of [`PreparedStore::call`], operation `create`: the Box cannot start from it.
    pub async fn archive(&self, signal: Option<&AbortSignal>) -> Result<Option<Vec<u8>>> {
        let archive = self.call("vitehubPreparedArchive", None, Operation::Create, signal).await?;
        Ok(archive.dyn_into::<Uint8Array>().ok().map(|bytes| bytes.to_vec()))
    }

    /// Keeps `archive` in place of the kept one (one RPC, one atomic storage write).
    ///
    /// # Errors
    /// Those of [`PreparedStore::call`], operation `snapshot`.
    pub async fn keep(&self, archive: &[u8]) -> Result<()> {
        self.call("vitehubKeepPreparedArchive", Some(&Uint8Array::from(archive).into()), Operation::Snapshot, None)
            .await
            .map(|_| ())
    }

    /// Deletes the kept archive; whether there was one (one RPC, storage only).
    ///
    /// # Errors
    /// Those of [`PreparedStore::call`], operation `snapshot`.
    pub async fn drop_archive(&self) -> Result<bool> {
        Ok(self.call("vitehubDropPreparedArchive", None, Operation::Snapshot, None).await?.is_truthy())
    }
}
