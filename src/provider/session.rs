//! `BoxSession`: a handle on one live Box, whatever the provider: write files (one batch), run a
//! Command and wait for it, read a file, close.
//!
//! This is the layer the Run, the public Session API and the Agent tool build on. The provider
//! arms below are the only place that knows which protocol a Box speaks.

use web_sys::AbortSignal;

use crate::command::{Command, CommandOutcome};
use crate::error::Result;
use crate::provider::cloudflare::CloudflareBox;
use crate::provider::vercel::VercelBox;
use crate::provider::PreparedStart;
use crate::provider::ProviderKind;
use crate::transfer::box_file::BoxFile;

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

    /// The Box working directory (absolute Box path), e.g. `/vercel/sandbox`.
    pub fn cwd(&self) -> &str {
        match self {
            BoxSession::Vercel(session) => session.cwd(),
            BoxSession::Cloudflare(session) => session.cwd(),
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
    pub async fn prepare(&self) -> Result<String> {
        match self {
            BoxSession::Vercel(session) => session.snapshot().await,
            BoxSession::Cloudflare(_) => Err(crate::error::Error::new(
                crate::error::ErrorCode::NotSupported,
                "The cloudflare provider keeps no prepared projects.",
            )),
        }
    }

    /// Writes `files` (paths relative to the Box root `/`) in one batch.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a path that fails
    /// [`crate::transfer::box_file::validate_relative_path`]; transport errors of the provider.
    pub async fn write_files(&self, files: &[BoxFile], signal: Option<&AbortSignal>) -> Result<()> {
        match self {
            BoxSession::Vercel(session) => session.write_files(files, signal).await,
            BoxSession::Cloudflare(session) => session.write_files(files, signal).await,
        }
    }

    /// Runs a Command and waits for its exit, keeping the tail of its output per the Command's caps.
    pub async fn exec(&self, command: &Command, signal: Option<&AbortSignal>) -> Result<CommandOutcome> {
        match self {
            BoxSession::Vercel(session) => session.exec(command, signal).await,
            BoxSession::Cloudflare(session) => session.exec(command, signal).await,
        }
    }

    /// Reads a file by absolute Box path; `None` when it does not exist.
    pub async fn read_file(&self, path: &str, signal: Option<&AbortSignal>) -> Result<Option<Vec<u8>>> {
        match self {
            BoxSession::Vercel(session) => session.read_file(path, signal).await,
            BoxSession::Cloudflare(session) => session.read_file(path, signal).await,
        }
    }

    /// Stops the Box and everything running in it.
    pub async fn close(&self) -> Result<()> {
        match self {
            BoxSession::Vercel(session) => session.close().await,
            BoxSession::Cloudflare(session) => session.close().await,
        }
    }
}
