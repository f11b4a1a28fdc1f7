//! Transport layer: the fetch binding, the retry policy, the NDJSON line reader and the SSE event
//! reader.
//!
//! Nothing here knows a provider protocol; [`crate::provider`] builds requests on top of it.

pub mod media_type;
pub mod ndjson;
pub mod sse;
pub mod retry;

#[cfg(target_arch = "wasm32")]
pub mod deadline;
#[cfg(target_arch = "wasm32")]
pub mod fetch;
