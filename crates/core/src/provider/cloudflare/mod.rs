//! Cloudflare Sandbox, as data: its options (the Durable Object binding, the local container
//! host), the shapes of the container control API (`/api/*`, the SSE process streams), how a
//! Command becomes a sessionless `bash -c` request ([`exec`]) and the one reading of its message
//! text ([`classify`]); the container's state as its Durable Object records it ([`container_state`]).

pub mod classify;
pub mod container_state;
pub mod exec;
pub mod options;
pub mod wire;

pub use options::{CloudflareOptions, CloudflareSettings, LocalContainerHost, DEFAULT_BINDING};
