//! `openSandboxSession({ ports })` and `session.domain(port)`: the ports a Session's Box exposes
//! and the URL that reaches each (Vercel and the local Box host: the create answer's routes;
//! Cloudflare: `SANDBOX_NOT_SUPPORTED`). The rules are [`vite_hub_sandbox_core::session::ports`].

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use super::options::option;
use super::{invalid, SandboxSession};
use crate::error::js::{into_js, js_message};
use crate::provider::Provider;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::session::ports::{check_port, check_ports, MAX_PORTS};

/// The `ports` option of `openSandboxSession`: `[]` when absent; else an array of at most 15
/// distinct integers 1–65535, read with `Reflect` (a throwing Proxy trap is an error here), on a
/// provider that exposes ports.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for a bad value; `SANDBOX_NOT_SUPPORTED` (`details.operation`
/// `ports`) for ports on a provider without them (Cloudflare).
pub(super) fn ports_option(options: &JsValue, what: &str, provider: &dyn Provider) -> Result<Vec<u16>> {
    let value = option(options, "ports", what)?;
    if value.is_undefined() {
        return Ok(Vec::new());
    }
    let not_ports = || invalid(format!("{what} ports must be an array of port numbers (at most {MAX_PORTS})"));
    if !js_sys::Array::is_array(&value) {
        return Err(not_ports());
    }
    let read = |key: &JsValue| {
        Reflect::get(&value, key).map_err(|e| invalid(format!("{what} ports could not be read: {}", js_message(&e))))
    };
    let length = read(&JsValue::from_str("length"))?.as_f64().unwrap_or(0.0);
    if length > MAX_PORTS as f64 {
        return Err(not_ports());
    }
    let mut numbers = Vec::new();
    for index in 0..length as u32 {
        let item = read(&JsValue::from(index))?;
        numbers.push(item.as_f64().ok_or_else(|| invalid(format!("{what} ports[{index}] must be a number")))?);
    }
    let ports = check_ports(&numbers)?;
    if !ports.is_empty() && !provider.exposes_ports() {
        let kind = provider.kind();
        return Err(Error::new(
            ErrorCode::NotSupported,
            format!(
                "openSandboxSession({{ ports }}) is not supported by the {kind} provider: its preview URLs need the Worker's proxyToSandbox on a custom domain (docs/sessions.md#ports-and-preview-urls)"
            ),
        )
        .with_provider(kind)
        .with_operation(Operation::Ports));
    }
    Ok(ports)
}

#[wasm_bindgen]
impl SandboxSession {
    /// `domain(port) → string`: the URL that reaches Box port `port`, one of the `ports` given to
    /// `openSandboxSession` (synchronous; sends nothing). Vercel: the `url` of the port's route in
    /// the create answer (`https://<subdomain>.vercel.run`). The local Box host:
    /// `http://127.0.0.1:<proxy port>/<secret>`, its port proxy for this Box, which reaches only
    /// this Box's declared ports and closes with the Session; append a path
    /// (`${session.domain(3000)}/api`).
    ///
    /// # Errors
    /// (thrown) `SANDBOX_INVALID_ARGUMENT` (`details.operation` `ports`) for a port that is not an
    /// integer 1–65535 or was not declared at open; `SANDBOX_INVALID_STATE` after `close()` or
    /// expiry.
    pub fn domain(&self, port: JsValue) -> std::result::Result<String, JsValue> {
        let url = || -> Result<String> {
            self.inner.check_open("domain")?;
            let number = port.as_f64().ok_or_else(|| invalid("domain(port) needs a port number"))?;
            let port = check_port(number, "domain(port)")?;
            self.inner.core.box_session().port_url(port)
        };
        url().map_err(into_js)
    }
}
