//! Moving a Run into and out of a Box: the files written into it (and their path rule), the tar
//! archive that carries them in one write, the result frame on stdout and the transfer limits.
//!
//! Pure: the value envelope codec, which converts JS values, is the runtime crate's
//! `transfer::envelope`. Nothing here knows a provider protocol.
//!
//! Source: docs/internals/transfer.md ("Box layout", "Envelopes"), DESIGN.md §6.

pub mod box_file;
pub mod frame;
pub mod limits;
pub mod lone_surrogate;
pub mod tar;

pub use limits::TransferLimits;

/// The key of the marker object that stands for a non-JSON value inside an envelope.
///
/// Shape: `{ "vitehub:sandbox:value": { "tag": "binary" | "object" | "response" | "string", ... } }`
/// (docs/internals/transfer.md "Envelopes").
pub const VALUE_MARKER: &str = "vitehub:sandbox:value";
