//! Cloudflare Provider Output: what the Vite plugin adds to a Worker's wrangler config so the
//! `cloudflare` provider finds its Durable Object and container (DESIGN.md §1 "Provider Output",
//! §4 cloudflare; cloudflare-sandbox-protocol.md §1.2, §1.3).
//!
//! Pure: the JS side (`pkg-template/vite/provider-output.mjs`) reads and parses the existing
//! config (TOML, JSONC or JSON) and writes the answer; every decision is here. The existing config
//! is merged into, never clobbered: an entry the app already has for the `Sandbox` class (binding,
//! container, migration) is kept as it is, and a name or tag already used for something else is an
//! error naming the file and the key.

use serde_json::{json, Map, Value};

use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};

/// The Durable Object class of `@cloudflare/sandbox` the Worker exports.
pub const SANDBOX_CLASS: &str = "Sandbox";
/// The binding name when the app does not choose one (`cloudflare.binding`).
pub const DEFAULT_BINDING: &str = "SANDBOX";
/// The migration tag used when the app has no migration for the class yet.
pub const MIGRATION_TAG: &str = "v1";
/// The compatibility date written when the config has none: accepted by the workerd of wrangler
/// 4.86.0 (newest 2026-05-03) and of miniflare 4.20260730.0, and past 2024-04-03 (DO JS RPC).
pub const COMPATIBILITY_DATE: &str = "2026-04-01";
/// The container image repository of `@cloudflare/sandbox` (tag = the installed SDK version).
pub const IMAGE_REPOSITORY: &str = "docker.io/cloudflare/sandbox";
/// Container entry defaults (cloudflare-sandbox-protocol.md §1.3).
const INSTANCE_TYPE: &str = "lite";
const MAX_INSTANCES: u64 = 10;

/// What the caller knows: the file the config came from (for messages), the binding and the
/// installed `@cloudflare/sandbox` version.
#[derive(Debug, Clone)]
pub struct OutputOptions {
    /// Path of the config as the user knows it (e.g. `wrangler.toml`), used in every error.
    pub file: String,
    /// Durable Object binding name (`SANDBOX` by default).
    pub binding: String,
    /// Installed `@cloudflare/sandbox` version: the image tag.
    pub sandbox_version: String,
}

/// The merged config, the Dockerfile to write beside it, and what was added (for the build log).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderOutput {
    /// The wrangler config with the Provider Output merged in (same shape as the input).
    pub config: Value,
    /// `FROM docker.io/cloudflare/sandbox:<version>` (the switch target for a customized image).
    pub dockerfile: String,
    /// The image reference written into a new container entry.
    pub image: String,
    /// Keys the merge added or changed, e.g. `durable_objects.bindings[SANDBOX]`.
    pub added: Vec<String>,
}

fn invalid(options: &OutputOptions, key: &str, message: impl AsRef<str>) -> Error {
    Error::new(ErrorCode::InvalidArgument, format!("{}: {key}: {}", options.file, message.as_ref()))
}

/// A binding name wrangler and JS accept as an `env` property: `[A-Za-z_][A-Za-z0-9_]*`.
fn check_binding(options: &OutputOptions) -> Result<()> {
    let b = options.binding.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("cloudflare.binding {:?} is not a valid binding name (letters, digits and _, not starting with a digit)", options.binding),
        ))
    }
}

/// An image tag from a package version: `[0-9A-Za-z._-]`, 1–128 characters.
fn check_version(version: &str) -> Result<()> {
    let ok = !version.is_empty()
        && version.len() <= 128
        && version.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_'));
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("the installed @cloudflare/sandbox version {version:?} is not a valid image tag"),
        ))
    }
}

/// `key` of `object` as an array (created when absent); an error when it is something else.
fn array_at<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
    options: &OutputOptions,
    path: &str,
) -> Result<&'a mut Vec<Value>> {
    let entry = object.entry(key.to_string()).or_insert_with(|| Value::Array(Vec::new()));
    entry.as_array_mut().ok_or_else(|| invalid(options, path, "must be an array"))
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn lists_class(migration: &Value, key: &str) -> bool {
    migration
        .get(key)
        .and_then(Value::as_array)
        .is_some_and(|classes| classes.iter().any(|c| c.as_str() == Some(SANDBOX_CLASS)))
}

