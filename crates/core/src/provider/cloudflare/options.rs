//! What the app configures for the `cloudflare` provider (`cloudflare: { … }` of
//! `configureSandbox`), the Box id rules of the SDK and the local-development switch.
//!
//! Provider layer, pure. Names follow the contract note (vitehub-sandbox-contract.md §1.2, §1.4,
//! §6.1): `binding`, `sandboxId`, `sleepAfter`, `keepAlive`, `normalizeId`.

use crate::env_map::EnvMap;

use serde::Deserialize;

use crate::error::{Error, ErrorCode, Result};
use crate::provider_kind::ProviderKind;
use crate::run::install::PREPARED_NAME_PREFIX;

/// The Durable Object binding name used when `binding` is not set.
pub const DEFAULT_BINDING: &str = "SANDBOX";
/// `sleepAfter` when not set (the contract's default, shorter than the SDK's `10m`).
pub const DEFAULT_SLEEP_AFTER: &str = "5m";
/// Env variables read by this provider: a local Box host that serves the container API
/// (local Worker development without Docker; both must be set).
pub const ENV_NAMES: [&str; 2] = ["SANDBOX_LOCAL_URL", "SANDBOX_LOCAL_TOKEN"];
/// Longest Box id the SDK accepts (cloudflare-sandbox-protocol.md §1.1, §6.7).
pub const MAX_BOX_ID_CHARS: usize = 63;
/// Ids the SDK refuses (compared lower-cased).
const RESERVED_IDS: [&str; 7] = ["www", "api", "admin", "root", "system", "cloudflare", "workers"];

/// `SANDBOX_PROVIDER_REQUIRED` for the `cloudflare` provider without its Durable Object binding:
/// names the binding and the wrangler lines that declare it.
pub fn missing_binding_error(binding: &str) -> Error {
    Error::new(
        ErrorCode::ProviderRequired,
        format!(
            "the cloudflare provider needs the Durable Object binding {quoted_binding} in the Worker env, which has none by that name \
             or a binding of another kind there (a KV namespace, a variable): pass the Worker's env \
             (configureSandbox({{ provider: \"cloudflare\", env }})) and declare the binding in wrangler.toml: \
             [[durable_objects.bindings]] name = \"{binding}\" class_name = \"Sandbox\"; \
             [[migrations]] tag = \"v1\" new_sqlite_classes = [\"Sandbox\"]; \
             [[containers]] class_name = \"Sandbox\" image = \"docker.io/cloudflare/sandbox:0.12.10\"; \
             and export {{ Sandbox }} from \"@cloudflare/sandbox\" in the Worker entry \
             (or set SANDBOX_LOCAL_URL and SANDBOX_LOCAL_TOKEN for the local Box host)",
            quoted_binding = crate::error::quoted(binding)
        ),
    )
    .with_provider(ProviderKind::Cloudflare)
}

/// `cloudflare` options.
///
/// Shape: `{ binding?: string, sandboxId?: string, sleepAfter?: string | number, keepAlive?:
/// boolean, normalizeId?: boolean }`. Unknown keys are refused; `null` is an absent key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CloudflareOptions {
    /// Name of the Durable Object binding in the Worker env. Default `SANDBOX`.
    pub binding: Option<String>,
    /// Reuse the Box (Durable Object) with this id for every Run instead of one new Box per Run.
    pub sandbox_id: Option<String>,
    /// Inactivity before the container sleeps: seconds (number) or `<n>s|m|h`. Default `5m`.
    pub sleep_after: Option<serde_json::Value>,
    /// Never sleep on inactivity; a kept Box (`sandboxId`) is then destroyed after each Run.
    /// Default `false`.
    pub keep_alive: Option<bool>,
    /// Lower-case the Box id (as the SDK's `normalizeId`). Default `false`.
    pub normalize_id: Option<bool>,
}

