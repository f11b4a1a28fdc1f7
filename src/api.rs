//! The only `#[wasm_bindgen]` exports: JS values in, decode, call the core, encode out.
//!
//! State of one isolate (registry, config, injected fetch) lives here in thread-locals; wasm is
//! single-threaded.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::config::SandboxConfig;
use crate::definition::{validate_name, Definition, DefinitionFile, DefinitionSource};
use crate::error::{Error, ErrorCode, Result};
use crate::http::fetch::Fetcher;
use crate::provider::local;
use crate::provider::vercel::client::{VercelClient, VercelEndpoint, DEFAULT_BASE_URL};
use crate::provider::ProviderKind;
use crate::response::{error_response, ServerTiming};
use crate::run::{run_definition, RunOptions};
use crate::session::{BoxProvider, BoxSpec};

thread_local! {
    static REGISTRY: RefCell<BTreeMap<String, Rc<Definition>>> = const { RefCell::new(BTreeMap::new()) };
    static CONFIG: RefCell<SandboxConfig> = RefCell::new(SandboxConfig::default());
    static FETCH: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    static LOADER: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    /// Definitions parsed from the loader, by name, with the `digest` they were parsed from.
    static LOADED: RefCell<BTreeMap<String, (String, Rc<Definition>)>> = const { RefCell::new(BTreeMap::new()) };
}

/// A real JS `Error` with `name = "SandboxError"` and `code`, `status`, `details` properties.
pub fn to_js_error(error: &Error) -> JsValue {
    let js = js_sys::Error::new(error.message());
    js.set_name("SandboxError");
    let body = error.to_json_body();
    let _ = Reflect::set(&js, &"code".into(), &error.code().as_str().into());
    let _ = Reflect::set(&js, &"status".into(), &JsValue::from(error.http_status()));
    if let Some(details) = body.get("error").and_then(|e| e.get("details")) {
        if let Ok(details) = serde::Serialize::serialize(details, &serde_wasm_bindgen::Serializer::json_compatible()) {
            let _ = Reflect::set(&js, &"details".into(), &details);
        }
    }
    js.into()
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn definition_files(definition: &JsValue) -> Result<Vec<DefinitionFile>> {
    let files = get(definition, "files");
    let files = files.dyn_ref::<js_sys::Array>().ok_or_else(|| invalid("definition.files must be an array of { path, content, mode? }"))?;
    let mut out = Vec::with_capacity(files.length() as usize);
    for (index, file) in files.iter().enumerate() {
        let path = get(&file, "path").as_string().ok_or_else(|| invalid(format!("definition.files[{index}].path must be a string")))?;
        let content = get(&file, "content");
        let encoding = get(&file, "encoding");
        let base64 = match encoding.as_string().as_deref() {
            None if encoding.is_undefined() => false,
            Some("base64") => true,
            Some("utf8") => false,
            _ => return Err(invalid(format!("definition.files[{index}].encoding must be \"base64\" or \"utf8\" ({path})"))),
        };
        let content = if let (true, Some(text)) = (base64, content.as_string()) {
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text.as_bytes())
                .map_err(|e| invalid(format!("definition.files[{index}].content is not valid base64 ({path}): {e}")))?
        } else if let Some(text) = content.as_string() {
            text.into_bytes()
        } else if let Some(bytes) = content.dyn_ref::<Uint8Array>() {
            bytes.to_vec()
        } else {
            return Err(invalid(format!("definition.files[{index}].content must be a string or a Uint8Array ({path})")));
        };
        let mode = get(&file, "mode");
        let mode = if mode.is_undefined() {
            None
        } else {
            Some(mode.as_f64().filter(|m| m.fract() == 0.0 && (0.0..=0o7777 as f64).contains(m)).ok_or_else(|| {
                invalid(format!("definition.files[{index}].mode must be an integer file mode ({path})"))
            })? as u32)
        };
        out.push(DefinitionFile { path, content, mode });
    }
    Ok(out)
}

/// The optional keys of a Definition object: `packagePath` (string, default `""`), `entry`
/// (string) and `timeout` (any value; the rule is in [`Definition::from_source`]).
fn definition_source(definition: &JsValue) -> Result<DefinitionSource> {
    let files = definition_files(definition)?;
    let package_path = get(definition, "packagePath");
    let package_path = if package_path.is_undefined() {
        String::new()
    } else {
        package_path.as_string().ok_or_else(|| invalid("definition.packagePath must be a string (the package directory relative to the install root)"))?
    };
    let entry = get(definition, "entry");
    let entry = if entry.is_undefined() {
        None
    } else {
        Some(entry.as_string().ok_or_else(|| invalid("definition.entry must be a string (a module path relative to the package directory)"))?)
    };
    let timeout = get(definition, "timeout");
    let timeout = if timeout.is_undefined() {
        None
    } else if let Some(number) = timeout.as_f64() {
        // Integral JS numbers become JSON integers, so messages show `0`, not `0.0`.
        Some(if number.fract() == 0.0 && number.abs() <= 9_007_199_254_740_991.0 {
            serde_json::Value::from(number as i64)
        } else {
            serde_json::Number::from_f64(number).map_or(serde_json::Value::Null, serde_json::Value::Number)
        })
    } else if let Some(text) = timeout.as_string() {
        Some(serde_json::Value::String(text))
    } else {
        Some(timeout.as_bool().map_or(serde_json::Value::Null, serde_json::Value::Bool))
    };
    Ok(DefinitionSource { files, package_path, entry, timeout })
}

