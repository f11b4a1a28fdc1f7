//! Sandbox configuration: what the app (or the Vite plugin) sets, the environment snapshot the JS
//! glue hands over, and the provider selection rule of DESIGN.md §4.
//!
//! Pure: the JS glue reads `process.env` (or a Worker's env) and passes it here as a plain map;
//! this module never reads the environment itself.

use crate::env_map::EnvMap;

use serde::Deserialize;

use crate::error::{Error, ErrorCode, Result};
use crate::provider::cloudflare::CloudflareOptions;
use crate::provider::local::LocalOptions;
use crate::provider::vercel::VercelOptions;
use crate::provider::ProviderSettings;
use crate::provider_kind::ProviderKind;
use crate::run::warm_pool::WarmPool;
use crate::transfer::TransferLimits;

/// Every env variable the core reads: `NODE_ENV`, `SANDBOX_PROVIDER` and the providers' own
/// (Vercel credentials, the Cloudflare provider's local Box host). The JS glue hands over exactly
/// these (generated from this list).
pub fn env_names() -> Vec<&'static str> {
    let mut names = vec!["NODE_ENV", "SANDBOX_PROVIDER"];
    names.extend(crate::provider::vercel::options::ENV_NAMES);
    names.extend(crate::provider::cloudflare::options::ENV_NAMES);
    names
}

/// The config object accepted by `configureSandbox(config)`.
///
/// ```ts
/// { provider?: 'vercel' | 'cloudflare' | 'local', production?: boolean,
///   vercel?: { token?, teamId?, projectId?, baseUrl?, networkPolicy? },
///   local?: { baseUrl?, token?, networkPolicy?, isolation?, parked?: { size?, idleMs? } },
///   cloudflare?: { binding?, sandboxId?, sleepAfter?, keepAlive?, normalizeId? },
///   transfer?: Partial<TransferLimits>, env?: Record<string, string>, debug?: boolean,
///   warmPool?: { size?, idleMs? } | null }
/// ```
/// (`onLog`, a function, is the glue's: `configureSandbox` checks it and keeps it out of this.)
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxConfig {
    /// Explicit provider; wins over everything else.
    pub provider: Option<String>,
    /// Whether the app runs in production (default: `env.NODE_ENV === "production"`). In
    /// production the `local` provider is never chosen implicitly.
    pub production: Option<bool>,
    /// Vercel Sandbox options.
    #[serde(default)]
    pub vercel: VercelOptions,
    /// Local Box host options.
    #[serde(default)]
    pub local: LocalOptions,
    /// Cloudflare Sandbox options.
    #[serde(default)]
    pub cloudflare: CloudflareOptions,
    /// Transfer limits (bytes, depth, counts); unset fields keep their defaults.
    #[serde(default)]
    pub transfer: TransferOverrides,
    /// Environment snapshot, given by the JS glue (never read from the process here).
    #[serde(default)]
    pub env: EnvMap,
    /// Whether a handler error's Response keeps the thrown error's `stack` (`details.stack`).
    /// Default `false`: the Response keeps its `message` and `name` only (what production sends).
    pub debug: Option<bool>,
    /// Boxes opened ahead per Definition ([`WarmPool`]); unset or `null`: none.
    pub warm_pool: Option<WarmPool>,
}

/// Partial [`TransferLimits`]. Each value is read as any JSON value and checked by
/// [`TransferOverrides::resolve`], so a bad one (`-1`, `1.5`, `"8"`) is named by its key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferOverrides {
    /// Max UTF-8 bytes of the input envelope.
    pub max_input_bytes: Option<serde_json::Value>,
    /// Max UTF-8 bytes of the result envelope.
    pub max_output_bytes: Option<serde_json::Value>,
    /// Max nesting depth of payload, context and result.
    pub max_depth: Option<serde_json::Value>,
    /// Max number of binary sidecars per direction.
    pub max_sidecars: Option<serde_json::Value>,
    /// Max total sidecar bytes per direction.
    pub max_sidecar_bytes: Option<serde_json::Value>,
}

