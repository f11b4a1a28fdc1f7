//! The Vercel Sandbox provider: REST v2/v3 over fetch, as spoken by `@vercel/sandbox` 3.5.0
//! (`shared/reference/vercel-sandbox-protocol.md`). The `local` provider is this same protocol
//! pointed at the local Box host.
//!
//! Upstream vocabulary (`sessionId`, `cmdId`, `runCommand`) stays in [`wire`] and [`client`];
//! [`crate::session`] speaks of Boxes and Commands.

pub mod wire;

#[cfg(target_arch = "wasm32")]
pub mod client;
