//! One Cloudflare Box ([`CloudflareBox`]): a `Sandbox` Durable Object and its container, spoken
//! to through the container control API ([`super::client`]); its files, Commands and close.

use std::cell::{Cell, RefCell};

use futures::future::LocalBoxFuture;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::client::ContainerClient;
use super::exec::{
    execute_request, pack_prepared, relative_to, unpack_then, MAX_PREPARED_ARCHIVE_BYTES, PREPARED_ARCHIVE,
    PREPARED_EXIT, STAGED_ARCHIVE, STAGED_ERRORS, STAGE_EXIT,
};
use super::kept::Turn;
use super::store::PreparedStore;
use crate::http::deadline::stop_within;
use crate::http::fetch::js_message;
use crate::provider::box_session::{BoxSession, FileRead, PreparedStart, Seal};
use crate::provider::output::{LogStream, OutputStream};
use crate::sys::DurableObjectStub;
use vite_hub_sandbox_core::command::{Command, CommandOutcome};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider::vercel::interactive::{InteractiveRequest, InteractiveSessionResponse};
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::transfer::box_file::BoxFile;
use vite_hub_sandbox_core::transfer::tar::write_tar;

/// The container's work directory (sessions and sessionless commands start there, §4.2).
pub(super) const WORK_DIR: &str = "/workspace";
/// Commands whose timeout is at most this go through `/api/execute` (the container kills
/// them on time); longer ones stream (`/api/execute/stream`), because the container server
/// cuts a request that sends no byte for 255 s (§6.1).
const MAX_BUFFERED_EXEC_MS: u64 = 240_000;
/// Bound of a close (destroy, or deleting a kept Box's Run directory), in ms.
pub(super) const CLOSE_DEADLINE_MS: u32 = 15_000;

/// One Cloudflare Box: a `Sandbox` Durable Object and its container.
#[derive(Debug)]
pub struct CloudflareBox {
    pub(super) client: ContainerClient,
    pub(super) stub: Option<DurableObjectStub>,
    pub(super) id: String,
    pub(super) cwd: String,
    /// Destroyed at close (a Box of its own, or a kept one with `keepAlive`), else only the
    /// Run's directory is deleted.
    pub(super) destroy_after: bool,
    /// This Run's turn on a kept Box; released at close (or drop).
    pub(super) lock: RefCell<Option<Turn>>,
    /// A staged archive waits in the cwd for the next Command to unpack it: the path
    /// segments its entries drop (those of the cwd).
    pub(super) staged: Cell<Option<usize>>,
    /// The staging write was sent and not answered (it failed, or the Run was cut while it
    /// was on its way): it may still reach the container after the close and create the
    /// Run's directory again (`/api/write` creates parents), so a kept Box's next Run removes
    /// that directory too ([`Turn::record_cut_run_folders`]).
    pub(super) staging_unanswered: Cell<bool>,
    /// The store of the prepared project this Box (one of its own) starts from, or keeps when
    /// its Run installs ([`super::store`]); `None` for a kept Box, which keeps its own.
    pub(super) store: Option<PreparedStore>,
    /// How the Box's files began; `Missing` too once its prepared project would not unpack.
    pub(super) start: Cell<PreparedStart>,
    /// The store's archive, put before the Run's own files by the next staging.
    pub(super) restore: RefCell<Option<Vec<u8>>>,
    /// The staged file begins with a prepared project's archive of this many bytes.
    pub(super) staged_prepared: Cell<Option<usize>>,
    /// The installed trees, packed and read right after the install ([`BoxSession::prepare`]).
    pub(super) packed: RefCell<Option<Vec<u8>>>,
}

impl BoxSession for CloudflareBox {
    /// No terminal URL: `@cloudflare/sandbox` serves a terminal as a WebSocket route of the
    /// Worker (`sandbox.terminal(request)` proxies an upgrade to the container's `/ws/pty`),
    /// which the container API this provider speaks does not offer as `{ url, token }`.
    fn open_interactive<'a>(
        &'a self,
        _request: &'a InteractiveRequest,
        _signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<InteractiveSessionResponse>> {
        Box::pin(std::future::ready(Err(Error::new(
            ErrorCode::NotSupported,
            "the cloudflare provider does not support openInteractive: a Cloudflare terminal is a WebSocket route of your Worker, not a URL; route the upgrade to the SDK's sandbox.terminal(request) (@cloudflare/sandbox)",
        )
        .with_provider(ProviderKind::Cloudflare)
        .with_operation(Operation::OpenInteractive))))
    }

