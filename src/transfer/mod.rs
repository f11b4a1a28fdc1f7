//! Moving a Run into and out of a Box: the files written into it (and their path rule), the result frame on stdout, the
//! transfer limits and (wasm only) the value envelope codec.
//!
//! Pure except [`envelope`], which converts JS values. Nothing here knows a provider protocol.
//!
//! Source: docs/internals.md ("Box layout", "Envelopes"), DESIGN.md §6.

pub mod box_file;
pub mod frame;
pub mod limits;

#[cfg(target_arch = "wasm32")]
pub mod envelope;
#[cfg(target_arch = "wasm32")]
pub mod gzip;

pub use limits::TransferLimits;

/// The key of the marker object that stands for a non-JSON value inside an envelope.
///
/// Shape: `{ "vitehub:sandbox:value": { "tag": "binary" | "object" | "response", ... } }`
/// (docs/internals.md "Envelopes").
pub const VALUE_MARKER: &str = "vitehub:sandbox:value";
