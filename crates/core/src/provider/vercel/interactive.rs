//! The interactive terminal of the Vercel protocol (`@vercel/sandbox` 3.5.0 `openInteractive()`):
//! `POST /v2/sandboxes/sessions/{id}/interactive`, body `{}`, answer `InteractiveSessionResponse`
//! `{ url, token }`: a WebSocket URL and the token that opens it once
//! (`shared/reference/vercel-sandbox-protocol.md` §7.2; the socket's messages are those of the
//! official Sandbox CLI, `docs/sessions.md#interactive-terminal`).

use serde::{Deserialize, Serialize};

/// Largest terminal size (columns or rows): the kernel's `winsize` holds 16 bits.
pub const MAX_TERMINAL_SIZE: u16 = u16::MAX;

/// Body of `POST …/interactive`. Empty (`{}`, as the SDK sends it) unless the caller fixed the
/// terminal's command or size, which only the local Box host reads (Vercel takes them in the
/// socket's `start` message).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InteractiveRequest {
    /// The program the terminal runs (none: a shell, `bash` or else `sh` on the local Box host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments (only with `command`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// Columns (1–65535; default 80).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    /// Rows (1–65535; default 24).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
}

impl InteractiveRequest {
    /// Whether the body is the SDK's `{}`.
    pub fn is_empty(&self) -> bool {
        self == &InteractiveRequest::default()
    }
}

/// Answer of `POST …/interactive` (the SDK's `InteractiveSessionResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InteractiveSessionResponse {
    /// The WebSocket URL (`wss://…` on Vercel, `ws://127.0.0.1:<port>/…` on the local Box host).
    pub url: String,
    /// The token that opens it: `?token=` on the URL (the CLI) or the `start` message's `token`.
    pub token: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_request_is_an_empty_object_and_fields_are_sent_only_when_set() {
        assert_eq!(serde_json::to_string(&InteractiveRequest::default()).unwrap(), "{}");
        assert!(InteractiveRequest::default().is_empty());
        let fixed = InteractiveRequest {
            command: Some("node".into()),
            args: Some(vec!["-i".into()]),
            cols: Some(120),
            rows: None,
        };
        assert!(!fixed.is_empty());
        assert_eq!(serde_json::to_string(&fixed).unwrap(), r#"{"command":"node","args":["-i"],"cols":120}"#);
    }

    #[test]
    fn the_answer_is_read_as_the_sdk_validates_it() {
        let answer: InteractiveSessionResponse =
            serde_json::from_str(r#"{"url":"wss://s.vercel.run/interactive","token":"t0k","extra":1}"#).unwrap();
        assert_eq!(answer.url, "wss://s.vercel.run/interactive");
        assert_eq!(answer.token, "t0k");
        assert!(serde_json::from_str::<InteractiveSessionResponse>(r#"{"url":"x"}"#).is_err());
    }
}
