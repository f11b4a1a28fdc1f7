//! wasm-bindgen tests of the JS boundary, run in headless Chromium:
//! `wasm-pack test --headless --chrome -- --test browser`.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[path = "wasm/mod.rs"]
mod cases;
