//! Sandbox configuration: what the app (or the Vite plugin) sets, the environment snapshot the JS
//! glue hands over, and the provider selection rule of DESIGN.md §4.
//!
//! Pure: the JS glue reads `process.env` (or a Worker's env) and passes it here as a plain map;
//! this module never reads the environment itself.

use std::collections::BTreeMap;

use base64::Engine;
use serde::Deserialize;

use crate::error::{Error, ErrorCode, Result};
use crate::provider::ProviderKind;
use crate::transfer::TransferLimits;

/// The config object accepted by `configureSandbox(config)`.
///
/// ```ts
/// { provider?: 'vercel' | 'cloudflare' | 'local', production?: boolean,
///   vercel?: { token?, teamId?, projectId?, baseUrl?, networkPolicy? },
///   local?: { baseUrl?, token?, networkPolicy? }, transfer?: Partial<TransferLimits>,
///   env?: Record<string, string> }
/// ```
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
    /// Transfer limits (bytes, depth, counts); unset fields keep their defaults.
    #[serde(default)]
    pub transfer: TransferOverrides,
    /// Environment snapshot, given by the JS glue (never read from the process here).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// `vercel` options. `token`/`teamId`/`projectId` fall back to env `VITE_SANDBOX_*` then `VERCEL_*`,
/// then `VERCEL_OIDC_TOKEN`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VercelOptions {
    /// Vercel access token (secret).
    pub token: Option<String>,
    /// Team id.
    pub team_id: Option<String>,
    /// Project id.
    pub project_id: Option<String>,
    /// API base URL, default `https://vercel.com/api`.
    pub base_url: Option<String>,
    /// Network policy for new Boxes (`"allow-all"`, `"deny-all"` or the SDK's object shape).
    pub network_policy: Option<serde_json::Value>,
}

/// `local` options: a Box host already running somewhere (else the Node glue starts one in-process).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalOptions {
    /// Base URL of a running local Box host, e.g. `http://127.0.0.1:8787`.
    pub base_url: Option<String>,
    /// Its bearer token (secret).
    pub token: Option<String>,
    /// Network policy for new Boxes; default allows the network (as Vercel does).
    pub network_policy: Option<serde_json::Value>,
}

/// Partial [`TransferLimits`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferOverrides {
    /// Max UTF-8 bytes of the input envelope.
    pub max_input_bytes: Option<u64>,
    /// Max UTF-8 bytes of the result envelope.
    pub max_output_bytes: Option<u64>,
    /// Max nesting depth of payload, context and result.
    pub max_depth: Option<u32>,
    /// Max number of binary sidecars per direction.
    pub max_sidecars: Option<u32>,
    /// Max total sidecar bytes per direction.
    pub max_sidecar_bytes: Option<u64>,
}

impl TransferOverrides {
    /// The limits with these overrides applied, validated.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` when a value is 0 or above 1 GiB.
    pub fn resolve(&self) -> Result<TransferLimits> {
        let mut limits = TransferLimits::default();
        if let Some(v) = self.max_input_bytes { limits.max_input_bytes = v; }
        if let Some(v) = self.max_output_bytes { limits.max_output_bytes = v; }
        if let Some(v) = self.max_depth { limits.max_depth = v; }
        if let Some(v) = self.max_sidecars { limits.max_sidecars = v; }
        if let Some(v) = self.max_sidecar_bytes { limits.max_sidecar_bytes = v; }
        limits.validate()?;
        Ok(limits)
    }
}

/// Vercel credentials, all three present.
#[derive(Clone, PartialEq, Eq)]
pub struct VercelCredentials {
    /// Bearer token (secret).
    pub token: String,
    /// Team id.
    pub team_id: String,
    /// Project id.
    pub project_id: String,
}

impl std::fmt::Debug for VercelCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VercelCredentials")
            .field("token", &"[redacted]")
            .field("team_id", &self.team_id)
            .field("project_id", &self.project_id)
            .finish()
    }
}

