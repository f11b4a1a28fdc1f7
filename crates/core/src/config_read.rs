//! `configureSandbox`'s config, read by hand from one parsed [`Value`] into a [`SandboxConfig`].
//!
//! The derived `Deserialize` of [`SandboxConfig`] (and of the provider options in it) stays the
//! reader of the Vite plugin's config (tooling module, `src/plugin.rs`); in the runtime module
//! its serde_json instantiations, and the float formatting of serde's type errors that come with
//! them, cost about 25 KB of wasm (docs/internals.md "Runtime size"). This reader applies the
//! same rules: unknown keys refused at every level (``unknown field `x`, expected one of …``,
//! serde's words), an absent key keeps its default, `null` is `None` for an optional value and an
//! error for an object (`vercel`, `local`, `transfer`, `env`), a value of the wrong type is an
//! error naming its path. The tests check it against the derive on every field list and on
//! accepted and refused configs.
//!
//! Pure.

use crate::env_map::EnvMap;

use serde_json::{Map, Value};

use crate::config::{SandboxConfig, TransferOverrides};
use crate::json_read::kind_of;
use crate::provider::cloudflare::CloudflareOptions;
use crate::provider::local::LocalOptions;
use crate::provider::vercel::VercelOptions;

/// The keys of `configureSandbox(config)` (as the derive of [`SandboxConfig`] names them).
pub const CONFIG_FIELDS: &[&str] = &["provider", "production", "vercel", "local", "cloudflare", "transfer", "env", "debug"];
/// The keys of `vercel`.
pub const VERCEL_FIELDS: &[&str] = &["token", "teamId", "projectId", "baseUrl", "networkPolicy"];
/// The keys of `local`.
pub const LOCAL_FIELDS: &[&str] = &["baseUrl", "token", "networkPolicy", "isolation"];
/// The keys of `transfer`.
pub const TRANSFER_FIELDS: &[&str] = &["maxInputBytes", "maxOutputBytes", "maxDepth", "maxSidecars", "maxSidecarBytes"];

/// Reads `configureSandbox`'s config (the JSON of its plain-data keys).
///
/// # Errors
/// The text of what is wrong (the caller prefixes `invalid sandbox config: `).
pub fn sandbox_config(value: &Value) -> Result<SandboxConfig, String> {
    let map = fields(value, "config", CONFIG_FIELDS)?;
    let mut config = SandboxConfig::default();
    for (key, item) in map {
        match key.as_str() {
            "provider" => config.provider = optional_string(item, "provider")?,
            "production" => config.production = optional_bool(item, "production")?,
            "vercel" => config.vercel = vercel(item)?,
            "local" => config.local = local(item)?,
            "cloudflare" => config.cloudflare = CloudflareOptions::from_value(item)?,
            "transfer" => config.transfer = transfer(item)?,
            "env" => config.env = env(item)?,
            _ /* "debug", the last of CONFIG_FIELDS */ => config.debug = optional_bool(item, "debug")?,
        }
    }
    Ok(config)
}

fn vercel(value: &Value) -> Result<VercelOptions, String> {
    let mut options = VercelOptions::default();
    for (key, item) in fields(value, "vercel", VERCEL_FIELDS)? {
        let path = format!("vercel.{key}");
        match key.as_str() {
            "token" => options.token = optional_string(item, &path)?,
            "teamId" => options.team_id = optional_string(item, &path)?,
            "projectId" => options.project_id = optional_string(item, &path)?,
            "baseUrl" => options.base_url = optional_string(item, &path)?,
            _ /* "networkPolicy" */ => options.network_policy = Some(item.clone()).filter(|policy| !policy.is_null()),
        }
    }
    Ok(options)
}

fn local(value: &Value) -> Result<LocalOptions, String> {
    let mut options = LocalOptions::default();
    for (key, item) in fields(value, "local", LOCAL_FIELDS)? {
        let path = format!("local.{key}");
        match key.as_str() {
            "baseUrl" => options.base_url = optional_string(item, &path)?,
            "token" => options.token = optional_string(item, &path)?,
            "networkPolicy" => options.network_policy = Some(item.clone()).filter(|policy| !policy.is_null()),
            _ /* "isolation" */ => {
                options.isolation = serde_json::from_value(item.clone())
                    .map_err(|_| format!("`{path}` must be \"auto\", \"bubblewrap\", \"seatbelt\" or \"none\", got {item}"))?;
            }
        }
    }
    Ok(options)
}

