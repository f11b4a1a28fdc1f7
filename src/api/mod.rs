//! The only `#[wasm_bindgen]` exports of the runtime module: JS values in, decode, call the core,
//! encode out. Exports return `Result<_, Error>`: wasm-bindgen throws the [`Error`] as a
//! `SandboxError` (see [`crate::error::js`]), so no export builds a JS error by hand.
//!
//! State of one isolate (registry, resolved config, loader) lives here in thread-locals; wasm is
//! single-threaded. No `RefCell` borrow is held while JS code runs (a loader, a fetch or a host
//! starter may call back into the module).

mod definition_object;
mod prepared;
mod runner;
mod session;

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::error::js::js_message;
use crate::error::js::JsResult;
use crate::http::fetch::Fetcher;
use crate::response::error_response;
use crate::run::events::{RunEvents, RunStatus};
use crate::run::{run_definition, RunOptions};
use crate::runtime_config::RuntimeConfig;
use crate::server_timing::ServerTiming;
use definition_object::{definition_source, get, invalid, summary};
use vite_hub_sandbox_core::config::SandboxConfig;
use vite_hub_sandbox_core::definition::suggest::{not_found_message, Miss};
use vite_hub_sandbox_core::definition::{validate_name, Definition};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};

pub use crate::error::js::to_js_error;

