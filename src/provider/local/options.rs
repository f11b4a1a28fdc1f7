//! What the app configures for the `local` provider (`local: { … }` of `configureSandbox`).
//!
//! Provider layer, pure.

use serde::Deserialize;

/// `local` options: a Box host already running somewhere (else the Node glue starts one
/// in-process, once per isolate).
///
/// Shape: `{ baseUrl?: string, token?: string, networkPolicy?: "allow-all" | "deny-all" | object }`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalOptions {
    /// Base URL of a running local Box host, e.g. `http://127.0.0.1:8787`.
    pub base_url: Option<String>,
    /// Its bearer token (secret).
    pub token: Option<String>,
    /// Network policy for new Boxes; default allows the network (as Vercel does).
    pub network_policy: Option<serde_json::Value>,
}

impl std::fmt::Debug for LocalOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalOptions")
            .field("base_url", &self.base_url)
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .field("network_policy", &self.network_policy)
            .finish()
    }
}
