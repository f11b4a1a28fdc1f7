//! Noticing a container that died under an open command stream. The stream of a command whose
//! container ended can stay open with nothing more to come (nothing in the Durable Object closes
//! it), which would hold a Run until its Definition timeout; so while the stream is silent, every
//! [`IDLE_CHECK_MS`] the `Sandbox` Durable Object is asked for its container's state
//! ([`ContainerState`]), and a stopped container ends the wait.
//!
//! Provider layer, Cloudflare, Durable Object path only: on the local Box host the host itself
//! ends a stream whose command is gone.

use futures::future::{select, Either, LocalBoxFuture};
use wasm_bindgen_futures::JsFuture;

use super::container_state::ContainerState;
use crate::http::fetch::{js_message, SendError};
use crate::http::timer::Sleep;
use crate::sys::DurableObjectStub;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// How long a command stream may be silent before the container's state is read, in ms.
pub(super) const IDLE_CHECK_MS: f64 = 2_000.0;
/// Bound of one `getState()` call, in ms.
const STATE_DEADLINE_MS: f64 = 5_000.0;

/// What came first on a watched command stream.
#[derive(Debug)]
pub(super) enum Watched {
    /// The pending read finished: a chunk, the end, or its failure.
    Chunk(std::result::Result<Option<Vec<u8>>, SendError>),
    /// The container stopped while the stream was silent.
    Stopped(ContainerState),
}

/// Waits for `read` (the next chunk of a command stream of `stub`'s container); each time it
/// stays silent for [`IDLE_CHECK_MS`], reads the container's state and answers
/// [`Watched::Stopped`] if it has stopped. A state that cannot be read (an object without
/// `getState`, a call past its bound) is no evidence of a death: the wait goes on, bounded by the
/// caller's deadline as before.
pub(super) async fn next_chunk_while_running(
    stub: &DurableObjectStub,
    mut read: LocalBoxFuture<'_, std::result::Result<Option<Vec<u8>>, SendError>>,
) -> Watched {
    loop {
        // Dropped at the end of each turn: its timer is cleared and its promise settled.
        let sleep = Sleep::new(IDLE_CHECK_MS);
        match select(read, JsFuture::from(sleep.promise().clone())).await {
            Either::Left((next, _)) => return Watched::Chunk(next),
            Either::Right((_, pending)) => {
                read = pending;
                if let Ok(state) = container_state(stub).await {
                    if state.has_stopped() {
                        return Watched::Stopped(state);
                    }
                }
            }
        }
    }
}

/// The state of `stub`'s container (RPC `getState()`, bounded by [`STATE_DEADLINE_MS`]).
///
/// # Errors
/// `SANDBOX_TRANSPORT_ERROR` (operation `exec`) when the call fails, does not answer in time,
/// or answers another shape.
pub(super) async fn container_state(stub: &DurableObjectStub) -> Result<ContainerState> {
    let failed = |why: String| {
        Error::new(ErrorCode::TransportError, why)
            .with_provider(ProviderKind::Cloudflare)
            .with_operation(Operation::Exec)
    };
    let promise = stub.get_state().map_err(|e| failed(format!("getState() failed: {}", js_message(&e))))?;
    let bound = Sleep::new(STATE_DEADLINE_MS);
    let answer =
        match select(JsFuture::from(js_sys::Promise::resolve(&promise)), JsFuture::from(bound.promise().clone())).await
        {
            Either::Left((answer, _)) => {
                answer.map_err(|e| failed(format!("getState() failed: {}", js_message(&e))))?
            }
            Either::Right(_) => return Err(failed(format!("getState() did not answer within {STATE_DEADLINE_MS} ms"))),
        };
    let text = js_sys::JSON::stringify(&answer)
        .map_err(|e| failed(format!("getState() answered a value that is not JSON: {}", js_message(&e))))?;
    ContainerState::from_json(&String::from(text))
        .map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(Operation::Exec))
}
