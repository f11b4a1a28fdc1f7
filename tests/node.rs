//! wasm-bindgen tests of the JS boundary, run in Node: `wasm-pack test --node -- --test node`.
#![cfg(target_arch = "wasm32")]

#[path = "wasm/mod.rs"]
mod cases;
