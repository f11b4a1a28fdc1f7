//! The resolved config of one isolate: what `configureSandbox` builds once and every Run reads.
//!
//! Built from a parsed [`SandboxConfig`] and the isolate's fetch: transfer limits (validated),
//! and the provider built from [`SandboxConfig::provider_settings`]. A provider that cannot be
//! chosen is kept as its error, so `configureSandbox` still succeeds and each Run answers with
//! that error (as before a provider is needed, e.g. `SANDBOX_PROVIDER_REQUIRED` in production).
//! Building sends no request and starts no host.

use std::rc::Rc;

use crate::http::fetch::Fetcher;
use crate::provider::Provider;
use vite_hub_sandbox_core::config::SandboxConfig;
use vite_hub_sandbox_core::error::{Error, Result};
use vite_hub_sandbox_core::run::warm_pool::WarmPool;
use vite_hub_sandbox_core::transfer::TransferLimits;

/// Limits and provider of every Run until the next `configureSandbox`.
#[derive(Debug)]
pub struct RuntimeConfig {
    /// Transfer limits (bytes, depth, counts).
    pub limits: TransferLimits,
    /// The provider, or why none could be chosen.
    pub provider: std::result::Result<Rc<dyn Provider>, Error>,
    /// `config.debug`: a handler error's Response keeps the thrown `stack` (default `false`).
    pub debug: bool,
    /// Whether the app runs in production ([`SandboxConfig::is_production`]).
    pub production: bool,
    /// `config.warmPool` when it keeps Boxes (`size` > 0); `None` otherwise.
    pub warm_pool: Option<WarmPool>,
}

impl RuntimeConfig {
    /// Resolves `config` once.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for transfer limits out of range and for what the app wrote
    /// wrong itself ([`SandboxConfig::check_explicit`]: an unknown `provider`, a `baseUrl` that is
    /// no URL, a token under 8 characters): thrown by `configureSandbox` at once. What comes from
    /// the env snapshot (the Node entry configures from `process.env` at import) or cannot be
    /// chosen yet (no credentials, no binding) is kept for each Run to answer.
    /// `SANDBOX_NOT_SUPPORTED` for a `warmPool` that keeps Boxes on a provider that cannot
    /// ([`SandboxConfig::check_warm_pool`]: Cloudflare), whether or not its provider could be built.
    /// `namespace`: the `cloudflare.binding` Durable Object namespace of the Worker env, when
    /// one was handed over.
    pub fn resolve(
        config: &SandboxConfig,
        fetcher: Fetcher,
        namespace: Option<crate::sys::DurableObjectNamespace>,
    ) -> Result<RuntimeConfig> {
        let limits = config.transfer.resolve()?;
        config.check_explicit()?;
        let namespace_present = namespace.is_some();
        let provider = config
            .provider_settings(namespace_present)
            .and_then(|settings| crate::provider::build(settings, fetcher, namespace));
        // The provider that will answer, built or not (a `cloudflare` named without its binding
        // still refuses a pool here, not first in the deployed Worker).
        let kind = provider.as_ref().map(|p| p.kind()).ok().or_else(|| config.select_provider(namespace_present).ok());
        if let Some(kind) = kind {
            config.check_warm_pool(kind)?;
        }
        let warm_pool = config.warm_pool.filter(|pool| pool.enabled());
        Ok(RuntimeConfig {
            limits,
            provider,
            debug: config.debug == Some(true),
            production: config.is_production(),
            warm_pool,
        })
    }
}
