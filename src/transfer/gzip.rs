//! gzip through the platform's `CompressionStream` (wasm only).
//!
//! Node 18+, workerd and browsers all ship `CompressionStream('gzip')`, so the runtime wasm
//! carries no compressor of its own. Its one input is the tar of [`vite_hub_sandbox_core::transfer::tar`] (the
//! Vercel protocol's `fs/write`, Cloudflare's staged archive).
//!
//! Source: [Compression Streams](https://compression.spec.whatwg.org/), MDN
//! [CompressionStream](https://developer.mozilla.org/docs/Web/API/CompressionStream).

use js_sys::{Array, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, ReadableWritablePair, Response};

use crate::error::js::js_message;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};

/// `bytes` gzip-compressed (RFC 1952).
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` when this runtime has no `CompressionStream` or the stream fails.
pub async fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let failed =
        |e: wasm_bindgen::JsValue| Error::new(ErrorCode::RuntimeError, format!("gzip failed: {}", js_message(&e)));
    let compressor = crate::sys::CompressionStream::new("gzip").map_err(failed)?;
    let blob = Blob::new_with_u8_array_sequence(&Array::of1(&Uint8Array::from(bytes))).map_err(failed)?;
    // A CompressionStream is a `{ readable, writable }` pair.
    let compressed = blob.stream().pipe_through(compressor.unchecked_ref::<ReadableWritablePair>());
    let response = Response::new_with_opt_readable_stream(Some(&compressed)).map_err(failed)?;
    let buffer = JsFuture::from(response.array_buffer().map_err(failed)?).await.map_err(failed)?;
    Ok(Uint8Array::new(&buffer).to_vec())
}