fn transfer(value: &Value) -> Result<TransferOverrides, String> {
    let mut overrides = TransferOverrides::default();
    for (key, item) in fields(value, "transfer", TRANSFER_FIELDS)? {
        // Kept as given: `TransferOverrides::resolve` checks each value and names its key.
        let item = Some(item.clone()).filter(|item| !item.is_null());
        match key.as_str() {
            "maxInputBytes" => overrides.max_input_bytes = item,
            "maxOutputBytes" => overrides.max_output_bytes = item,
            "maxDepth" => overrides.max_depth = item,
            "maxSidecars" => overrides.max_sidecars = item,
            _ /* "maxSidecarBytes" */ => overrides.max_sidecar_bytes = item,
        }
    }
    Ok(overrides)
}

fn env(value: &Value) -> Result<EnvMap, String> {
    let map = value.as_object().ok_or_else(|| invalid("env", "an object of strings", value))?;
    let mut env = EnvMap::new();
    for (name, item) in map {
        let text = item.as_str().ok_or_else(|| invalid(&format!("env.{name}"), "a string", item))?;
        env.insert(name.clone(), text.to_owned());
    }
    Ok(env)
}

/// The object's entries after checking every key is one of `known` (serde's message otherwise).
fn fields<'a>(value: &'a Value, path: &str, known: &[&str]) -> Result<&'a Map<String, Value>, String> {
    let map = value.as_object().ok_or_else(|| invalid(path, "an object", value))?;
    if let Some(key) = map.keys().find(|key| !known.contains(&key.as_str())) {
        let expected: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
        return Err(format!("unknown field `{key}`, expected one of {}", expected.join(", ")));
    }
    Ok(map)
}

fn optional_string(value: &Value, path: &str) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text.clone())),
        other => Err(invalid(path, "a string", other)),
    }
}

fn optional_bool(value: &Value, path: &str) -> Result<Option<bool>, String> {
    match value {
        Value::Null => Ok(None),
        Value::Bool(flag) => Ok(Some(*flag)),
        other => Err(invalid(path, "a boolean", other)),
    }
}

