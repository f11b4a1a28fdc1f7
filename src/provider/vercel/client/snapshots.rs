//! The requests of a Session's snapshots and forks: `snapshot()` with its expiration, the
//! project's snapshots listed and deleted, a fork of a named sandbox.
//!
//! Source: `shared/reference/vercel-sandbox-protocol.md` §6.5 (Snapshot), §7.1 (fork), §7.5
//! (snapshots), as `@vercel/sandbox` 3.5.0 sends them (`api-client.js` `createSnapshot`,
//! `listSnapshots`, `deleteSnapshot`, `forkSandbox`). On the local Box host (`kind` local) the
//! snapshot routes are held to Session snapshots with the host's own `kind=session` query, which
//! Vercel does not have and is never sent to.

use serde_json::Value;
use web_sys::AbortSignal;

use super::{VercelClient, MAX_ANSWER_BYTES, READ_DEADLINE_MS, SNAPSHOT_DEADLINE_MS};
use crate::http::deadline::Deadline;
use crate::provider::box_session::SnapshotInfo;
use crate::provider::vercel::wire::SandboxAndSessionResponse;
use vite_hub_sandbox_core::error::{ErrorCode, Operation, Result};
use vite_hub_sandbox_core::http::retry::RequestSafety;
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// A `Snapshot` record (§6.5) as [`SnapshotInfo`]; `None` without an `id`.
fn snapshot_info(value: &Value) -> Option<SnapshotInfo> {
    let number = |key: &str| value.get(key).and_then(Value::as_u64);
    Some(SnapshotInfo {
        id: value.get("id")?.as_str()?.to_owned(),
        source_session_id: value.get("sourceSessionId").and_then(Value::as_str).unwrap_or_default().to_owned(),
        size_bytes: number("sizeBytes").unwrap_or(0),
        created_at: number("createdAt").unwrap_or(0),
        expires_at: number("expiresAt"),
    })
}

impl VercelClient {
    /// `url` with `key=value` (value URI-encoded) added to its query.
    fn with_query(url: &mut String, key: &str, value: &str) {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(key);
        url.push('=');
        url.push_str(&js_sys::encode_uri_component(value).as_string().unwrap_or_default());
    }

    /// Snapshots a session, which stops it: `POST /v2/sandboxes/sessions/{id}/snapshot`, no body
    /// without `expiration_ms`, else `{ "expiration": ms }` (0 = never), as the SDK sends it →
    /// `{ snapshot, session }`. Never re-sent; bounded by [`SNAPSHOT_DEADLINE_MS`].
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` (with the upstream status: 410
    /// for a stopped session, 422 `snapshot_refused` from the local Box host), or a 2xx without a
    /// snapshot.
    pub async fn take_snapshot(
        &self,
        session_id: &str,
        expiration_ms: Option<u64>,
        signal: Option<&AbortSignal>,
    ) -> Result<SnapshotInfo> {
        let path = format!("/v2/sandboxes/sessions/{session_id}/snapshot");
        let request = match expiration_ms {
            Some(ms) => self.json_request("POST", &path, &serde_json::json!({ "expiration": ms }))?,
            None => self.request("POST", &path, "application/json", None),
        };
        let deadline = Deadline::new(signal, SNAPSHOT_DEADLINE_MS);
        let bounded = deadline.signal();
        let taken = async {
            let response =
                self.send(&request, RequestSafety::NonIdempotent, Operation::Snapshot, bounded.as_ref()).await?;
            let value = self.json(&response, Operation::Snapshot).await?;
            value.get("snapshot").and_then(snapshot_info).ok_or_else(|| {
                self.error(Operation::Snapshot, format!("{} answered a snapshot without an id", self.kind.as_str()))
            })
        };
        taken.await.map_err(|e| self.bounded(Operation::Snapshot, &deadline, e))
    }

    /// The project's snapshots, newest first, one page of up to 100: `GET
    /// /v2/sandboxes/snapshots?project=<p>&limit=100` (the local Box host: `&kind=session`).
    /// Bounded by [`READ_DEADLINE_MS`].
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE`.
    pub async fn session_snapshots(
        &self,
        project_id: Option<&str>,
        signal: Option<&AbortSignal>,
    ) -> Result<Vec<SnapshotInfo>> {
        let mut request = self.request("GET", "/v2/sandboxes/snapshots", "application/json", None);
        if let Some(project) = project_id {
            Self::with_query(&mut request.url, "project", project);
        }
        Self::with_query(&mut request.url, "limit", "100");
        if self.kind == ProviderKind::Local {
            Self::with_query(&mut request.url, "kind", "session");
        }
        let deadline = Deadline::new(signal, READ_DEADLINE_MS);
        let bounded = deadline.signal();
        let listed = async {
            let response =
                self.send(&request, RequestSafety::Idempotent, Operation::Snapshot, bounded.as_ref()).await?;
            self.json(&response, Operation::Snapshot).await
        };
        let value = listed.await.map_err(|e| self.bounded(Operation::Snapshot, &deadline, e))?;
        let items = value.get("snapshots").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        Ok(items.iter().filter_map(snapshot_info).collect())
    }

    /// Deletes a Session snapshot: `DELETE /v2/sandboxes/snapshots/{id}` (the local Box host:
    /// `?kind=session`, so a prepared project's is answered 404); `false` on 404. Bounded by
    /// [`READ_DEADLINE_MS`].
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE`.
    pub async fn delete_session_snapshot(&self, id: &str, signal: Option<&AbortSignal>) -> Result<bool> {
        let encoded = js_sys::encode_uri_component(id).as_string().unwrap_or_default();
        let mut request =
            self.request("DELETE", &format!("/v2/sandboxes/snapshots/{encoded}"), "application/json", None);
        if self.kind == ProviderKind::Local {
            Self::with_query(&mut request.url, "kind", "session");
        }
        let deadline = Deadline::new(signal, READ_DEADLINE_MS);
        let bounded = deadline.signal();
        let deleted = async {
            let found = self.send_tolerating(&request, Operation::Snapshot, 404, bounded.as_ref()).await?;
            if let Some(response) = &found {
                self.answer_bytes(response, Operation::Snapshot, MAX_ANSWER_BYTES).await?;
            }
            Ok(found.is_some())
        };
        deleted.await.map_err(|e| self.bounded(Operation::Snapshot, &deadline, e))
    }

