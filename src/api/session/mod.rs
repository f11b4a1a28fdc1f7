//! The Session exports: `openSandboxSession(options?)` and the handles it gives
//! ([`SandboxSession`], [`SandboxProcess`], [`SandboxLogStream`]), and `resolveSandboxRunner(name)`.
//!
//! JS values are read into plain values here and checked by [`vite_hub_sandbox_core::session`] before any request
//! leaves; every operation runs on [`BoxSession`]. `pkg-template/runtime/session.mjs` wraps these
//! classes (`Symbol.asyncDispose`, the async iterator of `logs()`), and nothing more.
//!
//! Source: vitehub-sandbox-contract.md §2 (`resolveSandboxRunner`, executionAuthority) and §3
//! (the Box session).

mod attach;
mod network;
mod options;
mod process;

use options::{bool_option, check_keys, option, read_command, signal_option, timeout_option};

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::error::js::into_js;
use crate::provider::{BoxSpec, Provider};
use crate::session::{session_spec, SessionCore, StdinFeed};
use vite_hub_sandbox_core::command::{Command, CommandOutcome};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::ExecutionAuthority;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message.into())
}

pub(super) use crate::sys::js_promise;

fn rejected(error: Error) -> Promise {
    Promise::reject(&into_js(error))
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

/// Everything a Session handle and its processes share: the Session core and the handle's own
/// JS values.
#[derive(Debug)]
struct Inner {
    core: SessionCore,
    /// The frozen object of the core's executionAuthority, replaced when the policy changes.
    authority: RefCell<JsValue>,
    /// The cleanup of the first `close()`, shared by concurrent callers (cleared when it failed,
    /// so a later `close()` tries again).
    closing: RefCell<Option<Promise>>,
}

impl Inner {
    /// A handle's shared state over `core` (opened or reattached).
    fn new(core: SessionCore) -> Rc<Inner> {
        let authority = RefCell::new(authority_object(&core.execution_authority()));
        Rc::new(Inner { core, authority, closing: RefCell::new(None) })
    }

    fn check_open(&self, operation: &str) -> Result<()> {
        self.core.check_open(operation)
    }
}

/// The reason of an aborted `signal` when `error` came from that abort, else `error`.
fn abort_or(error: Error, signal: Option<&AbortSignal>) -> JsValue {
    match signal.filter(|s| s.aborted()) {
        Some(signal) => signal.reason(),
        None => into_js(error),
    }
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
    /// `exec` with `stdin`: run with a stdin pipe fed from it, and wait.
    ExecStdin(Command, StdinFeed),
    /// `spawn`: start (with a stdin pipe when the flag is set), answer a [`SandboxProcess`].
    Spawn(Command, bool),
    /// `command(id)`: look a Command of this Box up, answer a [`SandboxProcess`].
    Command(String),
    /// `extendTimeout(ms)`.
    ExtendTimeout(u64),
    /// `read(path)`.
    Read(String),
    /// `write(path, data)`: its absolute Box path and bytes.
    Write(String, Vec<u8>),
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
    /// A process's `writeStdin(data)` (close `false`) or `closeStdin()` (no data, close `true`).
    Stdin(String, Vec<u8>, bool),
}

impl Op {
    /// The operation's name in errors (`SANDBOX_INVALID_STATE` of an expired Box, path errors).
    fn name(&self) -> &'static str {
        match self {
            Op::Exec(_) | Op::ExecStdin(..) => "exec",
            Op::Spawn(..) => "spawn",
            Op::Command(_) => "command",
            Op::ExtendTimeout(_) => "extendTimeout",
            Op::Read(_) => "read",
            Op::Write(..) => "write",
            Op::Exists(_) => "exists",
            Op::Mkdir(..) => "mkdir",
            Op::Remove(..) => "remove",
            Op::Logs(_) => "logs",
            Op::Wait(_) => "wait",
            Op::Kill(..) => "kill",
            Op::Stdin(_, _, close) if *close => "closeStdin",
            Op::Stdin(..) => "writeStdin",
        }
    }
}

