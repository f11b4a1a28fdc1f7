//! The core of a Session: one open Box with its state (status, lifetime), its executionAuthority
//! and the operations on it, in Rust values. The JS `openSandboxSession` handles (`api::session`,
//! npm exports) and the Rust Worker API (`crates/worker`'s `open_session`) are both thin layers
//! over [`SessionCore`]; the rules themselves (state, paths, arguments) are
//! [`vite_hub_sandbox_core::session`]'s.
//!
//! Source: vitehub-sandbox-contract.md §2 (executionAuthority) and §3 (the Box session).

use std::cell::RefCell;

use web_sys::AbortSignal;

use crate::provider::{BoxSession, BoxSpec, FileRead, Provider};
use vite_hub_sandbox_core::command::{Command, CommandOutcome};
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

/// One open Box and what its Session knows of it. Every operation is refused with
/// `SANDBOX_INVALID_STATE` once [`SessionCore::close`] was called or the Box lifetime ran out.
#[derive(Debug)]
pub struct SessionCore {
    session: Box<dyn BoxSession>,
    id: String,
    provider: ProviderKind,
    authority: ExecutionAuthority,
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
        Ok(SessionCore {
            id: session.id().to_owned(),
            provider: session.provider(),
            authority,
            session,
            state: RefCell::new(SessionState::running(lifetime_ms, crate::sys::performance_now())),
        })
    }

    /// The provider's Box id (Vercel session id, Cloudflare Durable Object name, local Box host session id).
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

    /// The Box's executionAuthority (contract §2).
    pub fn execution_authority(&self) -> &ExecutionAuthority {
        &self.authority
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
