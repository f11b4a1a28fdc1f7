//! The Session exports: `openSandboxSession(options?)` and the handles it gives
//! ([`SandboxSession`], [`SandboxProcess`], [`SandboxLogStream`]), and `resolveSandboxRunner(name)`.
//!
//! JS values are read into plain values here and checked by [`crate::session`] before any request
//! leaves; every operation runs on [`BoxSession`]. `pkg-template/runtime/session.mjs` wraps these
//! classes (`Symbol.asyncDispose`, the async iterator of `logs()`), and nothing more.
//!
//! Source: vitehub-sandbox-contract.md §2 (`resolveSandboxRunner`, executionAuthority) and §3
//! (the Box session).

use std::cell::RefCell;
use crate::env_map::EnvMap;
use std::rc::Rc;

use js_sys::{Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use super::definition_object::get;
use crate::command::{Command, CommandOutcome};
use crate::error::js::{into_js, js_message};
use crate::error::{Error, ErrorCode, Operation, Result};
use crate::provider::output::LogStream;
use crate::provider::{BoxSession, BoxSpec, FileRead, Provider, ProviderKind};
use crate::transfer::box_file::BoxFile;
use crate::session::{self, ExecutionAuthority, SessionState, SessionStatus, MAX_EXEC_OUTPUT_BYTES};

/// Most arguments of one Command.
const MAX_ARGS: usize = 65_536;
/// Largest file `read()` returns, in bytes (a larger one is SANDBOX_TRANSFER_LIMIT, never buffered).
const MAX_READ_BYTES: u64 = 256 * 1024 * 1024;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message.into())
}

pub(super) use crate::sys::js_promise;

fn rejected(error: Error) -> Promise {
    Promise::reject(&into_js(error))
}

/// The keys of an options object, refusing any outside `allowed` (`what` names it).
fn check_keys(options: &JsValue, allowed: &[&str], what: &str) -> Result<()> {
    if options.is_undefined() || options.is_null() {
        return Ok(());
    }
    if !options.is_object() || js_sys::Array::is_array(options) {
        return Err(invalid(format!("{what} must be an object {{ {} }}", allowed.join(", "))));
    }
    let keys = Reflect::own_keys(options).map_err(|e| invalid(format!("{what} could not be read: {}", js_message(&e))))?;
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_else(|| "a symbol".to_owned());
        if !allowed.contains(&key.as_str()) {
            return Err(invalid(format!("unknown {what} key {key}; expected {}", allowed.join(", "), key = crate::error::quoted(&key))));
        }
    }
    Ok(())
}

fn option(options: &JsValue, key: &str, what: &str) -> Result<JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(JsValue::UNDEFINED);
    }
    get(options, key, what)
}

fn signal_option(options: &JsValue, what: &str) -> Result<Option<AbortSignal>> {
    super::optional_signal(option(options, "signal", what)?, &format!("{what} signal"))
}

fn timeout_option(options: &JsValue, what: &str) -> Result<Option<u64>> {
    let value = option(options, "timeout", what)?;
    if value.is_undefined() {
        return Ok(None);
    }
    let ms = value.as_f64().ok_or_else(|| invalid(format!("{what} timeout must be a number of ms")))?;
    session::check_timeout_ms(ms, &format!("{what} timeout")).map(Some)
}

fn bool_option(options: &JsValue, key: &str, what: &str) -> Result<bool> {
    let value = option(options, key, what)?;
    if value.is_undefined() {
        return Ok(false);
    }
    value.as_bool().ok_or_else(|| invalid(format!("{what} {key} must be a boolean")))
}

