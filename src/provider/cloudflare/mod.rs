//! The Cloudflare Sandbox provider: from inside a Worker, the container control API of a
//! `Sandbox` Durable Object (`@cloudflare/sandbox` 0.12.10), reached through the stub's `fetch`
//! (cloudflare-sandbox-protocol.md §3, §4); in local development (`SANDBOX_LOCAL_URL` and
//! `SANDBOX_LOCAL_TOKEN` in the Worker env) the same API on the local Box host.
//!
//! A Box is one Durable Object (one container): a new one per Run, destroyed after it, unless
//! `sandboxId` names a kept one, whose Runs are serialized in the isolate and whose Run files are
//! deleted afterwards. A Box of its own may start from a prepared project, kept per install
//! digest by a store Durable Object (`store.rs`). Upstream vocabulary (`sessionId`, `exitCode`, the SSE events) stays in this
//! folder; message text is read only in [`classify`].

pub use vite_hub_sandbox_core::provider::cloudflare::{classify, container_state, exec, options, wire};

#[cfg(target_arch = "wasm32")]
pub mod client;
#[cfg(target_arch = "wasm32")]
mod container;
#[cfg(target_arch = "wasm32")]
mod kept;
#[cfg(target_arch = "wasm32")]
mod liveness;
#[cfg(target_arch = "wasm32")]
mod provider;
#[cfg(target_arch = "wasm32")]
mod store;

pub use options::{CloudflareOptions, CloudflareSettings, LocalContainerHost, DEFAULT_BINDING};

#[cfg(target_arch = "wasm32")]
pub use container::CloudflareBox;
#[cfg(target_arch = "wasm32")]
pub use provider::{namespace_in, CloudflareProvider};
