//! What the app configures for the `local` provider (`local: { … }` of `configureSandbox`).
//!
//! Provider layer, pure.

use serde::Deserialize;

/// `local` options: a Box host already running somewhere (else the Node glue starts one
/// in-process, once per isolate).
///
/// Shape: `{ baseUrl?: string, token?: string, networkPolicy?: "allow-all" | "deny-all" | object,
/// isolation?: "auto" | "bubblewrap" | "seatbelt" | "none", parked?: { size?, idleMs? },
/// shareHostNetwork?: boolean }`.
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
    /// The spare Boxes with a parked Node process the in-process host keeps (ignored with
    /// `base_url`, like `isolation`); unset: the host's defaults (2 spares, 300000 ms idle).
    pub parked: Option<Parked>,
    /// Whether the in-process host may, in production, give `allow-all` Boxes this machine's own
    /// network when it has no Box network for them (no slirp4netns/pasta, or no `/dev/net/tun`
    /// for this user): such a Box reaches the host's loopback (other Boxes' ports, the host's
    /// port, the app's dev server) and the user's abstract Unix sockets (D-Bus, X11). Default
    /// `false`: in production such a create is refused (`SANDBOX_PROVIDER_UNAVAILABLE` naming this
    /// option); outside production it is allowed and the start-up line says so. Ignored with
    /// `base_url`, like `isolation`.
    pub share_host_network: Option<bool>,
    /// Whether the app runs in production ([`crate::config::SandboxConfig::is_production`]): set
    /// by config resolution, never read from the app's `local` object. In production the
    /// in-process host refuses to run without isolation unless `isolation` is `none`.
    #[serde(skip)]
    pub production: bool,
}

/// The `local.parked` option: spare Boxes, each with a `node` started ahead that a Run's harness
/// becomes (pkg-template/box-host/engine/parked-boxes.mjs). Shape `{ size?: 0–16, idleMs?:
/// 1–3600000 }`: `size` spares kept (0 turns parking off), `idleMs` before an unused one is retired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Parked {
    /// Spares kept, 0 to [`Parked::MAX_SIZE`].
    pub size: Option<u32>,
    /// ms an unused spare waits before it is retired, 1 to [`Parked::MAX_IDLE_MS`].
    pub idle_ms: Option<u32>,
}

impl Parked {
    /// Largest `size` (each spare is a Box and a Node process).
    pub const MAX_SIZE: u32 = 16;
    /// Largest `idleMs` (one hour).
    pub const MAX_IDLE_MS: u32 = 3_600_000;

    /// The problem with these values, named by key (`local.parked.size …`), or `None`.
    pub fn problem(&self) -> Option<String> {
        match (self.size, self.idle_ms) {
            (Some(size), _) if size > Self::MAX_SIZE => Some(format!("local.parked.size is {size}; it must be from 0 to {}", Self::MAX_SIZE)),
            (_, Some(ms)) if ms == 0 || ms > Self::MAX_IDLE_MS => Some(format!("local.parked.idleMs is {ms}; it must be from 1 to {} ms", Self::MAX_IDLE_MS)),
            _ => None,
        }
    }
}

/// What the in-process Box host is started with (the Node glue's `startBoxHost` options):
/// `{ isolation, parked?, production, shareHostNetwork }`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InProcessHost {
    /// `local.isolation`, `auto` when unset.
    pub isolation: Isolation,
    /// `local.parked`, the host's defaults when unset.
    pub parked: Option<Parked>,
    /// The config's `production` (else `NODE_ENV === "production"` of its env).
    pub production: bool,
    /// `local.shareHostNetwork`, `false` when unset.
    pub share_host_network: bool,
}

impl LocalOptions {
    /// The options an in-process host started for these applies.
    pub fn in_process_host(&self) -> InProcessHost {
        InProcessHost {
            isolation: self.isolation.unwrap_or(Isolation::Auto),
            parked: self.parked,
            production: self.production,
            share_host_network: self.share_host_network == Some(true),
        }
    }
}

/// The `local.isolation` option (see [`LocalOptions::isolation`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// The strongest isolation the machine gives; none in development only.
    #[default]
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
            .field("parked", &self.parked)
            .field("share_host_network", &self.share_host_network)
            .field("production", &self.production)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_in_process_host_gets_isolation_and_parked_as_configured() {
        let options: LocalOptions = serde_json::from_value(serde_json::json!({"parked": {"size": 0}})).unwrap();
        assert_eq!(options.in_process_host(), InProcessHost { isolation: Isolation::Auto, parked: Some(Parked { size: Some(0), idle_ms: None }), production: false, share_host_network: false });
        let options: LocalOptions = serde_json::from_value(serde_json::json!({"isolation": "none"})).unwrap();
        assert_eq!((options.in_process_host().isolation.as_str(), options.in_process_host().parked), ("none", None));
    }

    #[test]
    fn share_host_network_is_an_option_and_production_is_not() {
        let options: LocalOptions = serde_json::from_value(serde_json::json!({"shareHostNetwork": true})).unwrap();
        assert!(options.in_process_host().share_host_network);
        // `production` is the config's, set by its resolution: never a key of `local`.
        assert!(serde_json::from_value::<LocalOptions>(serde_json::json!({"production": true})).is_err());
    }
}
