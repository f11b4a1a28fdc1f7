//! `session.openInteractive(options?)`: an interactive terminal (a PTY over a WebSocket) in the
//! Session's Box, as `{ url, token }` for a client (a browser page, the Vercel CLI) to connect to.
//!
//! Vercel protocol: `POST /v2/sandboxes/sessions/{id}/interactive`, body `{}` as `@vercel/sandbox`
//! 3.5.0 `openInteractive()` sends it ([`crate::provider::vercel::client::VercelClient::open_interactive`]);
//! the local Box host serves that route and the socket
//! (`pkg-template/box-host/protocols/vercel-interactive.mjs`). The socket's messages are the
//! official Sandbox CLI's (`docs/sessions.md#interactive-terminal`).

use js_sys::{Object, Promise};
use wasm_bindgen::prelude::*;

use super::options::{check_keys, option, signal_option};
use super::{abort_or, invalid, js_promise, rejected, set, SandboxSession};
use vite_hub_sandbox_core::error::Result;
use vite_hub_sandbox_core::provider::vercel::interactive::{InteractiveRequest, MAX_TERMINAL_SIZE};

const WHAT: &str = "openInteractive options";

/// A terminal size option (`cols`, `rows`): absent, or an integer 1–65535.
fn size_option(options: &JsValue, key: &str) -> Result<Option<u16>> {
    let value = option(options, key, WHAT)?;
    if value.is_undefined() {
        return Ok(None);
    }
    value
        .as_f64()
        .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= f64::from(MAX_TERMINAL_SIZE))
        .map(|n| n as u16)
        .map(Some)
        .ok_or_else(|| invalid(format!("{WHAT} {key} must be an integer from 1 to {MAX_TERMINAL_SIZE}")))
}

/// `{ command?, args?, cols?, rows? }` read and checked.
fn read_request(options: &JsValue) -> Result<InteractiveRequest> {
    check_keys(options, &["command", "args", "cols", "rows", "signal"], WHAT)?;
    let command = option(options, "command", WHAT)?;
    let command = if command.is_undefined() {
        None
    } else {
        Some(
            command
                .as_string()
                .filter(|c| !c.is_empty() && !c.contains('\0'))
                .ok_or_else(|| invalid(format!("{WHAT} command must be a non-empty string")))?,
        )
    };
    let args = option(options, "args", WHAT)?;
    let args = if args.is_undefined() {
        None
    } else {
        if command.is_none() {
            return Err(invalid(format!("{WHAT} args needs a command")));
        }
        let array = args
            .dyn_ref::<js_sys::Array>()
            .ok_or_else(|| invalid(format!("{WHAT} args must be an array of strings")))?;
        let mut list = Vec::with_capacity(array.length() as usize);
        for arg in array.iter() {
            let arg = arg
                .as_string()
                .filter(|a| !a.contains('\0'))
                .ok_or_else(|| invalid(format!("{WHAT} args must be an array of strings")))?;
            list.push(arg);
        }
        Some(list)
    };
    Ok(InteractiveRequest { command, args, cols: size_option(options, "cols")?, rows: size_option(options, "rows")? })
}

#[wasm_bindgen]
impl SandboxSession {
    /// `openInteractive({ command?, args?, cols?, rows?, signal? }) → Promise<{ url, token }>`: a
    /// terminal (PTY) in the Box behind a WebSocket. `url` is the socket (`ws://127.0.0.1:<port>/…`
    /// on the local Box host, `wss://…` on Vercel); `token` opens it once (`?token=` on the URL as
    /// the Vercel CLI sends it, or the first message's `token`). `command`/`args` fix what the
    /// terminal runs (default: a shell), `cols`/`rows` its size (integers 1–65535; 80 × 24); both
    /// local only: on Vercel the socket's `start` message carries them. `signal` aborts the
    /// request.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for bad options (before any request); `SANDBOX_INVALID_STATE`
    /// after `close()` or expiry; `SANDBOX_NOT_SUPPORTED` (`details.operation`
    /// `openInteractive`) on Cloudflare, on Vercel with `command`/`args`/`cols`/`rows`, and on a
    /// local Box host without terminals (macOS/Seatbelt, or no util-linux `script`); the
    /// provider's errors (`SANDBOX_TRANSPORT_ERROR` with `details.status`).
    #[wasm_bindgen(js_name = openInteractive)]
    pub fn open_interactive(&self, options: JsValue) -> Promise {
        let read = self
            .inner
            .check_open("openInteractive")
            .and_then(|()| Ok((read_request(&options)?, signal_option(&options, WHAT)?)));
        let (request, signal) = match read {
            Ok(read) => read,
            Err(error) => return rejected(error),
        };
        let inner = self.inner.clone();
        js_promise(Box::pin(async move {
            let core = &inner.core;
            let access = core
                .box_session()
                .open_interactive(&request, signal.as_ref())
                .await
                .map_err(|e| abort_or(core.failed("openInteractive", e), signal.as_ref()))?;
            let object = Object::new();
            set(&object, "url", &access.url.into());
            set(&object, "token", &access.token.into());
            Ok(object.into())
        }))
    }
}
