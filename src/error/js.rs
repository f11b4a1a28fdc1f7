//! The one crossing of [`Error`] between Rust and JS (wasm only).
//!
//! Into JS: a real `Error` with `name = "SandboxError"` and the properties `code` (the stable
//! `SANDBOX_*` string), `status` (the HTTP status of that code, DESIGN.md §5), `provider`,
//! `operation` and `details` (the same allowlisted keys as the Response body). From JS: a thrown
//! value is classified by its `code` property only (never by its message); anything else is
//! `SANDBOX_RUNTIME_ERROR` with the value's message.
//!
//! Exports return `Result<_, Thrown>` and wasm-bindgen throws the converted value, so no export
//! builds a JS error by hand.

use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};

use vite_hub_sandbox_core::error::{Error, ErrorCode};

/// A thrown JS value as an [`Error`]: a `SandboxError`-shaped value (a `code` property naming a
/// `SANDBOX_*` code) keeps its code and message; anything else becomes `SANDBOX_RUNTIME_ERROR`
/// carrying the value's message (and its `cause`'s).
pub fn from_js(value: JsValue) -> Error {
    let code = Reflect::get(&value, &JsValue::from_str("code"))
        .ok()
        .and_then(|code| code.as_string())
        .and_then(|code| ErrorCode::parse(&code));
    let message = js_message(&value);
    Error::new(code.unwrap_or(ErrorCode::RuntimeError), message)
}

/// What a failing export throws: the real JS `Error` of [`to_js_error`]. Exports return
/// `Result<_, Thrown>`, so `?` on a [`vite_hub_sandbox_core::error::Result`] inside them converts the [`Error`] once, here.
#[derive(Debug)]
pub struct Thrown(JsValue);

/// The return type of a fallible export.
pub type JsResult<T> = Result<T, Thrown>;

impl From<Error> for Thrown {
    fn from(error: Error) -> Thrown {
        Thrown(to_js_error(&error))
    }
}

impl From<Thrown> for JsValue {
    fn from(thrown: Thrown) -> JsValue {
        thrown.0
    }
}

/// `error` as the real JS `Error` of [`to_js_error`], consuming it (for `map_err`).
pub fn into_js(error: Error) -> JsValue {
    to_js_error(&error)
}

/// A real JS `Error` for `error` (see the module docs for its properties).
pub fn to_js_error(error: &Error) -> JsValue {
    let js = js_sys::Error::new(error.message());
    js.set_name("SandboxError");
    let set = |key: &str, value: &JsValue| {
        let _ = Reflect::set(&js, &JsValue::from_str(key), value);
    };
    set("code", &error.code().as_str().into());
    set("status", &JsValue::from(error.http_status()));
    if let Some(provider) = error.provider() {
        set("provider", &provider.as_str().into());
    }
    if let Some(operation) = error.operation() {
        set("operation", &operation.as_str().into());
    }
    let body = error.to_json_body();
    if let Some(details) = body.get("error").and_then(|e| e.get("details")) {
        if let Ok(details) = js_sys::JSON::parse(&serde_json::to_string(details).unwrap_or_default()) {
            set("details", &details);
        }
    }
    js.into()
}

/// The `message` of a thrown JS value (with its `cause`'s message in parentheses), or its string
/// form; `"unknown error"` for anything else. Never throws, whatever the value (a getter that
/// throws counts as no message).
pub fn js_message(value: &JsValue) -> String {
    js_message_at_depth(value, 0)
}

fn js_message_at_depth(value: &JsValue, depth: u32) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        let message =
            Reflect::get(error, &JsValue::from_str("message")).ok().and_then(|m| m.as_string()).unwrap_or_default();
        let cause = Reflect::get(error, &JsValue::from_str("cause")).ok();
        match cause.filter(|c| !c.is_undefined() && !c.is_null() && depth < 4) {
            Some(cause) => format!("{message} ({})", js_message_at_depth(&cause, depth + 1)),
            None => message,
        }
    } else {
        value.as_string().unwrap_or_else(|| "unknown error".to_owned())
    }
}
