//! The build-time wasm of `@vite-hub/sandbox` (`vite_hub_sandbox_tooling`), loaded only by the
//! Node build steps (the Vite plugin, the CLI, `scripts/build.mjs`).
//!
//! Its rules: [`plugin`] (the Vite plugin's options), [`facts`] (the facts the JS side generates
//! from) and [`provider_output`] (what the plugin writes for a host); the Definition rules it
//! exports come from the core crate. [`api`] holds the wasm exports: glue only.
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod api;
pub mod facts;
pub mod plugin;
pub mod provider_output;

/// The one crossing of the core's errors into JS: the runtime crate's `src/error/js.rs`, compiled
/// here too, so both wasm modules throw the same `SandboxError`.
pub mod error {
    pub use super::js;
}

#[path = "../../../src/error/js.rs"]
pub mod js;

/// The wasm allocator: Talc instead of Rust's default dlmalloc, smaller in each module; its heap
/// grows the wasm memory as dlmalloc's did. wasm is single-threaded here (no `atomics`).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
