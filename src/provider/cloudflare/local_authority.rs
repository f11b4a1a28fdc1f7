//! The executionAuthority of Cloudflare Boxes that run on a local Box host (`wrangler dev` with
//! `SANDBOX_LOCAL_URL`/`SANDBOX_LOCAL_TOKEN`): the host's own report, since the Box is a local Box
//! (its isolation and network are the host's), never the fixed `container` of a real Cloudflare
//! container.

use web_sys::AbortSignal;

use crate::error::{Error, ErrorCode, Operation, Result};
use crate::http::fetch::{body_bytes_capped, Fetcher, HttpRequest};
use crate::http::retry::{RequestSafety, RetryPolicy};
use crate::provider::ProviderKind;
use crate::session::ExecutionAuthority;

/// Largest report read (bytes); the host's answers are a few hundred.
const MAX_REPORT_BYTES: u64 = 64 * 1024;

fn transport(message: String, token: &str) -> Error {
    Error::new(ErrorCode::TransportError, crate::error::redact(&message, &[token]))
        .with_provider(ProviderKind::Cloudflare)
        .with_operation(Operation::Resolve)
}

/// `GET <base_url>/_vite-hub/execution-authority` with the host's bearer token: what a container
/// Box of the host gets (its Cloudflare Boxes are created with the default network policy).
///
/// # Errors
/// `SANDBOX_TRANSPORT_ERROR` for a failed request, a non-2xx answer or a report that is not of the
/// contract's shape.
pub async fn local_host_authority(base_url: &str, token: &str, fetcher: &Fetcher, signal: Option<&AbortSignal>) -> Result<ExecutionAuthority> {
    let request = HttpRequest {
        method: "GET",
        url: format!("{}/_vite-hub/execution-authority", base_url.trim_end_matches('/')),
        headers: vec![("authorization", format!("Bearer {token}"))],
        body: None,
    };
    let response = fetcher
        .send(&request, &RetryPolicy::default(), RequestSafety::Idempotent, signal)
        .await
        .map_err(|e| transport(format!("resolve request to the local Box host failed: {}", e.describe()), token))?;
    if !response.ok() {
        return Err(transport(format!("the local Box host answered {} to resolve", response.status()), token));
    }
    let bytes = match body_bytes_capped(&response, MAX_REPORT_BYTES).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(size)) => return Err(transport(format!("the local Box host answered resolve with {size} bytes or more"), token)),
        Err(e) => return Err(transport(format!("resolve answer of the local Box host could not be read: {}", e.describe()), token)),
    };
    let report: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| transport(format!("the local Box host answered resolve with invalid JSON: {e}"), token))?;
    ExecutionAuthority::from_report(&report).map_err(|e| e.with_provider(ProviderKind::Cloudflare))
}
