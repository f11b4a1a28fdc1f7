//! gzip through the platform's CompressionStream: real gzip, readable by DecompressionStream.
use js_sys::Uint8Array;
use vite_hub_sandbox::transfer::gzip::gzip;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
async fn gzip_output_is_gzip_and_decompresses_to_the_input() {
    let input: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let compressed = gzip(&input).await.unwrap();
    assert_eq!(&compressed[..2], &[0x1f, 0x8b], "gzip magic");
    assert!(compressed.len() < input.len() / 10, "{} bytes", compressed.len());
    let inflate = js_sys::Function::new_with_args(
        "bytes",
        "return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();",
    );
    let promise = inflate.call1(&JsValue::UNDEFINED, &Uint8Array::from(compressed.as_slice())).unwrap();
    let buffer = JsFuture::from(js_sys::Promise::from(promise)).await.unwrap();
    assert_eq!(Uint8Array::new(&buffer).to_vec(), input);
    assert_eq!(&gzip(b"").await.unwrap()[..2], &[0x1f, 0x8b], "empty input is a valid gzip too");
}
