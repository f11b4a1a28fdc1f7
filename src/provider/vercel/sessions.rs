//! The Vercel requests of a Session's network policy and of reattaching: `POST
//! …/network-policy`, `GET /v2/sandboxes/{name}` and `GET /v2/sandboxes`, as `@vercel/sandbox`
//! 3.5.0 sends them (`updateNetworkPolicy`, `Sandbox.get`, `Sandbox.list`).
//!
//! Source: `shared/reference/vercel-sandbox-protocol.md` §6.7 (policy shapes), §7.1 (get, list),
//! §7.2 (network-policy).

use serde_json::Value;
use web_sys::AbortSignal;

use super::client::{VercelClient, READ_DEADLINE_MS};
use super::wire::SandboxAndSessionResponse;
use crate::http::deadline::Deadline;
use crate::provider::box_session::BoxListing;
use vite_hub_sandbox_core::error::{Operation, Result};
use vite_hub_sandbox_core::http::retry::RequestSafety;

/// `?key=value` (or `&key=value` after a query) appended to `url`, the value URI-encoded.
fn push_query(url: &mut String, key: &str, value: &str) {
    url.push(if url.contains('?') { '&' } else { '?' });
    url.push_str(key);
    url.push('=');
    url.push_str(&js_sys::encode_uri_component(value).as_string().unwrap_or_default());
}

/// A number field of `value` (ms since the epoch, or ms).
fn number(value: &Value, key: &str) -> Option<f64> {
    value.get(key).and_then(Value::as_f64)
}

/// When a running session's lifetime ends, in ms since the Unix epoch: `(startedAt ??
/// createdAt) + timeout`, as the SDK's `expiresAt` reads it (§6.9).
pub fn session_expires_at_ms(session: &Value) -> Option<f64> {
    let started = number(session, "startedAt").or_else(|| number(session, "createdAt"))?;
    Some(started + number(session, "timeout")?)
}

impl VercelClient {
    /// Replaces a session's network policy: `POST /v2/sandboxes/sessions/{id}/network-policy`
    /// with `policy` in the request shape (§6.7) → `{ session }` (its `executionAuthority` on the
    /// local Box host). Bounded by [`READ_DEADLINE_MS`].
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` (with the upstream status).
    pub async fn update_network_policy(
        &self,
        session_id: &str,
        policy: &Value,
        signal: Option<&AbortSignal>,
    ) -> Result<Value> {
        let op = Operation::UpdateNetworkPolicy;
        let request =
            self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/network-policy"), policy)?;
        let deadline = Deadline::new(signal, READ_DEADLINE_MS);
        let signal = deadline.signal();
        let sent = async {
            let response = self.send(&request, RequestSafety::Idempotent, op, signal.as_ref()).await?;
            let value = self.json(&response, op).await?;
            value.get("session").cloned().ok_or_else(|| self.unexpected_body(op, &"no session"))
        };
        sent.await.map_err(|e| self.bounded(op, &deadline, e))
    }

    /// The sandbox `name` and its current session, as `Sandbox.get({ name })` asks for it (no
    /// `resume`): `GET /v2/sandboxes/{name}?projectId=<p>` → `{ sandbox, session, routes }`,
    /// with the session's raw JSON. Bounded by [`READ_DEADLINE_MS`].
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` (404 for an unknown name) / `SANDBOX_PROVIDER_UNAVAILABLE`.
    pub async fn get_sandbox(
        &self,
        name: &str,
        project_id: Option<&str>,
        signal: Option<&AbortSignal>,
    ) -> Result<(SandboxAndSessionResponse, Value)> {
        let op = Operation::Attach;
        let encoded = js_sys::encode_uri_component(name).as_string().unwrap_or_default();
        let mut request = self.request("GET", &format!("/v2/sandboxes/{encoded}"), "application/json", None);
        if let Some(project) = project_id {
            push_query(&mut request.url, "projectId", project);
        }
        let deadline = Deadline::new(signal, READ_DEADLINE_MS);
        let signal = deadline.signal();
        let got = async {
            let response = self.send(&request, RequestSafety::Idempotent, op, signal.as_ref()).await?;
            let value = self.json(&response, op).await?;
            let parsed = SandboxAndSessionResponse::from_value(&value).map_err(|why| self.unexpected_body(op, &why))?;
            Ok((parsed, value.get("session").cloned().unwrap_or_default()))
        };
        got.await.map_err(|e| self.bounded(op, &deadline, e))
    }

    /// The project's sandboxes, newest first, one page of up to 100: `GET
    /// /v2/sandboxes?project=<p>&limit=100&sortBy=createdAt&sortOrder=desc` (`Sandbox.list`).
    /// Bounded by [`READ_DEADLINE_MS`].
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE`.
    pub async fn list_sandboxes(
        &self,
        project_id: Option<&str>,
        signal: Option<&AbortSignal>,
    ) -> Result<Vec<BoxListing>> {
        let op = Operation::ListSessions;
        let mut request = self.request("GET", "/v2/sandboxes", "application/json", None);
        if let Some(project) = project_id {
            push_query(&mut request.url, "project", project);
        }
        for (key, value) in [("limit", "100"), ("sortBy", "createdAt"), ("sortOrder", "desc")] {
            push_query(&mut request.url, key, value);
        }
        let deadline = Deadline::new(signal, READ_DEADLINE_MS);
        let signal = deadline.signal();
        let listed = async {
            let response = self.send(&request, RequestSafety::Idempotent, op, signal.as_ref()).await?;
            self.json(&response, op).await
        };
        let value = listed.await.map_err(|e| self.bounded(op, &deadline, e))?;
        let items = value
            .get("sandboxes")
            .and_then(Value::as_array)
            .ok_or_else(|| self.unexpected_body(op, &"no sandboxes array"))?;
        Ok(items
            .iter()
            .filter_map(|sandbox| {
                let status = sandbox.get("status").and_then(Value::as_str).unwrap_or("unknown").to_owned();
                let running = status == "running";
                Some(BoxListing {
                    id: sandbox.get("name")?.as_str()?.to_owned(),
                    created_at_ms: number(sandbox, "createdAt"),
                    expires_at_ms: running.then(|| number(sandbox, "expiresAt")).flatten(),
                    status,
                })
            })
            .collect())
    }
}