fn invalid(path: &str, expected: &str, got: &Value) -> String {
    format!("invalid type for `{path}`: {}, expected {expected}", kind_of(got))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::{self, Visitor};
    use serde_json::json;

    /// A deserializer that answers only the field list a derived struct asks for.
    struct FieldNames(Vec<&'static str>);

    #[derive(Debug)]
    struct Stop;

    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("stop")
        }
    }

    impl std::error::Error for Stop {}

    impl de::Error for Stop {
        fn custom<T: std::fmt::Display>(_: T) -> Stop {
            Stop
        }
    }

    impl<'de> de::Deserializer<'de> for &mut FieldNames {
        type Error = Stop;

        fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, fields: &'static [&'static str], _: V) -> Result<V::Value, Stop> {
            self.0 = fields.to_vec();
            Err(Stop)
        }

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit unit_struct
            newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }

    fn derived_fields<T: for<'de> serde::Deserialize<'de>>() -> Vec<&'static str> {
        let mut names = FieldNames(Vec::new());
        let _ = T::deserialize(&mut names);
        names.0
    }

    #[test]
    fn local_isolation_is_one_of_its_words() {
        use crate::provider::local::options::Isolation;
        let read = |value: Value| sandbox_config(&json!({ "local": { "isolation": value } })).map(|c| c.local.isolation);
        assert_eq!(read(json!("none")), Ok(Some(Isolation::None)));
        assert_eq!(read(json!("seatbelt")), Ok(Some(Isolation::Seatbelt)));
        assert_eq!(read(Value::Null), Ok(None));
        assert_eq!(read(json!("docker")), Err("`local.isolation` must be \"auto\", \"bubblewrap\", \"seatbelt\" or \"none\", got \"docker\"".to_owned()));
    }

    #[test]
    fn field_lists_are_the_derived_ones() {
        assert_eq!(derived_fields::<SandboxConfig>(), CONFIG_FIELDS);
        assert_eq!(derived_fields::<VercelOptions>(), VERCEL_FIELDS);
        assert_eq!(derived_fields::<LocalOptions>(), LOCAL_FIELDS);
        assert_eq!(derived_fields::<TransferOverrides>(), TRANSFER_FIELDS);
    }

    /// What a reader made of a config, comparable.
    fn summary(config: &SandboxConfig) -> String {
        format!(
            "{:?} {:?} {:?} | {:?} {:?} {:?} {:?} {:?} | {:?} {:?} {:?} | {:?} | {:?} {:?} {:?} {:?} {:?} | {:?}",
            config.provider,
            config.production,
            config.debug,
            config.vercel.token,
            config.vercel.team_id,
            config.vercel.project_id,
            config.vercel.base_url,
            config.vercel.network_policy,
            config.local.base_url,
            config.local.token,
            config.local.network_policy,
            config.cloudflare,
            config.transfer.max_input_bytes,
            config.transfer.max_output_bytes,
            config.transfer.max_depth,
            config.transfer.max_sidecars,
            config.transfer.max_sidecar_bytes,
            config.env,
        )
    }

    #[test]
    fn reads_what_the_derive_reads_and_refuses_what_it_refuses() {
        let configs = [
            json!({}),
            json!({"provider": "vercel", "production": true, "env": {"A": "1", "NODE_ENV": "production"}}),
            json!({"provider": null, "production": null, "debug": null}),
            json!({"debug": true}),
            json!({"vercel": {"token": "t", "teamId": "team", "projectId": "p", "baseUrl": "http://x", "networkPolicy": "deny-all"}}),
            json!({"vercel": {"token": null, "networkPolicy": null}}),
            json!({"vercel": {}, "local": {}, "transfer": {}, "env": {}}),
            json!({"local": {"baseUrl": "http://127.0.0.1:1", "token": "s", "networkPolicy": {"allow": ["a.com"]}}}),
            json!({"cloudflare": {"binding": "B", "sandboxId": "x", "sleepAfter": "10m", "keepAlive": true, "normalizeId": false}}),
            json!({"transfer": {"maxInputBytes": 10, "maxOutputBytes": 20, "maxDepth": 8, "maxSidecars": 3, "maxSidecarBytes": 0, }}),
            json!({"transfer": {"maxDepth": null}}),
            // Refused:
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
            json!({"cloudflare": {"bindings": "B"}}),
            json!({"cloudflare": null}),
            json!({"transfer": {"maxDepht": 1}}),
            json!({"transfer": {"maxDepth": -1}}),
            json!({"transfer": {"maxDepth": 1.5}}),
            json!({"transfer": {"maxDepth": 1.0}}),
            json!({"transfer": {"maxDepth": 4_294_967_296u64}}),
            json!({"transfer": {"maxInputBytes": "1"}}),
            json!({"transfer": null}),
            json!({"env": null}),
            json!({"env": {"A": 1}}),
            json!({"env": []}),
            json!("config"),
            json!(null),
        ];
        for config in &configs {
            let derived = serde_json::from_value::<SandboxConfig>(config.clone()).map(|c| summary(&c));
            let ours = sandbox_config(config).map(|c| summary(&c));
            assert_eq!(ours.is_ok(), derived.is_ok(), "{config}: ours {ours:?}, derived {derived:?}");
            if let (Ok(ours), Ok(derived)) = (&ours, &derived) {
                assert_eq!(ours, derived, "{config}");
            }
        }
    }

    #[test]
    fn messages_name_the_key() {
        let message = |config: Value| sandbox_config(&config).unwrap_err();
        assert_eq!(
            message(json!({"provder": "vercel"})),
            "unknown field `provder`, expected one of `provider`, `production`, `vercel`, `local`, `cloudflare`, `transfer`, `env`, `debug`"
        );
        assert_eq!(message(json!({"vercel": {"token": 5}})), "invalid type for `vercel.token`: a number, expected a string");
        // A limit's value is kept as given: TransferOverrides::resolve checks it and names its key.
        let config = sandbox_config(&json!({"transfer": {"maxDepth": -1}})).expect("kept for resolve");
        let resolved = config.transfer.resolve().expect_err("-1 is no limit");
        assert!(resolved.message().contains("transfer.maxDepth"), "{}", resolved.message());
        assert!(message(json!({"cloudflare": {"bindings": "B"}})).starts_with("unknown field `bindings` in cloudflare"));
    }
}