thread_local! {
    /// The programmatic registry, sorted by name (binary search).
    static REGISTRY: RefCell<Vec<(String, Rc<Definition>)>> = const { RefCell::new(Vec::new()) };
    /// The resolved config; `None` until the first `configureSandbox` (defaults are used then).
    static RUNTIME: RefCell<Option<Rc<RuntimeConfig>>> = const { RefCell::new(None) };
    static LOADER: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    /// The loader's companion `describe()`: what the registry holds, asked only on a miss.
    static DESCRIBE: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
    /// Definitions parsed from the loader: (name, the `digest` it was parsed from, Definition).
    static LOADED: RefCell<Vec<(String, String, Rc<Definition>)>> = const { RefCell::new(Vec::new()) };
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
pub fn register_sandbox(name: JsValue, definition: JsValue) -> JsResult<()> {
    let name = name.as_string().ok_or_else(|| invalid("Sandbox name must be a string"))?;
    let definition = Definition::from_source(&name, definition_source(&definition)?)?;
    REGISTRY.with(|r| {
        let mut registry = r.borrow_mut();
        match registry.binary_search_by(|(n, _)| n.as_str().cmp(&name)) {
            Ok(at) => registry[at].1 = Rc::new(definition),
            Err(at) => registry.insert(at, (name, Rc::new(definition))),
        }
    });
    Ok(())
}

/// The Definition registered as `name`, if any.
pub(crate) fn registered(name: &str) -> Option<Rc<Definition>> {
    REGISTRY.with(|r| r.borrow().iter().find(|(n, _)| n == name).map(|(_, d)| d.clone()))
}

/// `unregisterSandbox(name) → boolean`: removes a Definition; `true` when it existed.
#[wasm_bindgen(js_name = unregisterSandbox)]
pub fn unregister_sandbox(name: String) -> bool {
    REGISTRY.with(|r| {
        let mut registry = r.borrow_mut();
        let before = registry.len();
        registry.retain(|(n, _)| *n != name);
        registry.len() != before
    })
}

/// `listSandboxes() → Array<{ name, entry, packagePath, timeoutMs, packageManager, install,
/// digest }>`, sorted by name. `packageManager` is the installing manager (`null` when nothing is
/// installed); `install` is `{ command, args, cwd: "." }` or `null`.
#[wasm_bindgen(js_name = listSandboxes)]
pub fn list_sandboxes() -> js_sys::Array {
    REGISTRY.with(|r| r.borrow().iter().map(|(_, d)| summary(d)).collect())
}

/// `validateSandboxDefinition(name, definition) → summary` (the shape of one `listSandboxes()` item):
/// runs every check of `registerSandbox` without registering (the Vite plugin calls it before
/// writing generated files, so a broken edit never replaces the last good state).
///
/// Throws `SANDBOX_INVALID_ARGUMENT` exactly as `registerSandbox` does.
#[wasm_bindgen(js_name = validateSandboxDefinition)]
pub fn validate_sandbox_definition(name: JsValue, definition: JsValue) -> JsResult<JsValue> {
    let name = name.as_string().ok_or_else(|| invalid("Sandbox name must be a string"))?;
    let definition = Definition::from_source(&name, definition_source(&definition)?)?;
    Ok(summary(&definition))
}

/// `configureSandbox(config, workerEnv?)`: resolves the isolate's config once (shape in
/// [`SandboxConfig`]): transfer limits and the provider every later Run uses. A `fetch` key (a
/// function) replaces the global `fetch` for provider calls. `workerEnv` is the env object the
/// glue picked `config.env` from (a Worker's env holds bindings): the `cloudflare.binding`
/// Durable Object namespace is taken from it as a JS value, never through serde. `onLog` (a
/// function) is checked here and kept by the glue as the default `onLog` of every Run; `debug:
/// true` keeps a handler error's `stack` in its Response. `warmPool: { size?, idleMs? }` keeps
/// Boxes opened ahead per Definition ([`crate::run::warm_pool`]); every configure drains the
/// pools of the previous config (their Boxes are closed in the background, a failure goes to
/// `console.warn`). Starts nothing:
/// the in-process local Box host is started by the first Run that needs it and kept for the
/// isolate, whatever later calls configure.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for unknown keys, bad values or limits out of range;
/// `SANDBOX_NOT_SUPPORTED` for a `warmPool` on the `cloudflare` provider (the previous config
/// stays in force).
#[wasm_bindgen(js_name = configureSandbox)]
pub fn configure_sandbox(config: JsValue, worker_env: JsValue) -> JsResult<()> {
    let fetch = get(&config, "fetch", "config")?;
    let fetcher = if fetch.is_undefined() {
        Fetcher::Global
    } else {
        Fetcher::Function(fetch.dyn_into::<js_sys::Function>().map_err(|_| invalid("config.fetch must be a function"))?)
    };
    // onLog is the glue's (api.mjs keeps it as every Run's default); here it is only checked.
    let on_log = get(&config, "onLog", "config")?;
    if !on_log.is_undefined() && !on_log.is_function() {
        return Err(invalid("config.onLog must be a function ({ name, stream, line }) => void").into());
    }
    let plain = Object::new();
    for key in
        Reflect::own_keys(&config).map_err(|e| invalid(format!("config could not be read: {}", js_message(&e))))?.iter()
    {
        if matches!(key.as_string().as_deref(), Some("fetch" | "onLog")) {
            continue;
        }
        let value = Reflect::get(&config, &key)
            .map_err(|e| invalid(format!("config could not be read: {}", js_message(&e))))?;
        let _ = Reflect::set(&plain, &key, &value);
    }
    let plain: JsValue = plain.into();
    check_json_data(&plain, "config", 0)?;
    // As JSON text, then one parsed Value read by the config's one reader: every key is seen, so
    // a misspelled one is refused at any depth.
    let text =
        js_sys::JSON::stringify(&plain).map_err(|e| invalid(format!("invalid sandbox config: {}", js_message(&e))))?;
    let value: serde_json::Value = serde_json::from_slice(String::from(text).as_bytes())
        .map_err(|e| invalid(format!("invalid sandbox config: {e}")))?;
    let parsed: SandboxConfig =
        SandboxConfig::from_value(&value).map_err(|e| invalid(format!("invalid sandbox config: {e}")))?;
    let namespace = crate::provider::durable_object_namespace(&worker_env, parsed.cloudflare.binding_name());
    let resolved = RuntimeConfig::resolve(&parsed, fetcher, namespace)?;
    RUNTIME.with(|r| *r.borrow_mut() = Some(Rc::new(resolved)));
    let detached = crate::run::warm_pool::detach(|_| true);
    wasm_bindgen_futures::spawn_local(async move {
        if let Err(error) = crate::run::warm_pool::close_detached(detached).await {
            RunEvents::default().report(
                &format!("A warm pool's Box could not be closed after configureSandbox: {}", error.message()),
                error.code(),
            );
        }
    });
    Ok(())
}

/// `listWarmPools() → Array<{ name, idle, opening }>`: the warm pools of this isolate
/// (`configureSandbox({ warmPool })`): per Definition `name`, how many Boxes wait for a Run
/// (`idle`) and how many are being opened (`opening`). Empty without `warmPool`.
#[wasm_bindgen(js_name = listWarmPools)]
pub fn list_warm_pools() -> js_sys::Array {
    crate::run::warm_pool::list()
        .into_iter()
        .map(|(name, idle, opening)| {
            let item = Object::new();
            let _ = Reflect::set(&item, &"name".into(), &name.as_str().into());
            let _ = Reflect::set(&item, &"idle".into(), &idle.into());
            let _ = Reflect::set(&item, &"opening".into(), &opening.into());
            JsValue::from(item)
        })
        .collect()
}

/// `closeWarmPools() → Promise<number>`: closes every Box of the warm pools
/// (`configureSandbox({ warmPool })`), waiting for the refills under way (each closes the Box it
/// opened); resolves to how many idle Boxes were closed. The next Run of a Definition opens its
/// own Box and fills its pool again.
///
/// # Errors
/// The first close that failed (`SANDBOX_TRANSPORT_ERROR`; `SANDBOX_RUNTIME_ERROR` when a close
/// takes over 15 s); the other Boxes are closed anyway.
#[wasm_bindgen(js_name = closeWarmPools)]
pub fn close_warm_pools() -> js_sys::Promise {
    let detached = crate::run::warm_pool::detach(|_| true);
    crate::sys::error_promise(async move { crate::run::warm_pool::close_detached(detached).await.map(JsValue::from) })
}

/// Registers `() => Promise<{ baseUrl, token }>` that starts an in-process local Box host (set by
/// the Node entry; `null` removes it).
#[wasm_bindgen(js_name = setLocalBoxHostStarter)]
pub fn set_local_box_host_starter(starter: Option<js_sys::Function>) {
    crate::provider::set_local_host_starter(starter);
}

/// Starts the in-process local Box host now, if it is not running (the one every Run on the
/// `local` provider without `local.baseUrl` shares); resolves `true` when it listens and the
/// isolate's first request to it is done, so the next Run shows neither `host` nor `connect` in
/// `Server-Timing`. Idempotent. With `only_if_used`, starts it only when the current
/// configuration's Runs go to it (provider `local`, no `local.baseUrl`) and resolves `false`
/// otherwise, starting nothing (a configuration without a provider included). Rejects with
/// `SANDBOX_PROVIDER_REQUIRED` where no starter is registered (outside Node) and
/// `SANDBOX_PROVIDER_UNAVAILABLE` when the start failed.
#[wasm_bindgen(js_name = warmUpLocalBoxHost)]
pub fn warm_up_local_box_host(only_if_used: bool) -> js_sys::Promise {
    let used = !only_if_used
        || runtime_config().is_ok_and(|config| config.provider.as_ref().is_ok_and(|p| p.uses_in_process_host()));
    let options = runtime_config()
        .ok()
        .and_then(|config| config.provider.as_ref().ok().and_then(|p| p.in_process_host()))
        .unwrap_or_default();
    session::js_promise(Box::pin(async move {
        if !used {
            return Ok(JsValue::FALSE);
        }
        crate::provider::start_local_host(options).await.map(|()| JsValue::TRUE).map_err(|error| to_js_error(&error))
    }))
}

/// Forgets the in-process local Box host (after the Node entry closed it); the next Run that needs
/// it starts a new one.
#[wasm_bindgen(js_name = forgetLocalBoxHost)]
pub fn forget_local_box_host() {
    crate::provider::forget_local_host();
}

/// Deepest config nesting accepted (the deepest documented shape, a `networkPolicy`, has 4).
const MAX_CONFIG_DEPTH: u32 = 32;

/// Refuses what JSON text would silently drop or cannot hold: functions, symbols, bigints,
/// non-finite numbers (`NaN`, `Infinity`: JSON text turns them into `null`, which would read as
/// "unset" and keep the default), values nested deeper than [`MAX_CONFIG_DEPTH`] (which also stops
/// cycles). `path` names the value in the message (`config.local.networkPolicy`).
fn check_json_data(value: &JsValue, path: &str, depth: u32) -> Result<()> {
    if value.is_function() || value.is_symbol() || value.is_bigint() {
        return Err(invalid(format!(
            "invalid sandbox config: {path} must be JSON data (a string, number, boolean, array or object)"
        )));
    }
    if let Some(number) = value.as_f64().filter(|n| !n.is_finite()) {
        let got = if number.is_nan() {
            "NaN"
        } else if number > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        return Err(invalid(format!("invalid sandbox config: {path} must be a finite number (got {got})")));
    }
    if !value.is_object() {
        return Ok(());
    }
    if depth >= MAX_CONFIG_DEPTH {
        return Err(invalid(format!("invalid sandbox config: values nest deeper than {MAX_CONFIG_DEPTH} levels")));
    }
    let keys =
        Reflect::own_keys(value).map_err(|e| invalid(format!("{path} could not be read: {}", js_message(&e))))?;
    for key in keys.iter() {
        let Some(name) = key.as_string() else {
            return Err(invalid(format!("invalid sandbox config: {path} has a symbol key")));
        };
        let child = Reflect::get(value, &key)
            .map_err(|e| invalid(format!("{path}.{name} could not be read: {}", js_message(&e))))?;
        check_json_data(&child, &format!("{path}.{name}"), depth + 1)?;
    }
    Ok(())
}

fn runtime_config() -> Result<Rc<RuntimeConfig>> {
    if let Some(resolved) = RUNTIME.with(|r| r.borrow().clone()) {
        return Ok(resolved);
    }
    let resolved = Rc::new(RuntimeConfig::resolve(&SandboxConfig::default(), Fetcher::Global, None)?);
    RUNTIME.with(|r| *r.borrow_mut() = Some(resolved.clone()));
    Ok(resolved)
}

struct CallOptions {
    context: JsValue,
    signal: Option<AbortSignal>,
    sandbox_id: Option<String>,
}

fn call_options(options: &JsValue) -> Result<CallOptions> {
    if options.is_undefined() || options.is_null() {
        return Ok(CallOptions { context: JsValue::UNDEFINED, signal: None, sandbox_id: None });
    }
    if !options.is_object() {
        return Err(invalid("runSandbox options must be an object { context?, signal?, sandboxId?, onLog? }"));
    }
    let keys = Reflect::own_keys(options)
        .map_err(|e| invalid(format!("runSandbox options could not be read: {}", js_message(&e))))?;
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_else(|| "a symbol".to_owned());
        if !matches!(key.as_str(), "context" | "signal" | "sandboxId" | "onLog") {
            return Err(invalid(format!(
                "unknown runSandbox option {key}; expected context, signal, sandboxId or onLog",
                key = vite_hub_sandbox_core::error::quoted(&key)
            )));
        }
    }
    // onLog is the glue's (run-handle.mjs calls it per line); here it is only checked.
    let on_log = get(options, "onLog", "runSandbox options")?;
    if !on_log.is_undefined() && !on_log.is_function() {
        return Err(invalid("runSandbox option onLog must be a function ({ name, stream, line }) => void"));
    }
    let signal = optional_signal(get(options, "signal", "runSandbox options")?, "runSandbox option signal")?;
    let sandbox_id = get(options, "sandboxId", "runSandbox options")?;
    let sandbox_id = if sandbox_id.is_undefined() {
        None
    } else {
        Some(
            sandbox_id
                .as_string()
                .filter(|id| !id.is_empty())
                .ok_or_else(|| invalid("runSandbox option sandboxId must be a non-empty string"))?,
        )
    };
    Ok(CallOptions { context: get(options, "context", "runSandbox options")?, signal, sandbox_id })
}

