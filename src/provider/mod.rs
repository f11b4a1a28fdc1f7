//! Providers: who supplies Boxes. Each one turns its protocol into the one Box seam of
//! [`box_session`]: a [`Provider`] that opens a [`BoxSession`]; nothing above this module knows
//! which protocol is in use.
//!
//! This module is the registry: [`ProviderSettings`] (what a provider is built from, resolved by
//! [`crate::config`]) and [`build`], whose one arm per provider is the only code outside a
//! provider's folder that names its types. Adding a provider is a new `provider/<name>/` folder
//! that implements [`Provider`] and [`BoxSession`], one variant of [`ProviderSettings`] and one
//! arm of [`build`]. Provider vocabulary (Vercel's `sessionId`, `cmdId`, its tar write format,
//! its NDJSON output stream) stays inside that provider's folder; what every provider's output
//! looks like is [`output`].

pub mod box_session;
pub mod cloudflare;
pub mod local;
pub mod output;
pub mod vercel;

pub use box_session::{BoxSession, HostStart, PreparedProject, Provider};
pub use crate::provider_kind::ProviderKind;

/// What a [`Provider`] is built from: the chosen provider and its resolved options (credentials
/// included, so the `Debug` form redacts them).
#[derive(Debug, Clone)]
pub enum ProviderSettings {
    /// Vercel Sandbox REST at `endpoint`.
    Vercel {
        /// Base URL, token, team and project.
        endpoint: vercel::VercelEndpoint,
        /// Network policy for new Boxes (`"allow-all"`, `"deny-all"` or the SDK's object shape).
        network_policy: Option<serde_json::Value>,
    },
    /// The local Box host: a configured one, or the isolate's in-process one.
    Local(local::LocalOptions),
    /// Cloudflare Sandbox through the Worker's Durable Object binding (or, in local
    /// development, the local Box host's container API).
    Cloudflare(cloudflare::CloudflareSettings),
}

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

/// Builds the provider `settings` name; requests go through `fetcher` (Cloudflare: through the
/// stubs of `namespace`, the Worker env's binding). Sends nothing. This is the one place that
/// names each provider's types: a provider is its folder plus one arm here.
///
/// # Errors
/// `SANDBOX_PROVIDER_REQUIRED` for Cloudflare without `namespace` and without a local Box host
/// (config resolution reports that first, see [`crate::config`]).
#[cfg(target_arch = "wasm32")]
pub fn build(settings: ProviderSettings, fetcher: crate::http::fetch::Fetcher, namespace: Option<crate::sys::DurableObjectNamespace>) -> crate::error::Result<std::rc::Rc<dyn Provider>> {
    use std::rc::Rc;
    Ok(match settings {
        ProviderSettings::Vercel { endpoint, network_policy } => Rc::new(vercel::VercelProvider::new(endpoint, network_policy, fetcher, ProviderKind::Vercel)),
        ProviderSettings::Local(options) => Rc::new(local::LocalProvider::new(options, fetcher)),
        ProviderSettings::Cloudflare(settings) => {
            // A Box on the local Box host (local development) gets the host's own report of what
            // it can reach, asked as the local provider asks it (Cloudflare's Boxes there use the
            // default network policy).
            let local_host = |host: &cloudflare::LocalContainerHost, fetcher: crate::http::fetch::Fetcher| -> Rc<dyn Provider> {
                let options = local::LocalOptions { base_url: Some(host.base_url.clone()), token: Some(host.token.clone()), ..Default::default() };
                Rc::new(local::LocalProvider::new(options, fetcher))
            };
            let binding = settings.binding.clone();
            let provider = cloudflare::CloudflareProvider::new(settings, namespace, fetcher, local_host)
                .ok_or_else(|| crate::config::missing_binding_error(&binding))?;
            Rc::new(provider)
        }
    })
}
