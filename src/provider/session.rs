//! `BoxSession`: a handle on one live Box, whatever the provider: write files (one batch), run a
//! Command and wait for it, start one and follow its output ([`LogStream`]), wait for it, signal
//! it; read a file, test, create and remove paths; close.
//!
//! This is the layer the Run, the public Session API and the Agent tool build on. The provider
//! arms below are the only place that knows which protocol a Box speaks.

use futures::future::LocalBoxFuture;
use web_sys::AbortSignal;

use crate::command::{Command, CommandOutcome};
use crate::error::Result;
use crate::provider::cloudflare::client::ProcessLogs;
use crate::provider::cloudflare::CloudflareBox;
use crate::provider::vercel::client::CommandLogs;
use crate::provider::vercel::VercelBox;
use crate::provider::{FileRead, PreparedStart, ProviderKind};
use crate::transfer::box_file::BoxFile;

/// Which output stream an [`OutputEntry`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    /// The Command's stdout.
    Stdout,
    /// The Command's stderr.
    Stderr,
}

impl OutputStream {
    /// `"stdout"` or `"stderr"`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
        }
    }
}

/// A piece of a Command's output, as the provider delivered it (text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputEntry {
    /// stdout or stderr.
    pub stream: OutputStream,
    /// The text.
    pub data: String,
}

/// The output of a started Command: its whole history from the start, then live output until it
/// exits. Vercel protocol: `GET …/cmd/{id}/logs` (NDJSON); Cloudflare: `GET
/// /api/process/{id}/stream` (SSE).
#[derive(Debug)]
pub enum LogStream {
    /// A Vercel (or local Box host) command's NDJSON logs.
    Vercel(CommandLogs),
    /// A Cloudflare background process's SSE stream.
    Cloudflare(ProcessLogs),
}

impl LogStream {
    /// The next entry; `None` once the Command exited and everything was read.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when the stream fails or carries an error.
    pub async fn next(&mut self) -> Result<Option<OutputEntry>> {
        match self {
            LogStream::Vercel(logs) => logs.next().await,
            LogStream::Cloudflare(logs) => logs.next().await,
        }
    }

    /// Stops following (cancels the request).
    pub fn cancel(&mut self) {
        match self {
            LogStream::Vercel(logs) => logs.cancel(),
            LogStream::Cloudflare(logs) => logs.cancel(),
        }
    }
}

/// One live Box.
#[derive(Debug)]
pub enum BoxSession {
    /// A Vercel Sandbox session (or a session of the local Box host, which speaks the same REST).
    Vercel(VercelBox),
    /// A Cloudflare Sandbox container (a `Sandbox` Durable Object).
    Cloudflare(CloudflareBox),
}

impl BoxSession {
    /// The provider that supplied this Box (for errors and Responses).
    pub fn provider(&self) -> ProviderKind {
        match self {
            BoxSession::Vercel(session) => session.provider(),
            BoxSession::Cloudflare(session) => session.provider(),
        }
    }

    /// The provider's id of this Box (Vercel session id, Cloudflare Durable Object name).
    pub fn id(&self) -> &str {
        match self {
            BoxSession::Vercel(session) => session.id(),
            BoxSession::Cloudflare(session) => session.id(),
        }
    }

    /// The work directory of a Box on the local Box host (the local provider, or Cloudflare in
    /// local development); `None` on a real provider. Session file helpers are held to it
    /// ([`crate::session::check_local_box_path`]).
    pub fn local_box_host_work_dir(&self) -> Option<&str> {
        match self {
            BoxSession::Vercel(session) => (session.provider() == ProviderKind::Local).then(|| session.cwd()),
            BoxSession::Cloudflare(session) => session.local_box_host_work_dir(),
        }
    }

    /// The Box working directory (absolute Box path), e.g. `/vercel/sandbox`.
    pub fn cwd(&self) -> &str {
        match self {
            BoxSession::Vercel(session) => session.cwd(),
            BoxSession::Cloudflare(session) => session.cwd(),
        }
    }

    /// The root of a Box the provider keeps across Runs (Cloudflare with `sandboxId`: the Runs
    /// work in directories below it); `None` otherwise.
    pub fn kept_root(&self) -> Option<&str> {
        match self {
            BoxSession::Vercel(_) => None,
            BoxSession::Cloudflare(session) => session.kept_root(),
        }
    }

    /// The provider's own report of the Box's executionAuthority, when it gives one (the local
    /// Box host does).
    pub fn reported_execution_authority(&self) -> Option<&serde_json::Value> {
        match self {
            BoxSession::Vercel(session) => session.reported_execution_authority(),
            BoxSession::Cloudflare(_) => None,
        }
    }

    /// How the Box's files began: empty, from the prepared project asked for, or empty because
    /// that prepared project was gone (Cloudflare: always empty).
    pub fn prepared(&self) -> PreparedStart {
        match self {
            BoxSession::Vercel(session) => session.prepared(),
            BoxSession::Cloudflare(_) => PreparedStart::Empty,
        }
    }

