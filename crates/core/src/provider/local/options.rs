//! What the app configures for the `local` provider (`local: { … }` of `configureSandbox`).
//!
//! Provider layer, pure.

use serde::Deserialize;

/// `local` options: a Box host already running somewhere (else the Node glue starts one
/// in-process, once per isolate).
///
/// Shape: `{ baseUrl?: string, token?: string, networkPolicy?: "allow-all" | "deny-all" | { mode },
/// isolation?: "auto" | "bubblewrap" | "seatbelt" | "none", parked?: { size?, idleMs? },
/// memoryRequestBytes?: number, shareHostNetwork?: boolean }`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalOptions {
    /// Base URL of a running local Box host, e.g. `http://127.0.0.1:8787`.
    pub base_url: Option<String>,
    /// Its bearer token (secret).
    pub token: Option<String>,
    /// Network policy for new Boxes; default allows the network (as Vercel does). Only what the
    /// host enforces is accepted (a Vercel policy object is refused by its key).
    pub network_policy: Option<super::LocalNetworkPolicy>,
    /// The isolation of the in-process host's Boxes (ignored with `base_url`: a running host has
    /// its own): `auto` (default: the strongest this machine gives, and in production a refusal
    /// without any), `bubblewrap`, `seatbelt` (required), or `none` (plain processes, also in
    /// production). The host's start-up probe decides what `auto` gets
    /// (pkg-template/box-host/engine/host-probe.mjs).
    pub isolation: Option<Isolation>,
    /// The spare Boxes with a parked Node process the in-process host keeps (ignored with
    /// `base_url`, like `isolation`); unset: the host's defaults (2 spares, 300000 ms idle).
    pub parked: Option<Parked>,
    /// What each Box of the in-process host counts against the host's memory bound (the
    /// machine's memory), in bytes: what a Box is expected to use, not its limit (a Box's memory
    /// limit, `vcpus` × 2048 MiB, still applies). Unset: the host's default, 512 MiB
    /// (pkg-template/box-host/engine/box-queue.mjs). Ignored with `base_url`, like `isolation`.
    pub memory_request_bytes: Option<MemoryRequest>,
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
/// Read through [`ParkedOption`], so a value out of range or not a whole number is refused by its
/// key (`local.parked.size is -1; it must be an integer from 0 to 16`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "ParkedOption")]
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
}

/// `local.parked` as written: each key any JSON value, checked by [`Parked::try_from`].
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParkedOption {
    size: Option<serde_json::Value>,
    idle_ms: Option<serde_json::Value>,
}

/// `value` as a whole number from `min` to `max`, or the sentence naming `key` and the range.
fn whole_number_in(key: &str, value: &serde_json::Value, (min, max): (u32, u32), unit: &str) -> Result<u32, String> {
    let number = value.as_f64().filter(|n| n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max));
    // In range of u32 by the filter above, so the cast is exact.
    number.map(|n| n as u32).ok_or_else(|| format!("{key} is {value}; it must be an integer from {min} to {max}{unit}"))
}

impl TryFrom<ParkedOption> for Parked {
    type Error = String;

    fn try_from(option: ParkedOption) -> Result<Parked, String> {
        let size =
            option.size.map(|v| whole_number_in("local.parked.size", &v, (0, Parked::MAX_SIZE), "")).transpose()?;
        let idle_ms = option
            .idle_ms
            .map(|v| whole_number_in("local.parked.idleMs", &v, (1, Parked::MAX_IDLE_MS), " ms"))
            .transpose()?;
        Ok(Parked { size, idle_ms })
    }
}

/// The `local.memoryRequestBytes` option: a whole number of bytes from [`MemoryRequest::MIN`] (1
/// MiB) to [`MemoryRequest::MAX`] (1 TiB), refused by its key otherwise
/// (`local.memoryRequestBytes is 5; it must be an integer from 1048576 to 1099511627776 bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "serde_json::Value")]
pub struct MemoryRequest(pub u64);

impl MemoryRequest {
    /// Smallest request, in bytes (1 MiB).
    pub const MIN: u64 = 1 << 20;
    /// Largest request, in bytes (1 TiB).
    pub const MAX: u64 = 1 << 40;
}

impl TryFrom<serde_json::Value> for MemoryRequest {
    type Error = String;

    fn try_from(value: serde_json::Value) -> Result<MemoryRequest, String> {
        let (min, max) = (MemoryRequest::MIN, MemoryRequest::MAX);
        // Both bounds are exact in f64 (powers of two), so the cast of a whole number between them is exact.
        value
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= min as f64 && *n <= max as f64)
            .map(|n| MemoryRequest(n as u64))
            .ok_or_else(|| {
                format!("local.memoryRequestBytes is {value}; it must be an integer from {min} to {max} bytes")
            })
    }
}

/// What the in-process Box host is started with (the Node glue's `startBoxHost` options):
/// `{ isolation, parked?, memoryRequestBytes?, production, shareHostNetwork }`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InProcessHost {
    /// `local.isolation`, `auto` when unset.
    pub isolation: Isolation,
    /// `local.parked`, the host's defaults when unset.
    pub parked: Option<Parked>,
    /// `local.memoryRequestBytes` (bytes), the host's default when unset.
    pub memory_request_bytes: Option<u64>,
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
            memory_request_bytes: self.memory_request_bytes.map(|request| request.0),
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
            .field("memory_request_bytes", &self.memory_request_bytes)
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
        assert_eq!(
            options.in_process_host(),
            InProcessHost {
                isolation: Isolation::Auto,
                parked: Some(Parked { size: Some(0), idle_ms: None }),
                memory_request_bytes: None,
                production: false,
                share_host_network: false
            }
        );
        let options: LocalOptions = serde_json::from_value(serde_json::json!({"isolation": "none"})).unwrap();
        assert_eq!((options.in_process_host().isolation.as_str(), options.in_process_host().parked), ("none", None));
    }

    #[test]
    fn the_memory_request_reaches_the_in_process_host_and_is_checked_by_its_key() {
        let options: LocalOptions =
            serde_json::from_value(serde_json::json!({"memoryRequestBytes": 268_435_456})).unwrap();
        assert_eq!(options.in_process_host().memory_request_bytes, Some(268_435_456));
        for (value, shown) in [
            (serde_json::json!(5), "5"),
            (serde_json::json!(1_048_576.5), "1048576.5"),
            (serde_json::json!(2_199_023_255_552_u64), "2199023255552"),
            (serde_json::json!("512"), "\"512\""),
        ] {
            let error = serde_json::from_value::<LocalOptions>(serde_json::json!({"memoryRequestBytes": value}))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                error.starts_with(&format!(
                    "local.memoryRequestBytes is {shown}; it must be an integer from 1048576 to 1099511627776 bytes"
                )),
                "{error}"
            );
        }
    }

    #[test]
    fn share_host_network_is_an_option_and_production_is_not() {
        let options: LocalOptions = serde_json::from_value(serde_json::json!({"shareHostNetwork": true})).unwrap();
        assert!(options.in_process_host().share_host_network);
        // `production` is the config's, set by its resolution: never a key of `local`.
        assert!(serde_json::from_value::<LocalOptions>(serde_json::json!({"production": true})).is_err());
    }
}
