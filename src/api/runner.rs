//! `resolveSandboxRunner(name)`: a Definition's runner, resolved before anything runs: its name,
//! provider and executionAuthority, and `run(payload, options)` resolving to the decoded result
//! (contract §2: only `runSandbox` wraps in a Response; `run` throws the `SandboxError`).

use std::rc::Rc;

use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::session::{authority_object, js_promise};
use vite_hub_sandbox_core::definition::validate_name;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, ERROR_HEADER};

/// `resolveSandboxRunner(name) → Promise<SandboxRunner>`: finds the Definition (registry, then
/// the loader) and the configured provider, and asks the provider for its executionAuthority
/// (the local provider asks its Box host; no Box is opened).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for a bad name; `SANDBOX_NOT_FOUND` for an unknown one (the message
/// of `runSandbox`); `SANDBOX_PROVIDER_REQUIRED` and the provider's errors.
#[wasm_bindgen(js_name = resolveSandboxRunner)]
pub fn resolve_sandbox_runner(name: JsValue) -> Promise {
    crate::sys::error_promise(async move {
        let name =
            name.as_string().ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "Sandbox name must be a string"))?;
        validate_name(&name)?;
        let registered = super::registered(&name).is_some();
        if !registered && super::load_definition(&name).await?.is_none() {
            return Err(
                Error::new(ErrorCode::NotFound, super::not_found(&name).await).with_operation(Operation::Resolve)
            );
        }
        let resolved = super::runtime_config()?;
        let provider = resolved.provider.as_ref().map(Rc::clone).map_err(Error::to_public)?;
        let authority = provider.execution_authority(None).await?;
        Ok(SandboxRunner { name, provider: provider.kind().as_str(), authority: authority_object(&authority) }.into())
    })
}

/// A resolved Definition runner (see [`resolve_sandbox_runner`]).
#[wasm_bindgen]
#[derive(Debug)]
pub struct SandboxRunner {
    name: String,
    provider: &'static str,
    authority: JsValue,
}

#[wasm_bindgen]
impl SandboxRunner {
    /// The Definition's name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// `'local' | 'vercel' | 'cloudflare'`.
    #[wasm_bindgen(getter)]
    pub fn provider(&self) -> String {
        self.provider.to_owned()
    }

    /// The frozen executionAuthority of the Boxes its Runs get.
    #[wasm_bindgen(getter, js_name = executionAuthority)]
    pub fn execution_authority(&self) -> JsValue {
        self.authority.clone()
    }

    /// `run(payload?, { context?, signal?, sandboxId?, onLog? }, events?) → Promise<result>`: a Run as
    /// `runSandbox` does it, decoded: `undefined` for 204, the parsed JSON for `application/json`,
    /// else the bytes (`Uint8Array`). A failed Run rejects with its `SandboxError` (`code`,
    /// `status`, `details`, `provider`, `operation` from the error body); an abort with the
    /// signal's reason. `events`: the glue's onLog side ([`crate::run::events`]); without it a
    /// failure after the Response goes to `console.warn`.
    pub fn run(&self, payload: JsValue, options: JsValue, events: JsValue) -> Promise {
        let name = JsValue::from_str(&self.name);
        js_promise(Box::pin(async move {
            let response = super::run_sandbox(name.clone(), payload, options, events).await?;
            decode(&response, &name.as_string().unwrap_or_default()).await
        }))
    }
}

async fn body_text(response: &web_sys::Response) -> Result<String, JsValue> {
    Ok(JsFuture::from(response.text()?).await?.as_string().unwrap_or_default())
}

/// The value a Run's Response carries, or its error as a thrown `SandboxError`: the runtime's
/// own (its [`ERROR_HEADER`] names the code), or `SANDBOX_HANDLER_ERROR` for a failure status
/// the entry answered itself, whatever its body claims.
async fn decode(response: &web_sys::Response, name: &str) -> Result<JsValue, JsValue> {
    let status = response.status();
    if status == 204 {
        return Ok(JsValue::UNDEFINED);
    }
    let content_type = response.headers().get("content-type")?.unwrap_or_default();
    let json = vite_hub_sandbox_core::http::media_type::media_type_is(&content_type, "application/json");
    if !response.ok() {
        let text = body_text(response).await?;
        let body = js_sys::JSON::parse(&text).ok().filter(JsValue::is_object);
        let error = body.and_then(|b| Reflect::get(&b, &JsValue::from_str("error")).ok()).filter(JsValue::is_object);
        let field = |key: &str| {
            error.as_ref().and_then(|e| Reflect::get(e, &JsValue::from_str(key)).ok()).filter(|v| !v.is_undefined())
        };
        let message =
            field("message").and_then(|m| m.as_string()).unwrap_or_else(|| format!("the Run answered {status}"));
        let Some(code) = response.headers().get(ERROR_HEADER)?.and_then(|c| ErrorCode::parse(&c)) else {
            let answered = Error::new(
                ErrorCode::HandlerError,
                format!("Sandbox \"{name}\" answered {status} with a Response of its own."),
            )
            .with_status(status);
            return Err(crate::error::js::into_js(answered));
        };
        let thrown = js_sys::Error::new(&message);
        thrown.set_name("SandboxError");
        let set = |key: &str, value: &JsValue| {
            let _ = Reflect::set(&thrown, &JsValue::from_str(key), value);
        };
        set("code", &code.as_str().into());
        set("status", &status.into());
        if let Some(details) = field("details") {
            for key in ["provider", "operation"] {
                if let Ok(value) = Reflect::get(&details, &JsValue::from_str(key)) {
                    if value.is_string() {
                        set(key, &value);
                    }
                }
            }
            set("details", &details);
        }
        return Err(thrown.into());
    }
    if json {
        let text = body_text(response).await?;
        return js_sys::JSON::parse(&text);
    }
    let buffer = JsFuture::from(response.array_buffer()?).await?;
    Ok(Uint8Array::new(&buffer).into())
}
