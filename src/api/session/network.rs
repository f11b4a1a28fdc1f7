//! `session.updateNetworkPolicy(policy)`: the network of the Commands a Session starts from now
//! on, and the executionAuthority that follows ([`SessionCore::update_network_policy`]).
//!
//! Source: vitehub-sandbox-contract.md §2 (executionAuthority); the Vercel protocol's `POST
//! …/network-policy` (`shared/reference/vercel-sandbox-protocol.md` §7.2).

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use super::{authority_object, invalid, js_promise, rejected, SandboxSession};
use crate::error::js::into_js;
use vite_hub_sandbox_core::error::Result;

/// The policy argument as JSON: a string (`"allow-all"`, `"deny-all"`) or a plain object.
fn policy_value(policy: &JsValue) -> Result<serde_json::Value> {
    let bad = || invalid("updateNetworkPolicy(policy) needs \"allow-all\", \"deny-all\" or a policy object");
    let object = policy.is_object() && !js_sys::Array::is_array(policy);
    if policy.as_string().is_none() && !object {
        return Err(bad());
    }
    let text = js_sys::JSON::stringify(policy).map_err(|_| bad())?;
    serde_json::from_str(&String::from(text)).map_err(|_| bad())
}

#[wasm_bindgen]
impl SandboxSession {
    /// `updateNetworkPolicy(policy) → Promise<void>`: the network of the Commands started from
    /// now on; Commands already running keep theirs. `policy` has the shapes of the config's
    /// `networkPolicy`: `"allow-all" | "deny-all" | { mode }` everywhere, Vercel's allow lists
    /// and subnet rules on `vercel` only. `executionAuthority` then reports the new policy.
    /// Vercel protocol: `POST …/network-policy` (the SDK's `updateNetworkPolicy`).
    ///
    /// Errors: `SANDBOX_INVALID_ARGUMENT` for a policy the provider cannot enforce (local: an
    /// allow list or subnet rules), before any request; `SANDBOX_PROVIDER_UNAVAILABLE` when the
    /// local Box host cannot enforce it (`deny-all` without isolation; `allow-all` in production
    /// without a Box network); `SANDBOX_NOT_SUPPORTED` on Cloudflare (`operation`
    /// `updateNetworkPolicy`); `SANDBOX_INVALID_STATE` after close or expiry.
    #[wasm_bindgen(js_name = updateNetworkPolicy)]
    pub fn update_network_policy(&self, policy: JsValue) -> Promise {
        let policy = match self.inner.check_open("updateNetworkPolicy").and_then(|()| policy_value(&policy)) {
            Ok(policy) => policy,
            Err(error) => return rejected(error),
        };
        let inner = self.inner.clone();
        js_promise(Box::pin(async move {
            let authority = inner.core.update_network_policy(&policy).await.map_err(into_js)?;
            inner.authority.replace(authority_object(&authority));
            Ok(JsValue::UNDEFINED)
        }))
    }
}
