//! How an [`Error`] crosses into JS from the tooling module: a real JS `Error` with
//! `name = "SandboxError"` and `code`, `status`, `details` properties, the same shape the runtime
//! module's exports throw (`crate::api::to_js_error`).
//!
//! It exists because the tooling build (`--no-default-features --features tooling`) compiles
//! without `crate::api`. When errors get one crossing (`From<Error> for JsValue` in
//! `crate::error`), both modules use that and this file goes away.

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use crate::error::Error;

/// A real JS `Error` with `name = "SandboxError"` and `code`, `status`, `details` properties.
pub fn to_js_error(error: &Error) -> JsValue {
    let js = js_sys::Error::new(error.message());
    js.set_name("SandboxError");
    let body = error.to_json_body();
    let _ = Reflect::set(&js, &"code".into(), &error.code().as_str().into());
    let _ = Reflect::set(&js, &"status".into(), &JsValue::from(error.http_status()));
    if let Some(details) = body.get("error").and_then(|e| e.get("details")) {
        if let Ok(details) = serde::Serialize::serialize(details, &serde_wasm_bindgen::Serializer::json_compatible()) {
            let _ = Reflect::set(&js, &"details".into(), &details);
        }
    }
    js.into()
}