    /// Always `cloudflare`.
    fn provider(&self) -> ProviderKind {
        ProviderKind::Cloudflare
    }

    /// The Box cwd: `/workspace` for a Box of its own, a directory of this Run's for a kept one.
    fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The Box id (the Durable Object name).
    fn id(&self) -> &str {
        &self.id
    }

    /// The Box's work directory when the Box lives on the local Box host (local development,
    /// no Durable Object stub), whose file routes and commands see different roots outside it.
    fn local_box_host_work_dir(&self) -> Option<&str> {
        self.stub.is_none().then_some(WORK_DIR)
    }

    /// `/workspace` for a kept Box that outlives the Run (`sandboxId` without `keepAlive`),
    /// whose Runs work in directories below it; `None` for a Box destroyed after the Run.
    fn kept_root(&self) -> Option<&str> {
        (self.cwd != WORK_DIR && !self.destroy_after).then_some(WORK_DIR)
    }

    /// `Restored` when the Box starts from its store's archive, `Missing` when the store kept
    /// none (or it would not unpack), `Empty` without a store.
    fn prepared(&self) -> PreparedStart {
        self.start.get()
    }

    /// Packs the installed trees ([`pack_prepared`]: what the sealed install left) and reads the
    /// archive at once, before the handler runs (two requests): [`Seal::Held`], the Box left
    /// running for the Run's handler. The store is written after the Response
    /// ([`BoxSession::keep_held`]).
    ///
    /// # Errors
    /// `SANDBOX_NOT_SUPPORTED` for a Box without a store (a kept one keeps its own);
    /// `SANDBOX_RUNTIME_ERROR` (operation `snapshot`) when packing failed, the archive is missing
    /// or over [`MAX_PREPARED_ARCHIVE_BYTES`] (counted on the bytes read); those of the requests.
    fn prepare<'a>(&'a self, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Seal>> {
        Box::pin(async move {
            if self.store.is_none() {
                return Err(nothing_held());
            }
            let failed = |message: String| {
                Error::new(ErrorCode::RuntimeError, message)
                    .with_provider(ProviderKind::Cloudflare)
                    .with_operation(Operation::Snapshot)
            };
            let packed = self.exec(&pack_prepared(&self.cwd), signal).await?;
            if packed.exit_code != 0 {
                return Err(failed(format!(
                    "packing the installed project exited with code {}: {}",
                    packed.exit_code,
                    packed.stderr.trim()
                )));
            }
            let path = format!("{}/{PREPARED_ARCHIVE}", self.cwd.trim_end_matches('/'));
            let archive =
                self.client.read_file(&path, signal).await?.ok_or_else(|| failed(format!("{path} is missing")))?;
            if archive.len() > MAX_PREPARED_ARCHIVE_BYTES {
                return Err(failed(format!(
                    "the packed project is {} bytes, over the {MAX_PREPARED_ARCHIVE_BYTES} a store keeps",
                    archive.len()
                )));
            }
            *self.packed.borrow_mut() = Some(archive);
            Ok(Seal::Held)
        })
    }

