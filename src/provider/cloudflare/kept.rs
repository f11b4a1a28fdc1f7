//! Kept Boxes in this isolate: the Runs on one `sandboxId` take turns, one [`Turn`] at a time,
//! and the folders of this isolate's Runs that a late staging write may have created again are
//! remembered for the next Run on that Box to remove. Only this isolate's own Runs' folders are
//! recorded: a Run never sweeps folders of Runs of other isolates sharing the `sandboxId`.

use std::cell::RefCell;

use web_sys::AbortSignal;

use crate::http::fetch::sleep_unless_aborted;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// How often a Run waiting for a kept Box checks whether it is free, in ms.
const TURN_POLL_MS: f64 = 50.0;

thread_local! {
    /// The kept Boxes (by binding or host, and id) a Run of this isolate holds now: Runs on the
    /// same `sandboxId` wait in turn.
    static KEPT_BOXES_IN_USE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// `(kept Box key, Run folder)`: folders of Runs of this isolate cut while their staging
    /// write was on its way. The container's `/api/write` creates parent directories, so that
    /// write may still arrive after the Run's clean-up and create the folder again; the next
    /// Run on the Box removes it with its own.
    static CUT_RUN_FOLDERS: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

/// A Run's turn on a kept Box; dropping it frees the Box for the next Run.
#[derive(Debug)]
pub(super) struct Turn(String);

impl Turn {
    /// Takes the recorded folders of earlier Runs on this kept Box that were cut during their
    /// staging write (absolute Box paths): the caller removes them, or records them again.
    pub(super) fn take_cut_run_folders(&self) -> Vec<String> {
        CUT_RUN_FOLDERS.with(|cut| {
            let mut cut = cut.borrow_mut();
            let (mine, others): (Vec<_>, Vec<_>) = cut.drain(..).partition(|(key, _)| *key == self.0);
            *cut = others;
            mine.into_iter().map(|(_, folder)| folder).collect()
        })
    }

    /// Records `folders` (absolute Box paths of this isolate's Runs on this kept Box) for the
    /// next Run on the Box to remove when it gives the Box back.
    pub(super) fn record_cut_run_folders(&self, folders: impl IntoIterator<Item = String>) {
        CUT_RUN_FOLDERS.with(|cut| {
            let mut cut = cut.borrow_mut();
            for folder in folders {
                if !cut.iter().any(|(key, known)| *key == self.0 && *known == folder) {
                    cut.push((self.0.clone(), folder));
                }
            }
        });
    }
}

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