fn non_empty(value: Option<&String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl SandboxConfig {
    fn env(&self, name: &str) -> Option<String> {
        non_empty(self.env.get(name))
    }

    fn env_either(&self, first: &str, second: &str) -> Option<String> {
        self.env(first).or_else(|| self.env(second))
    }

    /// Whether the app runs in production.
    pub fn is_production(&self) -> bool {
        self.production.unwrap_or_else(|| self.env("NODE_ENV").as_deref() == Some("production"))
    }

    /// Vercel credentials: config, else env `VITE_SANDBOX_{TOKEN,TEAM_ID,PROJECT_ID}` /
    /// `VERCEL_{TOKEN,TEAM_ID,PROJECT_ID}`, else the `owner_id`/`project_id` claims of
    /// `VERCEL_OIDC_TOKEN` (protocol note §2). `None` unless all three resolve.
    pub fn vercel_credentials(&self) -> Option<VercelCredentials> {
        let token = non_empty(self.vercel.token.as_ref()).or_else(|| self.env_either("VITE_SANDBOX_TOKEN", "VERCEL_TOKEN"));
        let team_id = non_empty(self.vercel.team_id.as_ref()).or_else(|| self.env_either("VITE_SANDBOX_TEAM_ID", "VERCEL_TEAM_ID"));
        let project_id =
            non_empty(self.vercel.project_id.as_ref()).or_else(|| self.env_either("VITE_SANDBOX_PROJECT_ID", "VERCEL_PROJECT_ID"));
        if let (Some(token), Some(team_id), Some(project_id)) = (token, team_id, project_id) {
            return Some(VercelCredentials { token, team_id, project_id });
        }
        let oidc = self.env("VERCEL_OIDC_TOKEN")?;
        let (team_id, project_id) = oidc_claims(&oidc)?;
        Some(VercelCredentials { token: oidc, team_id, project_id })
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
                    format!("{origin} is {name:?}; expected \"vercel\", \"cloudflare\" or \"local\""),
                )
            });
        }
        if has_cloudflare_binding {
            return Ok(ProviderKind::Cloudflare);
        }
        if self.vercel_credentials().is_some() {
            return Ok(ProviderKind::Vercel);
        }
        if !self.is_production() {
            return Ok(ProviderKind::Local);
        }
        Err(Error::new(
            ErrorCode::ProviderRequired,
            "no sandbox provider could be chosen in production: set `provider` to \"vercel\" or \"cloudflare\" (or env SANDBOX_PROVIDER) and its credentials",
        ))
    }
}

/// The `owner_id` and `project_id` claims of an unverified JWT (the SDK does the same, §2).
fn oidc_claims(token: &str) -> Option<(String, String)> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Some((claims.get("owner_id")?.as_str()?.to_owned(), claims.get("project_id")?.as_str()?.to_owned()))
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
        let c = config(serde_json::json!({"env": {"VERCEL_TOKEN": "t", "VERCEL_TEAM_ID": "team", "VERCEL_PROJECT_ID": "p"}}));
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
    fn credentials_need_all_three_and_prefer_config() {
        let c = config(serde_json::json!({"vercel": {"token": "a", "teamId": "b", "projectId": "c"},
            "env": {"VERCEL_TOKEN": "x", "VERCEL_TEAM_ID": "y", "VERCEL_PROJECT_ID": "z"}}));
        let creds = c.vercel_credentials().unwrap();
        assert_eq!((creds.token.as_str(), creds.team_id.as_str(), creds.project_id.as_str()), ("a", "b", "c"));
        assert!(!format!("{creds:?}").contains("\"a\""));
        let c = config(serde_json::json!({"env": {"VITE_SANDBOX_TOKEN": "v", "VERCEL_TOKEN": "x", "VERCEL_TEAM_ID": "y", "VERCEL_PROJECT_ID": "z"}}));
        assert_eq!(c.vercel_credentials().unwrap().token, "v");
    }

    #[test]
    fn oidc_token_supplies_team_and_project() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"owner_id":"team_1","project_id":"prj_2"}"#);
        let token = format!("e30.{payload}.sig");
        let c = config(serde_json::json!({"env": {"VERCEL_OIDC_TOKEN": token}}));
        let creds = c.vercel_credentials().unwrap();
        assert_eq!((creds.team_id.as_str(), creds.project_id.as_str()), ("team_1", "prj_2"));
    }

    #[test]
    fn unknown_config_keys_are_rejected() {
        assert!(serde_json::from_value::<SandboxConfig>(serde_json::json!({"provder": "vercel"})).is_err());
    }
}
