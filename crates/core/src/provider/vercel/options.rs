//! What the app configures for the Vercel provider (`vercel: { … }` of `configureSandbox`), the
//! credential rule (config, then env, then the OIDC token) and the endpoint it resolves to.
//!
//! Provider layer, pure: the env is the snapshot the JS glue hands over; nothing is read from the
//! process here.
//!
//! Source: vercel-sandbox-protocol.md §1 (base URL, bearer token, `teamId`), §2 (credentials).

use crate::env_map::EnvMap;

use base64::Engine;
use serde::Deserialize;

/// The default Vercel API base URL (protocol note §1).
pub const DEFAULT_BASE_URL: &str = "https://vercel.com/api";

/// The env variables the Vercel provider reads (credentials), in precedence order per value.
pub const ENV_NAMES: [&str; 7] = [
    "VITE_SANDBOX_TOKEN",
    "VERCEL_TOKEN",
    "VITE_SANDBOX_TEAM_ID",
    "VERCEL_TEAM_ID",
    "VITE_SANDBOX_PROJECT_ID",
    "VERCEL_PROJECT_ID",
    "VERCEL_OIDC_TOKEN",
];

/// `vercel` options of `configureSandbox`. `token`/`teamId`/`projectId` fall back to env
/// `VITE_SANDBOX_*` then `VERCEL_*`, then `VERCEL_OIDC_TOKEN`.
///
/// Shape: `{ token?, teamId?, projectId?, baseUrl?, networkPolicy? }`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VercelOptions {
    /// Vercel access token (secret).
    pub token: Option<String>,
    /// Team id.
    pub team_id: Option<String>,
    /// Project id.
    pub project_id: Option<String>,
    /// API base URL, default [`DEFAULT_BASE_URL`].
    pub base_url: Option<String>,
    /// Network policy for new Boxes (`"allow-all"`, `"deny-all"` or the SDK's object shape).
    pub network_policy: Option<serde_json::Value>,
}

impl std::fmt::Debug for VercelOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VercelOptions")
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .field("team_id", &self.team_id)
            .field("project_id", &self.project_id)
            .field("base_url", &self.base_url)
            .field("network_policy", &self.network_policy)
            .finish()
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

/// Where and as whom Vercel requests are sent.
#[derive(Clone)]
pub struct VercelEndpoint {
    /// Base URL without trailing slash, e.g. `https://vercel.com/api` or `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// Bearer token. Secret: never logged, never put in an error or a Response. Empty: no
    /// `authorization` header.
    pub token: String,
    /// `teamId` query parameter, sent on every request when set.
    pub team_id: Option<String>,
    /// `projectId`, sent in the create body when set.
    pub project_id: Option<String>,
}

impl std::fmt::Debug for VercelEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VercelEndpoint")
            .field("base_url", &self.base_url)
            .field("token", &"[redacted]")
            .field("team_id", &self.team_id)
            .field("project_id", &self.project_id)
            .finish()
    }
}

fn non_empty(value: Option<&String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl VercelOptions {
    /// Credentials: config, else env `VITE_SANDBOX_{TOKEN,TEAM_ID,PROJECT_ID}` /
    /// `VERCEL_{TOKEN,TEAM_ID,PROJECT_ID}`, else the `owner_id`/`project_id` claims of
    /// `VERCEL_OIDC_TOKEN` (protocol note §2). `None` unless all three resolve.
    pub fn credentials(&self, env: &EnvMap) -> Option<VercelCredentials> {
        let env_var = |name: &str| non_empty(env.get(name));
        let either = |first: &str, second: &str| env_var(first).or_else(|| env_var(second));
        let token = non_empty(self.token.as_ref()).or_else(|| either("VITE_SANDBOX_TOKEN", "VERCEL_TOKEN"));
        let team_id = non_empty(self.team_id.as_ref()).or_else(|| either("VITE_SANDBOX_TEAM_ID", "VERCEL_TEAM_ID"));
        let project_id =
            non_empty(self.project_id.as_ref()).or_else(|| either("VITE_SANDBOX_PROJECT_ID", "VERCEL_PROJECT_ID"));
        if let (Some(token), Some(team_id), Some(project_id)) = (token, team_id, project_id) {
            return Some(VercelCredentials { token, team_id, project_id });
        }
        // A token the app configured is never silently swapped for the environment's OIDC token.
        if non_empty(self.token.as_ref()).is_some() {
            return None;
        }
        let oidc = env_var("VERCEL_OIDC_TOKEN")?;
        let (team_id, project_id) = oidc_claims(&oidc)?;
        Some(VercelCredentials { token: oidc, team_id, project_id })
    }

    /// The endpoint for `credentials`: `baseUrl` (default [`DEFAULT_BASE_URL`]), the token, the
    /// team and the project.
    pub fn endpoint(&self, credentials: VercelCredentials) -> VercelEndpoint {
        VercelEndpoint {
            base_url: self.base_url.clone().unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
            token: credentials.token,
            team_id: Some(credentials.team_id),
            project_id: Some(credentials.project_id),
        }
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

    fn env(pairs: &[(&str, &str)]) -> EnvMap {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn credentials_need_all_three_and_prefer_config() {
        let options: VercelOptions =
            serde_json::from_value(serde_json::json!({"token": "a", "teamId": "b", "projectId": "c"})).unwrap();
        let creds = options
            .credentials(&env(&[("VERCEL_TOKEN", "x"), ("VERCEL_TEAM_ID", "y"), ("VERCEL_PROJECT_ID", "z")]))
            .unwrap();
        assert_eq!((creds.token.as_str(), creds.team_id.as_str(), creds.project_id.as_str()), ("a", "b", "c"));
        assert!(!format!("{creds:?}").contains("\"a\""));
        let creds = VercelOptions::default()
            .credentials(&env(&[
                ("VITE_SANDBOX_TOKEN", "v"),
                ("VERCEL_TOKEN", "x"),
                ("VERCEL_TEAM_ID", "y"),
                ("VERCEL_PROJECT_ID", "z"),
            ]))
            .unwrap();
        assert_eq!(creds.token, "v");
        assert!(VercelOptions::default().credentials(&env(&[("VERCEL_TOKEN", "t")])).is_none());
    }

    #[test]
    fn a_configured_token_without_ids_is_not_replaced_by_the_oidc_token() {
        let payload =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"owner_id":"team_1","project_id":"prj_2"}"#);
        let oidc = format!("e30.{payload}.sig");
        let options: VercelOptions = serde_json::from_value(serde_json::json!({"token": "configured_token"})).unwrap();
        assert!(options.credentials(&env(&[("VERCEL_OIDC_TOKEN", &oidc)])).is_none());
    }

    #[test]
    fn oidc_token_supplies_team_and_project() {
        let payload =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"owner_id":"team_1","project_id":"prj_2"}"#);
        let token = format!("e30.{payload}.sig");
        let creds = VercelOptions::default().credentials(&env(&[("VERCEL_OIDC_TOKEN", &token)])).unwrap();
        assert_eq!((creds.team_id.as_str(), creds.project_id.as_str()), ("team_1", "prj_2"));
    }

    #[test]
    fn endpoint_defaults_the_base_url_and_hides_the_token() {
        let creds = VercelCredentials { token: "secret".into(), team_id: "t".into(), project_id: "p".into() };
        let endpoint = VercelOptions::default().endpoint(creds);
        assert_eq!(endpoint.base_url, DEFAULT_BASE_URL);
        assert!(!format!("{endpoint:?}").contains("secret"));
    }
}
