//! Transport rules: the retry policy, the media type check, the NDJSON line reader and the SSE
//! event reader, all safe across chunk boundaries. The fetch binding is the runtime crate's
//! `http::fetch`.
//!
//! Nothing here knows a provider protocol.

pub mod media_type;
pub mod ndjson;
pub mod retry;
pub mod sse;
