//! Vercel Sandbox, as data: its options (credentials, base URL) and the shapes of its REST
//! protocol (`/v2`, `/v3` endpoints, the NDJSON command stream).

pub mod options;
pub mod wire;

pub use options::{VercelEndpoint, VercelOptions, DEFAULT_BASE_URL};
