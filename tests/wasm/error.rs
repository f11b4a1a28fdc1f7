//! Error → JS `Error` conversion.
use js_sys::Reflect;
use vite_hub_sandbox::api::to_js_error;
use vite_hub_sandbox::error::{Error, ErrorCode};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).unwrap()
}

#[wasm_bindgen_test]
fn sandbox_error_is_a_real_error_with_code_status_and_details() {
    let error = Error::new(ErrorCode::Timeout, "Sandbox \"x\" timed out after 5ms.").with_timeout_ms(5);
    let js = to_js_error(&error);
    let as_error = js.dyn_ref::<js_sys::Error>().expect("a real Error");
    assert_eq!(String::from(as_error.name()), "SandboxError");
    assert_eq!(String::from(as_error.message()), "Sandbox \"x\" timed out after 5ms.");
    assert_eq!(get(&js, "code").as_string().unwrap(), "SANDBOX_TIMEOUT");
    assert_eq!(get(&js, "status").as_f64().unwrap(), 504.0);
    assert_eq!(get(&get(&js, "details"), "timeoutMs").as_f64().unwrap(), 5.0);
}

#[wasm_bindgen_test]
fn an_error_without_details_has_no_details_property() {
    let js = to_js_error(&Error::new(ErrorCode::NotFound, "Sandbox \"y\" was not found."));
    assert!(get(&js, "details").is_undefined());
    assert_eq!(get(&js, "status").as_f64().unwrap(), 500.0);
}
