//! The `local` provider: the Vercel protocol against the local Box host, either a configured one
//! (`local.baseUrl` + `local.token`) or the isolate's in-process one ([`host`]).

pub use vite_hub_sandbox_core::provider::local::options;

#[cfg(target_arch = "wasm32")]
pub mod host;

pub use options::LocalOptions;

#[cfg(target_arch = "wasm32")]
pub use provider::LocalProvider;

#[cfg(target_arch = "wasm32")]
mod provider;

#[cfg(target_arch = "wasm32")]
mod attach;
