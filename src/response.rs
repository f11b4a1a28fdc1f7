//! Building the Web `Response` of a Run (DESIGN.md §5): JSON success, 204 for `undefined`, binary
//! bodies, revived `Response`s, and the `{"error":{code,message,details}}` failure body. Every
//! Response carries `Server-Timing` with the Run's phases in ms ([`ServerTiming`]).

use base64::Engine;
use js_sys::{Uint8Array, JSON};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Headers, Response, ResponseInit};

use crate::server_timing::ServerTiming;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result, ERROR_HEADER};
use vite_hub_sandbox_core::transfer::VALUE_MARKER;

fn internal(what: &str) -> Error {
    Error::new(ErrorCode::RuntimeError, format!("the Response could not be built: {what}"))
}

fn build(status: u16, headers: &Headers, body: Option<&[u8]>) -> Result<Response> {
    let init = ResponseInit::new();
    init.set_status(status);
    init.set_headers(headers);
    match body {
        Some(bytes) => Response::new_with_opt_buffer_source_and_init(Some(&Uint8Array::from(bytes)), &init),
        None => Response::new_with_opt_buffer_source_and_init(None, &init),
    }
    .map_err(|_| internal("invalid status or headers"))
}

fn headers_with_timing(timing: &ServerTiming) -> Result<Headers> {
    let headers = Headers::new().map_err(|_| internal("Headers"))?;
    headers.set("server-timing", &timing.header_value()).map_err(|_| internal("server-timing"))?;
    Ok(headers)
}

/// The failure Response: status from the error table, JSON body, `Retry-After` when known.
///
/// # Errors
/// The JS value thrown by the `Headers` or `Response` constructor (present in every supported
/// runtime; never a panic).
pub fn error_response(error: &Error, timing: &ServerTiming) -> std::result::Result<Response, JsValue> {
    let body = serde_json::to_vec(&error.to_json_body())
        .unwrap_or_else(|_| b"{\"error\":{\"code\":\"SANDBOX_RUNTIME_ERROR\"}}".to_vec());
    let headers = Headers::new()?;
    headers.set("content-type", "application/json")?;
    headers.set("server-timing", &timing.header_value())?;
    headers.set(ERROR_HEADER, error.code().as_str())?;
    if let Some(ms) = error.retry_after_ms() {
        headers.set("retry-after", &ms.div_ceil(1000).to_string())?;
    }
    let init = ResponseInit::new();
    init.set_status(error.http_status());
    init.set_headers(&headers);
    Response::new_with_opt_buffer_source_and_init(Some(&Uint8Array::from(body.as_slice())), &init)
}

/// The success Response for a revived result: a `Response` as is (plus `Server-Timing`),
/// `undefined` → 204, a `Blob`/`Uint8Array` → binary body, anything else → `200` JSON.
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` when the Response cannot be built.
pub fn value_response(value: JsValue, timing: &ServerTiming) -> Result<Response> {
    if let Some(response) = value.dyn_ref::<Response>() {
        let _ = response.headers().set("server-timing", &timing.header_value());
        return Ok(Clone::clone(response));
    }
    let headers = headers_with_timing(timing)?;
    if value.is_undefined() {
        return build(204, &headers, None);
    }
    if let Some(blob) = value.dyn_ref::<web_sys::Blob>() {
        let content_type = blob.type_();
        let content_type = if content_type.is_empty() { "application/octet-stream".to_owned() } else { content_type };
        headers.set("content-type", &content_type).map_err(|_| internal("content-type"))?;
        let init = ResponseInit::new();
        init.set_status(200);
        init.set_headers(&headers);
        return Response::new_with_opt_blob_and_init(Some(blob), &init).map_err(|_| internal("blob body"));
    }
    if let Some(bytes) = value.dyn_ref::<Uint8Array>() {
        headers.set("content-type", "application/octet-stream").map_err(|_| internal("content-type"))?;
        return build(200, &headers, Some(&bytes.to_vec()));
    }
    let json = JSON::stringify(&value).map_err(|_| internal("JSON.stringify"))?;
    headers.set("content-type", "application/json").map_err(|_| internal("content-type"))?;
    build(200, &headers, Some(String::from(json).as_bytes()))
}

/// The success Response of a plain JSON result: `json`, the result's text as the harness wrote
/// it (crates/core/src/transfer/frame.rs `ResultEnvelope::plain_json`), as the body, `200`
/// `application/json`: what [`value_response`] answers for the revived value, without the
/// revive and the `JSON.stringify`.
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` when the Response cannot be built.
pub fn json_response(json: &str, timing: &ServerTiming) -> Result<Response> {
    json_response_timed(json, &timing.header_value())
}

/// [`json_response`] with `server_timing` as its `Server-Timing` value (a Run that answers at
/// the result frame, run/follow.rs, before its `exec` phase is marked).
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` when the Response cannot be built.
pub fn json_response_timed(json: &str, server_timing: &str) -> Result<Response> {
    let headers = Headers::new().map_err(|_| internal("Headers"))?;
    headers.set("server-timing", server_timing).map_err(|_| internal("server-timing"))?;
    headers.set("content-type", "application/json").map_err(|_| internal("content-type"))?;
    build(200, &headers, Some(json.as_bytes()))
}

/// A top-level `Response` returned by the entry (`{marker: {tag: "response", ...}}`), revived.
/// `None` when `result` is not a Response marker.
pub fn response_marker(result: &Value) -> Option<Result<JsValue>> {
    let map = result.as_object().filter(|m| m.len() == 1)?;
    let marker = map.get(VALUE_MARKER)?;
    if marker.get("tag")?.as_str()? != "response" {
        return None;
    }
    Some(revive_response(marker))
}

fn revive_response(marker: &Value) -> Result<JsValue> {
    let invalid =
        || Error::new(ErrorCode::SerializationError, "Sandbox result contains an invalid Response.").for_output();
    let status =
        marker.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok()).ok_or_else(invalid)?;
    let headers = Headers::new().map_err(|_| internal("Headers"))?;
    for pair in marker.get("headers").and_then(Value::as_array).into_iter().flatten() {
        let (Some(name), Some(value)) = (pair.get(0).and_then(Value::as_str), pair.get(1).and_then(Value::as_str))
        else {
            return Err(invalid());
        };
        if !name.eq_ignore_ascii_case(ERROR_HEADER) {
            headers.append(name, value).map_err(|_| invalid())?;
        }
    }
    let body = match marker.get("body").and_then(Value::as_str) {
        Some(encoded) => Some(base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|_| invalid())?),
        None => None,
    };
    let init = ResponseInit::new();
    init.set_status(status);
    if let Some(text) = marker.get("statusText").and_then(Value::as_str) {
        init.set_status_text(text);
    }
    init.set_headers(&headers);
    let no_body = matches!(status, 101 | 103 | 204 | 205 | 304);
    let response = match body.filter(|_| !no_body) {
        Some(bytes) => Response::new_with_opt_buffer_source_and_init(Some(&Uint8Array::from(bytes.as_slice())), &init),
        None => Response::new_with_opt_buffer_source_and_init(None, &init),
    };
    response.map(Into::into).map_err(|_| invalid())
}