/// `registerSandbox(name, { files: [{ path, content: string | Uint8Array, mode?, encoding? }],
/// packagePath?, entry?, timeout? })`: adds a Definition to the programmatic registry (replacing
/// one of the same name). Files are relative to the install root; the package is at
/// `packagePath`. A string `content` is UTF-8 text, or base64 bytes when the file has
/// `encoding: "base64"` (what the Vite plugin generates). Other keys of the definition object are
/// ignored. TypeScript sources must come with their compiled `.mjs` siblings (see
/// `readDefinitionDirectory`).
///
/// Throws a `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` when the name or the package is
/// invalid (the message says which rule and how to fix it).
#[wasm_bindgen(js_name = registerSandbox)]
pub fn register_sandbox(name: JsValue, definition: JsValue) -> std::result::Result<(), JsValue> {
    let name = name.as_string().ok_or_else(|| to_js_error(&invalid("Sandbox name must be a string")))?;
    let source = definition_source(&definition).map_err(|e| to_js_error(&e))?;
    let definition = Definition::from_source(&name, source).map_err(|e| to_js_error(&e))?;
    REGISTRY.with(|r| r.borrow_mut().insert(name, Rc::new(definition)));
    Ok(())
}

/// `unregisterSandbox(name) → boolean`: removes a Definition; `true` when it existed.
#[wasm_bindgen(js_name = unregisterSandbox)]
pub fn unregister_sandbox(name: String) -> bool {
    REGISTRY.with(|r| r.borrow_mut().remove(&name).is_some())
}

/// `listSandboxes() → Array<{ name, entry, packagePath, timeoutMs, packageManager, install,
/// digest }>`, sorted by name. `packageManager` is the installing manager (`null` when nothing is
/// installed); `install` is `{ command, args, cwd: "." }` or `null`.
#[wasm_bindgen(js_name = listSandboxes)]
pub fn list_sandboxes() -> js_sys::Array {
    REGISTRY.with(|r| r.borrow().values().map(|d| summary(d)).collect())
}

/// `{ name, entry, timeoutMs, packageManager: 'npm' | 'pnpm' | 'yarn' | 'bun', packagePath, install:
/// { command, args, cwd } | null, digest }` of a Definition (listSandboxes, validateSandboxDefinition):
/// `packageManager` is the one chosen even when nothing is installed (`install: null`).
fn summary(d: &Definition) -> JsValue {
    let item = Object::new();
    let _ = Reflect::set(&item, &"name".into(), &d.name.as_str().into());
    let _ = Reflect::set(&item, &"entry".into(), &d.entry.as_str().into());
    let _ = Reflect::set(&item, &"timeoutMs".into(), &JsValue::from(d.timeout_ms));
    let _ = Reflect::set(&item, &"packageManager".into(), &d.manager.as_str().into());
    let _ = Reflect::set(&item, &"packagePath".into(), &d.package_path.as_str().into());
    let install = d.install.as_ref().map_or(JsValue::NULL, |plan| {
        let object = Object::new();
        let args: js_sys::Array = plan.args.iter().map(|a| JsValue::from_str(a)).collect();
        let _ = Reflect::set(&object, &"command".into(), &plan.command.as_str().into());
        let _ = Reflect::set(&object, &"args".into(), &args);
        let _ = Reflect::set(&object, &"cwd".into(), &".".into());
        object.into()
    });
    let _ = Reflect::set(&item, &"install".into(), &install);
    let _ = Reflect::set(&item, &"digest".into(), &d.digest.as_str().into());
    JsValue::from(item)
}

/// `validateSandboxDefinition(name, definition) → summary` (the shape of one `listSandboxes()` item):
/// runs every check of `registerSandbox` without registering (the Vite plugin calls it before
/// writing generated files, so a broken edit never replaces the last good state).
///
/// Throws `SANDBOX_INVALID_ARGUMENT` exactly as `registerSandbox` does.
#[wasm_bindgen(js_name = validateSandboxDefinition)]
pub fn validate_sandbox_definition(name: JsValue, definition: JsValue) -> std::result::Result<JsValue, JsValue> {
    let name = name.as_string().ok_or_else(|| to_js_error(&invalid("Sandbox name must be a string")))?;
    let source = definition_source(&definition).map_err(|e| to_js_error(&e))?;
    let definition = Definition::from_source(&name, source).map_err(|e| to_js_error(&e))?;
    Ok(summary(&definition))
}