    /// Keeps the Box's files as a prepared project and stops the Box (Vercel and the local Box
    /// host: a snapshot); the prepared project's id.
    ///
    /// # Errors
    /// The provider's snapshot errors; `SANDBOX_NOT_SUPPORTED` for Cloudflare (the Box is not
    /// stopped then).
    pub fn prepare<'a>(&'a self) -> LocalBoxFuture<'a, Result<String>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.snapshot()),
            BoxSession::Cloudflare(_) => Box::pin(std::future::ready(Err(crate::error::Error::new(
                crate::error::ErrorCode::NotSupported,
                "The cloudflare provider keeps no prepared projects.",
            )))),
        }
    }

    /// Writes `files` (paths relative to the Box root `/`) in one batch.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a path that fails
    /// [`crate::transfer::box_file::validate_relative_path`]; transport errors of the provider.
    pub fn write_files<'a>(&'a self, files: &'a [BoxFile], signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.write_files(files, signal)),
            BoxSession::Cloudflare(session) => session.write_files(files, signal),
        }
    }

    /// Writes a Run's `files` (paths relative to `/`, below the Box cwd) before its first
    /// Command: Vercel and the local Box host as [`BoxSession::write_files`] (one `fs/write`);
    /// Cloudflare as one archive that the next [`BoxSession::exec`] or
    /// [`BoxSession::exec_streaming`] unpacks (one `/api/write`, no request of its own after).
    ///
    /// # Errors
    /// Those of [`BoxSession::write_files`]; on Cloudflare a failed unpacking is the next
    /// Command's `SANDBOX_EXECUTION_ERROR`.
    pub fn stage_files<'a>(&'a self, files: &'a [BoxFile], signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.write_files(files, signal)),
            BoxSession::Cloudflare(session) => session.stage_files(files, signal),
        }
    }

    /// Runs a Command and waits for its exit, keeping the tail of its output per the Command's caps.
    pub fn exec<'a>(&'a self, command: &'a Command, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.exec(command, signal)),
            BoxSession::Cloudflare(session) => session.exec(command, signal),
        }
    }

    /// Runs a Command and waits for its exit like [`BoxSession::exec`], handing each piece of its
    /// stdout/stderr to `on_output` as the provider delivers it (live: Vercel's NDJSON command
    /// stream, Cloudflare's `/api/execute/stream` SSE), in order within each stream.
    ///
    /// # Errors
    /// Those of [`BoxSession::exec`]; on Cloudflare the Command's own timeout is not applied by
    /// the container here, so `signal` must carry the deadline.
    pub fn exec_streaming<'a>(
        &'a self,
        command: &'a Command,
        on_output: &'a mut dyn FnMut(OutputStream, &str),
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.exec_streaming(command, on_output, signal)),
            BoxSession::Cloudflare(session) => session.exec_streaming(command, on_output, signal),
        }
    }

    /// Reads a file by absolute Box path, at most `max_bytes` of it ([`FileRead::TooLarge`]
    /// beyond, checked by size before the content is buffered where the provider says the size).
    pub fn read_file<'a>(&'a self, path: &'a str, max_bytes: u64, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<FileRead>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.read_file(path, max_bytes, signal)),
            BoxSession::Cloudflare(session) => session.read_file(path, max_bytes, signal),
        }
    }

    /// Starts a Command without waiting for it; answers its id (for [`BoxSession::logs`],
    /// [`BoxSession::wait`], [`BoxSession::kill`]).
    ///
    /// # Errors
    /// Transport errors of the provider.
    pub fn spawn<'a>(&'a self, command: &'a Command, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<String>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.spawn(command, signal)),
            BoxSession::Cloudflare(session) => session.spawn(command, signal),
        }
    }

    /// Follows the output of Command `id` from its start.
    pub fn logs<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<LogStream>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(async move { session.logs(id, signal).await.map(LogStream::Vercel) }),
            BoxSession::Cloudflare(session) => Box::pin(async move { session.logs(id, signal).await.map(LogStream::Cloudflare) }),
        }
    }

    /// Waits for Command `id` to exit; its exit code.
    pub fn wait<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<i32>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.wait(id, signal)),
            BoxSession::Cloudflare(session) => session.wait(id, signal),
        }
    }

    /// Sends signal number `signal_number` (15 SIGTERM, 9 SIGKILL, …) to Command `id`
    /// (Cloudflare: SIGTERM only, else `SANDBOX_NOT_SUPPORTED`).
    pub fn kill<'a>(&'a self, id: &'a str, signal_number: u8, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.kill(id, signal_number, signal)),
            BoxSession::Cloudflare(session) => session.kill(id, signal_number, signal),
        }
    }

    /// Whether an absolute Box path exists.
    pub fn exists<'a>(&'a self, path: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<bool>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.exists(path, signal)),
            BoxSession::Cloudflare(session) => session.exists(path, signal),
        }
    }

    /// Creates a directory (absolute Box path); with `recursive`, its parents too and no error
    /// when it exists.
    pub fn mkdir<'a>(&'a self, path: &'a str, recursive: bool, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.mkdir(path, recursive, signal)),
            BoxSession::Cloudflare(session) => session.mkdir(path, recursive, signal),
        }
    }

    /// Removes a file, or with `recursive` a directory tree (absolute Box path). A missing path
    /// is no error.
    pub fn remove<'a>(&'a self, path: &'a str, recursive: bool, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.remove(path, recursive, signal)),
            BoxSession::Cloudflare(session) => session.remove(path, recursive, signal),
        }
    }

    /// Stops the Box and everything running in it.
    pub fn close<'a>(&'a self) -> LocalBoxFuture<'a, Result<()>> {
        match self {
            BoxSession::Vercel(session) => Box::pin(session.close()),
            BoxSession::Cloudflare(session) => session.close(),
        }
    }
}
