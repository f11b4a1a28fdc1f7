//! Providers: who supplies Boxes. Each one turns its protocol into a [`session::BoxSession`];
//! nothing above this module knows which protocol is in use.
//!
//! This module owns the seam: [`ProviderSettings`] (what a provider is built from, resolved by
//! [`crate::config`]), [`Provider`] (built once per `configureSandbox`) and [`session::BoxSession`]
//! (one live Box). Adding a provider is a new `provider/<name>/` folder plus one arm in each
//! `match` of this module and of [`session`]. Provider vocabulary (Vercel's `sessionId`, `cmdId`,
//! its tar write format, its NDJSON output stream) stays inside that provider's folder.

pub mod cloudflare;
pub mod local;
pub mod vercel;

#[cfg(target_arch = "wasm32")]
pub mod session;

pub use vite_hub_sandbox_core::provider::{ProviderKind, ProviderSettings};

/// What a Run asks of a provider when it opens a Box.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoxSpec {
    /// Box lifetime in ms (the provider stops the Box after that); `None` uses the provider's
    /// default.
    pub lifetime_ms: Option<u64>,
    /// The Definition's name (readable Box ids; empty when there is none).
    pub name: String,
    /// `runSandbox`'s `sandboxId`: the kept Box to use (Cloudflare; other providers ignore it).
    pub sandbox_id: Option<String>,
    /// The prepared project to start from (a Vercel or local-host snapshot id); a provider
    /// without prepared projects ignores it. See [`crate::run::prepared`].
    pub prepared: Option<String>,
    /// The name under which this Box's own snapshot can be found again
    /// (`vitehub-prepared-<install digest>`), when the Run means to prepare a project from it.
    pub prepared_name: Option<String>,
    /// The Box is a Run's, whose first request is its staging (Cloudflare: no `mkdir` of the
    /// cwd at open; `BoxSession::stage_files` writes it). `false` for a Session.
    pub staged_first: bool,
}

/// How a Box's files began, for the prepared-project cache ([`crate::run::prepared`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreparedStart {
    /// An empty Box (no prepared project asked for).
    Empty,
    /// From the prepared project asked for.
    Restored,
    /// A prepared project was asked for but the provider no longer has it: an empty Box.
    Missing,
}

/// What a bounded file read of a Box found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// No such file.
    Missing,
    /// The whole file.
    Bytes(Vec<u8>),
    /// The file is larger than the reader's cap: its size in bytes (or at least this many).
    TooLarge(u64),
}

#[cfg(target_arch = "wasm32")]
pub use built::Provider;

#[cfg(target_arch = "wasm32")]
mod built {
    use web_sys::AbortSignal;

    use super::session::BoxSession;
    use super::{cloudflare, local, vercel, BoxSpec, ProviderKind, ProviderSettings};
    use crate::error::Result;
    use crate::http::fetch::Fetcher;
    use crate::session::ExecutionAuthority;

    /// A provider able to open Boxes, built once from [`ProviderSettings`] and the isolate's
    /// fetch.
    #[derive(Debug)]
    pub enum Provider {
        /// Vercel Sandbox REST.
        Vercel(vercel::VercelProvider),
        /// The local Box host (the Vercel protocol at a local base URL).
        Local(local::LocalProvider),
        /// Cloudflare Sandbox (the container control API through a Durable Object stub).
        Cloudflare(cloudflare::CloudflareProvider),
    }

    impl Provider {
        /// Builds the provider `settings` name; requests go through `fetcher` (Cloudflare: through
        /// the stubs of `namespace`, the Worker env's binding). Sends nothing.
        ///
        /// # Errors
        /// `SANDBOX_PROVIDER_REQUIRED` for Cloudflare without `namespace` and without a local Box
        /// host (config resolution reports that first, see [`crate::config`]).
        pub fn build(settings: ProviderSettings, fetcher: Fetcher, namespace: Option<crate::sys::DurableObjectNamespace>) -> Result<Provider> {
            Ok(match settings {
                ProviderSettings::Vercel { endpoint, network_policy } => {
                    Provider::Vercel(vercel::VercelProvider::new(endpoint, network_policy, fetcher, ProviderKind::Vercel))
                }
                ProviderSettings::Local(options) => Provider::Local(local::LocalProvider::new(options, fetcher)),
                ProviderSettings::Cloudflare(settings) => {
                    let binding = settings.binding.clone();
                    Provider::Cloudflare(
                        cloudflare::CloudflareProvider::new(settings, namespace, fetcher)
                            .ok_or_else(|| crate::config::missing_binding_error(&binding))?,
                    )
                }
            })
        }

        /// The provider reported in errors and Responses.
        pub fn kind(&self) -> ProviderKind {
            match self {
                Provider::Vercel(_) => ProviderKind::Vercel,
                Provider::Local(_) => ProviderKind::Local,
                Provider::Cloudflare(_) => ProviderKind::Cloudflare,
            }
        }

        /// Makes sure the provider can take requests (the local provider starts the isolate's
        /// in-process Box host on first use). Returns what starting it cost (`host`, `connect`), for
        /// the one call that started it (`None` for every other call and provider).
        ///
        /// # Errors
        /// `SANDBOX_PROVIDER_REQUIRED` when no local host is configured and none can be started
        /// here; `SANDBOX_PROVIDER_UNAVAILABLE` when starting it failed.
        pub async fn ensure_ready(&self) -> Result<Option<crate::run::timing::HostStart>> {
            match self {
                Provider::Vercel(_) | Provider::Cloudflare(_) => Ok(None),
                Provider::Local(provider) => provider.ensure_ready().await,
            }
        }

