//! Error → JS `Error` conversion (what exports throw) and back.
use js_sys::Reflect;
use vite_hub_sandbox::api::to_js_error;
use vite_hub_sandbox::error::js::{from_js, Thrown};
use vite_hub_sandbox_core::error::{Error, ErrorCode};
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

#[wasm_bindgen_test]
fn every_code_crosses_with_its_own_status() {
    for (code, status) in
        [(ErrorCode::InvalidArgument, 400.0), (ErrorCode::NotSupported, 501.0), (ErrorCode::ProviderUnavailable, 503.0)]
    {
        let js: JsValue = Thrown::from(Error::new(code, "x")).into();
        assert_eq!(get(&js, "code").as_string().unwrap(), code.as_str());
        assert_eq!(get(&js, "status").as_f64().unwrap(), status);
    }
}

#[wasm_bindgen_test]
fn a_thrown_value_is_classified_by_its_code_only() {
    let back = from_js(to_js_error(&Error::new(ErrorCode::NotFound, "Sandbox \"z\" was not found.")));
    assert_eq!((back.code(), back.message()), (ErrorCode::NotFound, "Sandbox \"z\" was not found."));
    let plain = from_js(JsValue::from(js_sys::Error::new("SANDBOX_TIMEOUT in the text is not a code")));
    assert_eq!(plain.code(), ErrorCode::RuntimeError);
    assert_eq!(plain.message(), "SANDBOX_TIMEOUT in the text is not a code");
    assert_eq!(from_js(JsValue::from_f64(3.0)).message(), "unknown error");
    let hostile = js_sys::Function::new_no_args(
        "const e = new Error('outer', { cause: new Error('inner') }); Object.defineProperty(e, 'code', { get() { throw new Error('no'); } }); return e;",
    )
    .call0(&JsValue::UNDEFINED)
    .unwrap();
    let hostile = from_js(hostile);
    assert_eq!((hostile.code(), hostile.message()), (ErrorCode::RuntimeError, "outer (inner)"));
}
