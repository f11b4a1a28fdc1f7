//! Sessions from a Worker: one Box held open across Commands and file operations, as
//! `openSandboxSession` gives in JS (docs/sessions.md). A thin layer over the runtime's Session
//! core (`vite_hub_sandbox::session::SessionCore`): the same state, paths, errors and requests.
//!
//! Source: vitehub-sandbox-contract.md §2 (executionAuthority) and §3 (the Box session).

use std::rc::Rc;

use vite_hub_sandbox::session::{session_spec, SessionCore};
use vite_hub_sandbox_core::command::{Command, CommandOutcome};
use vite_hub_sandbox_core::env_map::EnvMap;
use vite_hub_sandbox_core::error::{Error, ErrorCode};
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::{self, ExecutionAuthority, SessionStatus, MAX_EXEC_OUTPUT_BYTES};

use crate::registry::Registry;

/// Options of [`open_session`] (`openSandboxSession`'s `{ timeout?, signal?, sandboxId? }`).
#[derive(Debug, Default)]
pub struct SessionOptions {
    lifetime_ms: Option<u64>,
    sandbox_id: Option<String>,
    signal: Option<web_sys::AbortSignal>,
}

impl SessionOptions {
    /// The provider's default lifetime (5 minutes on Vercel and the local Box host), a new Box,
    /// no signal.
    pub fn new() -> SessionOptions {
        SessionOptions::default()
    }

    /// The Box lifetime in ms (1 to 2147483647; checked by [`open_session`]): past it the provider
    /// stops the Box and the Session is [`SessionStatus::Expired`] (Cloudflare Boxes have none).
    pub fn with_lifetime_ms(self, lifetime_ms: u64) -> SessionOptions {
        SessionOptions { lifetime_ms: Some(lifetime_ms), ..self }
    }

    /// Opens the kept Box of `sandbox_id` (Cloudflare: the Durable Object named so; other
    /// providers refuse it with `SANDBOX_NOT_SUPPORTED`).
    pub fn with_sandbox_id(self, sandbox_id: impl Into<String>) -> SessionOptions {
        SessionOptions { sandbox_id: Some(sandbox_id.into()), ..self }
    }

    /// When `signal` fires, the opening fails (and a Box already opened is closed).
    pub fn with_signal(self, signal: &worker::AbortSignal) -> SessionOptions {
        SessionOptions { signal: Some((**signal).clone()), ..self }
    }
}

/// Opens a Session: one Box on the provider the registry's config chooses for `env` (as
/// [`crate::run_sandbox`] does; Cloudflare through `env`'s Durable Object binding), held until
/// [`Session::close`].
///
/// Requests: local and Vercel `POST /v3/sandboxes` (the create; its answer carries the local
/// host's executionAuthority); Cloudflare none until the first operation.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for a lifetime of 0 or over 2147483647 ms, an empty `sandbox_id`;
/// `SANDBOX_NOT_SUPPORTED` for a `sandbox_id` outside Cloudflare; the provider's
/// (`SANDBOX_PROVIDER_REQUIRED` without one, `SANDBOX_PROVIDER_UNAVAILABLE`,
/// `SANDBOX_TRANSPORT_ERROR`, also when the options' signal fired).
pub async fn open_session(env: &worker::Env, registry: &Registry, options: SessionOptions) -> Result<Session, Error> {
    let what = "open_session options";
    let lifetime_ms =
        options.lifetime_ms.map(|ms| session::check_timeout_ms(ms as f64, &format!("{what} lifetime"))).transpose()?;
    if options.sandbox_id.as_deref() == Some("") {
        return Err(Error::new(ErrorCode::InvalidArgument, format!("{what} sandbox_id must be a non-empty string")));
    }
    let provider = registry.runtime(env)?.provider.as_ref().map(Rc::clone).map_err(Error::to_public)?;
    let spec = session_spec(provider.as_ref(), lifetime_ms, options.sandbox_id)?;
    let core = SessionCore::open(provider.as_ref(), &spec, options.signal.as_ref()).await?;
    Ok(Session { core: Rc::new(core) })
}

