//! The deadline of one provider operation: an `AbortSignal` that fires when the caller's signal
//! fires or when `ms` milliseconds have passed, whichever comes first.
//!
//! Every request a provider client sends carries one, so a provider that accepts a connection
//! and never answers (or stalls mid-body) cannot hold a Run longer than the operation's bound;
//! without it, only Node's 300 s headers timeout ended such a request (issue 9, item 1).
//! Built from an `AbortController` whose bound `abort` is both the timer callback and the
//! listener on the caller's signal: no Rust closure is kept alive.

use js_sys::{Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortController, AbortSignal};

use crate::sys;

/// Largest delay a JS timer takes, in ms.
const MAX_TIMER_MS: u32 = 2_147_483_647;

/// An operation deadline (see the module docs). Dropping it clears the timer and the listener.
#[derive(Debug)]
pub struct Deadline {
    parent: Option<AbortSignal>,
    armed: Option<Armed>,
    ms: u32,
}

#[derive(Debug)]
struct Armed {
    controller: AbortController,
    abort: Function,
    timer: JsValue,
}

impl Deadline {
    /// A deadline `ms` ms from now, also firing when `parent` fires. Where `AbortController` is
    /// missing (no supported runtime), the deadline is only the parent signal.
    pub fn new(parent: Option<&AbortSignal>, ms: u32) -> Deadline {
        let parent = parent.cloned();
        let armed = AbortController::new().ok().and_then(|controller| {
            let abort = Reflect::get(&controller, &JsValue::from_str("abort"))
                .ok()?
                .dyn_into::<Function>()
                .ok()?
                .bind0(&controller);
            // A JS timer fires at once past 2^31 − 1 ms: such a bound (24.8 days) is left to
            // the parent signal.
            let timer = if ms <= MAX_TIMER_MS { sys::set_timeout(&abort, f64::from(ms)) } else { JsValue::UNDEFINED };
            if let Some(parent) = &parent {
                if parent.aborted() {
                    controller.abort();
                } else {
                    let _ = parent.add_event_listener_with_callback("abort", &abort);
                }
            }
            Some(Armed { controller, abort, timer })
        });
        Deadline { parent, armed, ms }
    }

    /// The signal requests of the operation carry.
    pub fn signal(&self) -> Option<AbortSignal> {
        match &self.armed {
            Some(armed) => Some(armed.controller.signal()),
            None => self.parent.clone(),
        }
    }

    /// The bound in ms.
    pub fn ms(&self) -> u32 {
        self.ms
    }

    /// Whether the deadline itself (not the caller's signal) ended the operation.
    pub fn expired(&self) -> bool {
        let parent_aborted = self.parent.as_ref().is_some_and(AbortSignal::aborted);
        !parent_aborted && self.armed.as_ref().is_some_and(|armed| armed.controller.signal().aborted())
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if let Some(armed) = &self.armed {
            sys::clear_timeout(&armed.timer);
            if let Some(parent) = &self.parent {
                let _ = parent.remove_event_listener_with_callback("abort", &armed.abort);
            }
        }
    }
}

/// `future` (a stop, a destroy, a release), or a `SANDBOX_RUNTIME_ERROR` for the `stop` operation
/// when it takes longer than `ms` ms. The future is dropped at the bound (its requests carry their
/// own signals).
pub async fn stop_within(
    ms: u32,
    future: futures::future::LocalBoxFuture<'_, vite_hub_sandbox_core::error::Result<()>>,
) -> vite_hub_sandbox_core::error::Result<()> {
    use futures::future::{select, Either};
    use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation};
    let sleep = crate::http::timer::Sleep::new(f64::from(ms));
    let outcome = select(future, wasm_bindgen_futures::JsFuture::from(sleep.promise().clone())).await;
    // Dropping the sleep settles its promise: the `JsFuture` left in `select` is let go.
    drop(sleep);
    match outcome {
        Either::Left((result, _)) => result,
        Either::Right(_) => Err(Error::new(ErrorCode::RuntimeError, format!("the Box did not stop within {ms}ms"))
            .with_operation(Operation::Stop)),
    }
}
