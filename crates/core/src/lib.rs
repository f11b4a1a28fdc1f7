//! The pure rules of `@vite-hub/sandbox`: everything that is logic and needs no JS value.
//!
//! Both wasm crates build on this one: the runtime (the root crate: fetch, providers, the Run,
//! the Response and the exports) and the tooling module (the build-time exports). Nothing here
//! names a JS type, so every test is a native `cargo test` (DESIGN.md §3).
//!
//! Concepts:
//! - [`error`]: the one error model ([`Error`], the stable `SANDBOX_*` codes) and redaction;
//! - [`config`]: the sandbox config read from its JSON and resolved into provider settings;
//! - [`definition`]: Definitions, their files, package managers, workspaces and discovery;
//! - [`transfer`]: Box files and their path rule, the result frame, the limits, the tar writer;
//! - [`provider_kind`]: which Provider (`vercel`, `cloudflare`, `local`), a leaf every layer uses;
//! - [`provider`]: provider options and each provider protocol's wire shapes;
//! - [`http`]: the retry policy and the NDJSON and SSE stream readers;
//! - [`session`]: the rules of a Session handle and the execution authority;
//! - [`run`]: the pure parts of a Run (install commands and their outcomes) and the in-Box
//!   [`harness`];
//! - [`command`] and [`env_map`]: a Box command and the ordered environment it carries.
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod command;
pub mod config;
pub mod definition;
pub mod env_map;
pub mod error;
pub mod harness;
pub mod http;
pub mod provider;
pub mod provider_kind;
pub mod run;
pub mod session;
pub mod transfer;

#[cfg(test)]
mod proptests;

pub use error::{Error, ErrorCode, Result};
