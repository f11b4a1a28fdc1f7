//! Providers as data: who supplies Boxes ([`ProviderKind`](crate::provider_kind::ProviderKind)), what a provider is built from
//! ([`ProviderSettings`], resolved by [`crate::config`]), and each provider protocol's options and
//! wire shapes, one folder per provider. The runtime crate's `provider/` turns these into live
//! Boxes; nothing here sends a request.

pub mod cloudflare;
pub mod local;
pub mod vercel;

/// What a runtime `Provider` is built from: the chosen provider and its resolved options
/// (credentials included, so the `Debug` form redacts them).
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
