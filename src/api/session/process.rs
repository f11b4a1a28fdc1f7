//! The handles a Session gives for one Command: [`SandboxProcess`] (`spawn`) and
//! [`SandboxLogStream`] (its output, one reader).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Object, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::options::signal_number;
use super::{invalid, js_promise, operate, rejected, set, Inner, Op};
use crate::error::js::into_js;
use crate::provider::output::LogStream;

/// A Command started by `spawn`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct SandboxProcess {
    pub(super) inner: Rc<Inner>,
    pub(super) id: String,
}

#[wasm_bindgen]
impl SandboxProcess {
    /// The provider's Command id.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// `openLogs() → Promise<SandboxLogStream>`: the Command's output from its start, then live.
    #[wasm_bindgen(js_name = openLogs)]
    pub fn open_logs(&self) -> Promise {
        match self.inner.check_open("logs") {
            Ok(()) => operate(&self.inner, Op::Logs(self.id.clone()), None),
            Err(error) => rejected(error),
        }
    }

    /// `wait() → Promise<{ exitCode, ok }>`.
    pub fn wait(&self) -> Promise {
        match self.inner.check_open("wait") {
            Ok(()) => operate(&self.inner, Op::Wait(self.id.clone()), None),
            Err(error) => rejected(error),
        }
    }

    /// `writeStdin(data: string | Uint8Array) → Promise<void>`: writes to the stdin of a Command
    /// spawned with `stdin: true` (strings as UTF-8), in call order; resolves once the Command's
    /// pipe took the bytes (Vercel protocol: `POST …/cmd/{id}/stdin`, at most 524288 bytes a
    /// request). Rejects when its stdin is not open (not spawned with `stdin`, closed, exited:
    /// `SANDBOX_TRANSPORT_ERROR` with `details.status` 400 or 404) or the Command did not read for
    /// 30000 ms (504; its stdin is closed then).
    #[wasm_bindgen(js_name = writeStdin)]
    pub fn write_stdin(&self, data: JsValue) -> Promise {
        let read = self.inner.check_open("writeStdin").and_then(|()| {
            if let Some(text) = data.as_string() {
                Ok(text.into_bytes())
            } else if let Some(array) = data.dyn_ref::<Uint8Array>() {
                Ok(array.to_vec())
            } else {
                Err(invalid("writeStdin(data): data must be a string or a Uint8Array"))
            }
        });
        match read {
            Ok(bytes) => operate(&self.inner, Op::Stdin(self.id.clone(), bytes, false), None),
            Err(error) => rejected(error),
        }
    }

    /// `closeStdin() → Promise<void>`: closes the Command's stdin (it reads end of input after
    /// what was written); idempotent while the Command runs.
    #[wasm_bindgen(js_name = closeStdin)]
    pub fn close_stdin(&self) -> Promise {
        match self.inner.check_open("closeStdin") {
            Ok(()) => operate(&self.inner, Op::Stdin(self.id.clone(), Vec::new(), true), None),
            Err(error) => rejected(error),
        }
    }

    /// `kill(signal?) → Promise<void>`: `'SIGTERM'` (default), `'SIGKILL'`, … or a number.
    pub fn kill(&self, signal: JsValue) -> Promise {
        match self.inner.check_open("kill").and_then(|()| signal_number(&signal)) {
            Ok(number) => operate(&self.inner, Op::Kill(self.id.clone(), number), None),
            Err(error) => rejected(error),
        }
    }
}

/// One reader of a Command's output.
#[wasm_bindgen]
#[derive(Debug)]
pub struct SandboxLogStream {
    pub(super) stream: Rc<RefCell<Option<Box<dyn LogStream>>>>,
}

#[wasm_bindgen]
impl SandboxLogStream {
    /// `next() → Promise<{ stream: 'stdout' | 'stderr', data } | undefined>` (`undefined` at the
    /// end). One call at a time.
    pub fn next(&self) -> Promise {
        let slot = self.stream.clone();
        js_promise(Box::pin(async move {
            let Some(mut stream) = slot.borrow_mut().take() else {
                return Ok(JsValue::UNDEFINED);
            };
            let next = stream.next().await;
            if matches!(next, Ok(Some(_))) {
                slot.borrow_mut().replace(stream);
            }
            Ok(match next.map_err(into_js)? {
                Some(entry) => {
                    let object = Object::new();
                    set(&object, "stream", &entry.stream.as_str().into());
                    set(&object, "data", &entry.data.as_str().into());
                    object.into()
                }
                None => JsValue::UNDEFINED,
            })
        }))
    }

    /// Stops reading (an iterator left early).
    pub fn cancel(&self) {
        if let Some(mut stream) = self.stream.borrow_mut().take() {
            stream.cancel();
        }
    }
}