    /// Writes the archive held since the install ([`BoxSession::prepare`]) to the store: one RPC,
    /// one atomic storage write (the caller checked that the digest was not dropped meanwhile,
    /// and nothing is awaited before the RPC leaves); the store's name. The Box is not touched.
    ///
    /// # Errors
    /// `SANDBOX_NOT_SUPPORTED` when nothing is held (a kept Box, or a packing that failed);
    /// those of the write (`PreparedStore::keep`).
    fn keep_held(&self) -> LocalBoxFuture<'_, Result<String>> {
        Box::pin(async move {
            let (Some(store), Some(archive)) = (&self.store, self.packed.borrow_mut().take()) else {
                return Err(nothing_held());
            };
            store.keep(&archive).await?;
            Ok(store.name.clone())
        })
    }

    /// Writes `files` (paths relative to `/`): `mkdir -p` of their directories, then one
    /// `/api/write` per file (base64), a few at a time; then a `chmod` for executable modes.
    fn write_files<'a>(
        &'a self,
        files: &'a [BoxFile],
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            for file in files {
                vite_hub_sandbox_core::transfer::box_file::validate_relative_path(&file.path)?;
            }
            let mut dirs: Vec<String> = Vec::new();
            for file in files {
                let Some((dir, _)) = file.path.rsplit_once('/') else {
                    continue;
                };
                let dir = format!("/{dir}");
                // `mkdir -p` of the deepest directories only.
                if dirs.iter().any(|d| d == &dir || d.starts_with(&format!("{dir}/"))) {
                    continue;
                }
                dirs.retain(|d| !dir.starts_with(&format!("{d}/")));
                dirs.push(dir);
            }
            for dir in &dirs {
                self.client.mkdir(dir, signal).await?;
            }
            // One at a time: each write is one round trip to the Durable Object, and a join of
            // futures costs more wasm than it saves here.
            for file in files {
                self.client.write_file(&format!("/{}", file.path), &file.bytes, signal).await?;
            }
            let executable: Vec<&BoxFile> = files.iter().filter(|f| f.mode & 0o111 != 0).collect();
            if !executable.is_empty() {
                let mut args = vec!["+x".to_owned(), "--".to_owned()];
                args.extend(executable.iter().map(|f| format!("/{}", f.path)));
                let chmod = Command {
                    program: "chmod".into(),
                    args,
                    timeout_ms: Some(30_000),
                    max_stderr_bytes: 4096,
                    ..Command::default()
                };
                let outcome = self.exec(&chmod, signal).await?;
                if outcome.exit_code != 0 {
                    return Err(Error::new(
                        ErrorCode::ExecutionError,
                        format!("chmod failed: {}", outcome.stderr.trim()),
                    )
                    .with_provider(ProviderKind::Cloudflare)
                    .with_operation(Operation::Write));
                }
            }
            Ok(())
        })
    }

    /// Stages a Run's `files` (paths relative to `/`, all below the Box cwd) in one request:
    /// one gzip'd tar ([`write_tar`]), after the prepared project's archive when the Box starts
    /// from one, base64 in one `/api/write` to
    /// `<cwd>/.vite-hub-stage.tgz` (its parents created there). The next [`CloudflareBox::exec`]
    /// or [`CloudflareBox::exec_streaming`] unpacks it in its own `bash -c` line first
    /// ([`unpack_then`]): a Run's staging costs one request, its Commands none more.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a bad path; `SANDBOX_RUNTIME_ERROR` for a file outside
    /// the cwd or a failed gzip; those of the write. A failed unpacking is the next Command's
    /// `SANDBOX_EXECUTION_ERROR`.
    fn stage_files<'a>(
        &'a self,
        files: &'a [BoxFile],
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let root = self.cwd.trim_matches('/');
            if let Some(outside) = files
                .iter()
                .find(|f| !root.is_empty() && f.path.strip_prefix(root).is_none_or(|rest| !rest.starts_with('/')))
            {
                return Err(Error::new(
                    ErrorCode::RuntimeError,
                    format!("the staged file /{} is outside the Box cwd {}", outside.path, self.cwd),
                )
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Write));
            }
            let own = crate::transfer::gzip::gzip(&write_tar(files)?)
                .await
                .map_err(|e| e.with_provider(ProviderKind::Cloudflare))?;
            // A Box that starts from a prepared project gets its archive first, on its own.
            let restore = self.restore.borrow_mut().take();
            self.staged_prepared.set(restore.as_ref().map(Vec::len));
            let archive = match restore {
                Some(mut archive) => {
                    archive.extend_from_slice(&own);
                    archive
                }
                None => own,
            };
            self.staging_unanswered.set(true);
            self.client
                .write_file(&format!("{}/{STAGED_ARCHIVE}", self.cwd.trim_end_matches('/')), &archive, signal)
                .await?;
            self.staging_unanswered.set(false);
            self.staged.set(Some(root.split('/').filter(|s| !s.is_empty()).count()));
            Ok(())
        })
    }

    /// Runs `command` in a fresh `bash -c` (sessionless) and waits for it: `/api/execute`,
    /// or `/api/execute/stream` when it may run longer than the container server's idle cut.
    /// The first Command after [`CloudflareBox::stage_files`] unpacks the staged files first.
    ///
    /// # Errors
    /// Those of the request; `SANDBOX_EXECUTION_ERROR` (operation `stage`) when the staged
    /// files could not be unpacked (the Command did not run).
    fn exec<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        Box::pin(async move {
            let (request, staged) = self.request_for(command);
            let outcome = if command.timeout_ms.is_some_and(|ms| ms <= MAX_BUFFERED_EXEC_MS) {
                self.client.execute(&request, command, Operation::Exec, signal).await
            } else {
                self.client.execute_stream(&request, command, Operation::Exec, &mut |_, _| {}, signal).await
            };
            self.unpacked(staged, outcome, signal).await
        })
    }

    /// Runs `command` and hands its output to `on_output` live: always `/api/execute/stream`
    /// (SSE events as the pipes deliver them). The container does not apply the Command's
    /// timeout there: `signal` (the Run's deadline) ends the wait, and the Box's close (or,
    /// on the local Box host, the hang-up) kills the command.
    fn exec_streaming<'a>(
        &'a self,
        command: &'a Command,
        on_output: &'a mut dyn FnMut(OutputStream, &str),
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        Box::pin(async move {
            let (request, staged) = self.request_for(command);
            let outcome = self.client.execute_stream(&request, command, Operation::Exec, on_output, signal).await;
            self.unpacked(staged, outcome, signal).await
        })
    }

    /// Reads a file by absolute Box path; `None` when it does not exist.
    ///
    /// The container API answers a file whole (base64 in JSON), so the cap is checked once the
    /// answer is decoded.
    fn read_file<'a>(
        &'a self,
        path: &'a str,
        max_bytes: u64,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<FileRead>> {
        Box::pin(async move {
            Ok(match self.client.read_file(path, signal).await? {
                None => FileRead::Missing,
                Some(bytes) if bytes.len() as u64 > max_bytes => FileRead::TooLarge(bytes.len() as u64),
                Some(bytes) => FileRead::Bytes(bytes),
            })
        })
    }

    /// Starts `command` as a background process (`/api/process/start`, a fresh `bash -c` like
    /// [`CloudflareBox::exec`]); its process id.
    fn spawn<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<String>> {
        Box::pin(async move { self.client.start_process(&execute_request(command, &self.cwd), signal).await })
    }

    /// Looks process `id` up (`GET /api/process/{id}`).
    fn command<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(self.client.get_process(id, signal))
    }

    /// Follows process `id` (`/api/process/{id}/stream`).
    fn logs<'a>(
        &'a self,
        id: &'a str,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn LogStream>>> {
        Box::pin(async move { Ok(Box::new(self.client.process_stream(id, signal).await?) as Box<dyn LogStream>) })
    }

    /// Waits for process `id` to exit (reads its stream to the `exit` event, as the SDK's
    /// `waitForExit` does); its exit code.
    fn wait<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<i32>> {
        Box::pin(async move { self.client.process_stream(id, signal).await?.exit_code().await })
    }

    /// Kills process `id` (`DELETE /api/process/{id}`: the container API takes no signal, so
    /// only SIGTERM, 15, is accepted here).
    ///
    /// # Errors
    /// `SANDBOX_NOT_SUPPORTED` for another signal.
    fn kill<'a>(
        &'a self,
        id: &'a str,
        signal_number: u8,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if signal_number != 15 {
                return Err(Error::new(
                    ErrorCode::NotSupported,
                    format!(
                        "the Cloudflare container API kills a process with SIGTERM only, not signal {signal_number}"
                    ),
                )
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Exec));
            }
            self.client.kill_process(id, signal).await
        })
    }

    /// Whether `path` exists (`/api/exists`).
    fn exists<'a>(&'a self, path: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(self.client.exists(path, signal))
    }

    /// Creates a directory (`/api/mkdir`, `mkdir [-p]`).
    fn mkdir<'a>(
        &'a self,
        path: &'a str,
        recursive: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(self.client.mkdir_with(path, recursive, signal))
    }

    /// Removes a file (`/api/delete`; a directory is refused there) or, with `recursive`, a
    /// tree (`rm -rf` in the container, which has no route for it). A missing path is no error.
    fn remove<'a>(
        &'a self,
        path: &'a str,
        recursive: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if !recursive {
                return self.client.delete_file(path, signal).await.map_err(|e| e.with_operation(Operation::Remove));
            }
            let rm = Command {
                program: "rm".into(),
                args: vec!["-rf".into(), "--".into(), path.to_owned()],
                timeout_ms: Some(60_000),
                max_stderr_bytes: 4096,
                ..Command::default()
            };
            let outcome = self.exec(&rm, signal).await?;
            if outcome.exit_code != 0 {
                return Err(Error::new(
                    ErrorCode::ExecutionError,
                    format!("remove failed in the Box: {}", outcome.stderr.trim()),
                )
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Remove));
            }
            Ok(())
        })
    }

    /// Ends the Run on this Box: destroys it (RPC `destroy()`, or `DELETE` on the local Box
    /// host), or for a kept Box deletes the Run's directory; then releases the Box to the next
    /// Run on its id.
    fn close(&self) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let result = stop_within(CLOSE_DEADLINE_MS, Box::pin(self.end_run()))
                .await
                .map_err(|e| e.with_provider(ProviderKind::Cloudflare));
            self.lock.borrow_mut().take();
            result
        })
    }
}

