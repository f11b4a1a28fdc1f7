//! Rules of the Vite plugin `hubSandbox()` that are not about one Definition: how its config
//! layers merge, what may be written into generated files, and where each Definition's generated
//! module goes.
//!
//! Pure: the JS plugin (`pkg-template/vite/vite.mjs`) reads the Vite config and `process.env` and hands
//! them here as plain JSON values.
//!
//! Source: vitehub-sandbox-contract.md §4.1 (options and precedence), §4.7 (generated artifacts,
//! "generate the same artifact path"); DESIGN.md §4 (provider selection, credentials).

use std::collections::BTreeMap;

use vite_hub_sandbox_core::env_map::EnvMap;

use serde_json::{Map, Value};

use vite_hub_sandbox_core::config::SandboxConfig;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// Option paths that hold secrets or runtime-only values and are never accepted from the Vite
/// config, because the plugin writes its config into generated files. With the env variable that
/// supplies each at runtime.
const RUNTIME_ONLY: [(&str, &str, &str); 6] = [
    ("vercel", "token", "VERCEL_TOKEN (or VERCEL_OIDC_TOKEN)"),
    ("vercel", "teamId", "VERCEL_TEAM_ID"),
    ("vercel", "projectId", "VERCEL_PROJECT_ID"),
    ("local", "token", "the local Box host's own token (set local.baseUrl and pass local.token to configureSandbox)"),
    ("", "env", "the process environment"),
    ("", "fetch", "configureSandbox({ fetch })"),
];

/// The plugin config after merging: what generated files may carry, and which provider a run
/// would use.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginConfig {
    /// `hubSandbox(options)` deep-merged under the Vite config key `sandbox` (objects merge key
    /// by key, other values of the later layer win). Validated as a [`SandboxConfig`].
    pub config: Value,
    /// The provider named explicitly: `provider` of the merged config, else env
    /// `SANDBOX_PROVIDER`. `None` when neither names one.
    pub provider: Option<ProviderKind>,
    /// What a run in `vite dev` (not production) would use, after credential detection.
    pub dev_provider: ProviderKind,
}

fn merge(base: &mut Value, layer: &Value) {
    match (base, layer) {
        (Value::Object(base), Value::Object(layer)) => {
            for (key, value) in layer {
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => merge(existing, value),
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, layer) => *base = layer.clone(),
    }
}

fn layer_object<'a>(layer: &'a Value, origin: &str) -> Result<Option<&'a Map<String, Value>>> {
    match layer {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        _ => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{origin} must be an object of sandbox options, e.g. {{ provider: 'vercel' }}"),
        )),
    }
}

fn reject_runtime_only(layer: &Map<String, Value>, origin: &str) -> Result<()> {
    for (section, key, instead) in RUNTIME_ONLY {
        let present = if section.is_empty() {
            layer.contains_key(key)
        } else {
            layer.get(section).and_then(Value::as_object).is_some_and(|s| s.contains_key(key))
        };
        if present {
            let path = if section.is_empty() { key.to_owned() } else { format!("{section}.{key}") };
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("{origin} sets `{path}`, which the Vite plugin would write into generated files; remove it and use {instead} at runtime."),
            ));
        }
    }
    Ok(())
}

/// Rejects a `baseUrl` that carries a secret: user info (`https://user:pass@host`) or a query
/// string (`?token=…`), which would be written into generated files like any other option.
fn reject_url_secrets(layer: &Map<String, Value>, origin: &str) -> Result<()> {
    for section in ["vercel", "local"] {
        let Some(url) = layer.get(section).and_then(|s| s.get("baseUrl")).and_then(Value::as_str) else {
            continue;
        };
        let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
        let authority = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
        if authority.contains('@') || url.contains('?') {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("{origin} sets `{section}.baseUrl` with user info or a query string, which the Vite plugin would write into generated files; give the bare URL and pass credentials at runtime."),
            ));
        }
    }
    Ok(())
}