/// `runSandbox(name, payload?, { context?, signal?, sandboxId? }, events?) → Promise<Response>`.
///
/// Resolves to `200` JSON with the entry's result (204 for `undefined`, binary for a top-level
/// `Blob`/`Uint8Array`, the entry's own `Response` revived, its body streamed as the entry
/// produces it), or to a non-2xx JSON `{"error":{"code","message","details"?}}` (codes in
/// DESIGN.md §5). Rejects only with the reason of the caller's `signal`. `events` is the run
/// handle of the glue (`startSandbox`, see [`crate::run::events`]): status, live logs, the work
/// after the Response (giving the Box back) and failures there. The Response comes before the
/// Box is given back.
#[wasm_bindgen(js_name = runSandbox)]
pub fn run_sandbox_export(name: JsValue, payload: JsValue, options: JsValue, events: JsValue) -> js_sys::Promise {
    session::js_promise(Box::pin(async move { run_sandbox(name, payload, options, events).await.map(JsValue::from) }))
}

/// [`run_sandbox_export`]'s Run, for the exports that answer with its Response (the runner's `run`).
pub async fn run_sandbox(
    name: JsValue,
    payload: JsValue,
    options: JsValue,
    events: JsValue,
) -> std::result::Result<web_sys::Response, JsValue> {
    let mut timing = ServerTiming::start();
    let prepared = prepare_run(&name, &options, events.clone()).await;
    let (definition, run_options) = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            if let Some(signal) = call_options(&options).ok().and_then(|o| o.signal).filter(AbortSignal::aborted) {
                return Err(signal.reason());
            }
            timing.mark("resolve");
            RunEvents::new(events).status(RunStatus::Failed);
            return error_response(&error, &timing);
        }
    };
    run_definition(definition, payload, run_options).await
}

