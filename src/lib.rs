//! `@vite-hub/sandbox`: run a named JS package project (a *Definition*) inside an isolated *Box*
//! on a *Provider* and resolve to a Web `Response`.
//!
//! The crate is compiled to WebAssembly with wasm-bindgen and talks to providers only through the
//! Fetch API, so one npm package works in Node, in Cloudflare Workers and in browsers.
//!
//! Layers, bottom up (each uses only the one below):
//! 1. transport: [`http`] (fetch binding, retry policy, NDJSON reader);
//! 2. provider: [`provider`] builds a `Provider` from resolved config and turns its protocol into
//!    one `BoxSession`;
//! 3. run: [`run`] stages, installs, executes, recovers and closes, then builds the `Response`.
//!
//! Pure modules ([`error`], [`definition`], [`transfer`], [`http::ndjson`], [`http::retry`],
//! [`provider::vercel::wire`], [`run::install`]) hold no JS types and are unit-tested natively with `cargo test`.
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod command;
pub mod config;
pub mod config_read;
pub mod definition;
#[cfg(any(feature = "tooling", test))]
pub mod discovery;
pub mod env_map;
pub mod error;
#[cfg(any(feature = "tooling", test))]
pub mod facts;
pub mod harness;
pub mod http;
pub mod json_read;
pub mod json_write;
#[cfg(any(feature = "tooling", test))]
pub mod plugin;
pub mod provider;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod proptests;
pub mod provider_kind;
#[cfg(any(feature = "tooling", test))]
pub mod provider_output;
pub mod run;
pub mod session;
pub mod sort;
pub mod transfer;

#[cfg(all(target_arch = "wasm32", feature = "runtime"))]
pub mod api;
#[cfg(all(target_arch = "wasm32", feature = "tooling"))]
pub mod api_discovery;
#[cfg(all(target_arch = "wasm32", feature = "tooling"))]
pub mod api_facts;
#[cfg(all(target_arch = "wasm32", feature = "tooling"))]
pub mod api_free_form;
#[cfg(all(target_arch = "wasm32", feature = "tooling"))]
pub mod api_module_graph;
#[cfg(all(target_arch = "wasm32", feature = "tooling"))]
pub mod api_project;
#[cfg(all(target_arch = "wasm32", feature = "tooling"))]
pub mod api_provider_output;
#[cfg(all(target_arch = "wasm32", feature = "tooling"))]
pub mod api_vite;
#[cfg(target_arch = "wasm32")]
pub mod response;
#[cfg(target_arch = "wasm32")]
pub mod runtime_config;
#[cfg(target_arch = "wasm32")]
pub mod sys;

pub use error::{Error, ErrorCode, Result};

/// The wasm allocator: Talc instead of Rust's default dlmalloc, a few KB smaller in each module
/// (docs/internals.md "Runtime size"); its heap grows the wasm memory as dlmalloc's did. wasm is
/// single-threaded here (no `atomics`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
