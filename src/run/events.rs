//! What a Run tells its handle while it works: its status, the entry's own stdout/stderr (live),
//! the background work that outlives the Response (closing the Box), and failures that happen
//! after the Response was given (reported, never lost).
//!
//! The handle is a JS object of the glue (`runtime/run-handle.mjs`):
//! ```ts
//! { status(status: 'running' | 'stopped' | 'failed'): void,
//!   log(stream: 'stdout' | 'stderr', data: string): void,
//!   background(work: Promise<void>): void,   // e.g. a Worker's waitUntil
//!   report(message: string, code: string): void,  // a failure after the Response (the Box's close), its SANDBOX_* code
//!   notice(message: string): void }  // news for the user that is not this Run's failure (a warm pool's refill failed)
//! ```
//! Each method is optional; a method that throws is ignored (the Run goes on). Without a
//! `report`, a late failure goes to `console.warn`.

use js_sys::{Function, Promise, Reflect};

use vite_hub_sandbox_core::error::ErrorCode;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen]
extern "C" {
    /// `console.warn` (every runtime has it): where a late failure goes without a handle.
    #[wasm_bindgen(js_namespace = console, js_name = warn)]
    fn console_warn(message: &str);
}

use crate::provider::output::OutputStream;

thread_local! {
    static KEEP_ALIVE: std::cell::RefCell<Option<Function>> = const { std::cell::RefCell::new(None) };
}

/// Sets (or, with `None`, removes) the isolate's keep-alive hook, `(work: Promise) => void`: every
/// Run hands it the work that follows its Response (a Worker's `waitUntil`, so the request is not
/// ended before the Box is given back).
pub fn set_keep_alive(hook: Option<Function>) {
    KEEP_ALIVE.with(|k| *k.borrow_mut() = hook);
}

/// Hands `work` to the isolate's keep-alive hook only ([`set_keep_alive`]): work that outlives a
/// Run but is not its own (a warm pool's refill), so no Run's handle waits for it.
pub fn keep_alive(work: &Promise) {
    if let Some(hook) = KEEP_ALIVE.with(|k| k.borrow().clone()) {
        let _ = hook.call1(&JsValue::UNDEFINED, work);
    }
}

/// The status of a Run, as its handle shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// The entry's command started in the Box.
    Running,
    /// The Run ended with the entry's result (its Response body, if streamed, ended).
    Stopped,
    /// The Run ended with an error Response, a failed body, or the caller's abort.
    Failed,
}

impl RunStatus {
    fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Stopped => "stopped",
            RunStatus::Failed => "failed",
        }
    }
}

/// The handle's callbacks (all optional).
#[derive(Debug, Clone, Default)]
pub struct RunEvents {
    sink: Option<JsValue>,
}

impl RunEvents {
    /// Events sent to `sink` (`undefined`/`null`: none are sent).
    pub fn new(sink: JsValue) -> RunEvents {
        RunEvents { sink: sink.is_object().then_some(sink) }
    }

    fn call(&self, method: &str, args: &[JsValue]) {
        let Some(sink) = &self.sink else { return };
        let Some(function) =
            Reflect::get(sink, &JsValue::from_str(method)).ok().and_then(|f| f.dyn_into::<Function>().ok())
        else {
            return;
        };
        let _ = match args {
            [a] => function.call1(sink, a),
            [a, b] => function.call2(sink, a, b),
            _ => function.call0(sink),
        };
    }

    /// The Run's status changed.
    pub fn status(&self, status: RunStatus) {
        self.call("status", &[JsValue::from_str(status.as_str())]);
    }

    /// The entry wrote `data` on `stream` (outside the result frames).
    pub fn log(&self, stream: OutputStream, data: &str) {
        if !data.is_empty() {
            self.call("log", &[JsValue::from_str(stream.as_str()), JsValue::from_str(data)]);
        }
    }

    /// Work that goes on after the Response was given (the Box's close): to the handle, and to
    /// the runtime's keep-alive hook when one is set ([`set_keep_alive`], a Worker's `waitUntil`).
    pub fn background(&self, work: &Promise) {
        self.call("background", &[work.into()]);
        if let Some(hook) = KEEP_ALIVE.with(|k| k.borrow().clone()) {
            let _ = hook.call1(&JsValue::UNDEFINED, work);
        }
    }

    /// News for the user that is not a failure of this Run (it never makes `closed()` reject):
    /// to the handle's `notice` (the Run's `onLog`, as a `[vite-hub-sandbox]` stderr line), else
    /// `console.warn`.
    pub fn notice(&self, message: &str) {
        if self.has("notice") {
            self.call("notice", &[JsValue::from_str(message)]);
        } else {
            console_warn(&format!("[vite-hub-sandbox] {message}"));
        }
    }

    fn has(&self, method: &str) -> bool {
        self.sink
            .as_ref()
            .is_some_and(|sink| Reflect::get(sink, &JsValue::from_str(method)).is_ok_and(|f| f.is_function()))
    }

    /// A failure after the Response was given, with its code: to the handle's `report`, else
    /// `console.warn`.
    pub fn report(&self, message: &str, code: ErrorCode) {
        if self.has("report") {
            self.call("report", &[JsValue::from_str(message), JsValue::from_str(code.as_str())]);
        } else {
            console_warn(&format!("[vite-hub-sandbox] {message}"));
        }
    }
}
