//! `@vite-hub/sandbox`: run a named JS package project (a *Definition*) inside an isolated *Box*
//! on a *Provider* and resolve to a Web `Response`.
//!
//! This crate is the runtime wasm (`vite_hub_sandbox_bg.wasm`): the JS boundary, fetch, the
//! providers, the Run, the Response and the exports. It talks to providers only through the
//! Fetch API, so one npm package works in Node, in Cloudflare Workers and in browsers. The pure
//! rules it applies (errors, config, Definitions, transfer, wire shapes, stream parsers, session
//! rules) are the core crate's, `vite_hub_sandbox_core`; they are brought in below under their
//! own names, so `vite_hub_sandbox_core::config` here is the core's config.
//!
//! Layers, bottom up (each uses only the one below):
//! 1. transport: [`http`] (the fetch binding and deadlines over the core's retry policy and
//!    stream readers);
//! 2. provider: [`provider`] builds a `Provider` from resolved config and turns its protocol into
//!    one `BoxSession`;
//! 3. run: [`run`] stages, installs, executes, recovers and closes, then builds the `Response`.
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod provider;
pub mod run;
pub mod sys;

// The exports and what they build on: wasm only while the provider and run modules keep their
// Box-driving parts to wasm (their pure parts also build natively, for `cargo test`). The exports
// are the npm package's (feature `js-exports`, on by default); a Rust Worker uses the rest.
#[cfg(all(target_arch = "wasm32", feature = "js-exports"))]
pub mod api;
#[cfg(target_arch = "wasm32")]
pub mod response;
#[cfg(target_arch = "wasm32")]
pub mod runtime_config;
#[cfg(target_arch = "wasm32")]
pub mod server_timing;
#[cfg(target_arch = "wasm32")]
pub mod session;

/// The one crossing of the core's errors into and out of JS ([`error::js`]); the error model
/// itself is `vite_hub_sandbox_core::error`.
pub mod error {
    pub mod js;
}

/// The JS value envelope codec and gzip of this crate; the transfer rules are
/// `vite_hub_sandbox_core::transfer`.
pub mod transfer {
    pub mod envelope;
    pub mod gzip;
}

/// The fetch binding, deadlines and timers of this crate; the retry policy and stream readers are
/// `vite_hub_sandbox_core::http`.
pub mod http {
    pub mod deadline;
    pub mod fetch;
    pub mod timer;
}

/// The wasm allocator: Talc instead of Rust's default dlmalloc, smaller in each module; its heap
/// grows the wasm memory as dlmalloc's did. wasm is single-threaded here (no `atomics`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
