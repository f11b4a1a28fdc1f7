//! The core of a Session: one open Box with its state (status, lifetime), its executionAuthority
//! and the operations on it, in Rust values. The JS `openSandboxSession` handles (`api::session`,
//! npm exports) and the Rust Worker API (`crates/worker`'s `open_session`) are both thin layers
//! over [`SessionCore`]; the rules themselves (state, paths, arguments) are
//! [`vite_hub_sandbox_core::session`]'s.
//!
//! Source: vitehub-sandbox-contract.md §2 (executionAuthority) and §3 (the Box session).

use std::cell::RefCell;

use futures::future::{select, Either};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use crate::http::fetch::AbortWait;
use crate::provider::output::OutputStream;
use crate::provider::{BoxSession, BoxSpec, FileRead, Provider};
use vite_hub_sandbox_core::command::{Command, CommandOutcome, OutputTail};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::{self, ExecutionAuthority, SessionState, SessionStatus};
use vite_hub_sandbox_core::transfer::box_file::BoxFile;

/// Largest file [`SessionCore::read`] returns, in bytes (256 MiB; a larger one is
/// `SANDBOX_TRANSFER_LIMIT`, never buffered).
pub const MAX_READ_BYTES: u64 = 256 * 1024 * 1024;

/// The Box of a Session about to be opened on `provider`: lifetime `lifetime_ms` (ms; the
/// provider's default when `None`, 5 minutes on Vercel and the local Box host), on the kept Box
/// of `sandbox_id` when given.
///
/// # Errors
/// `SANDBOX_NOT_SUPPORTED` for a `sandbox_id` on a provider that keeps no Boxes itself (only
/// Cloudflare does).
pub fn session_spec(provider: &dyn Provider, lifetime_ms: Option<u64>, sandbox_id: Option<String>) -> Result<BoxSpec> {
    if sandbox_id.is_some() && !provider.keeps_boxes() {
        return Err(Error::new(
            ErrorCode::NotSupported,
            format!(
                "openSandboxSession sandboxId (a kept Box) is supported by the cloudflare provider only, not by {}",
                provider.kind().as_str()
            ),
        )
        .with_provider(provider.kind()));
    }
    Ok(BoxSpec { lifetime_ms, name: "session".to_owned(), sandbox_id, ..BoxSpec::default() })
}

/// Where the stdin of an `exec` comes from: bytes, or a JS `ReadableStream` of strings (UTF-8)
/// and `Uint8Array`s, read chunk by chunk while the Command runs.
#[derive(Debug)]
pub enum StdinFeed {
    /// These bytes, then end of input.
    Bytes(Vec<u8>),
    /// The chunks of this stream's reader, then end of input when it is done.
    Stream(web_sys::ReadableStreamDefaultReader),
}

impl StdinFeed {
    /// The next chunk; `None` at the end.
    async fn next(&mut self) -> Result<Option<Vec<u8>>> {
        match self {
            StdinFeed::Bytes(bytes) => Ok((!bytes.is_empty()).then(|| std::mem::take(bytes))),
            StdinFeed::Stream(reader) => {
                let bad = |why: String| Error::new(ErrorCode::InvalidArgument, format!("exec stdin stream: {why}"));
                let read = JsFuture::from(reader.read()).await.map_err(|e| bad(crate::error::js::js_message(&e)))?;
                let field = |key: &str| js_sys::Reflect::get(&read, &key.into()).unwrap_or_default();
                if field("done").as_bool() == Some(true) {
                    return Ok(None);
                }
                let value = field("value");
                if let Some(text) = value.as_string() {
                    Ok(Some(text.into_bytes()))
                } else if let Some(array) = value.dyn_ref::<js_sys::Uint8Array>() {
                    Ok(Some(array.to_vec()))
                } else {
                    Err(bad("its chunks must be strings or Uint8Arrays".to_owned()))
                }
            }
        }
    }