fn set(target: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

/// The contract's frozen executionAuthority object (nested `filesystem` frozen too).
pub(super) fn authority_object(authority: &ExecutionAuthority) -> JsValue {
    let filesystem = Object::new();
    set(&filesystem, "access", &authority.filesystem_access.as_str().into());
    set(&filesystem, "scope", &authority.filesystem_scope.as_str().into());
    let object = Object::new();
    set(&object, "credentials", &authority.credentials.as_str().into());
    set(&object, "environment", &authority.environment.as_str().into());
    set(&object, "filesystem", &Object::freeze(&filesystem).into());
    set(&object, "isolation", &authority.isolation.as_str().into());
    set(&object, "network", &authority.network.as_str().into());
    set(&object, "processes", &authority.processes.as_str().into());
    Object::freeze(&object).into()
}

/// Everything a Session handle and its processes share.
#[derive(Debug)]
struct Inner {
    session: Box<dyn BoxSession>,
    id: String,
    provider: ProviderKind,
    authority: JsValue,
    state: RefCell<SessionState>,
    /// The cleanup of the first `close()`, shared by concurrent callers (cleared when it failed,
    /// so a later `close()` tries again).
    closing: RefCell<Option<Promise>>,
}

impl Inner {
    fn check_open(&self, operation: &str) -> Result<()> {
        self.state.borrow_mut().check_open(&self.id, operation, crate::sys::performance_now())
    }

    /// `error` of `operation`, unless the provider answered 410 (its Box is stopped: the lifetime
    /// ran out): then the Session becomes `expired` and the error says so (`SANDBOX_INVALID_STATE`).
    /// A provider's 400/404/409 to `mkdir` or `remove` (a missing parent, an existing path, a
    /// directory without `recursive`), and its 400 to `read` or `write` (a directory, a FIFO, a
    /// symlink leading out of the Box), are the caller's path: `SANDBOX_INVALID_ARGUMENT`, not a
    /// broken provider (`SANDBOX_TRANSPORT_ERROR`, 502).
    fn failed(&self, operation: &str, error: Error) -> Error {
        let path_operation = match (operation, error.upstream_status()) {
            ("mkdir", Some(400 | 404 | 409)) => Some(Operation::Mkdir),
            ("remove", Some(400 | 404 | 409)) => Some(Operation::Remove),
            ("read", Some(400)) => Some(Operation::Read),
            ("write", Some(400)) => Some(Operation::Write),
            _ => None,
        };
        match (error.upstream_status(), path_operation) {
            (Some(410), _) => self.state.borrow_mut().expire(&self.id, operation).with_provider(self.provider),
            (Some(status), Some(op)) if error.code() == ErrorCode::TransportError => {
                Error::new(ErrorCode::InvalidArgument, error.message().to_owned()).with_provider(self.provider).with_operation(op).with_status(status)
            }
            _ => error,
        }
    }
}

/// The reason of an aborted `signal` when `error` came from that abort, else `error`.
fn abort_or(error: Error, signal: Option<&AbortSignal>) -> JsValue {
    match signal.filter(|s| s.aborted()) {
        Some(signal) => signal.reason(),
        None => into_js(error),
    }
}

/// A Command read from `exec`/`spawn` arguments: `(command, args?, { cwd?, env?, timeout?, signal? })`.
fn read_command(command: &JsValue, args: &JsValue, options: &JsValue, what: &str) -> Result<(Command, Option<AbortSignal>)> {
    let program = command.as_string().ok_or_else(|| invalid(format!("{what}(command) needs a string command (the executable)")))?;
    session::check_command(&program)?;
    let mut argv = Vec::new();
    if !args.is_undefined() && !args.is_null() {
        if !js_sys::Array::is_array(args) {
            return Err(invalid(format!("{what}(command, args): args must be an array of strings")));
        }
        // Read with Reflect (a Proxy's throwing trap is an error here, not an exception through
        // the module), bounded by MAX_ARGS whatever `length` claims.
        let read = |key: &JsValue| Reflect::get(args, key).map_err(|e| invalid(format!("{what}(command, args): args could not be read: {}", js_message(&e))));
        let length = read(&JsValue::from_str("length"))?.as_f64().unwrap_or(0.0);
        if length > MAX_ARGS as f64 {
            return Err(invalid(format!("{what}(command, args): at most {MAX_ARGS} args")));
        }
        for index in 0..length as usize {
            let arg = read(&JsValue::from(index as u32))?;
            let arg = arg.as_string().ok_or_else(|| invalid(format!("{what}(command, args): args[{index}] must be a string")))?;
            session::check_arg(&arg, index)?;
            argv.push(arg);
        }
    }
    let opts = format!("{what} options");
    check_keys(options, &["cwd", "env", "timeout", "signal"], &opts)?;
    let cwd = option(options, "cwd", &opts)?;
    let cwd = if cwd.is_undefined() {
        None
    } else {
        let cwd = cwd.as_string().ok_or_else(|| invalid(format!("{opts} cwd must be a string")))?;
        if cwd.is_empty() || cwd.contains('\0') {
            return Err(invalid(format!("{opts} cwd must be a non-empty path without NUL")));
        }
        Some(cwd)
    };
    let env_value = option(options, "env", &opts)?;
    let mut env = EnvMap::new();
    if !env_value.is_undefined() {
        if !env_value.is_object() || js_sys::Array::is_array(&env_value) {
            return Err(invalid(format!("{opts} env must be an object of strings")));
        }
        let keys = Reflect::own_keys(&env_value).map_err(|e| invalid(format!("{opts} env could not be read: {}", js_message(&e))))?;
        for key in keys.iter() {
            let name = key.as_string().ok_or_else(|| invalid(format!("{opts} env has a symbol key")))?;
            session::check_env_name(&name)?;
            let value = Reflect::get(&env_value, &key).map_err(|e| invalid(format!("{opts} env could not be read: {}", js_message(&e))))?;
            let value = value.as_string().ok_or_else(|| invalid(format!("{opts} env {name} must be a string", name = crate::error::quoted(&name))))?;
            if value.contains('\0') {
                return Err(invalid(format!("{opts} env {name} must not contain a NUL character", name = crate::error::quoted(&name))));
            }
            env.insert(name, value);
        }
    }
    let timeout_ms = timeout_option(options, &opts)?;
    let signal = signal_option(options, &opts)?;
    let command = Command {
        program,
        args: argv,
        cwd,
        env,
        timeout_ms,
        max_stdout_bytes: MAX_EXEC_OUTPUT_BYTES,
        max_stderr_bytes: MAX_EXEC_OUTPUT_BYTES,
    };
    Ok((command, signal))
}

fn exec_result(outcome: &CommandOutcome) -> JsValue {
    let object = Object::new();
    set(&object, "exitCode", &outcome.exit_code.into());
    set(&object, "ok", &outcome.success().into());
    set(&object, "stdout", &outcome.stdout.as_str().into());
    set(&object, "stderr", &outcome.stderr.as_str().into());
    if outcome.truncated {
        set(&object, "truncated", &JsValue::TRUE);
    }
    object.into()
}

/// One operation of a Session handle (or of one of its processes), read and checked.
#[derive(Debug)]
enum Op {
    /// `exec`: run and wait.
    Exec(Command),
    /// `spawn`: start, answer a [`SandboxProcess`].
    Spawn(Command),
    /// `read(path)`.
    Read(String),
    /// `write(path, data)`: the file, its path relative to `/`.
    Write(BoxFile),
    /// `exists(path)`.
    Exists(String),
    /// `mkdir(path, { recursive })`.
    Mkdir(String, bool),
    /// `remove(path, { recursive })`.
    Remove(String, bool),
    /// A process's `openLogs()`.
    Logs(String),
    /// A process's `wait()`.
    Wait(String),
    /// A process's `kill(signal)`: its id and the signal number.
    Kill(String, u8),
}

impl Op {
    /// The operation's name in errors (`SANDBOX_INVALID_STATE` of an expired Box, path errors).
    fn name(&self) -> &'static str {
        match self {
            Op::Exec(_) => "exec",
            Op::Spawn(_) => "spawn",
            Op::Read(_) => "read",
            Op::Write(_) => "write",
            Op::Exists(_) => "exists",
            Op::Mkdir(..) => "mkdir",
            Op::Remove(..) => "remove",
            Op::Logs(_) => "logs",
            Op::Wait(_) => "wait",
            Op::Kill(..) => "kill",
        }
    }
}

