//! executionAuthority: what code in a Box can reach, per provider, as a fixed-shape value.
//!
//! Pure. Shape (contract §2, `packages/runtime/src/index.ts`):
//! ```ts
//! { credentials: 'ambient' | 'none' | 'provisioned' | 'unknown',
//!   environment: 'ambient' | 'none' | 'selected' | 'unknown',
//!   filesystem: { access: 'none' | 'read-only' | 'read-write' | 'unknown',
//!                 scope: 'host' | 'none' | 'sandbox' | 'unknown' | 'workspace' },
//!   isolation: 'container' | 'microvm' | 'none' | 'process' | 'unknown',
//!   network: 'none' | 'restricted' | 'unrestricted' | 'unknown',
//!   processes: 'arbitrary' | 'none' | 'restricted' | 'unknown' }
//! ```
//! Vercel and Cloudflare follow the contract's table; the local Box host reports its own (what
//! bubblewrap really applies, or the weaker truth without it), read by [`ExecutionAuthority::from_report`].

use serde_json::{json, Value};

use crate::error::{Error, ErrorCode, Result};

const CREDENTIALS: &[&str] = &["ambient", "none", "provisioned", "unknown"];
const ENVIRONMENT: &[&str] = &["ambient", "none", "selected", "unknown"];
const ACCESS: &[&str] = &["none", "read-only", "read-write", "unknown"];
const SCOPE: &[&str] = &["host", "none", "sandbox", "unknown", "workspace"];
const ISOLATION: &[&str] = &["container", "microvm", "none", "process", "unknown"];
const NETWORK: &[&str] = &["none", "restricted", "unrestricted", "unknown"];
const PROCESSES: &[&str] = &["arbitrary", "none", "restricted", "unknown"];

/// One Box's executionAuthority (every field one of the contract's words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionAuthority {
    /// Which credentials code in the Box holds.
    pub credentials: String,
    /// Which environment variables it sees.
    pub environment: String,
    /// Filesystem access (`read-write`, …).
    pub filesystem_access: String,
    /// Filesystem scope (`sandbox`, `host`, …).
    pub filesystem_scope: String,
    /// The isolation boundary (`microvm`, `container`, `process`, `none`).
    pub isolation: String,
    /// What it can reach on the network.
    pub network: String,
    /// Which processes it may start.
    pub processes: String,
}

impl ExecutionAuthority {
    fn managed(isolation: &str, network: &str) -> ExecutionAuthority {
        ExecutionAuthority {
            credentials: "unknown".into(),
            environment: "selected".into(),
            filesystem_access: "read-write".into(),
            filesystem_scope: "sandbox".into(),
            isolation: isolation.into(),
            network: network.into(),
            processes: "arbitrary".into(),
        }
    }

    /// Vercel Sandbox: a microVM; the network follows `networkPolicy` (the config value, in the
    /// string or object form, see [`vercel_network`]).
    pub fn vercel(network_policy: Option<&Value>) -> ExecutionAuthority {
        ExecutionAuthority::managed("microvm", vercel_network(network_policy))
    }

    /// Cloudflare Sandbox: a container; its network is not established by the provider (`unknown`).
    pub fn cloudflare() -> ExecutionAuthority {
        ExecutionAuthority::managed("container", "unknown")
    }

    /// Reads the local Box host's report (`session.executionAuthority` of its create answer, or
    /// `GET /_vite-hub/execution-authority`).
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when a field is missing or not one of the contract's words.
    pub fn from_report(report: &Value) -> Result<ExecutionAuthority> {
        let field = |value: Option<&Value>, name: &str, allowed: &[&str]| -> Result<String> {
            match value.and_then(Value::as_str) {
                Some(word) if allowed.contains(&word) => Ok(word.to_owned()),
                _ => Err(Error::new(
                    ErrorCode::TransportError,
                    format!("the local Box host reported an executionAuthority with an invalid {name}"),
                )),
            }
        };
        let filesystem = report.get("filesystem");
        Ok(ExecutionAuthority {
            credentials: field(report.get("credentials"), "credentials", CREDENTIALS)?,
            environment: field(report.get("environment"), "environment", ENVIRONMENT)?,
            filesystem_access: field(filesystem.and_then(|f| f.get("access")), "filesystem.access", ACCESS)?,
            filesystem_scope: field(filesystem.and_then(|f| f.get("scope")), "filesystem.scope", SCOPE)?,
            isolation: field(report.get("isolation"), "isolation", ISOLATION)?,
            network: field(report.get("network"), "network", NETWORK)?,
            processes: field(report.get("processes"), "processes", PROCESSES)?,
        })
    }

