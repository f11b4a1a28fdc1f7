//! What the app configures for the `local` provider (`local: { … }` of `configureSandbox`).
//!
//! Provider layer, pure.

use serde::Deserialize;

/// `local` options: a Box host already running somewhere (else the Node glue starts one
/// in-process, once per isolate).
///
/// Shape: `{ baseUrl?: string, token?: string, networkPolicy?: "allow-all" | "deny-all" | object,
/// isolation?: "auto" | "bubblewrap" | "seatbelt" | "none" }`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalOptions {
    /// Base URL of a running local Box host, e.g. `http://127.0.0.1:8787`.
    pub base_url: Option<String>,
    /// Its bearer token (secret).
    pub token: Option<String>,
    /// Network policy for new Boxes; default allows the network (as Vercel does).
    pub network_policy: Option<serde_json::Value>,
    /// The isolation of the in-process host's Boxes (ignored with `base_url`: a running host has
    /// its own): `auto` (default: the strongest this machine gives, and in production a refusal
    /// without any), `bubblewrap`, `seatbelt` (required), or `none` (plain processes, also in
    /// production). The host's start-up probe decides what `auto` gets
    /// (pkg-template/box-host/engine/host-probe.mjs).
    pub isolation: Option<Isolation>,
}

/// The `local.isolation` option (see [`LocalOptions::isolation`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// The strongest isolation the machine gives; none in development only.
    Auto,
    /// Linux bubblewrap, required.
    Bubblewrap,
    /// macOS Seatbelt (`sandbox-exec`), required.
    Seatbelt,
    /// Plain child processes, accepted explicitly.
    None,
}

impl Isolation {
    /// The option's value as the host's `startBoxHost({ isolation })` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::Auto => "auto",
            Isolation::Bubblewrap => "bubblewrap",
            Isolation::Seatbelt => "seatbelt",
            Isolation::None => "none",
        }
    }
}

impl std::fmt::Debug for LocalOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalOptions")
            .field("base_url", &self.base_url)
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .field("network_policy", &self.network_policy)
            .field("isolation", &self.isolation)
            .finish()
    }
}