/// Merges the plugin layers and validates the result.
///
/// `plugin` is `hubSandbox(options)`, `vite` the Vite config key `sandbox` (each an object or
/// `null`), `env` the snapshot of the variables the core reads (`SANDBOX_PROVIDER`, `VERCEL_*`…).
/// Precedence: plugin options < `sandbox` key < env `SANDBOX_PROVIDER` (the latter only when no
/// layer names a provider, as at runtime, see [`SandboxConfig::select_provider`]).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` when a layer is not an object, sets a secret or runtime-only key
/// (`vercel.token`, `vercel.teamId`, `vercel.projectId`, `local.token`, `env`, `fetch`; the
/// message names the env variable to use instead), has an unknown key or a bad value (the
/// message of [`SandboxConfig`] parsing), or names an unknown provider.
pub fn resolve_plugin_config(plugin: &Value, vite: &Value, env: &EnvMap) -> Result<PluginConfig> {
    let mut merged = Value::Object(Map::new());
    for (layer, origin) in [(plugin, "hubSandbox(options)"), (vite, "the Vite config key `sandbox`")] {
        if let Some(map) = layer_object(layer, origin)? {
            reject_runtime_only(map, origin)?;
            reject_url_secrets(map, origin)?;
            // Each layer alone first, so an unknown key or a bad value names the layer it is in.
            let alone = SandboxConfig::from_value(layer).map_err(|e| {
                Error::new(ErrorCode::InvalidArgument, format!("invalid sandbox options in {origin}: {e}"))
            })?;
            let in_layer =
                |e: Error| Error::new(e.code(), format!("invalid sandbox options in {origin}: {}", e.message()));
            alone.transfer.resolve().map_err(in_layer)?;
            if alone.provider.as_deref().is_some_and(|p| !p.trim().is_empty()) {
                alone.select_provider(false).map_err(in_layer)?;
            }
            merge(&mut merged, layer);
        }
    }
    let mut parsed = SandboxConfig::from_value(&merged)
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("invalid sandbox options: {e}")))?;
    parsed.transfer.resolve()?;
    parsed.env = env.clone();
    let provider =
        if parsed.provider.as_deref().is_some_and(|p| !p.trim().is_empty()) || env.contains_key("SANDBOX_PROVIDER") {
            Some(parsed.select_provider(false)?)
        } else {
            None
        };
    if let Some(kind) = provider {
        parsed.check_warm_pool(kind)?;
    }
    parsed.production = Some(false);
    let dev_provider = parsed.select_provider(false)?;
    Ok(PluginConfig { config: merged, provider, dev_provider })
}