    /// Lets the stream go (its reader's lock) when the feed ended early; the stream itself is
    /// neither cancelled nor ended (as the SDK's `pipeStdin` leaves it).
    fn release(&self) {
        if let StdinFeed::Stream(reader) = self {
            reader.release_lock();
        }
    }
}

/// Whether `error` of a stdin write says the Command no longer takes input (it closed its stdin:
/// 400; or exited: 404), which ends the feed as a closed pipe does in a shell.
fn input_no_longer_taken(error: &Error) -> bool {
    matches!(error.upstream_status(), Some(400 | 404))
}

/// One open Box and what its Session knows of it. Every operation is refused with
/// `SANDBOX_INVALID_STATE` once [`SessionCore::close`] was called or the Box lifetime ran out.
#[derive(Debug)]
pub struct SessionCore {
    session: Box<dyn BoxSession>,
    id: String,
    provider: ProviderKind,
    /// Replaced by [`SessionCore::update_network_policy`].
    authority: RefCell<ExecutionAuthority>,
    state: RefCell<SessionState>,
}

impl SessionCore {
    /// Opens the Box of `spec` ([`session_spec`]) on `provider` (starting the in-process local Box
    /// host first when needed) and reads its executionAuthority. A Box opened is closed again when
    /// the open fails after it (no authority, `signal` fired meanwhile).
    ///
    /// # Errors
    /// Those of the provider's open (`SANDBOX_PROVIDER_REQUIRED`, `SANDBOX_PROVIDER_UNAVAILABLE`,
    /// `SANDBOX_TRANSPORT_ERROR`); `SANDBOX_TRANSPORT_ERROR` when `signal` fired (the caller
    /// answers with its reason instead, see `signal.aborted()`).
    pub async fn open(provider: &dyn Provider, spec: &BoxSpec, signal: Option<&AbortSignal>) -> Result<SessionCore> {
        let aborted = || {
            Error::new(ErrorCode::TransportError, "opening the Session was aborted by its signal")
                .with_provider(provider.kind())
                .with_operation(Operation::Create)
        };
        if signal.is_some_and(AbortSignal::aborted) {
            return Err(aborted());
        }
        provider.ensure_ready().await?;
        let session = provider.open(spec, signal).await?;
        let authority = match provider.box_execution_authority(session.as_ref()).await {
            Ok(authority) => authority,
            Err(error) => {
                let _ = session.close().await;
                return Err(error);
            }
        };
        if signal.is_some_and(AbortSignal::aborted) {
            let _ = session.close().await;
            return Err(aborted());
        }
        // A provider that stops a Box at its lifetime (Vercel, the local Box host) gets the
        // Session's clock; a Box without one (Cloudflare) never expires by it.
        let lifetime_ms = session.stops_at_lifetime().then(|| spec.lifetime_ms.unwrap_or(session::DEFAULT_LIFETIME_MS));
        Ok(SessionCore::of(session, authority, SessionState::running(lifetime_ms, crate::sys::performance_now())))
    }

    /// Reattaches to the running Box `id` of `provider` ([`Provider::attach`]; Vercel protocol:
    /// `GET /v2/sandboxes/{name}`): its executionAuthority as the provider reports it now, its
    /// clock from the end of lifetime the provider reported (a Box without one never expires by
    /// it). `close()` of the new Session stops the Box, as the first Session's would.
    ///
    /// # Errors
    /// Those of [`Provider::ensure_ready`] and [`Provider::attach`] (`SANDBOX_INVALID_STATE`
    /// for a stopped Box, `SANDBOX_TRANSPORT_ERROR` 404 for an unknown id,
    /// `SANDBOX_NOT_SUPPORTED`); `SANDBOX_INVALID_STATE` when its lifetime already ended.
    pub async fn attach(provider: &dyn Provider, id: &str, signal: Option<&AbortSignal>) -> Result<SessionCore> {
        provider.ensure_ready().await?;
        let session = provider.attach(id, signal).await?;
        let authority = provider.box_execution_authority(session.as_ref()).await?;
        let now = crate::sys::performance_now();
        let mut state = SessionState::running(None, now);
        if session.stops_at_lifetime() {
            if let Some(expires_at) = session.reported_expires_at_ms() {
                let remaining = expires_at - js_sys::Date::now();
                state.ends_at_ms = Some(now + remaining.max(0.0));
                state.lifetime_ms = Some(remaining.max(0.0) as u64);
            }
        }
        let core = SessionCore::of(session, authority, state);
        core.check_open("attach")?;
        Ok(core)
    }