/// A limit value: a positive integer up to [`crate::transfer::MAX_LIMIT_VALUE`].
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` naming `transfer.<name>` and the value otherwise.
fn limit_value(name: &str, value: &serde_json::Value) -> Result<u64> {
    let max = crate::transfer::limits::MAX_LIMIT_VALUE;
    value.as_u64().filter(|v| (1..=max).contains(v)).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("transfer.{name} must be a positive integer <= {max} (got {value})"),
        )
    })
}

impl TransferOverrides {
    /// The limits with these overrides applied, validated.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` naming the key when a value is not an integer, is 0 or above 1 GiB.
    pub fn resolve(&self) -> Result<TransferLimits> {
        let mut limits = TransferLimits::default();
        let u32_of = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        if let Some(v) = &self.max_input_bytes {
            limits.max_input_bytes = limit_value("maxInputBytes", v)?;
        }
        if let Some(v) = &self.max_output_bytes {
            limits.max_output_bytes = limit_value("maxOutputBytes", v)?;
        }
        if let Some(v) = &self.max_depth {
            limits.max_depth = u32_of(limit_value("maxDepth", v)?);
        }
        if let Some(v) = &self.max_sidecars {
            limits.max_sidecars = u32_of(limit_value("maxSidecars", v)?);
        }
        if let Some(v) = &self.max_sidecar_bytes {
            limits.max_sidecar_bytes = limit_value("maxSidecarBytes", v)?;
        }
        limits.validate()?;
        Ok(limits)
    }
}

/// Shortest provider token accepted, in characters. Error messages are scrubbed of the token
/// ([`crate::error::redact`]); a shorter token matches ordinary words and would mangle them
/// (`token: "a"` turns "an answer" into "\[redacted\]n \[redacted\]nswer"), so it is refused.
pub const MIN_TOKEN_CHARS: usize = 8;

/// Refuses a token shorter than [`MIN_TOKEN_CHARS`], or one that cannot travel in an
/// `Authorization` header: a character outside visible ASCII (RFC 9110 field values; the Fetch
/// API throws on anything above U+00FF) (`what` names where it came from).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT`; the message gives the length or the position, never the token.
fn check_token(token: Option<&str>, what: &str) -> Result<()> {
    let Some(token) = token else { return Ok(()) };
    let refused = |message: String| Err(Error::new(ErrorCode::InvalidArgument, message));
    let n = token.chars().count();
    if n < MIN_TOKEN_CHARS {
        return refused(format!(
            "{what} has {n} character{}; a token must have at least {MIN_TOKEN_CHARS} (a shorter one cannot be redacted from error messages without mangling them)",
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(at) = token.chars().position(|c| !c.is_ascii_graphic()) {
        return refused(format!(
            "{what} has a character at position {} that is not visible ASCII (a space, a control character or non-ASCII text): a token travels in an HTTP header; copy it again without it",
            at + 1
        ));
    }
    Ok(())
}

/// Refuses a `baseUrl` that is not an absolute `http:` / `https:` URL with a host, or that carries
/// user info (`https://user:pass@host`: `fetch` refuses to build a request from it, and its
/// message would carry the password into the Run's Response) (`what` names it).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT`; a URL with user info is not repeated in the message.
fn check_base_url(url: Option<&str>, what: &str) -> Result<()> {
    let Some(url) = url else { return Ok(()) };
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://"));
    let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or_default());
    if host.is_some_and(|h| h.contains('@')) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} must not carry user info (`user:password@`); give the bare URL and the credential as the provider's token"),
        ));
    }
    if host.is_some_and(|h| !h.is_empty() && !h.contains(char::is_whitespace)) && !url.contains(char::is_whitespace) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!(
            "{what} must be an absolute http:// or https:// URL with a host, got {url}",
            url = crate::error::quoted(url)
        ),
    ))
}