    /// Forks the named sandbox `source`: `POST /v2/sandboxes/{source}/fork?projectId=<p>`, body
    /// `{ timeout? }` (the SDK's `Sandbox.fork` with no other override sends `{}`) →
    /// `{ sandbox, session, routes }`. Never re-sent (a retry would make a second fork); bounded
    /// as a create.
    ///
    /// # Errors
    /// `SANDBOX_NOT_FOUND` when the provider knows no sandbox `source` (404);
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` otherwise (410 for a stopped source
    /// on the local Box host).
    pub async fn fork_sandbox(
        &self,
        source: &str,
        project_id: Option<&str>,
        timeout_ms: Option<u64>,
        signal: Option<&AbortSignal>,
    ) -> Result<SandboxAndSessionResponse> {
        let encoded = js_sys::encode_uri_component(source).as_string().unwrap_or_default();
        let mut body = serde_json::Map::new();
        if let Some(ms) = timeout_ms {
            body.insert("timeout".to_owned(), ms.into());
        }
        let mut request = self.json_request("POST", &format!("/v2/sandboxes/{encoded}/fork"), &Value::Object(body))?;
        if let Some(project) = project_id {
            Self::with_query(&mut request.url, "projectId", project);
        }
        let deadline = Deadline::new(signal, super::create_deadline_ms(self.kind, timeout_ms));
        let bounded = deadline.signal();
        let forked = async {
            let response = self
                .send(&request, RequestSafety::NonIdempotent, Operation::Fork, bounded.as_ref())
                .await
                .map_err(|error| match error.upstream_status() {
                Some(404) => vite_hub_sandbox_core::error::Error::new(
                    ErrorCode::NotFound,
                    format!(
                        "forkSandboxSession: the {} provider has no sandbox named {source}",
                        self.kind.as_str(),
                        source = vite_hub_sandbox_core::error::quoted(source)
                    ),
                )
                .with_provider(self.kind)
                .with_operation(Operation::Fork)
                .with_status(404),
                _ => error,
            })?;
            let value = self.json(&response, Operation::Fork).await?;
            SandboxAndSessionResponse::from_value(&value).map_err(|why| self.unexpected_body(Operation::Fork, &why))
        };
        forked.await.map_err(|e| self.bounded(Operation::Fork, &deadline, e))
    }
}

impl VercelClient {
    /// Creates a Box from a Session's snapshot: `POST /v3/sandboxes` with `body` (its `source`
    /// names the snapshot; the local Box host also gets the private key `__snapshotKind:
    /// "session"`, so a prepared project's snapshot is answered as an unknown one).
    ///
    /// # Errors
    /// `SANDBOX_NOT_FOUND` when the provider has no such snapshot (404, 410 `snapshot_not_found`);
    /// those of [`VercelClient::create_sandbox`] otherwise.
    pub async fn create_from_session_snapshot(
        &self,
        body: &crate::provider::vercel::wire::CreateSandboxRequest,
        snapshot_id: &str,
        signal: Option<&AbortSignal>,
    ) -> Result<SandboxAndSessionResponse> {
        let mut value = serde_json::to_value(body).map_err(|e| {
            vite_hub_sandbox_core::error::Error::new(
                ErrorCode::RuntimeError,
                format!("cannot encode a request body: {e}"),
            )
        })?;
        if let (ProviderKind::Local, Some(object)) = (self.kind, value.as_object_mut()) {
            object.insert("__snapshotKind".to_owned(), "session".into());
        }
        let request = self.json_request("POST", "/v3/sandboxes", &value)?;
        let deadline = Deadline::new(signal, super::create_deadline_ms(self.kind, body.timeout));
        let bounded = deadline.signal();
        let created = async {
            let response = self
                .send(&request, RequestSafety::Idempotent, Operation::Create, bounded.as_ref())
                .await
                .map_err(|error| match error.upstream_status() {
                    Some(status @ (404 | 410)) => vite_hub_sandbox_core::error::Error::new(
                        ErrorCode::NotFound,
                        format!(
                            "openSandboxSession: the {} provider has no snapshot {id} (deleted, expired, never taken, or not a Session's)",
                            self.kind.as_str(),
                            id = vite_hub_sandbox_core::error::quoted(snapshot_id)
                        ),
                    )
                    .with_provider(self.kind)
                    .with_operation(Operation::Create)
                    .with_status(status),
                    _ => error,
                })?;
            let value = self.json(&response, Operation::Create).await?;
            SandboxAndSessionResponse::from_value(&value).map_err(|why| self.unexpected_body(Operation::Create, &why))
        };
        created.await.map_err(|e| self.bounded(Operation::Create, &deadline, e))
    }
}