/// `setSandboxKeepAlive(hook | null)`: `hook(work: Promise)` keeps the runtime alive for the work
/// that follows a Run's Response (giving the Box back). The workerd entry sets the Worker's
/// `waitUntil`; Node and browsers need none.
#[wasm_bindgen(js_name = setSandboxKeepAlive)]
pub fn set_sandbox_keep_alive(hook: Option<js_sys::Function>) {
    crate::run::events::set_keep_alive(hook);
}

/// An optional `signal` option: `undefined` or `null` is none (as in fetch's `RequestInit`), else
/// it must be an `AbortSignal`.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` (`<what> must be an AbortSignal`) for anything else.
pub(super) fn optional_signal(value: JsValue, what: &str) -> Result<Option<AbortSignal>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value.dyn_into::<AbortSignal>().map(Some).map_err(|_| invalid(format!("{what} must be an AbortSignal")))
}

/// `closeSandbox(sandboxId, { signal? }?) → Promise<boolean>`: closes the Box kept for
/// `sandboxId` (see `runSandbox`'s `sandboxId`), after the Run that holds it, if any, gave it
/// back. `true` when a Box was closed; `false` when none was kept under that id in this isolate
/// (Cloudflare: always destroys the id's Durable Object container, `true`).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for a non-string or empty id; the close's failure
/// (`SANDBOX_TRANSPORT_ERROR`, `SANDBOX_RUNTIME_ERROR` when it takes over 15 s).
#[wasm_bindgen(js_name = closeSandbox)]
pub fn close_sandbox(sandbox_id: JsValue, options: JsValue) -> js_sys::Promise {
    crate::sys::error_promise(close_kept_sandbox(sandbox_id, options))
}

