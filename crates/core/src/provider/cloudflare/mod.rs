//! Cloudflare Sandbox, as data: its options (the Durable Object binding, the local container
//! host) and the shapes of the container control API (`/api/*`, the SSE process streams).

pub mod options;
pub mod wire;

pub use options::{CloudflareOptions, CloudflareSettings, LocalContainerHost, DEFAULT_BINDING};