    /// A Session over `session`, opened or reattached.
    pub(crate) fn of(session: Box<dyn BoxSession>, authority: ExecutionAuthority, state: SessionState) -> SessionCore {
        SessionCore {
            id: session.id().to_owned(),
            provider: session.provider(),
            authority: RefCell::new(authority),
            session,
            state: RefCell::new(state),
        }
    }

    /// The provider's Box id, what `openSandboxSession({ id })` reattaches with (Vercel: the sandbox
    /// name; local Box host: the same, its session id; Cloudflare: the Durable Object name).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The provider the Box is on.
    pub fn provider(&self) -> ProviderKind {
        self.provider
    }

    /// The Box working directory (relative paths of every operation start here).
    pub fn cwd(&self) -> &str {
        self.session.cwd()
    }

    /// The Box's executionAuthority (contract §2), under its current network policy.
    pub fn execution_authority(&self) -> ExecutionAuthority {
        self.authority.borrow().clone()
    }

    /// Replaces the Box's network policy for the Commands started from now on (the shapes of
    /// the config's `networkPolicy`), then its executionAuthority with the one the provider
    /// reports under it. Commands already running keep their network.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` (closed, expired); `SANDBOX_INVALID_ARGUMENT` for a policy the
    /// provider cannot enforce; `SANDBOX_NOT_SUPPORTED` on Cloudflare; the provider's errors
    /// ([`SessionCore::failed`]).
    pub async fn update_network_policy(&self, policy: &serde_json::Value) -> Result<ExecutionAuthority> {
        self.check_open("updateNetworkPolicy")?;
        let authority = self
            .session
            .update_network_policy(policy, None)
            .await
            .map_err(|e| self.failed("updateNetworkPolicy", e))?;
        self.authority.replace(authority.clone());
        Ok(authority)
    }

    /// The status now (`Expired` once the Box lifetime ran out: by the clock, or a provider's 410).
    pub fn status(&self) -> SessionStatus {
        self.state.borrow_mut().status_at(crate::sys::performance_now())
    }

    /// When the Box lifetime ends, in ms since the Unix epoch; `None` for a Box without one
    /// (Cloudflare).
    pub fn expires_at_ms(&self) -> Option<f64> {
        let ends_at = self.state.borrow().ends_at_ms?;
        Some(js_sys::Date::now() + (ends_at - crate::sys::performance_now()))
    }

    /// Moves the end of the Box lifetime `ms` (ms) later: the provider's deadline first (Vercel
    /// protocol `POST …/extend-timeout` `{ duration: ms }`, which adds to it), then this
    /// Session's clock, so [`SessionCore::status`] and [`SessionCore::expires_at_ms`] follow.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` (closed, expired); `SANDBOX_NOT_SUPPORTED` on a provider whose
    /// Boxes have no lifetime (Cloudflare); the provider's errors ([`SessionCore::failed`]).
    pub async fn extend_timeout(&self, ms: u64) -> Result<()> {
        self.check_open("extendTimeout")?;
        self.session.extend_timeout(ms, None).await.map_err(|e| self.failed("extendTimeout", e))?;
        self.state.borrow_mut().extend(ms);
        Ok(())
    }

    /// Whether [`SessionCore::close`] was called (whatever its outcome).
    pub fn closed(&self) -> bool {
        self.state.borrow().closed
    }

    /// The Box itself, for the operations a layer adds on it (a process's logs, wait, kill).
    pub fn box_session(&self) -> &dyn BoxSession {
        self.session.as_ref()
    }