/// The Promise's work; its error crosses as a `SandboxError` ([`crate::sys::error_promise`]).
async fn close_kept_sandbox(sandbox_id: JsValue, options: JsValue) -> Result<JsValue> {
    let id = sandbox_id
        .as_string()
        .filter(|id| !id.is_empty())
        .ok_or_else(|| invalid("closeSandbox(sandboxId) expects a non-empty string"))?;
    let signal = if options.is_object() {
        optional_signal(get(&options, "signal", "closeSandbox options")?, "closeSandbox option signal")?
    } else {
        None
    };
    let resolved = runtime_config()?;
    let provider = resolved.provider.as_ref().map(Rc::clone).map_err(Error::to_public)?;
    let closed = if provider.keeps_boxes() {
        provider.close_kept_box(&id).await?
    } else {
        crate::run::lease::close_kept(provider.as_ref(), &id, signal.as_ref()).await?
    };
    Ok(closed.into())
}

async fn prepare_run(name: &JsValue, options: &JsValue, events: JsValue) -> Result<(Rc<Definition>, RunOptions)> {
    let name = name.as_string().ok_or_else(|| invalid("Sandbox name must be a string"))?;
    validate_name(&name)?;
    let call = call_options(options)?;
    let registered = registered(&name);
    let definition = match registered {
        Some(definition) => definition,
        None => match load_definition(&name).await? {
            Some(definition) => definition,
            None => return Err(Error::new(ErrorCode::NotFound, not_found(&name).await)),
        },
    };
    let resolved = runtime_config()?;
    let provider = resolved.provider.as_ref().map(Rc::clone).map_err(Error::to_public)?;
    let events = RunEvents::new(events);
    Ok((
        definition,
        RunOptions {
            context: call.context,
            signal: call.signal,
            provider,
            limits: resolved.limits,
            sandbox_id: call.sandbox_id,
            events,
            debug: resolved.debug,
            warm_pool: resolved.warm_pool,
        },
    ))
}

