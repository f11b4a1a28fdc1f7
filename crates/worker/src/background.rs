//! The work a Run does after its Response (giving the Box back), kept alive by the Worker's
//! `waitUntil`.
//!
//! The Run hands that work to its events handle (`background(work)`, see the runtime's
//! `run::events`) before its Response is ready; this collects it and gives it to
//! [`worker::Context::wait_until`] once the Run answered.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// The background work of one Run. Owns the handle's `background` callback: it is freed with
/// this value (after [`BackgroundWork::keep_alive`]), not left to the JS garbage collector.
#[derive(Debug)]
pub(crate) struct BackgroundWork {
    work: Rc<RefCell<Vec<Promise>>>,
    collect: Closure<dyn FnMut(JsValue)>,
}

impl Default for BackgroundWork {
    fn default() -> BackgroundWork {
        let work: Rc<RefCell<Vec<Promise>>> = Rc::default();
        let collect = {
            let work = Rc::clone(&work);
            Closure::<dyn FnMut(JsValue)>::new(move |promise: JsValue| {
                work.borrow_mut().push(Promise::resolve(&promise))
            })
        };
        BackgroundWork { work, collect }
    }
}

impl BackgroundWork {
    /// The events handle the Run reports to: an object whose `background(work)` collects `work`.
    /// The Run hands its work over before it answers, so before [`BackgroundWork::keep_alive`].
    pub(crate) fn events_handle(&self) -> JsValue {
        let handle = Object::new();
        // Setting a property on a fresh plain object cannot fail.
        let _ = Reflect::set(&handle, &JsValue::from_str("background"), self.collect.as_ref());
        handle.into()
    }

    /// Hands every collected piece of work to `ctx`'s `waitUntil`, then frees the callback. A
    /// rejection there is already reported by the Run itself (the runtime's `report`,
    /// `console.warn` without a handle).
    pub(crate) fn keep_alive(self, ctx: &worker::Context) {
        for promise in self.work.take() {
            ctx.wait_until(async move {
                let _ = JsFuture::from(promise).await;
            });
        }
    }
}
