//! The interactive-terminal request of the Vercel protocol, as `@vercel/sandbox` 3.5.0
//! `openInteractive()` sends it: `POST /v2/sandboxes/sessions/{id}/interactive`, body `{}`, answer
//! `{ url, token }` ([`InteractiveSessionResponse`]). The local Box host serves the same route and
//! also reads the optional fields of [`InteractiveRequest`].

use web_sys::AbortSignal;

use super::client::VercelClient;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::http::retry::RequestSafety;
use vite_hub_sandbox_core::provider::vercel::interactive::{InteractiveRequest, InteractiveSessionResponse};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

impl VercelClient {
    /// Opens an interactive terminal of session `session_id`: `POST
    /// /v2/sandboxes/sessions/{id}/interactive` with `request` (`{}` unless it fixes the command
    /// or size). Not retried: each answer is a new token.
    ///
    /// # Errors
    /// `SANDBOX_NOT_SUPPORTED` (`operation` `openInteractive`) for a fixed command or size on
    /// Vercel, whose API takes them in the socket's `start` message (nothing is sent), and for a
    /// host that answers 501 (no terminals there: the local Box host under Seatbelt); the
    /// provider's status errors (as every request of this client); `SANDBOX_TRANSPORT_ERROR` for an
    /// answer without `url` and `token`.
    pub async fn open_interactive(
        &self,
        session_id: &str,
        request: &InteractiveRequest,
        signal: Option<&AbortSignal>,
    ) -> Result<InteractiveSessionResponse> {
        if self.kind() == ProviderKind::Vercel && !request.is_empty() {
            return Err(Error::new(
                ErrorCode::NotSupported,
                "the vercel provider's openInteractive takes no command, args, cols or rows: Vercel's API starts the terminal from the WebSocket's first message, so send {type: 'start', command, args, cols, rows} there",
            )
            .with_provider(ProviderKind::Vercel)
            .with_operation(Operation::OpenInteractive));
        }
        let http = self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/interactive"), request)?;
        let response =
            self.send(&http, RequestSafety::NonIdempotent, Operation::OpenInteractive, signal).await.map_err(|e| {
                // 501: this host has no terminals (the local Box host under Seatbelt, or without
                // util-linux `script`); its message says why.
                if e.upstream_status() == Some(501) {
                    Error::new(ErrorCode::NotSupported, e.message().to_owned())
                        .with_provider(self.kind())
                        .with_operation(Operation::OpenInteractive)
                } else {
                    e
                }
            })?;
        let answer = self.json(&response, Operation::OpenInteractive).await?;
        serde_json::from_value(answer).map_err(|e| self.unexpected_body(Operation::OpenInteractive, &e))
    }
}