/// `setSandboxDefinitionLoader(loader | null)`: the lazy registry seam. `runSandbox(name)` calls
/// `loader(name) → Promise<definition | undefined>` when `name` is not in the programmatic
/// registry (`registerSandbox` wins). `definition` is the object `registerSandbox` takes, plus an
/// optional `digest` string: a Definition is parsed once per `(name, digest)` and reused while the
/// loader returns the same digest, so an edited Definition (new digest) is re-read, never served
/// stale; without `digest` it is parsed on every run. Set by the facade the Vite plugin generates.
///
/// `describe() → { names: string[], invalid?: { [name]: reason } }` (or a Promise of it), optional,
/// is asked only when neither registry has the name, so that `SANDBOX_NOT_FOUND` says why
/// (`src/definition/suggest.rs`): the reason of an invalid Definition, else the closest names.
#[wasm_bindgen(js_name = setSandboxDefinitionLoader)]
pub fn set_sandbox_definition_loader(loader: Option<js_sys::Function>, describe: Option<js_sys::Function>) {
    let describe = describe.filter(|_| loader.is_some());
    LOADER.with(|l| *l.borrow_mut() = loader);
    DESCRIBE.with(|d| *d.borrow_mut() = describe);
    LOADED.with(|l| l.borrow_mut().clear());
}

/// The `SANDBOX_NOT_FOUND` message for `name`: the facts are gathered here, the wording is
/// [`not_found_message`]'s. A `describe()` that throws or answers something else counts as one
/// that lists no names (the miss is still reported, never replaced by its error).
async fn not_found(name: &str) -> String {
    let mut names: Vec<String> = REGISTRY.with(|r| r.borrow().iter().map(|(n, _)| n.clone()).collect());
    let has_loader = LOADER.with(|l| l.borrow().is_some());
    if !has_loader && names.is_empty() {
        return not_found_message(name, &Miss::NoRegistry);
    }
    let described = match DESCRIBE.with(|d| d.borrow().clone()) {
        Some(describe) => match describe.call0(&JsValue::NULL) {
            Ok(returned) => wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&returned)).await.ok(),
            Err(_) => None,
        },
        None => None,
    };
    if let Some(described) = described.filter(JsValue::is_object) {
        let reason = get(&described, "invalid", "describe()")
            .ok()
            .filter(JsValue::is_object)
            .and_then(|invalid| {
                Reflect::get_own_property_descriptor(invalid.unchecked_ref::<Object>(), &JsValue::from_str(name)).ok()
            })
            .filter(JsValue::is_object)
            .and_then(|descriptor| Reflect::get(&descriptor, &JsValue::from_str("value")).ok())
            .and_then(|reason| reason.as_string());
        if let Some(reason) = reason {
            return not_found_message(name, &Miss::Invalid { reason: &reason });
        }
        if let Ok(listed) = get(&described, "names", "describe()") {
            if js_sys::Array::is_array(&listed) {
                names.extend(js_sys::Array::from(&listed).iter().filter_map(|n| n.as_string()));
            }
        }
    }
    // In production the names stay in the server: a route that takes the name from its client
    // would hand them out (an unreadable config counts as production).
    if runtime_config().map_or(true, |config| config.production) {
        return not_found_message(name, &Miss::Unlisted);
    }
    not_found_message(name, &Miss::Unknown { names: &names })
}

/// Asks the loader for `name`. `Ok(None)`: no loader, or it has no such Definition.
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` when the loader throws or rejects (its message is kept);
/// `SANDBOX_INVALID_ARGUMENT` when the loaded Definition is invalid.
async fn load_definition(name: &str) -> Result<Option<Rc<Definition>>> {
    let Some(loader) = LOADER.with(|l| l.borrow().clone()) else { return Ok(None) };
    let loader_error = |e: JsValue| {
        Error::new(
            ErrorCode::RuntimeError,
            format!("the sandbox registry could not load \"{name}\": {}", js_message(&e)),
        )
    };
    let returned = loader.call1(&JsValue::NULL, &JsValue::from_str(name)).map_err(loader_error)?;
    let loaded =
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&returned)).await.map_err(loader_error)?;
    if loaded.is_undefined() || loaded.is_null() {
        return Ok(None);
    }
    let digest = get(&loaded, "digest", "the loaded definition")?.as_string();
    if let Some(digest) = &digest {
        let cached = LOADED
            .with(|l| l.borrow().iter().find(|(n, d, _)| n == name && d == digest).map(|(_, _, def)| def.clone()));
        if cached.is_some() {
            return Ok(cached);
        }
    }
    let definition = Rc::new(Definition::from_source(name, definition_source(&loaded)?)?);
    if let Some(digest) = digest {
        LOADED.with(|l| {
            let mut loaded = l.borrow_mut();
            loaded.retain(|(n, _, _)| n != name);
            loaded.push((name.to_owned(), digest, definition.clone()));
        });
    }
    Ok(Some(definition))
}
