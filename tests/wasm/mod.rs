//! Cases shared by the Node and browser entry files.

pub mod cloudflare;
pub mod envelope;
pub mod error;
pub mod fetch;
pub mod gzip;
pub mod response;
pub mod timer;