/// One open Box (see [`open_session`]). Every operation fails with `SANDBOX_INVALID_STATE` after
/// [`Session::close`] or once the Box lifetime ran out ([`Session::status`] `Expired`).
///
/// Dropping a Session that was not closed starts its close in the background
/// (`wasm_bindgen_futures::spawn_local`): in a Worker that work ends with the request, so close
/// it yourself (`session.close().await`) before answering.
#[derive(Debug)]
pub struct Session {
    core: Rc<SessionCore>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if !self.core.closed() {
            let core = Rc::clone(&self.core);
            wasm_bindgen_futures::spawn_local(async move {
                let _ = core.close().await;
            });
        }
    }
}

impl Session {
    /// The provider's Box id (Vercel session id, Cloudflare Durable Object name, local Box host
    /// session id).
    pub fn id(&self) -> &str {
        self.core.id()
    }

    /// The provider the Box is on.
    pub fn provider(&self) -> ProviderKind {
        self.core.provider()
    }

    /// The Box working directory (relative paths of every operation start here), e.g.
    /// `/vercel/sandbox`, `/workspace`.
    pub fn cwd(&self) -> &str {
        self.core.cwd()
    }

    /// The status now: `Running`; `Stopped` after a successful [`Session::close`] (`Failed` when
    /// its stop failed); `Expired` once the Box lifetime ran out (by the clock, or the provider's
    /// 410).
    pub fn status(&self) -> SessionStatus {
        self.core.status()
    }

    /// What the Box may do (contract §2): `credentials`, `environment`, `filesystem`,
    /// `isolation`, `network`, `processes`; `to_json()` gives the JS object's shape.
    pub fn execution_authority(&self) -> ExecutionAuthority {
        self.core.execution_authority()
    }

    /// Runs `exec`'s Command (argv, no shell) and waits for it: its exit code and the last
    /// `max_output_bytes` of stdout and of stderr (UTF-8; `truncated` when either lost its
    /// beginning).
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for an empty or NUL-holding program or argument, a bad env name,
    /// a timeout of 0 or over 2147483647 ms, an output cap over 16 MiB; `SANDBOX_INVALID_STATE`
    /// (closed, expired); `SANDBOX_TIMEOUT` when its timeout killed it; the provider's errors
    /// (`SANDBOX_TRANSPORT_ERROR` also when its signal fired: the Command is killed).
    pub async fn exec(&self, exec: &Exec) -> Result<CommandOutcome, Error> {
        let command = exec.command()?;
        self.core.exec(&command, exec.signal.as_ref()).await
    }

    /// The bytes of the file at `path` (relative to [`Session::cwd`], or absolute); `None` when it
    /// does not exist.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for an empty path (on the local Box host, one outside the work
    /// directory, `/tmp` and `/home/box`); `SANDBOX_INVALID_STATE`; `SANDBOX_TRANSFER_LIMIT` for
    /// a file of 256 MiB or more; the provider's errors.
    pub async fn read(&self, path: &str) -> Result<Option<Vec<u8>>, Error> {
        self.core.read(path).await
    }

    /// Writes `bytes` to the file at `path` (mode 0644), creating its parents, replacing it.
    ///
    /// # Errors
    /// As [`Session::read`] (but the size limit); a directory at `path` is `SANDBOX_INVALID_ARGUMENT`.
    pub async fn write(&self, path: &str, bytes: impl Into<Vec<u8>>) -> Result<(), Error> {
        self.core.write(path, bytes.into()).await
    }

    /// Whether `path` exists.
    ///
    /// # Errors
    /// As [`Session::read`] (but the size limit).
    pub async fn exists(&self, path: &str) -> Result<bool, Error> {
        self.core.exists(path).await
    }

    /// Creates the directory `path` (with `recursive`, its parents too).
    ///
    /// # Errors
    /// As [`Session::read`] (but the size limit); a missing parent or an existing path without
    /// `recursive` is `SANDBOX_INVALID_ARGUMENT`.
    pub async fn mkdir(&self, path: &str, recursive: bool) -> Result<(), Error> {
        self.core.mkdir(path, recursive).await
    }

