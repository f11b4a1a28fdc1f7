//! The `local.networkPolicy` option: what the local Box host can enforce on a Box's network.
//!
//! Provider layer, pure. The host cuts a Box's network off or leaves it on
//! (pkg-template/box-host/engine/registry.mjs answers 400 for anything else at every create), so
//! a Vercel policy object (an allow list, subnet rules, header transforms) is refused here, when
//! the config is read, by its key, rather than accepted and failing every Run.

use serde::Deserialize;
use serde_json::Value;

/// `local.networkPolicy`: the network of the local host's Boxes.
///
/// Shape: `"allow-all" | "deny-all" | { mode: "allow-all" | "deny-all" }` (the last is what the
/// `@vercel/sandbox` SDK sends for the two strings). Default (unset or `null`): allow-all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Value")]
pub enum LocalNetworkPolicy {
    /// The Box reaches the network (through its own network namespace where isolated).
    AllowAll,
    /// The Box has no network (refused by a host without isolation, which cannot enforce it).
    DenyAll,
}

impl LocalNetworkPolicy {
    /// The policy as the create request's `networkPolicy` string (`"allow-all"` / `"deny-all"`).
    pub fn to_value(self) -> Value {
        Value::from(match self {
            LocalNetworkPolicy::AllowAll => "allow-all",
            LocalNetworkPolicy::DenyAll => "deny-all",
        })
    }
}

/// What a refused policy is, in words that never repeat its values (a Vercel policy can carry
/// header transforms holding credentials): `an object with keys allow, subnets`.
fn described(value: &Value) -> String {
    match value {
        Value::Object(object) if object.is_empty() => "an empty object".to_owned(),
        Value::Object(object) => {
            format!("an object with keys {}", object.keys().map(String::as_str).collect::<Vec<_>>().join(", "))
        }
        Value::String(_) => "a string other than \"allow-all\" and \"deny-all\"".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Number(_) => "a number".to_owned(),
        Value::Null => "null".to_owned(),
    }
}

impl TryFrom<Value> for LocalNetworkPolicy {
    type Error = String;

    /// # Errors
    /// The sentence naming `local.networkPolicy`, what it was and the shapes the host supports.
    fn try_from(value: Value) -> Result<LocalNetworkPolicy, String> {
        LocalNetworkPolicy::parse(&value, "local.networkPolicy")
    }
}

impl LocalNetworkPolicy {
    /// The one rule for a local Box's policy, wherever it comes from: the config
    /// (`local.networkPolicy`) or a Session's `updateNetworkPolicy(policy)`; `label` names it in
    /// the error.
    ///
    /// # Errors
    /// The sentence naming `label`, what the value was (never its contents) and the shapes the
    /// host supports.
    pub fn parse(value: &Value, label: &str) -> Result<LocalNetworkPolicy, String> {
        let mode = match &value {
            Value::String(mode) => Some(mode.as_str()),
            Value::Object(object) if object.len() == 1 => object.get("mode").and_then(Value::as_str),
            _ => None,
        };
        match mode {
            Some("allow-all") => Ok(LocalNetworkPolicy::AllowAll),
            Some("deny-all") => Ok(LocalNetworkPolicy::DenyAll),
            _ => Err(format!(
                "{label} is {}; the local Box host supports only \"allow-all\", \"deny-all\" or {{ mode: \"allow-all\" | \"deny-all\" }} (an allow list, subnet rules or transforms are Vercel's: use the vercel provider for them)",
                described(value)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_two_modes_are_read_as_strings_or_the_sdk_object() {
        for (value, policy) in [
            (json!("allow-all"), LocalNetworkPolicy::AllowAll),
            (json!({"mode": "allow-all"}), LocalNetworkPolicy::AllowAll),
            (json!("deny-all"), LocalNetworkPolicy::DenyAll),
            (json!({"mode": "deny-all"}), LocalNetworkPolicy::DenyAll),
        ] {
            assert_eq!(serde_json::from_value::<LocalNetworkPolicy>(value.clone()).unwrap(), policy, "{value}");
            assert_eq!(serde_json::from_value::<LocalNetworkPolicy>(policy.to_value()).unwrap(), policy);
        }
    }

    #[test]
    fn a_session_update_reads_the_same_rule_under_its_own_name() {
        assert_eq!(
            LocalNetworkPolicy::parse(&json!("deny-all"), "updateNetworkPolicy(policy)"),
            Ok(LocalNetworkPolicy::DenyAll)
        );
        let message =
            LocalNetworkPolicy::parse(&json!({"allow": ["a.example"]}), "updateNetworkPolicy(policy)").unwrap_err();
        assert!(message.starts_with("updateNetworkPolicy(policy) is an object with keys allow;"), "{message}");
        assert!(!message.contains("a.example"), "{message}");
    }

    #[test]
    fn a_vercel_policy_object_is_refused_by_its_key_without_its_values() {
        for (value, what) in [
            (json!({"allow": ["example.com"]}), "an object with keys allow;"),
            (json!({"mode": "custom", "allow": ["secret.example"]}), "an object with keys mode, allow;"),
            (json!({"mode": "deny-all", "allow": ["a.com"]}), "an object with keys mode, allow;"),
            (json!("no-access"), "a string other than"),
            (json!({}), "an empty object;"),
            (json!(["allow-all"]), "an array;"),
        ] {
            let message = serde_json::from_value::<LocalNetworkPolicy>(value.clone()).unwrap_err().to_string();
            assert!(message.starts_with(&format!("local.networkPolicy is {what}")), "{message}");
            assert!(
                message.contains("supports only \"allow-all\", \"deny-all\" or { mode: \"allow-all\" | \"deny-all\" }"),
                "{message}"
            );
            assert!(!message.contains("example") && !message.contains("no-access"), "{message}");
        }
    }
}
