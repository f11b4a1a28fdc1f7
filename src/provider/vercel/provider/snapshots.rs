//! A Session's snapshots and forks on the Vercel protocol (Vercel, and the local Box host):
//! a Box opened from a Session's snapshot (no fallback to an empty one), a fork of a named
//! sandbox, and the project's snapshots listed and deleted. The requests are
//! `client/snapshots.rs`'s.
//!
//! Source: `shared/reference/vercel-sandbox-protocol.md` §7.1 (create with `source: { type:
//! "snapshot" }`, fork), §7.5.

use std::rc::Rc;

use web_sys::AbortSignal;

use super::{VercelBox, VercelProvider};
use crate::provider::box_session::{BoxSession, BoxSpec, PreparedStart};
use crate::provider::vercel::client::VercelClient;
use crate::provider::vercel::wire::{CreateSandboxRequest, SandboxAndSessionResponse};
use vite_hub_sandbox_core::error::Result;

impl VercelBox {
    /// The Box of a create or fork answer.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` for routes of another shape ([`routes_of`](crate::provider::vercel::ports::routes_of)).
    pub(super) fn from_created(
        client: Rc<VercelClient>,
        created: SandboxAndSessionResponse,
        prepared: PreparedStart,
    ) -> Result<VercelBox> {
        Ok(VercelBox {
            routes: crate::provider::vercel::ports::routes_of(client.kind(), &created.routes)?,
            client,
            name: super::sandbox_name(&created),
            session_id: created.session.id,
            cwd: created.session.cwd,
            execution_authority: created.session.execution_authority,
            prepared,
            expires_at_ms: None,
        })
    }
}

impl VercelProvider {
    /// Opens a Box from the Session snapshot `snapshot_id`: `POST /v3/sandboxes` with `source:
    /// { type: "snapshot", snapshotId }` (§7.1), the project, lifetime and network policy of any
    /// Session. A snapshot the provider does not have is `SANDBOX_NOT_FOUND`, never an empty Box.
    ///
    /// # Errors
    /// `SANDBOX_NOT_FOUND` (404, 410 `snapshot_not_found`); `SANDBOX_TRANSPORT_ERROR` /
    /// `SANDBOX_PROVIDER_UNAVAILABLE`.
    pub(super) async fn open_from_snapshot(
        &self,
        spec: &BoxSpec,
        snapshot_id: &str,
        signal: Option<&AbortSignal>,
    ) -> Result<Box<dyn BoxSession>> {
        let body = CreateSandboxRequest {
            project_id: self.project_id.clone(),
            timeout: spec.lifetime_ms,
            network_policy: self.network_policy.clone(),
            persistent: Some(false),
            source: Some(serde_json::json!({"type": "snapshot", "snapshotId": snapshot_id})),
            ports: spec.ports.clone(),
            ..CreateSandboxRequest::default()
        };
        let created = self.client.create_from_session_snapshot(&body, snapshot_id, signal).await?;
        Ok(Box::new(VercelBox::from_created(self.client.clone(), created, PreparedStart::Empty)?))
    }

    /// Forks the sandbox named `source` (`POST /v2/sandboxes/{source}/fork`, §7.1) with the
    /// lifetime `spec` asks for (else the source's).
    ///
    /// # Errors
    /// Those of [`VercelClient::fork_sandbox`].
    pub(super) async fn fork_box(
        &self,
        source: &str,
        spec: &BoxSpec,
        signal: Option<&AbortSignal>,
    ) -> Result<Box<dyn BoxSession>> {
        let created = self.client.fork_sandbox(source, self.project_id.as_deref(), spec.lifetime_ms, signal).await?;
        Ok(Box::new(VercelBox::from_created(self.client.clone(), created, PreparedStart::Empty)?))
    }
}