/// The file stem of a Definition's generated module: the name with every `/` replaced by `__`
/// (`tools/image-optimizer` → `tools__image-optimizer`), one per name, in input order.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` naming both Definitions when two names map to the same stem
/// (`a/b` and `a__b`): rename one of them.
pub fn artifact_stems(names: &[String]) -> Result<Vec<String>> {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    let mut stems = Vec::with_capacity(names.len());
    for name in names {
        let stem = name.replace('/', "__");
        if let Some(other) = seen.insert(stem.clone(), name) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("Sandbox Definitions \"{other}\" and \"{name}\" generate the same artifact path definitions/{stem}.mjs; rename one of them."),
            ));
        }
        stems.push(stem);
    }
    Ok(stems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(pairs: &[(&str, &str)]) -> EnvMap {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn warm_pool_is_read_and_checked_per_layer() {
        let resolved =
            resolve_plugin_config(&json!({"warmPool": {"size": 2}}), &json!({"warmPool": {"idleMs": 5000}}), &env(&[]))
                .unwrap();
        assert_eq!(resolved.config["warmPool"], json!({"size": 2, "idleMs": 5000}));
        let error = resolve_plugin_config(&json!({"warmPool": {"size": 17}}), &Value::Null, &env(&[])).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            error.message(),
            "invalid sandbox options in hubSandbox(options): warmPool: warmPool.size is 17; it must be an integer from 0 to 16"
        );
        let error = resolve_plugin_config(&Value::Null, &json!({"warmPool": {"idle": 1}}), &env(&[])).unwrap_err();
        assert!(
            error.message().starts_with(
                "invalid sandbox options in the Vite config key `sandbox`: warmPool: unknown field `idle`"
            ),
            "{}",
            error.message()
        );
        // A pool on a named cloudflare provider is refused at build time, not in the deployed Worker.
        let pooled = json!({"provider": "cloudflare", "warmPool": {"size": 1}});
        let error = resolve_plugin_config(&pooled, &Value::Null, &env(&[])).unwrap_err();
        assert_eq!(error.code(), ErrorCode::NotSupported);
        let error = resolve_plugin_config(
            &json!({"warmPool": {"size": 1}}),
            &Value::Null,
            &env(&[("SANDBOX_PROVIDER", "cloudflare")]),
        )
        .unwrap_err();
        assert_eq!(error.code(), ErrorCode::NotSupported);
    }

    #[test]
    fn vite_key_overrides_plugin_options_deeply() {
        let resolved = resolve_plugin_config(
            &json!({"provider": "local", "vercel": {"baseUrl": "https://a.example"}, "transfer": {"maxDepth": 8}}),
            &json!({"provider": "vercel", "transfer": {"maxSidecars": 4}}),
            &env(&[]),
        )
        .unwrap();
        assert_eq!(resolved.provider, Some(ProviderKind::Vercel));
        assert_eq!(resolved.config["vercel"]["baseUrl"], "https://a.example");
        assert_eq!(resolved.config["transfer"], json!({"maxDepth": 8, "maxSidecars": 4}));
    }

    #[test]
    fn env_provider_applies_when_no_layer_names_one() {
        let resolved =
            resolve_plugin_config(&json!({}), &Value::Null, &env(&[("SANDBOX_PROVIDER", "vercel")])).unwrap();
        assert_eq!(resolved.provider, Some(ProviderKind::Vercel));
        let resolved = resolve_plugin_config(&Value::Null, &Value::Null, &env(&[])).unwrap();
        assert_eq!(resolved.provider, None);
        assert_eq!(resolved.dev_provider, ProviderKind::Local);
        let error =
            resolve_plugin_config(&Value::Null, &Value::Null, &env(&[("SANDBOX_PROVIDER", "docker")])).unwrap_err();
        assert!(error.message().contains("SANDBOX_PROVIDER is \"docker\""), "{}", error.message());
    }

    #[test]
    fn explicit_provider_is_never_overridden_by_env() {
        let resolved =
            resolve_plugin_config(&json!({"provider": "local"}), &Value::Null, &env(&[("SANDBOX_PROVIDER", "vercel")]))
                .unwrap();
        assert_eq!(resolved.provider, Some(ProviderKind::Local));
    }

    #[test]
    fn credentials_are_rejected_with_the_env_variable_to_use() {
        let error =
            resolve_plugin_config(&json!({"vercel": {"token": "secret"}}), &Value::Null, &env(&[])).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidArgument);
        assert!(
            error.message().contains("`vercel.token`") && error.message().contains("VERCEL_TOKEN"),
            "{}",
            error.message()
        );
        assert!(!error.message().contains("secret"));
        let error = resolve_plugin_config(&Value::Null, &json!({"vercel": {"teamId": "t"}}), &env(&[])).unwrap_err();
        assert!(
            error.message().contains("Vite config key `sandbox`") && error.message().contains("VERCEL_TEAM_ID"),
            "{}",
            error.message()
        );
        assert!(resolve_plugin_config(&json!({"env": {}}), &Value::Null, &env(&[])).is_err());
    }

    #[test]
    fn unknown_keys_and_bad_values_use_the_config_message() {
        let error = resolve_plugin_config(&json!({"provder": "vercel"}), &Value::Null, &env(&[])).unwrap_err();
        assert!(
            error.message().starts_with("invalid sandbox options in hubSandbox(options): unknown field `provder`"),
            "{}",
            error.message()
        );
        let error = resolve_plugin_config(&json!({"transfer": {"maxDepth": 0}}), &Value::Null, &env(&[])).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidArgument);
        assert!(resolve_plugin_config(&json!("vercel"), &Value::Null, &env(&[])).is_err());
    }

    #[test]
    fn stems_replace_slashes_and_collisions_name_both() {
        let names = vec!["release-notes".to_owned(), "tools/image".to_owned()];
        assert_eq!(artifact_stems(&names).unwrap(), vec!["release-notes", "tools__image"]);
        let error = artifact_stems(&["a/b".to_owned(), "a__b".to_owned()]).unwrap_err();
        assert!(
            error.message().contains("\"a/b\" and \"a__b\"") && error.message().contains("definitions/a__b.mjs"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn an_error_names_its_layer_and_url_secrets_are_refused() {
        let unknown = resolve_plugin_config(&json!(null), &json!({"provder": "local"}), &env(&[])).unwrap_err();
        assert!(
            unknown
                .message()
                .starts_with("invalid sandbox options in the Vite config key `sandbox`: unknown field `provder`"),
            "{}",
            unknown.message()
        );
        let unknown =
            resolve_plugin_config(&json!({"transfer": {"maxDepht": 1}}), &json!(null), &env(&[])).unwrap_err();
        assert!(
            unknown
                .message()
                .starts_with("invalid sandbox options in hubSandbox(options): transfer: unknown field `maxDepht`"),
            "{}",
            unknown.message()
        );
        for url in ["http://user:pw@127.0.0.1:9/", "https://api.example?token=abc", "https://u@h"] {
            let error =
                resolve_plugin_config(&json!({"local": {"baseUrl": url}}), &json!(null), &env(&[])).unwrap_err();
            assert!(error.message().contains("`local.baseUrl` with user info or a query string"), "{url}");
            assert!(!error.message().contains("pw") && !error.message().contains("abc"), "{url}");
        }
        assert!(resolve_plugin_config(
            &json!({"vercel": {"baseUrl": "https://api.vercel.com/a@b"}}),
            &json!(null),
            &env(&[])
        )
        .is_ok());
    }

    #[test]
    fn a_bad_transfer_limit_names_its_layer() {
        let error = resolve_plugin_config(&json!(null), &json!({"transfer": {"maxDepth": 0}}), &env(&[])).unwrap_err();
        assert!(
            error.message().starts_with("invalid sandbox options in the Vite config key `sandbox`: transfer.maxDepth"),
            "{}",
            error.message()
        );
        let error =
            resolve_plugin_config(&json!({"transfer": {"maxInputBytes": 0}}), &json!(null), &env(&[])).unwrap_err();
        assert!(
            error.message().starts_with("invalid sandbox options in hubSandbox(options): transfer.maxInputBytes"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn an_unknown_provider_names_its_layer() {
        let error = resolve_plugin_config(&json!({"provider": "azure"}), &json!(null), &env(&[])).unwrap_err();
        assert_eq!(
            error.message(),
            "invalid sandbox options in hubSandbox(options): config provider is \"azure\"; expected \"vercel\", \"cloudflare\" or \"local\""
        );
    }
}