/// Validated options, what the provider is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudflareSettings {
    /// The binding name.
    pub binding: String,
    /// The kept Box id (normalized when asked), or `None` for a new Box per Run.
    pub sandbox_id: Option<String>,
    /// `sleepAfter` as sent to the Durable Object's `configure` (`"5m"`, or a number of seconds).
    pub sleep_after: serde_json::Value,
    /// `keepAlive`.
    pub keep_alive: bool,
    /// `normalizeId`.
    pub normalize_id: bool,
    /// Local development: container traffic goes to this Box host instead of the binding.
    pub local_host: Option<LocalContainerHost>,
}

/// A local Box host serving the container control API (`SANDBOX_LOCAL_URL`,
/// `SANDBOX_LOCAL_TOKEN`). The token is a secret: `Debug` redacts it.
#[derive(Clone, PartialEq, Eq)]
pub struct LocalContainerHost {
    /// Base URL, e.g. `http://127.0.0.1:8787`.
    pub base_url: String,
    /// Bearer token.
    pub token: String,
}

impl std::fmt::Debug for LocalContainerHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalContainerHost").field("base_url", &self.base_url).field("token", &"[redacted]").finish()
    }
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message).with_provider(ProviderKind::Cloudflare)
}

impl CloudflareOptions {
    /// The binding name (`binding`, else `SANDBOX`).
    pub fn binding_name(&self) -> &str {
        self.binding.as_deref().map(str::trim).filter(|b| !b.is_empty()).unwrap_or(DEFAULT_BINDING)
    }

