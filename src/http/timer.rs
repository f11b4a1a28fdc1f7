//! Timers that own the Rust closure they call, and sleeps that always settle. (A timer whose
//! callback is a JS function, such as a bound `abort` in [`crate::http::deadline`], holds no Rust
//! closure and needs neither.)
//!
//! A JS callback made from a Rust closure lives in the wasm-bindgen externref table until Rust
//! drops it: `Closure::once_into_js` frees it only when JS calls it, so a cleared timer leaked
//! its closure and all it held (issue 32, item 5). A `JsFuture` of a promise that never settles
//! keeps its two closures for good (they hold each other). So a [`Timer`] owns its callback and
//! drops it with the timer, and a [`Sleep`] settles its promise when it is dropped, fired or not.
//!
//! Transport layer; no provider and no Run here.

use js_sys::{Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::sys;

/// A pending `setTimeout`. Dropping it clears the timer, then frees its callback.
pub struct Timer {
    handle: JsValue,
    // Dropped after the timer is cleared (fields drop after `Drop::drop`).
    _callback: Closure<dyn FnMut()>,
}

impl Timer {
    /// Calls `callback` once in `ms` ms; the closure is freed with the timer, called or not.
    pub fn once(callback: impl FnOnce() + 'static, ms: u32) -> Timer {
        let callback = Closure::once(callback);
        let handle = sys::set_timeout(callback.as_ref().unchecked_ref(), f64::from(ms));
        Timer { handle, _callback: callback }
    }

    /// Lets Node exit while the timer is pending (`Timeout.unref()`; absent elsewhere).
    pub fn unref(&self) {
        if let Ok(unref) =
            js_sys::Reflect::get(&self.handle, &JsValue::from_str("unref")).and_then(|f| f.dyn_into::<Function>())
        {
            let _ = unref.call0(&self.handle);
        }
    }
}

impl std::fmt::Debug for Timer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timer").field("handle", &self.handle).finish_non_exhaustive()
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        sys::clear_timeout(&self.handle);
    }
}

/// A promise that resolves after `ms` ms, or when the `Sleep` is dropped (its timer cleared), so
/// whatever awaits it (a `JsFuture` left in a `select`) is let go.
#[derive(Debug)]
pub struct Sleep {
    promise: Promise,
    resolve: Function,
    handle: JsValue,
}

impl Sleep {
    /// Starts sleeping `ms` ms.
    pub fn new(ms: f64) -> Sleep {
        let mut slots = None;
        let promise = Promise::new(&mut |resolve, _reject| {
            let handle = sys::set_timeout(&resolve, ms);
            slots = Some((resolve, handle));
        });
        // The Promise executor runs synchronously, so the slots are filled here.
        let (resolve, handle) = slots.unwrap_or_else(|| (Function::new_no_args(""), JsValue::UNDEFINED));
        Sleep { promise, resolve, handle }
    }

    /// Resolves when the time passed (or the `Sleep` was dropped).
    pub fn promise(&self) -> &Promise {
        &self.promise
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        sys::clear_timeout(&self.handle);
        let _ = self.resolve.call0(&JsValue::UNDEFINED);
    }
}

/// Sleeps `ms` milliseconds.
pub async fn sleep(ms: f64) {
    let sleep = Sleep::new(ms);
    let _ = wasm_bindgen_futures::JsFuture::from(sleep.promise().clone()).await;
}