    /// Removes the file `path` (with `recursive`, a directory tree); a missing path is no error.
    ///
    /// # Errors
    /// As [`Session::read`] (but the size limit); a directory without `recursive` is
    /// `SANDBOX_INVALID_ARGUMENT`.
    pub async fn remove(&self, path: &str, recursive: bool) -> Result<(), Error> {
        self.core.remove(path, recursive).await
    }

    /// Stops the Box (local and Vercel `POST …/stop`, Cloudflare the container's destroy). Every
    /// later operation fails with `SANDBOX_INVALID_STATE`; a failed stop leaves the status
    /// `Failed` and may be tried again.
    ///
    /// # Errors
    /// The provider's failure to stop the Box.
    pub async fn close(&self) -> Result<(), Error> {
        self.core.close().await
    }
}

/// A Command for [`Session::exec`]: `Exec::new("node").arg("-e").arg("…")`.
#[derive(Debug, Clone)]
pub struct Exec {
    program: String,
    args: Vec<String>,
    cwd: Option<String>,
    env: EnvMap,
    timeout_ms: Option<u64>,
    max_output_bytes: usize,
    signal: Option<web_sys::AbortSignal>,
}

impl Exec {
    /// The executable `program` (a name found on the Box's `PATH`, or a path), no arguments,
    /// the Session's cwd, no timeout, 16 MiB (16777216 bytes) kept of stdout and of stderr each.
    pub fn new(program: impl Into<String>) -> Exec {
        Exec {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: EnvMap::new(),
            timeout_ms: None,
            max_output_bytes: MAX_EXEC_OUTPUT_BYTES,
            signal: None,
        }
    }

    /// One more argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Exec {
        self.args.push(arg.into());
        self
    }

    /// More arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Exec {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The directory it runs in (relative to the Session's cwd, or absolute).
    pub fn cwd(self, cwd: impl Into<String>) -> Exec {
        Exec { cwd: Some(cwd.into()), ..self }
    }

    /// One environment variable.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Exec {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Kills it after `timeout_ms` ms (1 to 2147483647): [`Session::exec`] then fails with
    /// `SANDBOX_TIMEOUT`.
    pub fn timeout_ms(self, timeout_ms: u64) -> Exec {
        Exec { timeout_ms: Some(timeout_ms), ..self }
    }

    /// Bytes kept of stdout and of stderr each (the last ones), at most 16 MiB (16777216).
    pub fn max_output_bytes(self, bytes: usize) -> Exec {
        Exec { max_output_bytes: bytes, ..self }
    }

    /// When `signal` fires, the wait ends (an error) and the Command is killed.
    pub fn signal(self, signal: &worker::AbortSignal) -> Exec {
        Exec { signal: Some((**signal).clone()), ..self }
    }

    /// The checked Command.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` naming what the rules of `vite_hub_sandbox_core::session` refuse.
    fn command(&self) -> Result<Command, Error> {
        session::check_command(&self.program)?;
        for (index, arg) in self.args.iter().enumerate() {
            session::check_arg(arg, index)?;
        }
        for (name, value) in self.env.iter() {
            session::check_env_name(name)?;
            if value.contains('\0') {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("exec env {} must not contain a NUL character", vite_hub_sandbox_core::error::quoted(name)),
                ));
            }
        }
        if let Some(cwd) = self.cwd.as_deref().filter(|cwd| cwd.is_empty() || cwd.contains('\0')) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "exec cwd must be a non-empty path without NUL, not {}",
                    vite_hub_sandbox_core::error::quoted(cwd)
                ),
            ));
        }
        let timeout_ms = self.timeout_ms.map(|ms| session::check_timeout_ms(ms as f64, "exec timeout")).transpose()?;
        if self.max_output_bytes > MAX_EXEC_OUTPUT_BYTES {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("exec max_output_bytes is at most {MAX_EXEC_OUTPUT_BYTES}, not {}", self.max_output_bytes),
            ));
        }
        Ok(Command {
            program: self.program.clone(),
            args: self.args.clone(),
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            timeout_ms,
            max_stdout_bytes: self.max_output_bytes,
            max_stderr_bytes: self.max_output_bytes,
        })
    }
}