/// `configureSandbox(config)`: replaces the isolate's sandbox config (shape in `SandboxConfig`).
/// A `fetch` key (a function) replaces the global `fetch` for provider calls.
///
/// Throws `SANDBOX_INVALID_ARGUMENT` for unknown keys or bad values.
#[wasm_bindgen(js_name = configureSandbox)]
pub fn configure_sandbox(config: JsValue) -> std::result::Result<(), JsValue> {
    let fetch = get(&config, "fetch");
    let fetch = if fetch.is_undefined() {
        None
    } else {
        Some(fetch.dyn_into::<js_sys::Function>().map_err(|_| to_js_error(&invalid("config.fetch must be a function")))?)
    };
    let plain = Object::assign(&Object::new(), config.unchecked_ref());
    let _ = Reflect::delete_property(&plain, &"fetch".into());
    let parsed: SandboxConfig = serde_wasm_bindgen::from_value(plain.into())
        .map_err(|e| to_js_error(&invalid(format!("invalid sandbox config: {e}"))))?;
    parsed.transfer.resolve().map_err(|e| to_js_error(&e))?;
    CONFIG.with(|c| *c.borrow_mut() = parsed);
    FETCH.with(|f| *f.borrow_mut() = fetch);
    local::forget_started();
    Ok(())
}

/// Registers `() => Promise<{ baseUrl, token }>` that starts an in-process local Box host (set by
/// the Node entry; `null` removes it).
#[wasm_bindgen(js_name = setLocalBoxHostStarter)]
pub fn set_local_box_host_starter(starter: Option<js_sys::Function>) {
    local::set_starter(starter);
}

/// Forgets the in-process local Box host (after the Node entry closed it).
#[wasm_bindgen(js_name = forgetLocalBoxHost)]
pub fn forget_local_box_host() {
    local::forget_started();
}

struct CallOptions {
    context: JsValue,
    signal: Option<AbortSignal>,
}

fn call_options(options: &JsValue) -> Result<CallOptions> {
    if options.is_undefined() || options.is_null() {
        return Ok(CallOptions { context: JsValue::UNDEFINED, signal: None });
    }
    if !options.is_object() {
        return Err(invalid("runSandbox options must be an object { context?, signal?, sandboxId? }"));
    }
    for key in Object::keys(options.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !matches!(key.as_str(), "context" | "signal" | "sandboxId") {
            return Err(invalid(format!("unknown runSandbox option {key:?}; expected context, signal or sandboxId")));
        }
    }
    let signal = get(options, "signal");
    let signal = if signal.is_undefined() {
        None
    } else {
        Some(signal.dyn_into::<AbortSignal>().map_err(|_| invalid("runSandbox option signal must be an AbortSignal"))?)
    };
    Ok(CallOptions { context: get(options, "context"), signal })
}

fn fetcher() -> Fetcher {
    FETCH.with(|f| f.borrow().clone()).map(Fetcher::Function).unwrap_or(Fetcher::Global)
}

async fn box_provider(config: &SandboxConfig, timeout_ms: u32) -> Result<(BoxProvider, Option<String>, BoxSpec)> {
    let kind = config.select_provider(false)?;
    let box_timeout = Some(u64::from(crate::definition::box_lifetime_ms(timeout_ms)));
    match kind {
        ProviderKind::Local => {
            let host = local::resolve_host(&config.local).await?;
            let endpoint = VercelEndpoint { base_url: host.base_url, token: host.token, team_id: None, project_id: None };
            let spec = BoxSpec { timeout_ms: box_timeout, network_policy: config.local.network_policy.clone() };
            Ok((BoxProvider::Vercel(Rc::new(VercelClient::new(endpoint, fetcher(), ProviderKind::Local))), None, spec))
        }
        ProviderKind::Vercel => {
            let credentials = config.vercel_credentials().ok_or_else(|| {
                Error::new(ErrorCode::ProviderRequired, "the vercel provider needs token, teamId and projectId (config vercel.*, env VERCEL_TOKEN/VERCEL_TEAM_ID/VERCEL_PROJECT_ID or VERCEL_OIDC_TOKEN)")
                    .with_provider(ProviderKind::Vercel)
            })?;
            let endpoint = VercelEndpoint {
                base_url: config.vercel.base_url.clone().unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
                token: credentials.token,
                team_id: Some(credentials.team_id),
                project_id: Some(credentials.project_id.clone()),
            };
            let spec = BoxSpec { timeout_ms: box_timeout, network_policy: config.vercel.network_policy.clone() };
            Ok((BoxProvider::Vercel(Rc::new(VercelClient::new(endpoint, fetcher(), ProviderKind::Vercel))), Some(credentials.project_id), spec))
        }
        ProviderKind::Cloudflare => Err(Error::new(ErrorCode::NotSupported, "the cloudflare provider is not available in this build yet")
            .with_provider(ProviderKind::Cloudflare)),
    }
}

