//! The `local` provider's [`Provider`](crate::provider::box_session::Provider) and its Box: what the layers above
//! call, in Boxes, Commands and files.

use futures::future::LocalBoxFuture;
use web_sys::AbortSignal;

use super::{host, LocalOptions};
use crate::http::fetch::Fetcher;
use crate::provider::box_session::{BoxListing, BoxSession, BoxSpec, HostStart, PreparedProject, Provider};
use crate::provider::local::options::InProcessHost;
use crate::provider::vercel::{VercelEndpoint, VercelProvider};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};
use vite_hub_sandbox_core::provider::local::LocalNetworkPolicy;
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::ExecutionAuthority;

/// Opens Boxes on a local Box host.
#[derive(Debug)]
pub struct LocalProvider {
    options: LocalOptions,
    fetcher: Fetcher,
}

impl LocalProvider {
    /// A provider for `options`; requests go through `fetcher`. Starts nothing.
    pub fn new(options: LocalOptions, fetcher: Fetcher) -> LocalProvider {
        LocalProvider { options, fetcher }
    }

    /// The host's endpoint and who sends to it: the configured fetch for `local.baseUrl`, the
    /// in-process host's own Fetch handler when this thread started it (no loopback socket).
    /// Whether the third value is `true`: the host is called in process.
    async fn endpoint(&self) -> Result<(VercelEndpoint, Fetcher, bool)> {
        let (base_url, token, fetcher, in_process) = match &self.options.base_url {
            Some(base_url) => {
                (base_url.clone(), self.options.token.clone().unwrap_or_default(), self.fetcher.clone(), false)
            }
            None => {
                let (host, _) = host::in_process_host(self.options.in_process_host()).await?;
                match host.fetch {
                    Some(fetch) => (host.base_url, host.token, Fetcher::Function(fetch), true),
                    None => (host.base_url, host.token, self.fetcher.clone(), false),
                }
            }
        };
        Ok((VercelEndpoint { base_url, token, team_id: None, project_id: None }, fetcher, in_process))
    }

    /// The Vercel-protocol client of the host (starts the in-process host when needed).
    ///
    /// # Errors
    /// Those of [`host::in_process_host`].
    async fn vercel(&self) -> Result<VercelProvider> {
        let (endpoint, fetcher, in_process) = self.endpoint().await?;
        let provider = VercelProvider::new(
            endpoint,
            self.options.network_policy.map(LocalNetworkPolicy::to_value),
            fetcher,
            ProviderKind::Local,
        );
        // Files reach a host called in process as a plain tar: no gzip on either side.
        Ok(if in_process { provider.with_plain_archives() } else { provider })
    }
}

/// The host's own report, checked against the contract's shape.
fn authority_from(report: &serde_json::Value) -> Result<ExecutionAuthority> {
    ExecutionAuthority::from_report(report).map_err(|e| e.with_provider(ProviderKind::Local))
}

impl Provider for LocalProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Local
    }

    /// Starts the in-process host when none is configured and it is not running yet; what
    /// that cost, for the call that started it.
    ///
    /// # Errors
    /// Those of [`host::in_process_host`].
    fn ensure_ready(&self) -> LocalBoxFuture<'_, Result<Option<HostStart>>> {
        Box::pin(async move {
            if !self.uses_in_process_host() {
                return Ok(None);
            }
            Ok(host::in_process_host(self.options.in_process_host()).await?.1)
        })
    }

    /// Whether no host is configured, so Boxes go to the isolate's in-process one.
    fn uses_in_process_host(&self) -> bool {
        self.options.base_url.is_none()
    }

    /// The `local.isolation` and `local.parked` options (what an in-process host started for it applies).
    fn in_process_host(&self) -> Option<InProcessHost> {
        Some(self.options.in_process_host())
    }

    /// `true`: the host keeps snapshots.
    fn prepares(&self) -> bool {
        true
    }

    /// The host's snapshots (the Vercel protocol's list).
    fn list_prepared<'a>(&'a self, name: Option<&'a str>) -> LocalBoxFuture<'a, Result<Vec<PreparedProject>>> {
        Box::pin(async move { self.vercel().await?.list_prepared(name).await })
    }

    /// Deletes one of the host's snapshots (the Vercel protocol's delete).
    fn drop_prepared<'a>(&'a self, id: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async move { self.vercel().await?.drop_prepared(id).await })
    }

    /// The executionAuthority the host applies to a Box of this provider
    /// (`GET /_vite-hub/execution-authority` with its `networkPolicy`; starts the in-process
    /// host when needed; opens no Box).
    ///
    /// # Errors
    /// Those of [`Provider::ensure_ready`]; `SANDBOX_TRANSPORT_ERROR` for a failed request or
    /// a report that is not of the contract's shape.
    fn execution_authority<'a>(
        &'a self,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        Box::pin(async move { authority_from(&self.vercel().await?.local_host_execution_authority(signal).await?) })
    }

    /// The host's own report for the Box, from its create answer.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when the host reported none or a malformed one.
    fn box_execution_authority<'a>(
        &'a self,
        session: &'a dyn BoxSession,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        let authority = match session.reported_execution_authority() {
            Some(report) => authority_from(report),
            None => Err(Error::new(
                ErrorCode::TransportError,
                "the local Box host reported no executionAuthority for the Box",
            )
            .with_provider(ProviderKind::Local)),
        };
        Box::pin(std::future::ready(authority))
    }

    /// Reattaches to a running Box of the host (`GET /v2/sandboxes/{name}`): see
    /// the Vercel provider's (an in-process host knows only the Boxes of its own process: `attach.rs`).
    fn attach<'a>(
        &'a self,
        id: &'a str,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        Box::pin(async move {
            let attached = self.vercel().await?.attach(id, signal).await;
            super::attach::explained(attached, id, self.uses_in_process_host())
        })
    }

    /// The host's Boxes (`GET /v2/sandboxes`).
    fn list_boxes<'a>(&'a self, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Vec<BoxListing>>> {
        Box::pin(async move { self.vercel().await?.list_boxes(signal).await })
    }

    /// Opens a Box on the host (`POST /v3/sandboxes`).
    fn open<'a>(
        &'a self,
        spec: &'a BoxSpec,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        Box::pin(async move { self.vercel().await?.open(spec, signal).await })
    }
}