/// The Promise of `op` on the Box of `inner`: one future type for every Session operation. A provider error goes through [`Inner::failed`]; with `signal` (`exec`,
/// `spawn`) an aborted signal's reason replaces it.
fn operate(inner: &Rc<Inner>, op: Op, signal: Option<AbortSignal>) -> Promise {
    let inner = inner.clone();
    js_promise(Box::pin(async move {
        let session = &inner.session;
        let fail = |error: Error| abort_or(inner.failed(op.name(), error), signal.as_ref());
        let signal = signal.as_ref();
        Ok(match &op {
            Op::Exec(command) => {
                let started = crate::sys::performance_now();
                let outcome = session.exec(command, signal).await.map_err(fail)?;
                // Vercel and the local Box host kill a Command at its timeout (SIGKILL, exit 137);
                // Cloudflare's container reports it itself (SANDBOX_TIMEOUT).
                if let Some(ms) = command.timeout_ms {
                    if outcome.exit_code == 137 && crate::sys::performance_now() - started >= ms as f64 {
                        return Err(into_js(
                            Error::new(ErrorCode::Timeout, format!("the command timed out after {ms}ms"))
                                .with_timeout_ms(ms)
                                .with_provider(inner.provider)
                                .with_operation(Operation::Exec),
                        ));
                    }
                }
                exec_result(&outcome)
            }
            Op::Spawn(command) => {
                let id = session.spawn(command, signal).await.map_err(fail)?;
                SandboxProcess { inner: inner.clone(), id }.into()
            }
            // Read by size with a cap (issue 9): a huge Box file never buffers whole.
            Op::Read(path) => match session.read_file(path, MAX_READ_BYTES, None).await.map_err(fail)? {
                FileRead::Bytes(bytes) => Uint8Array::from(bytes.as_slice()).into(),
                FileRead::Missing => JsValue::NULL,
                FileRead::TooLarge(size) => {
                    return Err(into_js(Error::new(ErrorCode::TransferLimit, format!("{path} has {size} bytes or more; read() returns at most {MAX_READ_BYTES}"))))
                }
            },
            Op::Write(file) => {
                session.write_files(std::slice::from_ref(file), None).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
            Op::Exists(path) => session.exists(path, None).await.map_err(fail)?.into(),
            Op::Mkdir(path, recursive) => {
                session.mkdir(path, *recursive, None).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
            Op::Remove(path, recursive) => {
                session.remove(path, *recursive, None).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
            Op::Logs(id) => {
                let stream = session.logs(id, None).await.map_err(fail)?;
                SandboxLogStream { stream: Rc::new(RefCell::new(Some(stream))) }.into()
            }
            Op::Wait(id) => {
                let exit_code = session.wait(id, None).await.map_err(fail)?;
                let object = Object::new();
                set(&object, "exitCode", &exit_code.into());
                set(&object, "ok", &(exit_code == 0).into());
                object.into()
            }
            Op::Kill(id, number) => {
                session.kill(id, *number, None).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
        })
    }))
}

/// A signal as a number: `undefined` → 15 (SIGTERM), a name of the Vercel protocol's table
/// (§7.3: SIGHUP 1, SIGINT 2, SIGQUIT 3, SIGKILL 9, SIGTERM 15, SIGCONT 18, SIGSTOP 19), or an
/// integer 1–64.
fn signal_number(value: &JsValue) -> Result<u8> {
    if value.is_undefined() {
        return Ok(15);
    }
    if let Some(name) = value.as_string() {
        return match name.as_str() {
            "SIGHUP" => Ok(1),
            "SIGINT" => Ok(2),
            "SIGQUIT" => Ok(3),
            "SIGKILL" => Ok(9),
            "SIGTERM" => Ok(15),
            "SIGCONT" => Ok(18),
            "SIGSTOP" => Ok(19),
            _ => Err(invalid(format!("kill(signal): unknown signal {name}; use SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGQUIT, SIGCONT, SIGSTOP or a number", name = crate::error::quoted(&name)))),
        };
    }
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && (1.0..=64.0).contains(&n) => Ok(n as u8),
        _ => Err(invalid("kill(signal) needs a signal name (e.g. \"SIGTERM\") or a number from 1 to 64")),
    }
}

/// `openSandboxSession({ provider?, timeout?, signal?, sandboxId? }) → Promise<SandboxSession>`:
/// opens one Box on the provider `configureSandbox` chose and resolves to its handle.
///
/// `provider` (`'local' | 'vercel' | 'cloudflare'`) must be the configured one; `timeout` is the
/// Box lifetime in ms (positive integer ≤ 2147483647; the provider's default when absent, 5
/// minutes on Vercel and the local Box host); `signal` aborts the opening (the Promise rejects with
/// its reason); `sandboxId` names a kept Box (Cloudflare; other providers reject it with
/// `SANDBOX_NOT_SUPPORTED`).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for bad options (before any request); those of the provider's
/// open (`SANDBOX_PROVIDER_REQUIRED`, `SANDBOX_PROVIDER_UNAVAILABLE`, `SANDBOX_TRANSPORT_ERROR`).
#[wasm_bindgen(js_name = openSandboxSession)]
pub fn open_sandbox_session(options: JsValue) -> Promise {
    let what = "openSandboxSession options";
    let read = || -> Result<(Rc<dyn Provider>, BoxSpec, Option<AbortSignal>)> {
        check_keys(&options, &["provider", "timeout", "signal", "sandboxId"], what)?;
        let lifetime_ms = timeout_option(&options, what)?;
        let signal = signal_option(&options, what)?;
        let sandbox_id = option(&options, "sandboxId", what)?;
        let sandbox_id = if sandbox_id.is_undefined() {
            None
        } else {
            Some(sandbox_id.as_string().filter(|s| !s.is_empty()).ok_or_else(|| invalid(format!("{what} sandboxId must be a non-empty string")))?)
        };
        let wanted = option(&options, "provider", what)?;
        let resolved = super::runtime_config()?;
        let provider = resolved.provider.as_ref().map(Rc::clone).map_err(Error::to_public)?;
        if !wanted.is_undefined() {
            let name = wanted.as_string().unwrap_or_default();
            let kind = ProviderKind::parse(&name)
                .ok_or_else(|| invalid(format!("{what} provider must be 'local', 'vercel' or 'cloudflare'")))?;
            if kind != provider.kind() {
                return Err(invalid(format!(
                    "openSandboxSession({{ provider: '{}' }}) but configureSandbox chose '{}': call configureSandbox({{ provider: '{}', … }}) first",
                    kind.as_str(),
                    provider.kind().as_str(),
                    kind.as_str()
                )));
            }
        }
        if sandbox_id.is_some() && !provider.keeps_boxes() {
            return Err(Error::new(
                ErrorCode::NotSupported,
                format!("openSandboxSession sandboxId (a kept Box) is supported by the cloudflare provider only, not by {}", provider.kind().as_str()),
            )
            .with_provider(provider.kind()));
        }
        Ok((provider, BoxSpec { lifetime_ms, name: "session".to_owned(), sandbox_id, ..BoxSpec::default() }, signal))
    };
    let (provider, spec, signal) = match read() {
        Ok(read) => read,
        Err(error) => return rejected(error),
    };
    js_promise(Box::pin(async move {
        if let Some(signal) = signal.as_ref().filter(|s| s.aborted()) {
            return Err(signal.reason());
        }
        provider.ensure_ready().await.map_err(into_js)?;
        let session = provider.open(&spec, signal.as_ref()).await.map_err(|e| abort_or(e, signal.as_ref()))?;
        let authority = match provider.box_execution_authority(session.as_ref()).await {
            Ok(authority) => authority,
            Err(error) => {
                let _ = session.close().await;
                return Err(into_js(error));
            }
        };
        if let Some(signal) = signal.as_ref().filter(|s| s.aborted()) {
            let _ = session.close().await;
            return Err(signal.reason());
        }
        // A provider that stops a Box at its lifetime (Vercel, the local Box host) gets the
        // Session's clock; a Box without one (Cloudflare) never expires by it.
        let lifetime_ms = session.stops_at_lifetime().then(|| spec.lifetime_ms.unwrap_or(session::DEFAULT_LIFETIME_MS));
        let inner = Inner {
            id: session.id().to_owned(),
            provider: session.provider(),
            authority: authority_object(&authority),
            session,
            state: RefCell::new(SessionState::running(lifetime_ms, crate::sys::performance_now())),
            closing: RefCell::new(None),
        };
        Ok(SandboxSession { inner: Rc::new(inner) }.into())
    }))
}

/// One open Box (see [`open_sandbox_session`]). Every method returns a Promise; after `close()`
/// each rejects with `SANDBOX_INVALID_STATE`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct SandboxSession {
    inner: Rc<Inner>,
}

#[wasm_bindgen]
impl SandboxSession {
    /// The provider's Box id (Vercel session id, Cloudflare Durable Object name, local Box host session id).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.inner.id.clone()
    }

    /// `'local' | 'vercel' | 'cloudflare'`.
    #[wasm_bindgen(getter)]
    pub fn provider(&self) -> String {
        self.inner.provider.as_str().to_owned()
    }

    /// The Box's frozen executionAuthority (contract §2).
    #[wasm_bindgen(getter, js_name = executionAuthority)]
    pub fn execution_authority(&self) -> JsValue {
        self.inner.authority.clone()
    }

    /// `'pending' | 'running' | 'stopped' | 'failed' | 'expired'`, now (`'expired'` once the Box
    /// lifetime ran out: by the clock, or a provider's 410).
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> String {
        self.inner.state.borrow_mut().status_at(crate::sys::performance_now()).as_str().to_owned()
    }

    /// The Box working directory (relative paths of every operation start here).
    #[wasm_bindgen(getter)]
    pub fn cwd(&self) -> String {
        self.inner.session.cwd().to_owned()
    }

    /// `exec(command, args?, { cwd?, env?, timeout?, signal? }) → Promise<{ exitCode, ok, stdout,
    /// stderr }>`: runs a Command (argv, no shell) and waits for it. `timeout` in ms kills it
    /// (`SANDBOX_TIMEOUT`); `signal` aborts the wait (rejects with its reason) and kills the
    /// Command, also one whose id the provider had not answered yet (Vercel and the local Box host:
    /// `VercelClient::run_command_streaming`). stdout and stderr
    /// keep their last 16 MiB (16777216 bytes) each; when either lost its beginning the result
    /// has `truncated: true` (absent otherwise).
    pub fn exec(&self, command: JsValue, args: JsValue, options: JsValue) -> Promise {
        match self.inner.check_open("exec").and_then(|()| read_command(&command, &args, &options, "exec")) {
            Ok((command, signal)) => operate(&self.inner, Op::Exec(command), signal),
            Err(error) => rejected(error),
        }
    }

    /// `spawn(command, args?, { cwd?, env?, timeout?, signal? }) → Promise<SandboxProcess>`:
    /// starts a Command without waiting (the signal bounds the start only).
    pub fn spawn(&self, command: JsValue, args: JsValue, options: JsValue) -> Promise {
        match self.inner.check_open("spawn").and_then(|()| read_command(&command, &args, &options, "spawn")) {
            Ok((command, signal)) => operate(&self.inner, Op::Spawn(command), signal),
            Err(error) => rejected(error),
        }
    }

    /// `read(path) → Promise<Uint8Array | null>` (`null` when the file does not exist).
    pub fn read(&self, path: JsValue) -> Promise {
        match self.path(&path, "read") {
            Ok(path) => operate(&self.inner, Op::Read(path), None),
            Err(error) => rejected(error),
        }
    }

    /// `write(path, data: string | Uint8Array) → Promise<void>`: creates the parents, replaces the file.
    pub fn write(&self, path: JsValue, data: JsValue) -> Promise {
        let read = self.path(&path, "write").and_then(|path| {
            let bytes = if let Some(text) = data.as_string() {
                text.into_bytes()
            } else if let Some(array) = data.dyn_ref::<Uint8Array>() {
                array.to_vec()
            } else {
                return Err(invalid("write(path, data): data must be a string or a Uint8Array"));
            };
            Ok((path, bytes))
        });
        match read {
            Ok((path, bytes)) => operate(&self.inner, Op::Write(BoxFile { path: path.trim_start_matches('/').to_owned(), bytes, mode: 0o644 }), None),
            Err(error) => rejected(error),
        }
    }

    /// `exists(path) → Promise<boolean>`.
    pub fn exists(&self, path: JsValue) -> Promise {
        match self.path(&path, "exists") {
            Ok(path) => operate(&self.inner, Op::Exists(path), None),
            Err(error) => rejected(error),
        }
    }

    /// The checked path and the `{ recursive? }` option of `op` (`mkdir`, `remove`).
    fn path_and_recursive(&self, path: &JsValue, options: &JsValue, op: &str) -> Result<(String, bool)> {
        let path = self.path(path, op)?;
        let label = format!("{op} options");
        check_keys(options, &["recursive"], &label)?;
        Ok((path, bool_option(options, "recursive", &label)?))
    }

    /// `mkdir(path, { recursive? }) → Promise<void>`.
    pub fn mkdir(&self, path: JsValue, options: JsValue) -> Promise {
        match self.path_and_recursive(&path, &options, "mkdir") {
            Ok((path, recursive)) => operate(&self.inner, Op::Mkdir(path, recursive), None),
            Err(error) => rejected(error),
        }
    }

    /// `remove(path, { recursive? }) → Promise<void>`: a file, or with `recursive` a directory
    /// tree; a missing path is no error.
    pub fn remove(&self, path: JsValue, options: JsValue) -> Promise {
        match self.path_and_recursive(&path, &options, "remove") {
            Ok((path, recursive)) => operate(&self.inner, Op::Remove(path, recursive), None),
            Err(error) => rejected(error),
        }
    }

    /// `close() → Promise<void>`: stops the Box. Idempotent: concurrent and later calls share the
    /// first cleanup; when it failed (`status` `'failed'`), the next call tries again.
    pub fn close(&self) -> Promise {
        if let Some(closing) = self.inner.closing.borrow().clone() {
            return closing;
        }
        {
            let mut state = self.inner.state.borrow_mut();
            state.closed = true;
        }
        let inner = self.inner.clone();
        let closing = js_promise(Box::pin(async move {
            let closed = inner.session.close().await;
            let mut state = inner.state.borrow_mut();
            match closed {
                Ok(()) => {
                    state.status = SessionStatus::Stopped;
                    Ok(JsValue::UNDEFINED)
                }
                Err(error) => {
                    state.status = SessionStatus::Failed;
                    drop(state);
                    inner.closing.borrow_mut().take();
                    Err(into_js(error))
                }
            }
        }));
        self.inner.closing.borrow_mut().replace(closing.clone());
        closing
    }
}

impl SandboxSession {
    fn path(&self, path: &JsValue, operation: &str) -> Result<String> {
        self.inner.check_open(operation)?;
        let path = path.as_string().ok_or_else(|| invalid(format!("{operation}(path) needs a string path")))?;
        let path = session::box_path(self.inner.session.cwd(), &path, operation)?;
        if let Some(work_dir) = self.inner.session.local_box_host_work_dir() {
            session::check_local_box_path(&path, work_dir, operation)?;
        }
        Ok(path)
    }
}

/// A Command started by `spawn`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct SandboxProcess {
    inner: Rc<Inner>,
    id: String,
}

