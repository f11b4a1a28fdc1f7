//! The deadline and abort signal of one Run: one `AbortSignal` that fires on the caller's abort
//! or when the Definition timeout passes, carried by every provider request of the Run.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal};

use crate::sys;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};

/// The internal abort signal of a Run: fires on the caller's abort or at the deadline.
#[allow(missing_debug_implementations)] // holds closures; nothing to show
pub struct RunSignal {
    controller: AbortController,
    timed_out: Rc<Cell<bool>>,
    deadline_ms: Cell<Option<f64>>,
    timer: Cell<Option<JsValue>>,
    on_timeout: Closure<dyn FnMut()>,
    on_caller_abort: Closure<dyn FnMut()>,
    caller: Option<AbortSignal>,
}

impl RunSignal {
    /// Listens to `caller` (when given); no deadline yet.
    pub fn new(caller: Option<AbortSignal>) -> Result<RunSignal> {
        let controller = AbortController::new()
            .map_err(|_| Error::new(ErrorCode::RuntimeError, "AbortController is not available"))?;
        let timed_out = Rc::new(Cell::new(false));
        let on_timeout = {
            let controller = controller.clone();
            let timed_out = timed_out.clone();
            Closure::<dyn FnMut()>::new(move || {
                timed_out.set(true);
                controller.abort();
            })
        };
        let on_caller_abort = {
            let controller = controller.clone();
            Closure::<dyn FnMut()>::new(move || controller.abort())
        };
        if let Some(caller) = &caller {
            let _ = caller.add_event_listener_with_callback("abort", on_caller_abort.as_ref().unchecked_ref());
        }
        Ok(RunSignal {
            controller,
            timed_out,
            deadline_ms: Cell::new(None),
            timer: Cell::new(None),
            on_timeout,
            on_caller_abort,
            caller,
        })
    }

    /// The signal every provider request of the Run carries.
    pub fn signal(&self) -> AbortSignal {
        self.controller.signal()
    }

    /// The controller behind [`RunSignal::signal`]: aborting it stops the Run (a reader that
    /// cancels a streamed body does).
    pub fn controller(&self) -> &AbortController {
        &self.controller
    }

    /// Starts the deadline: the signal fires in `timeout_ms` ms.
    pub fn start_deadline(&self, timeout_ms: u32) {
        self.deadline_ms.set(Some(sys::performance_now() + f64::from(timeout_ms)));
        let handle = sys::set_timeout(self.on_timeout.as_ref().unchecked_ref(), f64::from(timeout_ms));
        self.timer.set(Some(handle));
    }

    /// Milliseconds left before the deadline (at least 1); `None` before the deadline starts.
    pub fn remaining_ms(&self) -> Option<u64> {
        self.deadline_ms.get().map(|d| (d - sys::performance_now()).max(1.0).ceil() as u64)
    }

    /// Whether the deadline fired (or is within 50 ms).
    pub fn deadline_passed(&self) -> bool {
        self.timed_out.get() || self.deadline_ms.get().is_some_and(|d| sys::performance_now() >= d - 50.0)
    }

    /// The caller's abort reason, once its signal fired.
    pub fn caller_aborted(&self) -> Option<JsValue> {
        self.caller.as_ref().filter(|c| c.aborted()).map(AbortSignal::reason)
    }

    /// Clears the deadline timer.
    pub fn stop_deadline(&self) {
        if let Some(handle) = self.timer.take() {
            sys::clear_timeout(&handle);
        }
    }
}

impl Drop for RunSignal {
    fn drop(&mut self) {
        self.stop_deadline();
        if let Some(caller) = &self.caller {
            let _ = caller.remove_event_listener_with_callback("abort", self.on_caller_abort.as_ref().unchecked_ref());
        }
    }
}