impl CloudflareBox {
    /// The request of `command`; with a staged archive waiting, the line unpacks it first (in
    /// the Box cwd, which its write created) and then changes to the Command's cwd.
    fn request_for(&self, command: &Command) -> (crate::provider::cloudflare::wire::ExecuteRequest, bool) {
        let mut request = execute_request(command, &self.cwd);
        let Some(strip) = self.staged.take() else { return (request, false) };
        let cwd = request.cwd.replace(self.cwd.clone()).unwrap_or_default();
        let prepared = self.staged_prepared.take();
        request.command = unpack_then(strip, prepared, relative_to(&cwd, &self.cwd), &request.command);
        (request, true)
    }

    /// `outcome`, or the unpacking's failure when the line exited [`STAGE_EXIT`] and left
    /// its errors behind (one more request, only then).
    async fn unpacked(
        &self,
        staged: bool,
        outcome: Result<CommandOutcome>,
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        let outcome = outcome?;
        if !staged || (outcome.exit_code != STAGE_EXIT && outcome.exit_code != PREPARED_EXIT) {
            return Ok(outcome);
        }
        let Some(errors) =
            self.client.read_file(&format!("{}/{STAGED_ERRORS}", self.cwd.trim_end_matches('/')), signal).await?
        else {
            return Ok(outcome);
        };
        let errors = String::from_utf8_lossy(&errors);
        if outcome.exit_code == PREPARED_EXIT && self.start.get() == PreparedStart::Restored {
            return Err(self.damaged(errors.trim()).await);
        }
        Err(Error::new(
            ErrorCode::ExecutionError,
            format!("the Run's files could not be unpacked in the Box: {}", errors.trim()),
        )
        .with_provider(ProviderKind::Cloudflare)
        .with_operation(Operation::Stage))
    }