/// The Promise of `op` on the Box of `inner`: one future type for every Session operation. A provider error goes through [`Inner::failed`]; with `signal` (`exec`,
/// `spawn`) an aborted signal's reason replaces it.
fn operate(inner: &Rc<Inner>, op: Op, signal: Option<AbortSignal>) -> Promise {
    let inner = inner.clone();
    js_promise(Box::pin(async move {
        let core = &inner.core;
        let session = core.box_session();
        let fail = |error: Error| abort_or(error, signal.as_ref());
        let signal = signal.as_ref();
        let name = op.name();
        let failed = |error: Error| fail(core.failed(name, error));
        Ok(match op {
            Op::Exec(command) => exec_result(&core.exec_checked(&command, signal).await.map_err(fail)?),
            Op::ExecStdin(command, stdin) => {
                exec_result(&core.exec_with_stdin_checked(&command, stdin, signal).await.map_err(fail)?)
            }
            Op::Spawn(command, stdin) => {
                let id = if stdin {
                    session.spawn_with_stdin(&command, signal).await
                } else {
                    session.spawn(&command, signal).await
                }
                .map_err(failed)?;
                SandboxProcess { inner: inner.clone(), id }.into()
            }
            Op::Command(id) => {
                session.command(&id, None).await.map_err(failed)?;
                SandboxProcess { inner: inner.clone(), id }.into()
            }
            Op::ExtendTimeout(ms) => {
                core.extend_timeout(ms).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
            Op::Stdin(id, data, close) => {
                session.write_stdin(&id, &data, close, None).await.map_err(failed)?;
                JsValue::UNDEFINED
            }
            Op::Read(path) => match core.read_at(&path).await.map_err(fail)? {
                Some(bytes) => Uint8Array::from(bytes.as_slice()).into(),
                None => JsValue::NULL,
            },
            Op::Write(path, bytes) => {
                core.write_at(&path, bytes).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
            Op::Exists(path) => core.exists_at(&path).await.map_err(fail)?.into(),
            Op::Mkdir(path, recursive) => {
                core.mkdir_at(&path, recursive).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
            Op::Remove(path, recursive) => {
                core.remove_at(&path, recursive).await.map_err(fail)?;
                JsValue::UNDEFINED
            }
            Op::Logs(id) => {
                let stream = session.logs(&id, None).await.map_err(failed)?;
                SandboxLogStream { stream: Rc::new(RefCell::new(Some(stream))) }.into()
            }
            Op::Wait(id) => {
                let exit_code = session.wait(&id, None).await.map_err(failed)?;
                let object = Object::new();
                set(&object, "exitCode", &exit_code.into());
                set(&object, "ok", &(exit_code == 0).into());
                object.into()
            }
            Op::Kill(id, number) => {
                session.kill(&id, number, None).await.map_err(failed)?;
                JsValue::UNDEFINED
            }
        })
    }))
}

/// The `stdin` option of `exec`: absent, bytes (a string as UTF-8, a `Uint8Array`), or a
/// `ReadableStream` (locked here: its reader is taken before any request).
fn stdin_feed(value: &JsValue) -> Result<Option<StdinFeed>> {
    if value.is_undefined() {
        return Ok(None);
    }
    if let Some(text) = value.as_string() {
        return Ok(Some(StdinFeed::Bytes(text.into_bytes())));
    }
    if let Some(array) = value.dyn_ref::<Uint8Array>() {
        return Ok(Some(StdinFeed::Bytes(array.to_vec())));
    }
    let not_stdin = || invalid("exec options stdin must be a string, a Uint8Array or a ReadableStream");
    let stream = value.dyn_ref::<web_sys::ReadableStream>().ok_or_else(not_stdin)?;
    if stream.locked() {
        return Err(invalid("exec options stdin: the ReadableStream is locked (another reader holds it)"));
    }
    let reader = stream.get_reader().dyn_into::<web_sys::ReadableStreamDefaultReader>().map_err(|_| not_stdin())?;
    Ok(Some(StdinFeed::Stream(reader)))
}

/// The provider `configureSandbox` chose, checked against the `provider` option of `options`
/// when given (`what` names the options in errors).
fn configured_provider(options: &JsValue, what: &str) -> Result<Rc<dyn Provider>> {
    let wanted = option(options, "provider", what)?;
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
    Ok(provider)
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
    if let Some(attached) = attach::reattach(&options, what) {
        return attached;
    }
    let read = || -> Result<(Rc<dyn Provider>, BoxSpec, Option<AbortSignal>)> {
        check_keys(&options, &["provider", "timeout", "signal", "sandboxId"], what)?;
        let lifetime_ms = timeout_option(&options, what)?;
        let signal = signal_option(&options, what)?;
        let sandbox_id = option(&options, "sandboxId", what)?;
        let sandbox_id = if sandbox_id.is_undefined() {
            None
        } else {
            Some(
                sandbox_id
                    .as_string()
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| invalid(format!("{what} sandboxId must be a non-empty string")))?,
            )
        };
        let provider = configured_provider(&options, what)?;
        Ok((provider.clone(), session_spec(provider.as_ref(), lifetime_ms, sandbox_id)?, signal))
    };
    let (provider, spec, signal) = match read() {
        Ok(read) => read,
        Err(error) => return rejected(error),
    };
    js_promise(Box::pin(async move {
        let core = SessionCore::open(provider.as_ref(), &spec, signal.as_ref())
            .await
            .map_err(|e| abort_or(e, signal.as_ref()))?;
        Ok(SandboxSession { inner: Inner::new(core) }.into())
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
    /// The provider's Box id, what `openSandboxSession({ id })` reattaches with (Vercel: the sandbox
    /// name; local Box host: the same, its session id; Cloudflare: the Durable Object name).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.inner.core.id().to_owned()
    }

    /// `'local' | 'vercel' | 'cloudflare'`.
    #[wasm_bindgen(getter)]
    pub fn provider(&self) -> String {
        self.inner.core.provider().as_str().to_owned()
    }

    /// The Box's frozen executionAuthority (contract §2).
    #[wasm_bindgen(getter, js_name = executionAuthority)]
    pub fn execution_authority(&self) -> JsValue {
        self.inner.authority.borrow().clone()
    }

    /// `'pending' | 'running' | 'stopped' | 'failed' | 'expired'`, now (`'expired'` once the Box
    /// lifetime ran out: by the clock, or a provider's 410).
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> String {
        self.inner.core.status().as_str().to_owned()
    }

    /// The Box working directory (relative paths of every operation start here).
    #[wasm_bindgen(getter)]
    pub fn cwd(&self) -> String {
        self.inner.core.cwd().to_owned()
    }

    /// `exec(command, args?, { cwd?, env?, timeout?, signal? }) → Promise<{ exitCode, ok, stdout,
    /// stderr }>`: runs a Command (argv, no shell) and waits for it. `timeout` in ms kills it
    /// (`SANDBOX_TIMEOUT`); `signal` aborts the wait (rejects with its reason) and kills the
    /// Command, also one whose id the provider had not answered yet (Vercel and the local Box host:
    /// `VercelClient::run_command_streaming`). stdout and stderr
    /// keep their last 16 MiB (16777216 bytes) each; when either lost its beginning the result
    /// has `truncated: true` (absent otherwise).
    ///
    /// With `stdin` (`string` as UTF-8, `Uint8Array`, or a `ReadableStream` of those, read while
    /// the Command runs, locked while read, never cancelled) the Command reads it from a pipe, then end of
    /// input (Vercel protocol: `attachStdin` and `…/stdin` writes; a Command that stops reading
    /// ends the feed without error; a stream that errors kills it, `SANDBOX_INVALID_ARGUMENT`).
    /// Cloudflare: `SANDBOX_NOT_SUPPORTED`.
    pub fn exec(&self, command: JsValue, args: JsValue, options: JsValue) -> Promise {
        let read = self.inner.check_open("exec").and_then(|()| {
            let (command, signal) = read_command(&command, &args, &options, "exec", &["stdin"])?;
            Ok((command, signal, stdin_feed(&option(&options, "stdin", "exec options")?)?))
        });
        match read {
            Ok((command, signal, None)) => operate(&self.inner, Op::Exec(command), signal),
            Ok((command, signal, Some(stdin))) => operate(&self.inner, Op::ExecStdin(command, stdin), signal),
            Err(error) => rejected(error),
        }
    }

    /// `spawn(command, args?, { cwd?, env?, timeout?, signal?, stdin? }) → Promise<SandboxProcess>`:
    /// starts a Command without waiting (the signal bounds the start only). With `stdin: true`
    /// the Command reads a pipe written by the process's `writeStdin`/`closeStdin` (Vercel
    /// protocol: `attachStdin`); without it, an empty stdin.
    pub fn spawn(&self, command: JsValue, args: JsValue, options: JsValue) -> Promise {
        let read = self.inner.check_open("spawn").and_then(|()| {
            let (command, signal) = read_command(&command, &args, &options, "spawn", &["stdin"])?;
            Ok((command, signal, bool_option(&options, "stdin", "spawn options")?))
        });
        match read {
            Ok((command, signal, stdin)) => operate(&self.inner, Op::Spawn(command, stdin), signal),
            Err(error) => rejected(error),
        }
    }

    /// `command(id) → Promise<SandboxProcess>`: the handle of Command `id` of this Box, running or
    /// finished, started by any handle of this Session (Vercel protocol: `GET …/cmd/{id}`, the
    /// SDK's `getCommand`). An id the provider does not know rejects (`SANDBOX_TRANSPORT_ERROR`,
    /// `details.status` 404).
    pub fn command(&self, id: JsValue) -> Promise {
        let read = self.inner.check_open("command").and_then(|()| {
            id.as_string()
                .filter(|id| !id.is_empty() && id.len() <= 256 && !id.contains(['/', '?', '#', '\0']))
                .ok_or_else(|| invalid("command(id) needs a Command id (a non-empty string without '/', '?' or '#')"))
        });
        match read {
            Ok(id) => operate(&self.inner, Op::Command(id), None),
            Err(error) => rejected(error),
        }
    }

    /// `extendTimeout(ms) → Promise<void>`: moves the end of the Box lifetime `ms` later
    /// (positive integer ≤ 2147483647; Vercel protocol `POST …/extend-timeout` `{ duration }`);
    /// `expiresAt` follows. `SANDBOX_NOT_SUPPORTED` on Cloudflare (no lifetime).
    #[wasm_bindgen(js_name = extendTimeout)]
    pub fn extend_timeout(&self, ms: JsValue) -> Promise {
        let read = self.inner.check_open("extendTimeout").and_then(|()| {
            let value = ms.as_f64().ok_or_else(|| invalid("extendTimeout(ms) needs a number of ms"))?;
            vite_hub_sandbox_core::session::check_timeout_ms(value, "extendTimeout(ms)")
        });
        match read {
            Ok(ms) => operate(&self.inner, Op::ExtendTimeout(ms), None),
            Err(error) => rejected(error),
        }
    }

    /// When the Box lifetime ends, in ms since the Unix epoch (`undefined` for a Box without one,
    /// Cloudflare's).
    #[wasm_bindgen(getter, js_name = expiresAt)]
    pub fn expires_at(&self) -> Option<f64> {
        self.inner.core.expires_at_ms()
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
            Ok((path, bytes)) => operate(&self.inner, Op::Write(path, bytes), None),
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
        let inner = self.inner.clone();
        let closing = js_promise(Box::pin(async move {
            match inner.core.close().await {
                Ok(()) => Ok(JsValue::UNDEFINED),
                Err(error) => {
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
        self.inner.core.path(&path, operation)
    }
}

pub use process::{SandboxLogStream, SandboxProcess};