        /// Whether this provider's Boxes are on the isolate's in-process local Box host (provider
        /// `local` without `local.baseUrl`), which [`Provider::ensure_ready`] starts.
        pub fn uses_in_process_host(&self) -> bool {
            matches!(self, Provider::Local(provider) if provider.uses_in_process_host())
        }

        /// The `local.isolation` option of a `local` provider (None for the others, or unset).
        pub fn local_isolation(&self) -> Option<local::options::Isolation> {
            match self {
                Provider::Local(provider) => provider.isolation(),
                _ => None,
            }
        }

        /// Whether this provider keeps prepared projects (Vercel and the local Box host: snapshots).
        pub fn prepares(&self) -> bool {
            matches!(self, Provider::Vercel(_) | Provider::Local(_))
        }

        /// The prepared projects (snapshots) the provider keeps for this project, of the Box
        /// named `name` when given: `(id, sizeBytes, createdAt ms)`, newest first, at most 100
        /// (one list request).
        ///
        /// # Errors
        /// Those of the list request; `SANDBOX_NOT_SUPPORTED` for Cloudflare (it keeps none).
        pub async fn list_prepared(&self, name: Option<&str>) -> Result<Vec<(String, u64, u64)>> {
            match self {
                Provider::Vercel(provider) => provider.list_snapshots(name).await,
                Provider::Local(provider) => provider.vercel().await?.list_snapshots(name).await,
                Provider::Cloudflare(_) => Err(crate::error::Error::new(
                    crate::error::ErrorCode::NotSupported,
                    "The cloudflare provider keeps no prepared projects.",
                )),
            }
        }

        /// Deletes prepared project (snapshot) `id`; `false` when it was already gone.
        ///
        /// # Errors
        /// Those of the delete request; `SANDBOX_NOT_SUPPORTED` for Cloudflare.
        pub async fn drop_prepared(&self, id: &str) -> Result<bool> {
            match self {
                Provider::Vercel(provider) => provider.delete_snapshot(id).await,
                Provider::Local(provider) => provider.vercel().await?.delete_snapshot(id).await,
                Provider::Cloudflare(_) => Err(crate::error::Error::new(
                    crate::error::ErrorCode::NotSupported,
                    "The cloudflare provider keeps no prepared projects.",
                )),
            }
        }

        /// What a Box of this provider can reach (contract §2), before any Box exists: Vercel
        /// from its `networkPolicy`, Cloudflare fixed (or its local Box host's report in
        /// development), the local Box host asked (its own report).
        ///
        /// # Errors
        /// Local only: those of [`Provider::ensure_ready`], `SANDBOX_TRANSPORT_ERROR` for a failed
        /// request or a report that is not of the contract's shape.
        pub async fn execution_authority(&self, signal: Option<&AbortSignal>) -> Result<ExecutionAuthority> {
            match self {
                Provider::Vercel(provider) => Ok(ExecutionAuthority::vercel(provider.network_policy())),
                Provider::Cloudflare(provider) => provider.execution_authority(signal).await,
                Provider::Local(provider) => {
                    let report = provider.execution_authority(signal).await?;
                    ExecutionAuthority::from_report(&report).map_err(|e| e.with_provider(ProviderKind::Local))
                }
            }
        }

        /// The executionAuthority of an opened Box: the host's own report for a local Box, else
        /// the provider's (see [`Provider::execution_authority`]).
        ///
        /// # Errors
        /// `SANDBOX_TRANSPORT_ERROR` when the local Box host reported none or a malformed one.
        pub async fn box_execution_authority(&self, session: &BoxSession) -> Result<ExecutionAuthority> {
            match self {
                Provider::Vercel(provider) => Ok(ExecutionAuthority::vercel(provider.network_policy())),
                Provider::Cloudflare(provider) => provider.execution_authority(None).await,
                Provider::Local(_) => match session.reported_execution_authority() {
                    Some(report) => ExecutionAuthority::from_report(report).map_err(|e| e.with_provider(ProviderKind::Local)),
                    None => Err(crate::error::Error::new(
                        crate::error::ErrorCode::TransportError,
                        "the local Box host reported no executionAuthority for the Box",
                    )
                    .with_provider(ProviderKind::Local)),
                },
            }
        }

        /// Whether the provider keeps the Box of a `sandboxId` itself (Cloudflare: one Durable
        /// Object per id, its Runs serialized by the provider). For the others the Run layer
        /// keeps it (`run::lease`).
        pub fn keeps_boxes(&self) -> bool {
            matches!(self, Provider::Cloudflare(_))
        }

        /// Closes the kept Box of `sandbox_id` when the provider keeps it itself (Cloudflare:
        /// destroys its Durable Object's container). `Ok(false)` for the other providers.
        ///
        /// # Errors
        /// Those of the destroy request.
        pub async fn close_kept_box(&self, sandbox_id: &str) -> Result<bool> {
            match self {
                Provider::Cloudflare(provider) => provider.close_kept(sandbox_id).await.map(|()| true),
                Provider::Vercel(_) | Provider::Local(_) => Ok(false),
            }
        }

        /// Opens a new Box.
        ///
        /// # Errors
        /// `SANDBOX_TRANSPORT_ERROR` or `SANDBOX_PROVIDER_UNAVAILABLE` when the provider refuses or
        /// cannot be reached; those of [`Provider::ensure_ready`].
        pub async fn open(&self, spec: &BoxSpec, signal: Option<&AbortSignal>) -> Result<BoxSession> {
            match self {
                Provider::Vercel(provider) => provider.open(spec, signal).await.map(BoxSession::Vercel),
                Provider::Local(provider) => provider.open(spec, signal).await.map(BoxSession::Vercel),
                Provider::Cloudflare(provider) => provider.open(spec, signal).await.map(BoxSession::Cloudflare),
            }
        }
    }
}