    /// A prepared project that would not unpack (`errors`: tar's): the store drops it, the Box
    /// counts as started without it (`Missing`, its `project/` removed by the line), so the Run
    /// installs; the error (operation `stage`) says so, never blaming the Run's files.
    async fn damaged(&self, errors: &str) -> Error {
        self.start.set(PreparedStart::Missing);
        let dropped = match &self.store {
            Some(store) => match store.drop_archive().await {
                Ok(_) => "dropped".to_owned(),
                Err(error) => format!("not dropped ({})", error.message()),
            },
            None => "not dropped".to_owned(),
        };
        let name = self.store.as_ref().map_or("", |s| s.name.as_str());
        Error::new(
            ErrorCode::ExecutionError,
            format!("the prepared project {name} could not be unpacked in the Box and was {dropped}: {errors}"),
        )
        .with_provider(ProviderKind::Cloudflare)
        .with_operation(Operation::Stage)
    }

    async fn end_run(&self) -> Result<()> {
        // A Run that ended before its first Command: its archive goes with the Box (or the
        // Run directory), never unpacked by the clean-up below.
        self.staged.set(None);
        if self.destroy_after {
            match &self.stub {
                Some(stub) => destroy(stub).await,
                None => self.client.destroy_on_local_host(None).await,
            }
        } else {
            self.remove_run_folders().await
        }
    }