    /// `Ok` while the Session takes operations.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` after close or past the lifetime
    /// ([`SessionState::check_open`]).
    pub fn check_open(&self, operation: &str) -> Result<()> {
        self.state.borrow_mut().check_open(&self.id, operation, crate::sys::performance_now())
    }

    /// `error` of `operation`, unless the provider answered 410 (its Box is stopped: the lifetime
    /// ran out): then the Session becomes `expired` and the error says so (`SANDBOX_INVALID_STATE`).
    /// A provider's 400/404/409 to `mkdir` or `remove` (a missing parent, an existing path, a
    /// directory without `recursive`), and its 400 to `read` or `write` (a directory, a FIFO, a
    /// symlink leading out of the Box), are the caller's path: `SANDBOX_INVALID_ARGUMENT`, not a
    /// broken provider (`SANDBOX_TRANSPORT_ERROR`, 502).
    pub fn failed(&self, operation: &str, error: Error) -> Error {
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
                Error::new(ErrorCode::InvalidArgument, error.message().to_owned())
                    .with_provider(self.provider)
                    .with_operation(op)
                    .with_status(status)
            }
            _ => error,
        }
    }

    /// The absolute Box path of `path` (relative to [`SessionCore::cwd`]) for `operation`.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` when the Session is closed or expired; `SANDBOX_INVALID_ARGUMENT`
    /// for a path the rules refuse ([`session::box_path`], and on the local Box host
    /// [`session::check_local_box_path`]).
    pub fn path(&self, path: &str, operation: &str) -> Result<String> {
        self.check_open(operation)?;
        let path = session::box_path(self.session.cwd(), path, operation)?;
        if let Some(work_dir) = self.session.local_box_host_work_dir() {
            session::check_local_box_path(&path, work_dir, operation)?;
        }
        Ok(path)
    }

    /// Runs `command` and waits for it; `signal` aborts the wait and kills the Command. Its
    /// stdout and stderr keep their last `command.max_stdout_bytes` / `max_stderr_bytes` bytes.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` (closed, expired); `SANDBOX_TIMEOUT` when `command.timeout_ms`
    /// killed it (Vercel and the local Box host kill at the timeout with SIGKILL, exit 137;
    /// Cloudflare's container reports it itself); the provider's errors ([`SessionCore::failed`]).
    pub async fn exec(&self, command: &Command, signal: Option<&AbortSignal>) -> Result<CommandOutcome> {
        self.check_open("exec")?;
        self.exec_checked(command, signal).await
    }

    /// [`SessionCore::exec`] without the state check: for a caller that checked it when the call
    /// was made (a JS handle's `exec()`, whose Promise runs after a `close()` called right after it).
    ///
    /// # Errors
    /// Those of [`SessionCore::exec`] but `SANDBOX_INVALID_STATE` of a closed Session.
    pub async fn exec_checked(&self, command: &Command, signal: Option<&AbortSignal>) -> Result<CommandOutcome> {
        let started = crate::sys::performance_now();
        let outcome = self.session.exec(command, signal).await.map_err(|e| self.failed("exec", e))?;
        if let Some(ms) = command.timeout_ms {
            if outcome.exit_code == 137 && crate::sys::performance_now() - started >= ms as f64 {
                return Err(Error::new(ErrorCode::Timeout, format!("the command timed out after {ms}ms"))
                    .with_timeout_ms(ms)
                    .with_provider(self.provider)
                    .with_operation(Operation::Exec));
            }
        }
        Ok(outcome)
    }

    /// [`SessionCore::exec_checked`] of a Command that reads `stdin`: started with a stdin pipe
    /// ([`BoxSession::spawn_with_stdin`]), fed chunk by chunk while its output is read, its stdin
    /// closed at the end of the feed, then waited for. A Command that stops reading ends the feed
    /// without error; a feed that fails (a stream error, a bad chunk) kills the Command. `signal`
    /// kills it too.
    ///
    /// # Errors
    /// Those of [`SessionCore::exec`]; `SANDBOX_NOT_SUPPORTED` on a provider without stdin
    /// (Cloudflare); `SANDBOX_INVALID_ARGUMENT` for a stream chunk that is no string or
    /// `Uint8Array`, or a stream that errors.
    pub async fn exec_with_stdin_checked(
        &self,
        command: &Command,
        mut stdin: StdinFeed,
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        let started = crate::sys::performance_now();
        let session = self.session.as_ref();
        let id = match session.spawn_with_stdin(command, signal).await {
            Ok(id) => id,
            Err(error) => {
                stdin.release();
                return Err(self.failed("exec", error));
            }
        };
        let id = id.as_str();
        let work = async {
            let mut logs = session.logs(id, None).await?;
            let feed = async {
                let fed = async {
                    while let Some(chunk) = stdin.next().await? {
                        match session.write_stdin(id, &chunk, false, None).await {
                            Ok(()) => {}
                            Err(error) if input_no_longer_taken(&error) => return Ok(()),
                            Err(error) => return Err(error),
                        }
                    }
                    match session.write_stdin(id, &[], true, None).await {
                        Err(error) if !input_no_longer_taken(&error) => Err(error),
                        _ => Ok(()),
                    }
                }
                .await;
                if fed.is_err() {
                    stdin.release();
                    let _ = session.kill(id, 9, None).await;
                }
                fed
            };
            let read = async {
                let mut stdout = OutputTail::new(command.max_stdout_bytes);
                let mut stderr = OutputTail::new(command.max_stderr_bytes);
                while let Some(entry) = logs.next().await? {
                    match entry.stream {
                        OutputStream::Stdout => stdout.push(&entry.data),
                        OutputStream::Stderr => stderr.push(&entry.data),
                    }
                }
                Ok::<_, Error>((stdout, stderr))
            };
            let (fed, read) = futures::future::join(feed, read).await;
            fed?;
            let (stdout, stderr) = read?;
            let exit_code = session.wait(id, None).await?;
            let (stdout, stdout_cut) = stdout.finish();
            let (stderr, stderr_cut) = stderr.finish();
            Ok::<_, Error>(CommandOutcome { exit_code, stdout, stderr, truncated: stdout_cut || stderr_cut })
        };
        let outcome = match signal {
            None => work.await,
            Some(signal) => {
                let abort = AbortWait::new(signal);
                match select(Box::pin(work), JsFuture::from(abort.promise().clone())).await {
                    Either::Left((outcome, _)) => outcome,
                    Either::Right(_) => {
                        let _ = session.kill(id, 9, None).await;
                        Err(Error::new(ErrorCode::TransportError, "exec was aborted by its signal")
                            .with_provider(self.provider)
                            .with_operation(Operation::Exec))
                    }
                }
            }
        }
        .map_err(|e| self.failed("exec", e))?;
        if let Some(ms) = command.timeout_ms {
            if outcome.exit_code == 137 && crate::sys::performance_now() - started >= ms as f64 {
                return Err(Error::new(ErrorCode::Timeout, format!("the command timed out after {ms}ms"))
                    .with_timeout_ms(ms)
                    .with_provider(self.provider)
                    .with_operation(Operation::Exec));
            }
        }
        Ok(outcome)
    }

    /// The bytes of the file at `path`; `None` when it does not exist. Read by size with a cap: a
    /// huge Box file never buffers whole.
    ///
    /// # Errors
    /// Those of [`SessionCore::path`]; `SANDBOX_TRANSFER_LIMIT` for a file of
    /// [`MAX_READ_BYTES`] or more; the provider's errors.
    pub async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        self.read_at(&self.path(path, "read")?).await
    }

    /// [`SessionCore::read`] of `path`, a Box path [`SessionCore::path`] gave (checked then).
    ///
    /// # Errors
    /// Those of [`SessionCore::read`] but the path's.
    pub async fn read_at(&self, path: &str) -> Result<Option<Vec<u8>>> {
        match self.session.read_file(path, MAX_READ_BYTES, None).await.map_err(|e| self.failed("read", e))? {
            FileRead::Bytes(bytes) => Ok(Some(bytes)),
            FileRead::Missing => Ok(None),
            FileRead::TooLarge(size) => Err(Error::new(
                ErrorCode::TransferLimit,
                format!("{path} has {size} bytes or more; read() returns at most {MAX_READ_BYTES}"),
            )),
        }
    }

    /// Writes `bytes` to the file at `path` (mode 0644), creating its parents, replacing it.
    ///
    /// # Errors
    /// Those of [`SessionCore::path`]; the provider's errors.
    pub async fn write(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        self.write_at(&self.path(path, "write")?, bytes).await
    }

    /// [`SessionCore::write`] at `path`, a Box path [`SessionCore::path`] gave (checked then).
    ///
    /// # Errors
    /// Those of [`SessionCore::write`] but the path's.
    pub async fn write_at(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        let file = BoxFile { path: path.trim_start_matches('/').to_owned(), bytes, mode: 0o644 };
        self.session.write_files(std::slice::from_ref(&file), None).await.map_err(|e| self.failed("write", e))
    }

    /// Whether `path` exists.
    ///
    /// # Errors
    /// Those of [`SessionCore::path`]; the provider's errors.
    pub async fn exists(&self, path: &str) -> Result<bool> {
        self.exists_at(&self.path(path, "exists")?).await
    }

    /// [`SessionCore::exists`] of `path`, a Box path [`SessionCore::path`] gave (checked then).
    ///
    /// # Errors
    /// The provider's errors.
    pub async fn exists_at(&self, path: &str) -> Result<bool> {
        self.session.exists(path, None).await.map_err(|e| self.failed("exists", e))
    }

    /// Creates the directory `path` (with `recursive`, its parents too).
    ///
    /// # Errors
    /// Those of [`SessionCore::path`]; `SANDBOX_INVALID_ARGUMENT` for a missing parent or an
    /// existing path without `recursive`; the provider's errors.
    pub async fn mkdir(&self, path: &str, recursive: bool) -> Result<()> {
        self.mkdir_at(&self.path(path, "mkdir")?, recursive).await
    }

    /// [`SessionCore::mkdir`] of `path`, a Box path [`SessionCore::path`] gave (checked then).
    ///
    /// # Errors
    /// Those of [`SessionCore::mkdir`] but the path's.
    pub async fn mkdir_at(&self, path: &str, recursive: bool) -> Result<()> {
        self.session.mkdir(path, recursive, None).await.map_err(|e| self.failed("mkdir", e))
    }

    /// Removes the file `path` (with `recursive`, a directory tree); a missing path is no error.
    ///
    /// # Errors
    /// Those of [`SessionCore::path`]; `SANDBOX_INVALID_ARGUMENT` for a directory without
    /// `recursive`; the provider's errors.
    pub async fn remove(&self, path: &str, recursive: bool) -> Result<()> {
        self.remove_at(&self.path(path, "remove")?, recursive).await
    }

    /// [`SessionCore::remove`] of `path`, a Box path [`SessionCore::path`] gave (checked then).
    ///
    /// # Errors
    /// Those of [`SessionCore::remove`] but the path's.
    pub async fn remove_at(&self, path: &str, recursive: bool) -> Result<()> {
        self.session.remove(path, recursive, None).await.map_err(|e| self.failed("remove", e))
    }

    /// Marks the Session closed (every later operation is refused) and stops the Box; the status
    /// becomes `Stopped`, or `Failed` when the stop failed (a later call tries again). Callers
    /// that may call it concurrently share one call (the JS handle shares its Promise).
    ///
    /// # Errors
    /// The provider's failure to stop the Box.
    pub async fn close(&self) -> Result<()> {
        self.state.borrow_mut().closed = true;
        let closed = self.session.close().await;
        self.state.borrow_mut().status = if closed.is_ok() { SessionStatus::Stopped } else { SessionStatus::Failed };
        closed
    }
}
