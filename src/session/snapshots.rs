//! A Session's snapshot and a fork of its Box: [`SessionCore::snapshot`] (which stops the Box, as
//! every provider's snapshot does) and [`SessionCore::fork`] (a new Session on a copy of a
//! running Box, which keeps running).
//!
//! Source: vercel-sandbox-protocol.md §6.9 (a snapshot stops the session), §7.1 (fork), §7.5.

use web_sys::AbortSignal;

use super::SessionCore;
use crate::provider::box_session::SnapshotInfo;
use crate::provider::{BoxSpec, Provider};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::session;

impl SessionCore {
    /// Takes a snapshot of the Box's files (the work directory on the local Box host; the whole
    /// filesystem on Vercel), which stops the Box: the Session is then `Stopped` and closed, every
    /// later operation rejects with `SANDBOX_INVALID_STATE` naming the snapshot, and `close()`
    /// sends nothing. `expiration_ms`: how long the provider keeps it (ms; 0 = never; absent: the
    /// provider's default, 30 days after its last use on Vercel, until evicted on the local host).
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` (409) for a closed or expired Session; `SANDBOX_NOT_SUPPORTED` on
    /// Cloudflare; the provider's errors ([`SessionCore::failed`]; a refusal of the local Box host,
    /// 422 `snapshot_refused`, leaves its Box stopped, and the Session then `failed`).
    pub async fn snapshot(&self, expiration_ms: Option<u64>) -> Result<SnapshotInfo> {
        self.check_open("snapshot")?;
        self.snapshot_checked(expiration_ms).await
    }

    /// [`SessionCore::snapshot`] without the state check (made when the call was).
    ///
    /// # Errors
    /// Those of [`SessionCore::snapshot`] but `SANDBOX_INVALID_STATE` of a closed Session.
    pub async fn snapshot_checked(&self, expiration_ms: Option<u64>) -> Result<SnapshotInfo> {
        match self.session.snapshot(expiration_ms, None).await {
            Ok(info) => {
                self.state.borrow_mut().snapshotted();
                Ok(info)
            }
            Err(error) => {
                // The provider stops the Box before it copies (the local Box host): a refused
                // snapshot leaves it stopped, and the Session failed rather than running.
                if error.upstream_status() == Some(422) {
                    let mut state = self.state.borrow_mut();
                    state.closed = true;
                    state.status = session::SessionStatus::Failed;
                }
                Err(self.failed("snapshot", error))
            }
        }
    }

    /// A new Session on a fork of the running Box named `source` (a Vercel sandbox name; on the
    /// local Box host a Session's `id`), for `spec` (its lifetime: `spec.lifetime_ms`, else 300000
    /// ms, sent explicitly). The source keeps running. On the local Box host the fork's work
    /// directory is a copy of the source's as it is now; on Vercel the fork starts from the
    /// source's current snapshot, or with none from the source's image and config (the SDK's
    /// `Sandbox.fork`).
    ///
    /// # Errors
    /// `SANDBOX_NOT_FOUND` for an unknown source; `SANDBOX_NOT_SUPPORTED` on Cloudflare (`operation`
    /// `fork`); those of [`SessionCore::open`].
    pub async fn fork(
        provider: &dyn Provider,
        source: &str,
        spec: &BoxSpec,
        signal: Option<&AbortSignal>,
    ) -> Result<SessionCore> {
        if signal.is_some_and(AbortSignal::aborted) {
            return Err(Error::new(ErrorCode::TransportError, "forking the Session was aborted by its signal")
                .with_provider(provider.kind())
                .with_operation(Operation::Fork));
        }
        provider.ensure_ready().await?;
        let spec =
            BoxSpec { lifetime_ms: Some(spec.lifetime_ms.unwrap_or(session::DEFAULT_LIFETIME_MS)), ..spec.clone() };
        let session = provider.fork(source, &spec, signal).await?;
        SessionCore::adopt(provider, session, &spec, signal).await
    }

    /// The name a fork of this Session's Box gives as its source ([`SessionCore::fork`]); `None`
    /// on a provider without forks.
    pub fn sandbox_name(&self) -> Option<&str> {
        self.session.sandbox_name()
    }
}
