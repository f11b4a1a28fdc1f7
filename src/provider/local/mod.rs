//! The `local` provider: the Vercel protocol against the local Box host, either a configured one
//! (`local.baseUrl` + `local.token`) or the isolate's in-process one ([`host`]).

pub use vite_hub_sandbox_core::provider::local::options;

#[cfg(target_arch = "wasm32")]
pub mod host;

pub use options::LocalOptions;

#[cfg(target_arch = "wasm32")]
pub use provider::LocalProvider;

#[cfg(target_arch = "wasm32")]
mod provider {
    use web_sys::AbortSignal;

    use super::{host, LocalOptions};
    use crate::error::Result;
    use crate::http::fetch::Fetcher;
    use crate::provider::vercel::{VercelBox, VercelEndpoint, VercelProvider};
    use crate::provider::{BoxSpec, ProviderKind};

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

        /// Whether no host is configured, so Boxes go to the isolate's in-process one.
        pub fn uses_in_process_host(&self) -> bool {
            self.options.base_url.is_none()
        }

        /// The `local.isolation` option (what an in-process host started for it applies).
        pub fn isolation(&self) -> Option<super::options::Isolation> {
            self.options.isolation
        }

        /// Starts the in-process host when none is configured and it is not running yet; what
        /// that cost, for the call that started it.
        ///
        /// # Errors
        /// Those of [`host::in_process_host`].
        pub async fn ensure_ready(&self) -> Result<Option<crate::run::timing::HostStart>> {
            if !self.uses_in_process_host() {
                return Ok(None);
            }
            Ok(host::in_process_host(self.options.isolation).await?.1)
        }

        async fn endpoint(&self) -> Result<VercelEndpoint> {
            let (base_url, token) = match &self.options.base_url {
                Some(base_url) => (base_url.clone(), self.options.token.clone().unwrap_or_default()),
                None => {
                    let (host, _) = host::in_process_host(self.options.isolation).await?;
                    (host.base_url, host.token)
                }
            };
            Ok(VercelEndpoint { base_url, token, team_id: None, project_id: None })
        }

        /// The Vercel-protocol client of the host (starts the in-process host when needed).
        ///
        /// # Errors
        /// Those of [`host::in_process_host`].
        pub async fn vercel(&self) -> Result<VercelProvider> {
            let endpoint = self.endpoint().await?;
            Ok(VercelProvider::new(endpoint, self.options.network_policy.clone(), self.fetcher.clone(), ProviderKind::Local))
        }

        /// The executionAuthority the host applies to a Box of this provider (starts the
        /// in-process host when needed; opens no Box).
        ///
        /// # Errors
        /// Those of [`LocalProvider::ensure_ready`]; `SANDBOX_TRANSPORT_ERROR` for a failed request.
        pub async fn execution_authority(&self, signal: Option<&AbortSignal>) -> Result<serde_json::Value> {
            let endpoint = self.endpoint().await?;
            let provider = VercelProvider::new(endpoint, self.options.network_policy.clone(), self.fetcher.clone(), ProviderKind::Local);
            provider.local_host_execution_authority(signal).await
        }

        /// Opens a Box on the host (`POST /v3/sandboxes`).
        pub async fn open(&self, spec: &BoxSpec, signal: Option<&AbortSignal>) -> Result<VercelBox> {
            self.vercel().await?.open(spec, signal).await
        }
    }
}