/// Merges the Provider Output into `existing` (a parsed wrangler config; `null` when the app has
/// none). Rules, in order:
///
/// - `compatibility_date`: kept; written as [`COMPATIBILITY_DATE`] when absent.
/// - `compatibility_flags`: `nodejs_compat` added unless `nodejs_compat` or `nodejs_compat_v2` is there.
/// - `durable_objects.bindings`: the binding `{ name, class_name: "Sandbox" }` added; an entry with
///   that name for the same class (no `script_name`) is kept; for anything else it is an error.
/// - `migrations`: when no migration creates (`new_sqlite_classes`) or renames to `Sandbox`, one
///   `{ tag: "v1", new_sqlite_classes: ["Sandbox"] }` is appended; a `v1` already used with other
///   content is an error that names the next free tag to add by hand. `Sandbox` in `new_classes`
///   (a KV-backed class) is an error: the container base class needs SQLite storage.
/// - `containers`: an entry for `class_name = "Sandbox"` is kept untouched (the app owns its image);
///   otherwise one is appended with `image = docker.io/cloudflare/sandbox:<version>` (a registry
///   reference, so `wrangler deploy --dry-run` needs no Docker), `instance_type = "lite"`,
///   `max_instances = 10`.
pub fn merge_provider_output(existing: &Value, options: &OutputOptions) -> Result<ProviderOutput> {
    check_binding(options)?;
    check_version(&options.sandbox_version)?;
    let mut config = match existing {
        Value::Null => Map::new(),
        Value::Object(map) => map.clone(),
        _ => return Err(invalid(options, "(top level)", "a wrangler config must be an object")),
    };
    let mut added = Vec::new();
    let image = format!("{IMAGE_REPOSITORY}:{}", options.sandbox_version);

    match config.get("compatibility_date") {
        None => {
            config.insert("compatibility_date".into(), Value::String(COMPATIBILITY_DATE.into()));
            added.push(format!("compatibility_date = {COMPATIBILITY_DATE}"));
        }
        Some(Value::String(_)) => {}
        Some(_) => return Err(invalid(options, "compatibility_date", "must be a string (YYYY-MM-DD)")),
    }

    let flags = array_at(&mut config, "compatibility_flags", options, "compatibility_flags")?;
    if flags.iter().any(|f| !f.is_string()) {
        return Err(invalid(options, "compatibility_flags", "must be an array of strings"));
    }
    if !flags.iter().any(|f| matches!(f.as_str(), Some("nodejs_compat" | "nodejs_compat_v2"))) {
        flags.push(Value::String("nodejs_compat".into()));
        added.push("compatibility_flags += nodejs_compat".into());
    }

    let durable_objects = config.entry("durable_objects".to_string()).or_insert_with(|| json!({}));
    let durable_objects =
        durable_objects.as_object_mut().ok_or_else(|| invalid(options, "durable_objects", "must be a table/object"))?;
    let bindings = array_at(durable_objects, "bindings", options, "durable_objects.bindings")?;
    match bindings.iter().find(|b| str_field(b, "name") == Some(options.binding.as_str())) {
        Some(binding)
            if str_field(binding, "class_name") == Some(SANDBOX_CLASS) && binding.get("script_name").is_none() => {}
        Some(binding) => {
            let owner = match (str_field(binding, "class_name"), str_field(binding, "script_name")) {
                (Some(class), Some(script)) => format!("class {class:?} of script {script:?}"),
                (Some(class), None) => format!("class {class:?}"),
                _ => "another entry".to_string(),
            };
            return Err(invalid(
                options,
                "durable_objects.bindings",
                format!(
                    "the binding name {:?} is already taken by {owner}; the Sandbox Durable Object needs a binding of its own: choose another name with hubSandbox({{ cloudflare: {{ binding: \"...\" }} }})",
                    options.binding
                ),
            ));
        }
        None => {
            bindings.push(json!({ "name": options.binding, "class_name": SANDBOX_CLASS }));
            added.push(format!("durable_objects.bindings[{}] (class_name = {SANDBOX_CLASS})", options.binding));
        }
    }

    let migrations = array_at(&mut config, "migrations", options, "migrations")?;
    if migrations.iter().any(|m| lists_class(m, "new_classes")) {
        return Err(invalid(
            options,
            "migrations",
            format!("{SANDBOX_CLASS:?} is created in new_classes (a key-value storage class); the Sandbox container class needs SQLite storage: use new_sqlite_classes"),
        ));
    }
    let renamed_to_sandbox = |m: &Value| {
        m.get("renamed_classes")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|entry| str_field(entry, "to") == Some(SANDBOX_CLASS)))
    };
    let migrated = migrations.iter().any(|m| lists_class(m, "new_sqlite_classes") || renamed_to_sandbox(m));
    if !migrated {
        if migrations.iter().any(|m| str_field(m, "tag") == Some(MIGRATION_TAG)) {
            let next = (2..)
                .map(|n| format!("v{n}"))
                .find(|tag| !migrations.iter().any(|m| str_field(m, "tag") == Some(tag.as_str())))
                .unwrap_or_default();
            return Err(invalid(
                options,
                "migrations",
                format!(
                    "the tag {MIGRATION_TAG:?} is already used with other content, and a tag cannot be reused; add the Sandbox migration after your last one: [[migrations]] tag = {next:?} new_sqlite_classes = [{SANDBOX_CLASS:?}]"
                ),
            ));
        }
        migrations.push(json!({ "tag": MIGRATION_TAG, "new_sqlite_classes": [SANDBOX_CLASS] }));
        added.push(format!("migrations[{MIGRATION_TAG}] new_sqlite_classes = [{SANDBOX_CLASS}]"));
    }

    let containers = array_at(&mut config, "containers", options, "containers")?;
    if !containers.iter().any(|c| str_field(c, "class_name") == Some(SANDBOX_CLASS)) {
        containers.push(json!({
            "class_name": SANDBOX_CLASS,
            "image": image,
            "instance_type": INSTANCE_TYPE,
            "max_instances": MAX_INSTANCES,
        }));
        added.push(format!("containers[{SANDBOX_CLASS}] image = {image}"));
    }

    Ok(ProviderOutput {
        config: Value::Object(config),
        dockerfile: format!(
            "# Generated by @vite-hub/sandbox/vite: the Cloudflare Sandbox container image.\nFROM {image}\n"
        ),
        image,
        added,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> OutputOptions {
        OutputOptions {
            file: "wrangler.toml".into(),
            binding: DEFAULT_BINDING.into(),
            sandbox_version: "0.12.10".into(),
        }
    }

    fn message(result: Result<ProviderOutput>) -> String {
        result.unwrap_err().message().to_string()
    }

    #[test]
    fn an_empty_config_gets_every_entry() {
        let out = merge_provider_output(&Value::Null, &options()).unwrap();
        assert_eq!(
            out.config,
            json!({
                "compatibility_date": COMPATIBILITY_DATE,
                "compatibility_flags": ["nodejs_compat"],
                "durable_objects": { "bindings": [{ "name": "SANDBOX", "class_name": "Sandbox" }] },
                "migrations": [{ "tag": "v1", "new_sqlite_classes": ["Sandbox"] }],
                "containers": [{ "class_name": "Sandbox", "image": "docker.io/cloudflare/sandbox:0.12.10", "instance_type": "lite", "max_instances": 10 }],
            })
        );
        assert_eq!(out.dockerfile.lines().last(), Some("FROM docker.io/cloudflare/sandbox:0.12.10"));
        assert_eq!(out.added.len(), 5);
    }

    #[test]
    fn existing_entries_are_kept_and_merging_twice_changes_nothing() {
        let existing = json!({
            "name": "app", "main": "index.mjs", "compatibility_date": "2025-09-01",
            "compatibility_flags": ["nodejs_compat_v2"],
            "durable_objects": { "bindings": [{ "name": "COUNTER", "class_name": "Counter" }] },
            "migrations": [{ "tag": "c1", "new_sqlite_classes": ["Counter"] }],
            "containers": [],
            "vars": { "A": "1" },
        });
        let once = merge_provider_output(&existing, &options()).unwrap();
        assert_eq!(once.config["compatibility_date"], "2025-09-01");
        assert_eq!(once.config["compatibility_flags"], json!(["nodejs_compat_v2"]));
        assert_eq!(once.config["durable_objects"]["bindings"][0]["name"], "COUNTER");
        assert_eq!(
            once.config["durable_objects"]["bindings"][1],
            json!({ "name": "SANDBOX", "class_name": "Sandbox" })
        );
        assert_eq!(once.config["migrations"][1], json!({ "tag": "v1", "new_sqlite_classes": ["Sandbox"] }));
        assert_eq!(once.config["vars"], json!({ "A": "1" }));
        let twice = merge_provider_output(&once.config, &options()).unwrap();
        assert_eq!(twice.config, once.config);
        assert!(twice.added.is_empty());
    }

    #[test]
    fn an_app_owned_container_and_migration_are_not_touched() {
        let existing = json!({
            "containers": [{ "class_name": "Sandbox", "image": "./Dockerfile", "max_instances": 3 }],
            "migrations": [{ "tag": "v1", "new_classes": ["Other"] }, { "tag": "v2", "renamed_classes": [{ "from": "Old", "to": "Sandbox" }] }],
        });
        let out = merge_provider_output(&existing, &options()).unwrap();
        assert_eq!(out.config["containers"], existing["containers"]);
        assert_eq!(out.config["migrations"], existing["migrations"]);
    }

    #[test]
    fn a_binding_name_taken_by_another_class_is_an_error_naming_file_and_key() {
        let existing = json!({ "durable_objects": { "bindings": [{ "name": "SANDBOX", "class_name": "Counter" }] } });
        let text = message(merge_provider_output(&existing, &options()));
        assert!(text.starts_with("wrangler.toml: durable_objects.bindings: the binding name \"SANDBOX\" is already taken by class \"Counter\""), "{text}");
        let existing = json!({ "durable_objects": { "bindings": [{ "name": "SANDBOX", "class_name": "Sandbox", "script_name": "other" }] } });
        assert!(message(merge_provider_output(&existing, &options())).contains("of script \"other\""));
    }

    #[test]
    fn a_reused_migration_tag_is_an_error_that_names_the_next_free_tag() {
        let existing = json!({ "migrations": [{ "tag": "v1", "new_sqlite_classes": ["Counter"] }, { "tag": "v2", "deleted_classes": ["X"] }] });
        let text = message(merge_provider_output(&existing, &options()));
        assert!(text.starts_with("wrangler.toml: migrations: the tag \"v1\" is already used"), "{text}");
        assert!(text.contains("tag = \"v3\" new_sqlite_classes = [\"Sandbox\"]"), "{text}");
    }

    #[test]
    fn a_kv_backed_sandbox_class_and_malformed_keys_are_errors() {
        let kv = json!({ "migrations": [{ "tag": "a", "new_classes": ["Sandbox"] }] });
        assert!(message(merge_provider_output(&kv, &options())).contains("needs SQLite storage"));
        assert!(message(merge_provider_output(&json!({ "durable_objects": [] }), &options()))
            .starts_with("wrangler.toml: durable_objects:"));
        assert!(message(merge_provider_output(&json!({ "migrations": {} }), &options()))
            .starts_with("wrangler.toml: migrations: must be an array"));
        assert!(message(merge_provider_output(&json!({ "compatibility_flags": [1] }), &options()))
            .contains("array of strings"));
        assert!(message(merge_provider_output(&json!([]), &options())).contains("must be an object"));
    }

    #[test]
    fn binding_names_and_versions_are_checked() {
        let mut bad = options();
        bad.binding = "9x".into();
        assert!(message(merge_provider_output(&Value::Null, &bad)).contains("not a valid binding name"));
        let mut custom = options();
        custom.binding = "BOXES".into();
        let out = merge_provider_output(&Value::Null, &custom).unwrap();
        assert_eq!(out.config["durable_objects"]["bindings"][0]["name"], "BOXES");
        let mut version = options();
        version.sandbox_version = "1.0.0\nRUN x".into();
        assert!(message(merge_provider_output(&Value::Null, &version)).contains("not a valid image tag"));
    }
}
