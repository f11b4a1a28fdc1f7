//! The answer of one Run as it becomes known: the promise `runSandbox`/`response()` resolve to
//! (settled once, as soon as the result is known, before the Box is closed), and the body of a
//! Response the entry returned, fed chunk by chunk while the entry still produces it.
//!
//! Run layer; no provider here. Source: docs/internals/transfer.md "Envelopes" (head, body and end frames).

use std::cell::{Cell, RefCell};

use js_sys::{Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, Headers, ReadableStream, Response, ResponseInit};

use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};

#[wasm_bindgen]
extern "C" {
    /// A `ReadableStreamDefaultController` (WHATWG Streams), bound structurally.
    #[derive(Debug, Clone)]
    type StreamController;
    #[wasm_bindgen(method, catch)]
    fn enqueue(this: &StreamController, chunk: &Uint8Array) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn close(this: &StreamController) -> std::result::Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn error(this: &StreamController, reason: &JsValue) -> std::result::Result<(), JsValue>;
}

/// The promise of a Run's Response and the functions that settle it (once).
#[derive(Debug)]
pub struct Reply {
    resolve: Function,
    reject: Function,
    settled: Cell<bool>,
}

impl Reply {
    /// A pending reply and its promise.
    pub fn new() -> (Promise, Reply) {
        let slots: RefCell<Option<(Function, Function)>> = RefCell::new(None);
        let promise = Promise::new(&mut |resolve, reject| {
            *slots.borrow_mut() = Some((resolve, reject));
        });
        // The Promise executor runs synchronously, so the slots are filled here.
        let (resolve, reject) =
            slots.into_inner().unwrap_or_else(|| (Function::new_no_args(""), Function::new_no_args("")));
        (promise, Reply { resolve, reject, settled: Cell::new(false) })
    }

    /// Whether the promise was settled already.
    pub fn is_settled(&self) -> bool {
        self.settled.get()
    }

    /// Resolves with `response` (ignored once settled).
    pub fn resolve(&self, response: &JsValue) {
        if !self.settled.replace(true) {
            let _ = self.resolve.call1(&JsValue::UNDEFINED, response);
        }
    }

    /// Rejects with `reason` (ignored once settled): only the caller's abort reason.
    pub fn reject(&self, reason: &JsValue) {
        if !self.settled.replace(true) {
            let _ = self.reject.call1(&JsValue::UNDEFINED, reason);
        }
    }
}

/// The body of a streamed Response: a `ReadableStream` whose chunks are enqueued as the entry's
/// body frames arrive. Cancelling it (the caller stops reading) aborts the Run.
#[derive(Debug)]
pub struct BodyStream {
    controller: StreamController,
    done: Cell<bool>,
}

impl BodyStream {
    /// A Response with `status`, `status_text`, `headers` and a streamed body (no body for the
    /// statuses that cannot have one: 101, 103, 204, 205, 304). `cancel` is aborted when the
    /// reader cancels the body.
    ///
    /// # Errors
    /// `SANDBOX_SERIALIZATION_ERROR` (output) for a status or header the Response constructor
    /// refuses (e.g. `Response.error()`'s status 0).
    pub fn response(
        status: u16,
        status_text: &str,
        headers: &[(String, String)],
        timing: &str,
        cancel: &AbortController,
    ) -> Result<(Response, Option<BodyStream>)> {
        let invalid =
            || Error::new(ErrorCode::SerializationError, "Sandbox result contains an invalid Response.").for_output();
        let list = Headers::new().map_err(|_| invalid())?;
        // The runtime's own failure header is never the entry's to set (ERROR_HEADER).
        for (name, value) in
            headers.iter().filter(|(name, _)| !name.eq_ignore_ascii_case(vite_hub_sandbox_core::error::ERROR_HEADER))
        {
            list.append(name, value).map_err(|_| invalid())?;
        }
        let _ = list.set("server-timing", timing);
        // A streamed body must reach the client as it is produced: a platform that compresses
        // (workerd gzips text/plain) or a proxy that transforms would hold the chunks back until
        // the end. The entry's own values win.
        for (name, value) in [("content-encoding", "identity"), ("cache-control", "no-transform")] {
            if !list.has(name).unwrap_or(true) {
                let _ = list.set(name, value);
            }
        }
        let init = ResponseInit::new();
        init.set_status(status);
        init.set_status_text(status_text);
        init.set_headers(&list);
        if matches!(status, 101 | 103 | 204 | 205 | 304) {
            let response = Response::new_with_opt_buffer_source_and_init(None, &init).map_err(|_| invalid())?;
            return Ok((response, None));
        }
        let controller: std::rc::Rc<RefCell<Option<StreamController>>> = std::rc::Rc::default();
        let source = Object::new();
        // `start` runs inside the ReadableStream constructor: owned here, freed on return.
        let start = {
            let controller = controller.clone();
            Closure::once(move |c: JsValue| {
                *controller.borrow_mut() = Some(c.unchecked_into());
            })
        };
        // `cancel` may run at any time or never: `cancel.abort` bound to `cancel` (no Rust
        // closure that a body read to its end would leave behind), called without a reason.
        let on_cancel = Reflect::get(cancel, &"abort".into())
            .ok()
            .and_then(|abort| abort.dyn_into::<Function>().ok())
            .map(|abort| abort.bind1(cancel, &JsValue::UNDEFINED))
            .ok_or_else(invalid)?;
        let _ = Reflect::set(&source, &"start".into(), start.as_ref());
        let _ = Reflect::set(&source, &"cancel".into(), &on_cancel);
        let stream = ReadableStream::new_with_underlying_source(&source).map_err(|_| invalid())?;
        drop(start);
        let response = Response::new_with_opt_readable_stream_and_init(Some(&stream), &init).map_err(|_| invalid())?;
        let controller = controller.borrow_mut().take().ok_or_else(invalid)?;
        Ok((response, Some(BodyStream { controller, done: Cell::new(false) })))
    }

    /// Hands `bytes` to the reader.
    pub fn push(&self, bytes: &[u8]) {
        if !self.done.get() {
            let _ = self.controller.enqueue(&Uint8Array::from(bytes));
        }
    }

    /// Ends the body normally.
    pub fn end(&self) {
        if !self.done.replace(true) {
            let _ = self.controller.close();
        }
    }

    /// Ends the body with `error` (the reader's next read rejects with a `SandboxError`), or,
    /// once `caller` fired, with its reason (as `fetch` does: an `AbortError` or `abort(reason)`'s).
    pub fn fail(&self, error: Error, caller: Option<&web_sys::AbortSignal>) {
        if !self.done.replace(true) {
            let reason = caller
                .filter(|s| s.aborted())
                .map_or_else(|| crate::error::js::into_js(error), web_sys::AbortSignal::reason);
            let _ = self.controller.error(&reason);
        }
    }

    /// Whether the body ended (normally or not).
    pub fn is_done(&self) -> bool {
        self.done.get()
    }
}