fn non_empty(value: Option<&String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl SandboxConfig {
    /// Reads a config from its JSON: `configureSandbox`'s plain-data keys, or one layer of the Vite
    /// plugin's options. Unknown keys are refused at every level, an absent key keeps its
    /// default, `null` is `None` for an optional value and an error for an object (`vercel`,
    /// `local`, `transfer`, `env`).
    ///
    /// # Errors
    /// serde's words for what is wrong, after the section's key when it is not the top level
    /// (`vercel: invalid type: integer `5`, expected a string`; an unknown key is named by serde).
    pub fn from_value(value: &serde_json::Value) -> std::result::Result<SandboxConfig, String> {
        use serde::Deserialize;
        // Each section alone first, so its errors carry its key.
        if let Some(object) = value.as_object() {
            for (key, section) in object {
                let checked = match key.as_str() {
                    "vercel" => VercelOptions::deserialize(section).map(drop),
                    "local" => LocalOptions::deserialize(section).map(drop),
                    "cloudflare" => CloudflareOptions::deserialize(section).map(drop),
                    "transfer" => TransferOverrides::deserialize(section).map(drop),
                    "env" => EnvMap::deserialize(section).map(drop),
                    "warmPool" => Option::<WarmPool>::deserialize(section).map(drop),
                    _ => Ok(()),
                };
                checked.map_err(|error| format!("{key}: {error}"))?;
            }
        }
        SandboxConfig::deserialize(value).map_err(|error| error.to_string())
    }

    fn env(&self, name: &str) -> Option<String> {
        non_empty(self.env.get(name))
    }

    /// Whether the app runs in production.
    pub fn is_production(&self) -> bool {
        self.production.unwrap_or_else(|| self.env("NODE_ENV").as_deref() == Some("production"))
    }

    /// Checks what the app wrote itself (not the env snapshot, which each Run answers): a
    /// `provider` name, `local.baseUrl` / `vercel.baseUrl` (absolute http(s) URLs) and
    /// `local.token` / `vercel.token` (at least [`MIN_TOKEN_CHARS`] characters).
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` naming the key.
    pub fn check_explicit(&self) -> Result<()> {
        if let Some(name) = non_empty(self.provider.as_ref()) {
            if ProviderKind::parse(&name).is_none() {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "config provider is {name}; expected \"vercel\", \"cloudflare\" or \"local\"",
                        name = crate::error::quoted(&name)
                    ),
                ));
            }
        }
        check_base_url(self.local.base_url.as_deref(), "local.baseUrl")?;
        check_base_url(self.vercel.base_url.as_deref(), "vercel.baseUrl")?;
        check_token(self.local.token.as_deref(), "local.token")?;
        check_token(self.vercel.token.as_deref(), "vercel.token")
    }

    /// Refuses a `warmPool` that keeps Boxes (`size` > 0) on a provider that cannot keep them:
    /// `cloudflare`, whose Worker keeps no timer alive between its requests, so an idle pooled
    /// Box could never be closed. Checked where the provider is known: `configureSandbox` (the
    /// provider named or chosen by the Worker's binding) and `hubSandbox` (a named provider).
    ///
    /// # Errors
    /// `SANDBOX_NOT_SUPPORTED` (provider `cloudflare`) naming `warmPool` and how to turn it off.
    pub fn check_warm_pool(&self, kind: ProviderKind) -> Result<()> {
        if kind != ProviderKind::Cloudflare || !self.warm_pool.is_some_and(WarmPool::enabled) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::NotSupported,
            format!(
                "warmPool is not supported by the {kind} provider: a Worker keeps no timer alive between requests, so an idle Box could not be closed; remove warmPool (or set warmPool.size to 0)"
            ),
        )
        .with_provider(kind))
    }

    /// Chooses the provider: explicit config > env `SANDBOX_PROVIDER` > a Cloudflare binding in the
    /// request env > Vercel credentials > `local` when not in production.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for an unknown provider name; `SANDBOX_PROVIDER_REQUIRED` when
    /// nothing applies (production without credentials).
    pub fn select_provider(&self, has_cloudflare_binding: bool) -> Result<ProviderKind> {
        let named = non_empty(self.provider.as_ref()).map(|p| (p, "config provider"));
        let named = named.or_else(|| self.env("SANDBOX_PROVIDER").map(|p| (p, "SANDBOX_PROVIDER")));
        if let Some((name, origin)) = named {
            return ProviderKind::parse(&name).ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "{origin} is {name}; expected \"vercel\", \"cloudflare\" or \"local\"",
                        name = crate::error::quoted(&name)
                    ),
                )
            });
        }
        if has_cloudflare_binding {
            return Ok(ProviderKind::Cloudflare);
        }
        // A configured vercel.token chooses Vercel even without its ids: they are then asked
        // for by name (provider_settings), rather than the Run going elsewhere without a word.
        if self.vercel.credentials(&self.env).is_some() || self.vercel.token.as_deref().is_some_and(|t| !t.is_empty()) {
            return Ok(ProviderKind::Vercel);
        }
        if !self.is_production() {
            return Ok(ProviderKind::Local);
        }
        Err(Error::new(
            ErrorCode::ProviderRequired,
            "no sandbox provider could be chosen in production: set `provider` to \"vercel\" or \"cloudflare\" (or env SANDBOX_PROVIDER) and its credentials, or to \"local\" for a local Box host",
        ))
    }

    /// What the chosen provider is built from: [`SandboxConfig::select_provider`], then that
    /// provider's options resolved (Vercel credentials from config or env; Cloudflare options and
    /// its local-development variables). `has_cloudflare_binding`: the Worker env handed to
    /// `configureSandbox` holds the `cloudflare.binding` Durable Object namespace.
    ///
    /// # Errors
    /// Those of [`SandboxConfig::select_provider`]; `SANDBOX_PROVIDER_REQUIRED` when `vercel` is
    /// chosen without credentials, or `cloudflare` without its binding (and without
    /// `SANDBOX_LOCAL_URL`/`SANDBOX_LOCAL_TOKEN`); `SANDBOX_INVALID_ARGUMENT` for bad `cloudflare`
    /// options.
    pub fn provider_settings(&self, has_cloudflare_binding: bool) -> Result<ProviderSettings> {
        self.check_explicit()?;
        match self.select_provider(has_cloudflare_binding)? {
            // The host decides with the app's production flag, not its own NODE_ENV reading.
            ProviderKind::Local => {
                Ok(ProviderSettings::Local(LocalOptions { production: self.is_production(), ..self.local.clone() }))
            }
            ProviderKind::Vercel => {
                let credentials = self.vercel.credentials(&self.env).ok_or_else(|| {
                    let message = if self.vercel.token.as_deref().is_some_and(|t| !t.is_empty()) {
                        "vercel.token is set but its teamId or projectId is not (config vercel.teamId/projectId, or env VERCEL_TEAM_ID/VERCEL_PROJECT_ID); VERCEL_OIDC_TOKEN does not replace a configured token"
                    } else {
                        "the vercel provider needs token, teamId and projectId (config vercel.*, env VERCEL_TOKEN/VERCEL_TEAM_ID/VERCEL_PROJECT_ID or VERCEL_OIDC_TOKEN)"
                    };
                    Error::new(ErrorCode::ProviderRequired, message).with_provider(ProviderKind::Vercel)
                })?;
                check_token(
                    Some(credentials.token.as_str()),
                    "the vercel token (vercel.token, VERCEL_TOKEN or VERCEL_OIDC_TOKEN)",
                )?;
                Ok(ProviderSettings::Vercel {
                    endpoint: self.vercel.endpoint(credentials),
                    network_policy: self.vercel.network_policy.clone(),
                })
            }
            ProviderKind::Cloudflare => {
                let settings = self.cloudflare.resolve(&self.env)?;
                check_token(settings.local_host.as_ref().map(|h| h.token.as_str()), "SANDBOX_LOCAL_TOKEN")?;
                if !has_cloudflare_binding && settings.local_host.is_none() {
                    return Err(crate::provider::cloudflare::options::missing_binding_error(&settings.binding));
                }
                Ok(ProviderSettings::Cloudflare(settings))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: serde_json::Value) -> SandboxConfig {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn explicit_provider_wins() {
        let c = config(serde_json::json!({"provider": "vercel", "env": {"SANDBOX_PROVIDER": "local"}}));
        assert_eq!(c.select_provider(true).unwrap(), ProviderKind::Vercel);
    }

    #[test]
    fn env_provider_then_binding_then_credentials_then_local() {
        let c = config(serde_json::json!({"env": {"SANDBOX_PROVIDER": "cloudflare"}}));
        assert_eq!(c.select_provider(false).unwrap(), ProviderKind::Cloudflare);
        let c = config(serde_json::json!({}));
        assert_eq!(c.select_provider(true).unwrap(), ProviderKind::Cloudflare);
        let c = config(
            serde_json::json!({"env": {"VERCEL_TOKEN": "t", "VERCEL_TEAM_ID": "team", "VERCEL_PROJECT_ID": "p"}}),
        );
        assert_eq!(c.select_provider(false).unwrap(), ProviderKind::Vercel);
        let c = config(serde_json::json!({"env": {"VERCEL_TOKEN": "t"}}));
        assert_eq!(c.select_provider(false).unwrap(), ProviderKind::Local);
    }

    #[test]
    fn production_without_provider_is_an_error() {
        let c = config(serde_json::json!({"env": {"NODE_ENV": "production"}}));
        let error = c.select_provider(false).unwrap_err();
        assert_eq!(error.code(), ErrorCode::ProviderRequired);
        let c = config(serde_json::json!({"production": true}));
        assert_eq!(c.select_provider(false).unwrap_err().code(), ErrorCode::ProviderRequired);
    }

    #[test]
    fn unknown_provider_is_invalid() {
        let c = config(serde_json::json!({"provider": "docker"}));
        let error = c.select_provider(false).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidArgument);
        assert!(error.message().contains("\"docker\""), "{}", error.message());
    }

    #[test]
    fn settings_resolve_the_chosen_provider() {
        let c = config(
            serde_json::json!({"env": {"VERCEL_TOKEN": "t_long_enough", "VERCEL_TEAM_ID": "team", "VERCEL_PROJECT_ID": "p"}}),
        );
        match c.provider_settings(false).unwrap() {
            ProviderSettings::Vercel { endpoint, .. } => assert_eq!(endpoint.project_id.as_deref(), Some("p")),
            other => panic!("expected vercel, got {other:?}"),
        }
        let c = config(serde_json::json!({"provider": "vercel"}));
        assert_eq!(c.provider_settings(false).unwrap_err().code(), ErrorCode::ProviderRequired);
        let c = config(serde_json::json!({"local": {"baseUrl": "http://127.0.0.1:1"}}));
        assert!(
            matches!(c.provider_settings(false).unwrap(), ProviderSettings::Local(options) if options.base_url.is_some())
        );
    }

    #[test]
    fn the_local_host_gets_the_configs_production_flag() {
        let host = |value: serde_json::Value| match config(value).provider_settings(false).unwrap() {
            ProviderSettings::Local(options) => options.in_process_host(),
            other => panic!("expected local, got {other:?}"),
        };
        assert!(host(serde_json::json!({"provider": "local", "production": true})).production);
        assert!(host(serde_json::json!({"provider": "local", "env": {"NODE_ENV": "production"}})).production);
        assert!(
            !host(serde_json::json!({"provider": "local", "production": false, "env": {"NODE_ENV": "production"}}))
                .production
        );
        assert!(!host(serde_json::json!({"provider": "local"})).production);
    }

    #[test]
    fn cloudflare_without_its_binding_names_it_and_the_wrangler_lines() {
        let c = config(serde_json::json!({"provider": "cloudflare", "cloudflare": {"binding": "BOXES"}}));
        let error = c.provider_settings(false).unwrap_err();
        assert_eq!(error.code(), ErrorCode::ProviderRequired);
        assert_eq!(error.provider(), Some(ProviderKind::Cloudflare));
        for part in [
            "\"BOXES\"",
            "[[durable_objects.bindings]]",
            "name = \"BOXES\"",
            "new_sqlite_classes",
            "[[containers]]",
            "export { Sandbox }",
        ] {
            assert!(error.message().contains(part), "{part} in {}", error.message());
        }
    }

    #[test]
    fn cloudflare_settings_come_from_the_options_the_binding_and_the_env() {
        let c = config(serde_json::json!({"cloudflare": {"sandboxId": "shared", "keepAlive": true}}));
        match c.provider_settings(true).unwrap() {
            ProviderSettings::Cloudflare(s) => {
                assert_eq!(
                    (s.binding.as_str(), s.sandbox_id.as_deref(), s.keep_alive),
                    ("SANDBOX", Some("shared"), true)
                );
            }
            other => panic!("expected cloudflare, got {other:?}"),
        }
        let local = config(
            serde_json::json!({"provider": "cloudflare", "env": {"SANDBOX_LOCAL_URL": "http://127.0.0.1:9", "SANDBOX_LOCAL_TOKEN": "t_long_enough"}}),
        );
        assert!(
            matches!(local.provider_settings(false).unwrap(), ProviderSettings::Cloudflare(s) if s.local_host.is_some())
        );
        let bad = config(serde_json::json!({"provider": "cloudflare", "cloudflare": {"sandboxId": "api"}}));
        assert_eq!(bad.provider_settings(true).unwrap_err().code(), ErrorCode::InvalidArgument);
        assert!(serde_json::from_value::<SandboxConfig>(serde_json::json!({"cloudflare": {"sandboxID": "x"}})).is_err());
        assert!(env_names().contains(&"SANDBOX_LOCAL_URL") && env_names().contains(&"SANDBOX_LOCAL_TOKEN"));
    }

    #[test]
    fn a_configured_vercel_token_without_ids_is_named_not_swapped() {
        let payload = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            br#"{"owner_id":"team_1","project_id":"prj_2"}"#,
        );
        let c = config(
            serde_json::json!({"vercel": {"token": "configured_token"}, "env": {"VERCEL_OIDC_TOKEN": format!("e30.{payload}.sig")}}),
        );
        let error = c.provider_settings(false).unwrap_err();
        assert_eq!(error.code(), ErrorCode::ProviderRequired);
        assert!(
            error.message().contains("vercel.token is set but its teamId or projectId is not"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn bad_urls_short_tokens_and_bad_limits_are_named() {
        for (json, part) in [
            (
                serde_json::json!({"local": {"baseUrl": "not a url"}}),
                "local.baseUrl must be an absolute http:// or https:// URL",
            ),
            (serde_json::json!({"vercel": {"baseUrl": "ftp://x"}}), "vercel.baseUrl must be"),
            (serde_json::json!({"local": {"baseUrl": "http://"}}), "local.baseUrl must be"),
            (serde_json::json!({"local": {"token": "a"}}), "local.token has 1 character; a token must have at least 8"),
            (
                serde_json::json!({"local": {"token": "tok\u{0100}en_long"}}),
                "local.token has a character at position 4 that is not visible ASCII",
            ),
            (
                serde_json::json!({"vercel": {"token": "token with space"}}),
                "vercel.token has a character at position 6",
            ),
            (
                serde_json::json!({"env": {"VERCEL_TOKEN": "short", "VERCEL_TEAM_ID": "t", "VERCEL_PROJECT_ID": "p"}}),
                "the vercel token",
            ),
            (
                serde_json::json!({"provider": "cloudflare", "env": {"SANDBOX_LOCAL_URL": "http://127.0.0.1:9", "SANDBOX_LOCAL_TOKEN": "t"}}),
                "SANDBOX_LOCAL_TOKEN has 1 character",
            ),
        ] {
            let error = config(json).provider_settings(false).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidArgument);
            assert!(error.message().contains(part), "{part} in {}", error.message());
        }
        assert!(config(serde_json::json!({"local": {"baseUrl": "https://box.example:8443/x", "token": "12345678"}}))
            .provider_settings(false)
            .is_ok());
        for (json, what) in [
            (serde_json::json!({"local": {"baseUrl": "http://me:pw_secret@127.0.0.1:9/"}}), "local.baseUrl"),
            (serde_json::json!({"vercel": {"baseUrl": "https://pw_secret@api.example"}}), "vercel.baseUrl"),
        ] {
            let error = config(json).check_explicit().unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidArgument);
            assert!(error.message().starts_with(&format!("{what} must not carry user info")), "{}", error.message());
            assert!(!error.message().contains("pw_secret"), "{}", error.message());
        }
        assert!(config(serde_json::json!({"vercel": {"baseUrl": "https://api.example/a@b"}})).check_explicit().is_ok());
        for (json, part) in [
            (
                serde_json::json!({"maxDepth": -1}),
                "transfer.maxDepth must be a positive integer <= 1073741824 (got -1)",
            ),
            (
                serde_json::json!({"maxSidecars": 1.5}),
                "transfer.maxSidecars must be a positive integer <= 1073741824 (got 1.5)",
            ),
            (
                serde_json::json!({"maxInputBytes": "8"}),
                "transfer.maxInputBytes must be a positive integer <= 1073741824 (got \"8\")",
            ),
            (serde_json::json!({"maxOutputBytes": 0}), "transfer.maxOutputBytes"),
        ] {
            let overrides: TransferOverrides = serde_json::from_value(json).unwrap();
            let error = overrides.resolve().unwrap_err();
            assert!(error.message().contains(part), "{part} in {}", error.message());
        }
        let overrides: TransferOverrides = serde_json::from_value(serde_json::json!({"maxDepth": 8})).unwrap();
        assert_eq!(overrides.resolve().unwrap().max_depth, 8);
    }

    #[test]
    fn unknown_config_keys_are_rejected() {
        assert!(serde_json::from_value::<SandboxConfig>(serde_json::json!({"provder": "vercel"})).is_err());
    }

    #[test]
    fn from_value_reads_every_key_and_refuses_what_is_wrong() {
        use serde_json::json;
        let accepted = [
            json!({}),
            json!({"provider": "vercel", "production": true, "env": {"A": "1", "NODE_ENV": "production"}}),
            json!({"provider": null, "production": null, "debug": null}),
            json!({"debug": true}),
            json!({"vercel": {"token": "t", "teamId": "team", "projectId": "p", "baseUrl": "http://x", "networkPolicy": "deny-all"}}),
            json!({"vercel": {"token": null, "networkPolicy": null}}),
            json!({"vercel": {}, "local": {}, "transfer": {}, "env": {}}),
            json!({"local": {"baseUrl": "http://127.0.0.1:1", "token": "s", "networkPolicy": {"mode": "deny-all"}}}),
            json!({"local": {"isolation": "none", "parked": {"size": 0, "idleMs": 1000}}}),
            json!({"cloudflare": {"binding": "B", "sandboxId": "x", "sleepAfter": "10m", "keepAlive": true, "normalizeId": false}}),
            json!({"transfer": {"maxInputBytes": 10, "maxOutputBytes": 20, "maxDepth": 8, "maxSidecars": 3, "maxSidecarBytes": 0, }}),
            json!({"transfer": {"maxDepth": null}}),
            // Kept as given: TransferOverrides::resolve checks each limit and names its key.
            json!({"transfer": {"maxDepth": -1}}),
            json!({"transfer": {"maxDepth": 1.5}}),
            json!({"transfer": {"maxInputBytes": "1"}}),
        ];
        for config in &accepted {
            assert!(SandboxConfig::from_value(config).is_ok(), "{config}");
        }
        let refused = [
            json!({"provder": "vercel"}),
            json!({"provider": 1}),
            json!({"production": "yes"}),
            json!({"debug": 1}),
            json!({"vercel": null}),
            json!({"vercel": {"tokn": "t"}}),
            json!({"vercel": {"token": 5}}),
            json!({"vercel": []}),
            json!({"local": {"baseURL": "x"}}),
            json!({"local": null}),
            json!({"local": {"parked": {"size": -1}}}),
            json!({"local": {"parked": {"count": 2}}}),
            json!({"local": {"networkPolicy": {"allow": ["a.com"]}}}),
            json!({"cloudflare": {"bindings": "B"}}),
            json!({"cloudflare": null}),
            json!({"transfer": {"maxDepht": 1}}),
            json!({"transfer": null}),
            json!({"env": null}),
            json!({"env": {"A": 1}}),
            json!({"env": []}),
            json!("config"),
            json!(null),
        ];
        for config in &refused {
            assert!(SandboxConfig::from_value(config).is_err(), "{config}");
        }
        let read =
            SandboxConfig::from_value(&json!({"provider": "local", "vercel": {"teamId": "team"}, "env": {"A": "1"}}))
                .unwrap();
        assert_eq!(
            (read.provider.as_deref(), read.vercel.team_id.as_deref(), read.env.get("A").map(String::as_str)),
            (Some("local"), Some("team"), Some("1"))
        );
    }

    #[test]
    fn from_value_messages_name_the_key() {
        use serde_json::json;
        let message = |config: serde_json::Value| SandboxConfig::from_value(&config).unwrap_err();
        assert_eq!(
            message(json!({"provder": "vercel"})),
            "unknown field `provder`, expected one of `provider`, `production`, `vercel`, `local`, `cloudflare`, `transfer`, `env`, `debug`, `warmPool`"
        );
        for (pool, words) in [
            (json!({"size": 17}), "warmPool: warmPool.size is 17; it must be an integer from 0 to 16"),
            (json!({"idleMs": 10}), "warmPool: warmPool.idleMs is 10; it must be an integer from 1000 to 3600000 ms"),
            (json!({"sise": 1}), "warmPool: unknown field `sise`, expected `size` or `idleMs`"),
            (json!(2), "warmPool: invalid type: integer `2`, expected struct WarmPoolOption"),
        ] {
            assert_eq!(message(json!({"warmPool": pool})), words);
        }
        let pooled = SandboxConfig::from_value(&json!({"warmPool": {"size": 2, "idleMs": 5000}})).unwrap();
        assert_eq!(pooled.warm_pool, Some(WarmPool { size: 2, idle_ms: 5000 }));
        assert_eq!(SandboxConfig::from_value(&json!({"warmPool": null})).unwrap().warm_pool, None);
        let cloudflare = ProviderKind::Cloudflare;
        let refused = pooled.check_warm_pool(cloudflare).unwrap_err();
        assert_eq!((refused.code(), refused.provider()), (ErrorCode::NotSupported, Some(cloudflare)));
        assert!(
            pooled.check_warm_pool(ProviderKind::Vercel).is_ok() && pooled.check_warm_pool(ProviderKind::Local).is_ok()
        );
        let off = SandboxConfig::from_value(&json!({"warmPool": {"size": 0}})).unwrap();
        assert!(off.check_warm_pool(cloudflare).is_ok());
        assert_eq!(message(json!({"vercel": {"token": 5}})), "vercel: invalid type: integer `5`, expected a string");
        assert!(message(json!({"cloudflare": {"bindings": "B"}})).starts_with("cloudflare: unknown field `bindings`"));
        assert!(message(json!({"local": {"isolation": "docker"}})).starts_with("local: unknown variant `docker`"));
        for (parked, words) in [
            (json!({"size": 17}), "local: local.parked.size is 17; it must be an integer from 0 to 16"),
            (json!({"size": -1}), "local: local.parked.size is -1; it must be an integer from 0 to 16"),
            (json!({"size": 1.5}), "local: local.parked.size is 1.5; it must be an integer from 0 to 16"),
            (json!({"size": "2"}), "local: local.parked.size is \"2\"; it must be an integer from 0 to 16"),
            (json!({"idleMs": 0}), "local: local.parked.idleMs is 0; it must be an integer from 1 to 3600000 ms"),
            (
                json!({"idleMs": 5e9}),
                "local: local.parked.idleMs is 5000000000.0; it must be an integer from 1 to 3600000 ms",
            ),
        ] {
            assert_eq!(message(json!({"local": {"parked": parked}})), words);
        }
        let config = SandboxConfig::from_value(&json!({"local": {"parked": {"size": 16, "idleMs": 3600000}}})).unwrap();
        assert_eq!(
            config.local.parked,
            Some(crate::provider::local::options::Parked { size: Some(16), idle_ms: Some(3_600_000) })
        );
        let config = SandboxConfig::from_value(&json!({"local": {"isolation": "none"}})).unwrap();
        assert_eq!(config.local.isolation, Some(crate::provider::local::options::Isolation::None));
        let config = SandboxConfig::from_value(&json!({"transfer": {"maxDepth": -1}})).expect("kept for resolve");
        let resolved = config.transfer.resolve().expect_err("-1 is no limit");
        assert!(resolved.message().contains("transfer.maxDepth"), "{}", resolved.message());
    }
}