    /// Removes this Run's directory from the kept Box, and those of earlier Runs of this
    /// isolate on it whose staging write may have arrived after their clean-up: one `rm -rf`
    /// run from `/workspace` (the Run's directory may not exist: a Run cut before its staging
    /// write arrived). A Run whose own staging write is unanswered leaves its directory on the
    /// record for the next Run on the Box.
    ///
    /// # Errors
    /// `SANDBOX_RUNTIME_ERROR` (operation `stop`) naming this Run's directory and rm's reason
    /// when rm fails; those of the request.
    async fn remove_run_folders(&self) -> Result<()> {
        let earlier = self.lock.borrow().as_ref().map(Turn::take_cut_run_folders).unwrap_or_default();
        let mut args = vec!["-rf".to_owned(), "--".to_owned(), self.cwd.clone()];
        args.extend(earlier.iter().cloned());
        let rm = Command {
            program: "rm".into(),
            args,
            cwd: Some(WORK_DIR.to_owned()),
            timeout_ms: Some(60_000),
            max_stderr_bytes: 4096,
            ..Command::default()
        };
        let outcome = self.exec(&rm, None).await;
        if let Some(turn) = self.lock.borrow().as_ref() {
            // A request that failed may not have run rm: the earlier folders stay on the record.
            // An rm that ran tried each of them (rm -rf goes on past a failure) and is not repeated.
            if outcome.is_err() {
                turn.record_cut_run_folders(earlier);
            }
            if self.staging_unanswered.get() {
                turn.record_cut_run_folders([self.cwd.clone()]);
            }
        }
        match outcome {
            Ok(outcome) if outcome.exit_code == 0 => Ok(()),
            Ok(outcome) => {
                let why = outcome.stderr.trim();
                let why =
                    if why.is_empty() { format!("rm exited with code {}", outcome.exit_code) } else { why.to_owned() };
                Err(Error::new(
                    ErrorCode::RuntimeError,
                    format!("the Run's folder {} could not be removed from the kept Box: {why}", self.cwd),
                )
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Stop))
            }
            Err(error) => Err(error.with_operation(Operation::Stop)),
        }
    }
}

/// RPC `stub.destroy()` (§6.6: a "no container instance" answer counts as done there).
pub(super) async fn destroy(stub: &DurableObjectStub) -> Result<()> {
    let outcome = match stub.destroy() {
        Ok(promise) => JsFuture::from(js_sys::Promise::resolve(&promise)).await.map(|_| ()),
        Err(error) => Err(error),
    };
    outcome.map_err(|e| {
        Error::new(ErrorCode::TransportError, format!("the Box could not be destroyed: {}", js_message(&e)))
            .with_provider(ProviderKind::Cloudflare)
            .with_operation(Operation::Stop)
    })
}

impl Drop for CloudflareBox {
    fn drop(&mut self) {
        // A Run that never reached close (a panic-free early return) still frees its turn.
        self.lock.get_mut().take();
    }
}

/// `SANDBOX_NOT_SUPPORTED` (operation `snapshot`): this Box holds no installed project to keep.
fn nothing_held() -> Error {
    Error::new(ErrorCode::NotSupported, "no installed project was held to keep")
        .with_provider(ProviderKind::Cloudflare)
        .with_operation(Operation::Snapshot)
}