#[wasm_bindgen]
impl SandboxProcess {
    /// The provider's Command id.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// `openLogs() → Promise<SandboxLogStream>`: the Command's output from its start, then live.
    #[wasm_bindgen(js_name = openLogs)]
    pub fn open_logs(&self) -> Promise {
        match self.inner.check_open("logs") {
            Ok(()) => operate(&self.inner, Op::Logs(self.id.clone()), None),
            Err(error) => rejected(error),
        }
    }

    /// `wait() → Promise<{ exitCode, ok }>`.
    pub fn wait(&self) -> Promise {
        match self.inner.check_open("wait") {
            Ok(()) => operate(&self.inner, Op::Wait(self.id.clone()), None),
            Err(error) => rejected(error),
        }
    }

    /// `kill(signal?) → Promise<void>`: `'SIGTERM'` (default), `'SIGKILL'`, … or a number.
    pub fn kill(&self, signal: JsValue) -> Promise {
        match self.inner.check_open("kill").and_then(|()| signal_number(&signal)) {
            Ok(number) => operate(&self.inner, Op::Kill(self.id.clone(), number), None),
            Err(error) => rejected(error),
        }
    }
}

/// One reader of a Command's output.
#[wasm_bindgen]
#[derive(Debug)]
pub struct SandboxLogStream {
    stream: Rc<RefCell<Option<Box<dyn LogStream>>>>,
}

#[wasm_bindgen]
impl SandboxLogStream {
    /// `next() → Promise<{ stream: 'stdout' | 'stderr', data } | undefined>` (`undefined` at the
    /// end). One call at a time.
    pub fn next(&self) -> Promise {
        let slot = self.stream.clone();
        js_promise(Box::pin(async move {
            let Some(mut stream) = slot.borrow_mut().take() else {
                return Ok(JsValue::UNDEFINED);
            };
            let next = stream.next().await;
            if matches!(next, Ok(Some(_))) {
                slot.borrow_mut().replace(stream);
            }
            Ok(match next.map_err(into_js)? {
                Some(entry) => {
                    let object = Object::new();
                    set(&object, "stream", &entry.stream.as_str().into());
                    set(&object, "data", &entry.data.as_str().into());
                    object.into()
                }
                None => JsValue::UNDEFINED,
            })
        }))
    }

    /// Stops reading (an iterator left early).
    pub fn cancel(&self) {
        if let Some(mut stream) = self.stream.borrow_mut().take() {
            stream.cancel();
        }
    }
}
