//! Building Web Responses.
use js_sys::Uint8Array;
use vite_hub_sandbox::response::{error_response, value_response};
use vite_hub_sandbox::server_timing::ServerTiming;
use vite_hub_sandbox_core::error::{Error, ErrorCode};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

async fn text(response: &web_sys::Response) -> String {
    JsFuture::from(response.text().unwrap()).await.unwrap().as_string().unwrap()
}

#[wasm_bindgen_test]
async fn error_response_has_status_json_body_and_server_timing() {
    let mut timing = ServerTiming::start();
    timing.mark("box");
    let error = Error::new(ErrorCode::TransferLimit, "too big").with_limit("maxInputBytes", 10, 4);
    let response = error_response(&error, &timing).unwrap();
    assert_eq!(response.status(), 413);
    assert_eq!(response.headers().get("content-type").unwrap().unwrap(), "application/json");
    assert!(response.headers().get("server-timing").unwrap().unwrap().starts_with("box;dur="));
    let body: serde_json::Value = serde_json::from_str(&text(&response).await).unwrap();
    assert_eq!(body["error"]["code"], "SANDBOX_TRANSFER_LIMIT");
    assert_eq!(body["error"]["details"]["limit"], "maxInputBytes");
    assert_eq!(body["error"]["details"]["value"], 10);
}

#[wasm_bindgen_test]
async fn output_direction_errors_are_500() {
    let error = Error::new(ErrorCode::SerializationError, "bigint").for_output();
    assert_eq!(error_response(&error, &ServerTiming::start()).unwrap().status(), 500);
}

#[wasm_bindgen_test]
async fn values_become_204_json_or_binary() {
    let timing = ServerTiming::start();
    assert_eq!(value_response(JsValue::UNDEFINED, &timing).unwrap().status(), 204);
    let object = js_sys::JSON::parse(r#"{"a":[1,"é"]}"#).unwrap();
    let json = value_response(object, &timing).unwrap();
    assert_eq!(json.status(), 200);
    assert_eq!(text(&json).await, r#"{"a":[1,"é"]}"#);
    let bytes = value_response(Uint8Array::from(&[1u8, 2, 3][..]).into(), &timing).unwrap();
    assert_eq!(bytes.headers().get("content-type").unwrap().unwrap(), "application/octet-stream");
    let buffer = JsFuture::from(bytes.array_buffer().unwrap()).await.unwrap();
    assert_eq!(Uint8Array::new(&buffer).to_vec(), vec![1, 2, 3]);
}
