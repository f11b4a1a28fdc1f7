//! The Vercel Sandbox provider: REST v2/v3 over fetch, as spoken by `@vercel/sandbox` 3.5.0
//! (`shared/reference/vercel-sandbox-protocol.md`). The `local` provider is this same protocol
//! pointed at the local Box host.
//!
//! Upstream vocabulary (`sessionId`, `cmdId`, `runCommand`), the tar write format (`archive`)
//! and the NDJSON command stream stay in this folder; [`VercelProvider`] and [`VercelBox`] speak
//! of Boxes, Commands and files to the layers above.

pub use vite_hub_sandbox_core::provider::vercel::{options, wire};

#[cfg(target_arch = "wasm32")]
pub mod client;

pub use options::{VercelEndpoint, VercelOptions, DEFAULT_BASE_URL};

#[cfg(target_arch = "wasm32")]
pub use provider::{VercelBox, VercelProvider};

#[cfg(target_arch = "wasm32")]
mod provider;

#[cfg(target_arch = "wasm32")]
mod sessions;

#[cfg(target_arch = "wasm32")]
mod attach;
