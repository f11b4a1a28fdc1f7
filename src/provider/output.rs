//! A Command's output as a provider delivers it: which stream a piece came from
//! ([`OutputStream`]), one piece ([`OutputEntry`]), and the reader of a started Command's output
//! ([`LogStream`]), whatever the protocol behind it.
//!
//! Below the providers: each provider folder produces these, and the Box seam
//! ([`super::box_session`]), the Run and the Session API consume them; this module imports no
//! provider.

use futures::future::LocalBoxFuture;

use vite_hub_sandbox_core::error::Result;

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
/// exits. The Vercel protocol reads `GET …/cmd/{id}/logs` (NDJSON), Cloudflare `GET
/// /api/process/{id}/stream` (SSE); [`super::box_session::BoxSession::logs`] opens one.
pub trait LogStream: std::fmt::Debug {
    /// The next entry; `None` once the Command exited and everything was read.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when the stream fails, is malformed, carries an error, or ends
    /// before the Command exited.
    fn next(&mut self) -> LocalBoxFuture<'_, Result<Option<OutputEntry>>>;

    /// Stops following (cancels the request); [`LogStream::next`] answers `None` after it.
    fn cancel(&mut self);
}