    /// The contract's JSON shape (keys in alphabetical order).
    pub fn to_json(&self) -> Value {
        json!({
            "credentials": self.credentials,
            "environment": self.environment,
            "filesystem": { "access": self.filesystem_access, "scope": self.filesystem_scope },
            "isolation": self.isolation,
            "network": self.network,
            "processes": self.processes,
        })
    }
}

/// Vercel's network per `networkPolicy` (contract §2 table): `none` for `deny-all`;
/// `unrestricted` when unset, `allow-all`, or an allow list/record containing `*`; `restricted`
/// for a non-empty allow list/record or any `subnets.allow`/`subnets.deny`; else `unknown`.
/// The strings and the SDK's `{ mode }` objects mean the same.
pub fn vercel_network(policy: Option<&Value>) -> &'static str {
    let Some(policy) = policy else { return "unrestricted" };
    let mode = policy.as_str().or_else(|| policy.get("mode").and_then(Value::as_str));
    match mode {
        Some("deny-all") => return "none",
        Some("allow-all") => return "unrestricted",
        _ => {}
    }
    if policy.is_null() {
        return "unrestricted";
    }
    let allow = policy.get("allow");
    let allowed: Vec<&str> = match allow {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::Object(record)) => record.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    if allowed.contains(&"*") {
        return "unrestricted";
    }
    let subnets = policy.get("subnets");
    let subnet_rules = ["allow", "deny"]
        .iter()
        .any(|key| subnets.and_then(|s| s.get(key)).and_then(Value::as_array).is_some_and(|list| !list.is_empty()));
    if !allowed.is_empty() || subnet_rules {
        return "restricted";
    }
    "unknown"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vercel_network_follows_the_contract_table() {
        assert_eq!(vercel_network(None), "unrestricted");
        assert_eq!(vercel_network(Some(&json!("allow-all"))), "unrestricted");
        assert_eq!(vercel_network(Some(&json!({"mode": "allow-all"}))), "unrestricted");
        assert_eq!(vercel_network(Some(&json!("deny-all"))), "none");
        assert_eq!(vercel_network(Some(&json!({"mode": "deny-all"}))), "none");
        assert_eq!(vercel_network(Some(&json!({"allow": ["example.com", "*"]}))), "unrestricted");
        assert_eq!(vercel_network(Some(&json!({"allow": {"*": []}}))), "unrestricted");
        assert_eq!(vercel_network(Some(&json!({"allow": ["example.com"]}))), "restricted");
        assert_eq!(vercel_network(Some(&json!({"allow": {"api.example.com": []}}))), "restricted");
        assert_eq!(vercel_network(Some(&json!({"subnets": {"deny": ["10.0.0.0/8"]}}))), "restricted");
        assert_eq!(vercel_network(Some(&json!({"allow": []}))), "unknown");
        assert_eq!(vercel_network(Some(&json!({}))), "unknown");
    }

    #[test]
    fn providers_have_the_contract_shape() {
        assert_eq!(
            ExecutionAuthority::vercel(Some(&json!("deny-all"))).to_json(),
            json!({"credentials": "unknown", "environment": "selected", "filesystem": {"access": "read-write", "scope": "sandbox"},
                   "isolation": "microvm", "network": "none", "processes": "arbitrary"})
        );
        let cloudflare = ExecutionAuthority::cloudflare();
        assert_eq!((cloudflare.isolation.as_str(), cloudflare.network.as_str()), ("container", "unknown"));
    }

    #[test]
    fn a_host_report_is_checked_word_by_word() {
        let report = json!({"isolation": "none", "network": "unrestricted", "filesystem": {"access": "read-write", "scope": "host"},
                            "environment": "selected", "credentials": "none", "processes": "arbitrary"});
        assert_eq!(ExecutionAuthority::from_report(&report).unwrap().to_json(), report);
        let mut bad = report.clone();
        bad["network"] = json!("open");
        assert_eq!(ExecutionAuthority::from_report(&bad).unwrap_err().code(), ErrorCode::TransportError);
        assert!(ExecutionAuthority::from_report(&json!({"isolation": "none"})).is_err());
    }
}