/// `runSandbox(name, payload?, { context?, signal?, sandboxId? }) → Promise<Response>`.
///
/// Resolves to `200` JSON with the entry's result (204 for `undefined`, binary for a top-level
/// `Blob`/`Uint8Array`, the entry's own `Response` revived), or to a non-2xx JSON
/// `{"error":{"code","message","details"?}}` (codes in DESIGN.md §5). Rejects only with the
/// reason of the caller's `signal`.
#[wasm_bindgen(js_name = runSandbox)]
pub async fn run_sandbox(name: JsValue, payload: JsValue, options: JsValue) -> std::result::Result<web_sys::Response, JsValue> {
    let mut timing = ServerTiming::start();
    let prepared = prepare_run(&name, &options).await;
    let (definition, run_options) = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            if let Some(signal) = call_options(&options).ok().and_then(|o| o.signal).filter(AbortSignal::aborted) {
                return Err(signal.reason());
            }
            timing.mark("resolve");
            return Ok(error_response(&error, &timing));
        }
    };
    run_definition(&definition, &payload, run_options).await
}

async fn prepare_run(name: &JsValue, options: &JsValue) -> Result<(Rc<Definition>, RunOptions)> {
    let name = name.as_string().ok_or_else(|| invalid("Sandbox name must be a string"))?;
    validate_name(&name)?;
    let call = call_options(options)?;
    let registered = REGISTRY.with(|r| r.borrow().get(&name).cloned());
    let definition = match registered {
        Some(definition) => definition,
        None => load_definition(&name)
            .await?
            .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("Sandbox \"{name}\" was not found: no Definition with that name is registered.")))?,
    };
    let config = CONFIG.with(|c| c.borrow().clone());
    let limits = config.transfer.resolve()?;
    let (provider, project_id, box_spec) = box_provider(&config, definition.timeout_ms).await?;
    Ok((definition, RunOptions { context: call.context, signal: call.signal, provider, project_id, box_spec, limits }))
}

/// `setSandboxDefinitionLoader(loader | null)`: the lazy registry seam. `runSandbox(name)` calls
/// `loader(name) → Promise<definition | undefined>` when `name` is not in the programmatic
/// registry (`registerSandbox` wins). `definition` is the object `registerSandbox` takes, plus an
/// optional `digest` string: a Definition is parsed once per `(name, digest)` and reused while the
/// loader returns the same digest, so an edited Definition (new digest) is re-read, never served
/// stale; without `digest` it is parsed on every run. Set by the facade the Vite plugin generates.
#[wasm_bindgen(js_name = setSandboxDefinitionLoader)]
pub fn set_sandbox_definition_loader(loader: Option<js_sys::Function>) {
    LOADER.with(|l| *l.borrow_mut() = loader);
    LOADED.with(|l| l.borrow_mut().clear());
}

/// Asks the loader for `name`. `Ok(None)`: no loader, or it has no such Definition.
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` when the loader throws or rejects (its message is kept);
/// `SANDBOX_INVALID_ARGUMENT` when the loaded Definition is invalid.
async fn load_definition(name: &str) -> Result<Option<Rc<Definition>>> {
    let Some(loader) = LOADER.with(|l| l.borrow().clone()) else { return Ok(None) };
    let loader_error = |e: JsValue| {
        let message = e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).or_else(|| e.as_string()).unwrap_or_default();
        Error::new(ErrorCode::RuntimeError, format!("the sandbox registry could not load \"{name}\": {message}"))
    };
    let returned = loader.call1(&JsValue::NULL, &JsValue::from_str(name)).map_err(loader_error)?;
    let loaded = wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&returned)).await.map_err(loader_error)?;
    if loaded.is_undefined() || loaded.is_null() {
        return Ok(None);
    }
    let digest = get(&loaded, "digest").as_string();
    if let Some(digest) = &digest {
        let cached = LOADED.with(|l| l.borrow().get(name).filter(|(d, _)| d == digest).map(|(_, def)| def.clone()));
        if cached.is_some() {
            return Ok(cached);
        }
    }
    let definition = Rc::new(Definition::from_source(name, definition_source(&loaded)?)?);
    if let Some(digest) = digest {
        LOADED.with(|l| l.borrow_mut().insert(name.to_owned(), (digest, definition.clone())));
    }
    Ok(Some(definition))
}
