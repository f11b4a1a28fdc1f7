//! The state of a Box's container as its `Sandbox` Durable Object records it (`getState()`, an
//! RPC the SDK's `Container` base class exposes): whether the container has stopped, which a
//! command stream that stays open after the container died does not tell.
//!
//! Provider layer, pure. Mirrors `@cloudflare/containers` 0.3 (`ContainerState`, set from the
//! container's `monitor()`: `stopped_with_code` when it exited, `stopped` when it was gone).
//! Upstream vocabulary (`status`, `exitCode`) stays here.

use serde::Deserialize;

use crate::error::{Error, ErrorCode, Result};

/// `await stub.getState()`.
///
/// ```ts
/// { status: 'running' | 'healthy' | 'stopping' | 'stopped' | 'stopped_with_code',
///   lastChange: number /* ms since the epoch */, exitCode?: number }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    /// The recorded status.
    pub status: String,
    /// The container's exit code (with `stopped_with_code` only).
    #[serde(default)]
    pub exit_code: Option<i32>,
}

impl ContainerState {
    /// Reads the JSON text of a `getState()` answer.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when it is not that shape.
    pub fn from_json(text: &str) -> Result<ContainerState> {
        serde_json::from_str(text).map_err(|e| {
            Error::new(
                ErrorCode::TransportError,
                format!("the Durable Object answered getState() with an unexpected shape: {e}"),
            )
        })
    }

    /// Whether the container has stopped (`stopped` or `stopped_with_code`): no command of it
    /// can still finish. `stopping` is not yet stopped.
    pub fn has_stopped(&self) -> bool {
        matches!(self.status.as_str(), "stopped" | "stopped_with_code")
    }

    /// `container state <status>[, exit code <n>]`, for an error's message.
    pub fn describe(&self) -> String {
        match self.exit_code {
            Some(code) => format!("container state {}, exit code {code}", self.status),
            None => format!("container state {}", self.status),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_container_that_exited_has_stopped_and_says_its_exit_code() {
        let state =
            ContainerState::from_json(r#"{"status":"stopped_with_code","lastChange":1765000000000,"exitCode":137}"#)
                .unwrap();
        assert!(state.has_stopped());
        assert_eq!(state.describe(), "container state stopped_with_code, exit code 137");
        let gone = ContainerState::from_json(r#"{"status":"stopped","lastChange":1}"#).unwrap();
        assert!(gone.has_stopped());
        assert_eq!(gone.describe(), "container state stopped");
    }

    #[test]
    fn a_running_healthy_or_stopping_container_has_not_stopped() {
        for status in ["running", "healthy", "stopping"] {
            let state = ContainerState::from_json(&format!(r#"{{"status":"{status}","lastChange":1}}"#)).unwrap();
            assert!(!state.has_stopped(), "{status}");
        }
    }

    #[test]
    fn another_shape_is_a_transport_error() {
        let error = ContainerState::from_json("null").unwrap_err();
        assert_eq!(error.code(), ErrorCode::TransportError);
        assert_eq!(ContainerState::from_json(r#"{"lastChange":1}"#).unwrap_err().code(), ErrorCode::TransportError);
    }
}