    /// Validates the options and reads the local-development switch from `env`.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a `sandboxId` the SDK would refuse, a malformed
    /// `sleepAfter`, or only one of `SANDBOX_LOCAL_URL` / `SANDBOX_LOCAL_TOKEN`.
    pub fn resolve(&self, env: &EnvMap) -> Result<CloudflareSettings> {
        let normalize_id = self.normalize_id.unwrap_or(false);
        let sandbox_id = match &self.sandbox_id {
            Some(id) => Some(box_id_from(id, normalize_id).map_err(|m| invalid(format!("cloudflare.sandboxId {m}")))?),
            None => None,
        };
        let sleep_after = match &self.sleep_after {
            None => serde_json::Value::from(DEFAULT_SLEEP_AFTER),
            Some(value) => check_sleep_after(value)?,
        };
        let var = |name: &str| env.get(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let local_host =
            match (var(ENV_NAMES[0]), var(ENV_NAMES[1])) {
                (Some(base_url), Some(token)) => Some(LocalContainerHost { base_url, token }),
                (None, None) => None,
                _ => return Err(invalid(
                    "SANDBOX_LOCAL_URL and SANDBOX_LOCAL_TOKEN must be set together (the local Box host prints both)"
                        .into(),
                )),
            };
        Ok(CloudflareSettings {
            binding: self.binding_name().to_owned(),
            sandbox_id,
            sleep_after,
            keep_alive: self.keep_alive.unwrap_or(false),
            normalize_id,
            local_host,
        })
    }
}

/// `sleepAfter`: a positive integer of seconds, or a string `^\d+[smh]$` (the SDK's
/// `parseTimeExpression`).
fn check_sleep_after(value: &serde_json::Value) -> Result<serde_json::Value> {
    let ok = match value {
        serde_json::Value::Number(n) => n.as_u64().is_some_and(|s| s > 0),
        serde_json::Value::String(s) => {
            let digits = s.strip_suffix(['s', 'm', 'h']).unwrap_or("");
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && digits.bytes().any(|b| b != b'0')
        }
        _ => false,
    };
    if ok {
        Ok(value.clone())
    } else {
        Err(invalid(format!(
            "cloudflare.sleepAfter is {value}; expected a positive number of seconds or a string like \"30s\", \"5m\", \"1h\""
        )))
    }
}

/// Applies `normalizeId` and checks the SDK's id rule (`sanitizeSandboxId`): 1–63 characters,
/// no leading or trailing `-`, not a reserved name; and ours: not beginning with
/// [`PREPARED_NAME_PREFIX`] in any case (the stores of prepared projects, which run no Command).
/// Returns the message tail on failure.
pub fn box_id_from(id: &str, normalize_id: bool) -> std::result::Result<String, String> {
    let id = if normalize_id { id.to_ascii_lowercase() } else { id.to_owned() };
    let chars = id.chars().count();
    if chars == 0 || chars > MAX_BOX_ID_CHARS {
        return Err(format!("must be 1 to {MAX_BOX_ID_CHARS} characters long; got {chars}"));
    }
    if id.starts_with('-') || id.ends_with('-') {
        return Err(format!("{id} must not start or end with a hyphen", id = crate::error::quoted(&id)));
    }
    if RESERVED_IDS.contains(&id.to_ascii_lowercase().as_str()) {
        return Err(format!("{id} is a reserved name", id = crate::error::quoted(&id)));
    }
    // A store of prepared projects runs no Command: no Run or Session may open one as its kept
    // Box and write into what later Runs unpack.
    if id.to_ascii_lowercase().starts_with(PREPARED_NAME_PREFIX) {
        return Err(format!(
            "{id} begins with {PREPARED_NAME_PREFIX}, which names the stores of prepared projects",
            id = crate::error::quoted(&id)
        ));
    }
    Ok(id)
}

/// The id of a new Box for one Run of `name`:
/// `vitehub-<encodeURIComponent(name), cut>-<FNV-1a(name) base 36>-<uuid v4>`, at most 63
/// characters (the contract's shape, §1.4), or `vitehub-<uuid v4>` for an empty `name`. `random`
/// supplies the uuid's bits.
pub fn unique_box_id(name: &str, random: [u8; 16]) -> String {
    let uuid = uuid_v4(random);
    if name.is_empty() {
        return format!("vitehub-{uuid}");
    }
    let hash = base36(fnv1a(name));
    let room = MAX_BOX_ID_CHARS - "vitehub-".len() - 1 - hash.len() - 1 - uuid.len();
    let mut encoded = encode_uri_component(name);
    if encoded.len() > room {
        encoded.truncate(room); // ASCII only, so any cut is a character boundary
    }
    format!("vitehub-{encoded}-{hash}-{uuid}")
}

/// FNV-1a, 32 bits, over the UTF-8 bytes.
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5u32, |hash, b| (hash ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// JavaScript's `encodeURIComponent` (upper-case hex escapes).
fn encode_uri_component(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn uuid_v4(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(json: serde_json::Value) -> CloudflareOptions {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn defaults() {
        let settings = CloudflareOptions::default().resolve(&EnvMap::new()).unwrap();
        assert_eq!(settings.binding, "SANDBOX");
        assert_eq!(settings.sandbox_id, None);
        assert_eq!(settings.sleep_after, serde_json::json!("5m"));
        assert!(!settings.keep_alive && !settings.normalize_id && settings.local_host.is_none());
    }

    #[test]
    fn every_option_is_read() {
        let o = options(
            serde_json::json!({"binding": "BOXES", "sandboxId": "MyBox", "sleepAfter": 90, "keepAlive": true, "normalizeId": true}),
        );
        let s = o.resolve(&EnvMap::new()).unwrap();
        assert_eq!((s.binding.as_str(), s.sandbox_id.as_deref(), s.keep_alive), ("BOXES", Some("mybox"), true));
        assert_eq!(s.sleep_after, serde_json::json!(90));
        let s = options(serde_json::json!({"sandboxId": "MyBox"})).resolve(&EnvMap::new()).unwrap();
        assert_eq!(s.sandbox_id.as_deref(), Some("MyBox"), "kept as given without normalizeId");
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        let unknown = serde_json::from_value::<CloudflareOptions>(serde_json::json!({"bindings": "X"})).unwrap_err();
        assert!(unknown.to_string().contains("unknown field `bindings`"), "{unknown}");
        assert!(serde_json::from_value::<CloudflareOptions>(serde_json::json!({"keepAlive": "yes"})).is_err());
        assert!(serde_json::from_value::<CloudflareOptions>(serde_json::json!({"binding": 1})).is_err());
        assert!(serde_json::from_value::<CloudflareOptions>(serde_json::json!("SANDBOX")).is_err());
        for bad in [
            serde_json::json!("5"),
            serde_json::json!("0m"),
            serde_json::json!("5d"),
            serde_json::json!(0),
            serde_json::json!(1.5),
            serde_json::json!(true),
        ] {
            let e = options(serde_json::json!({"sleepAfter": bad})).resolve(&EnvMap::new()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        for good in ["30s", "10m", "1h"] {
            assert!(options(serde_json::json!({"sleepAfter": good})).resolve(&EnvMap::new()).is_ok());
        }
    }

    #[test]
    fn box_ids_follow_the_sdk_rule() {
        assert_eq!(box_id_from("a", false).unwrap(), "a");
        assert_eq!(box_id_from(&"x".repeat(63), false).unwrap().len(), 63);
        assert!(box_id_from("", false).is_err());
        assert!(box_id_from(&"x".repeat(64), false).is_err());
        assert!(box_id_from("-a", false).is_err() && box_id_from("a-", false).is_err());
        assert!(box_id_from("a-b", false).is_ok());
        assert!(box_id_from("API", false).is_err() && box_id_from("workers", true).is_err());
        assert_eq!(box_id_from("MixedCase", true).unwrap(), "mixedcase");
        let store = crate::run::install::prepared_name(&"ab".repeat(32));
        assert!(box_id_from(&store, false).unwrap_err().contains("stores of prepared projects"));
        assert!(box_id_from("VITEHUB-Prepared-x", false).is_err(), "refused in any case");
        assert!(box_id_from("vitehub-preparedx", false).is_ok());
        let e = options(serde_json::json!({"sandboxId": "-x"})).resolve(&EnvMap::new()).unwrap_err();
        assert!(e.message().contains("cloudflare.sandboxId"), "{}", e.message());
    }

    #[test]
    fn unique_ids_have_the_contract_shape_and_fit_the_rule() {
        let id = unique_box_id("tools/release-notes", [0xab; 16]);
        assert!(id.starts_with("vitehub-tools%2Fre"), "{id}");
        assert!(id.len() <= 63, "{id}");
        assert!(id.ends_with("abababab-abab-4bab-abab-abababababab"), "{id}");
        assert_eq!(box_id_from(&id, false).unwrap(), id);
        assert_ne!(unique_box_id("a", [1; 16]), unique_box_id("a", [2; 16]));
        let short = unique_box_id("a", [0; 16]);
        assert!(short.starts_with("vitehub-a-") && box_id_from(&short, false).is_ok(), "{short}");
        assert_eq!(unique_box_id("", [0; 16]), "vitehub-00000000-0000-4000-8000-000000000000");
        assert_eq!(fnv1a(""), 0x811c_9dc5);
        assert_eq!(base36(35), "z");
    }

    #[test]
    fn the_local_host_needs_both_variables() {
        let env =
            |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<EnvMap>();
        let s = CloudflareOptions::default()
            .resolve(&env(&[("SANDBOX_LOCAL_URL", "http://127.0.0.1:9"), ("SANDBOX_LOCAL_TOKEN", "t")]))
            .unwrap();
        let host = s.local_host.unwrap();
        assert_eq!(host.base_url, "http://127.0.0.1:9");
        assert!(!format!("{host:?}").contains("\"t\""));
        let e = CloudflareOptions::default().resolve(&env(&[("SANDBOX_LOCAL_URL", "http://127.0.0.1:9")])).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
    }
}
