//! `http::timer` and `AbortWait`: a dropped timer never calls back, and a dropped wait or sleep
//! settles its promise, so no `JsFuture` of it (and none of its closures) is left pending for good
//! (issue 32, item 5).
use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Array, Promise};
use vite_hub_sandbox::http::fetch::AbortWait;
use vite_hub_sandbox::http::timer::{sleep, Sleep, Timer};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

/// Whether `promise` settled within 200 ms.
async fn settles_within_200_ms(promise: &Promise) -> bool {
    let pending = Promise::new(&mut |resolve, _reject| {
        let fire: js_sys::Function =
            JsValue::from(resolve.bind1(&JsValue::NULL, &JsValue::from_str("pending"))).unchecked_into();
        vite_hub_sandbox::sys::set_timeout(&fire, 200.0);
    });
    JsFuture::from(Promise::race(&Array::of2(promise, &pending)))
        .await
        .ok()
        .and_then(|value| value.as_string())
        .as_deref()
        != Some("pending")
}

#[wasm_bindgen_test]
async fn a_kept_timer_calls_back_and_a_dropped_one_never_does() {
    let (kept, dropped) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let kept_timer = Timer::once(
        {
            let kept = kept.clone();
            move || kept.set(true)
        },
        10,
    );
    drop(Timer::once(
        {
            let dropped = dropped.clone();
            move || dropped.set(true)
        },
        10,
    ));
    sleep(60.0).await;
    assert!(kept.get(), "the kept timer called back");
    assert!(!dropped.get(), "the dropped timer never called back");
    drop(kept_timer);
}

#[wasm_bindgen_test]
async fn a_dropped_sleep_settles_its_promise_at_once() {
    let sleep = Sleep::new(60_000.0);
    let promise = sleep.promise().clone();
    drop(sleep);
    assert!(settles_within_200_ms(&promise).await);
}

#[wasm_bindgen_test]
async fn a_dropped_abort_wait_settles_its_promise_and_leaves_the_signal_alone() {
    let controller = web_sys::AbortController::new().unwrap();
    let wait = AbortWait::new(&controller.signal());
    let promise = wait.promise().clone();
    drop(wait);
    assert!(settles_within_200_ms(&promise).await);
    assert!(!controller.signal().aborted());
}

#[wasm_bindgen_test]
async fn an_abort_wait_resolves_when_its_signal_fires() {
    let controller = web_sys::AbortController::new().unwrap();
    let wait = AbortWait::new(&controller.signal());
    controller.abort();
    assert!(settles_within_200_ms(wait.promise()).await);
}
