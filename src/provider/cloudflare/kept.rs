//! Kept Boxes in this isolate: the Runs on one `sandboxId` take turns, one [`Turn`] at a time.

use std::cell::RefCell;

use web_sys::AbortSignal;

use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use crate::http::fetch::sleep_unless_aborted;
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// How often a Run waiting for a kept Box checks whether it is free, in ms.
const TURN_POLL_MS: f64 = 50.0;

thread_local! {
    /// The kept Boxes (by binding or host, and id) a Run of this isolate holds now: Runs on the
    /// same `sandboxId` wait in turn.
    static KEPT_BOXES_IN_USE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// A Run's turn on a kept Box; dropping it frees the Box for the next Run.
#[derive(Debug)]
pub(super) struct Turn(String);

impl Drop for Turn {
    fn drop(&mut self) {
        KEPT_BOXES_IN_USE.with(|boxes| boxes.borrow_mut().retain(|key| *key != self.0));
    }
}

/// Waits for the turn of this Run on the kept Box `key` (the Runs before it in this isolate
/// closed), or for `signal`. It polls on a timer of its own instead of being woken by the
/// Run that frees the Box: workerd ties a promise to the request that created it, cancels a
/// request that waits with no I/O of its own as hung, and would charge the waiter's requests
/// to the other request if that one's close resumed it.
pub(super) async fn wait_for_turn(key: &str, signal: Option<&AbortSignal>) -> Result<Turn> {
    loop {
        let taken = KEPT_BOXES_IN_USE.with(|boxes| {
            let mut boxes = boxes.borrow_mut();
            let free = !boxes.iter().any(|held| held == key);
            if free {
                boxes.push(key.to_owned());
            }
            free
        });
        if taken {
            return Ok(Turn(key.to_owned()));
        }
        sleep_unless_aborted(TURN_POLL_MS, signal).await.map_err(|_| {
            Error::new(ErrorCode::TransportError, "waiting for the kept Box was aborted")
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Create)
        })?;
    }
}
