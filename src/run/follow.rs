//! Following the entry's command while it runs: its stdout is split into the entry's own output
//! (handed to the Run's handle live) and the harness's frames; a returned Response is answered
//! at its head frame and its body fed to the caller chunk by chunk; a plain JSON result is
//! answered at its result frame (the harness's bytes: nothing is left to read from the Box, and
//! the process's exit, which the Run still waits for before it gives the Box back, adds nothing to
//! it); any other result envelope is kept for recovery once the command exits. The harness exits right after its result frame: a command
//! stream still open [`SETTLE_MS`] later (its end lost on the way, a silent but open connection)
//! is let go by aborting the Follower's `settle` controller, and the Run goes on with the result
//! instead of waiting for its deadline.
//!
//! Run layer; no provider here. Source: docs/internals/transfer.md "Envelopes"; DESIGN.md §6.

use web_sys::AbortController;

use crate::http::timer::Timer;
use crate::provider::output::OutputStream;
use crate::run::events::RunEvents;
use crate::run::recover::envelope_error;
use crate::run::reply::{BodyStream, Reply};
use vite_hub_sandbox_core::command::OutputTail;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};
use vite_hub_sandbox_core::transfer::frame::{parse_frame, Frame, FrameScanner, ResultEnvelope, StdoutPiece};

/// Bytes of the entry's own stdout and stderr kept for a failure's details.
const TAIL_BYTES: usize = 16 * 1024;
/// How long a command stream may stay open after the result frame, in ms.
pub const SETTLE_MS: u32 = 5_000;

/// What following the command left for the Run once it exited.
#[derive(Debug)]
pub enum Followed {
    /// A Response was answered at its head frame; its body is the Follower's body stream.
    Streamed,
    /// The result envelope the harness framed (or `None`: no frame was seen).
    Envelope(Option<ResultEnvelope>),
}

/// The state of one followed harness command.
#[derive(Debug)]
pub struct Follower<'a> {
    scanner: FrameScanner,
    events: &'a RunEvents,
    reply: &'a Reply,
    cancel: &'a AbortController,
    caller: Option<&'a web_sys::AbortSignal>,
    timing: String,
    max_body_bytes: u64,
    body_bytes: u64,
    stdout: OutputTail,
    stderr: OutputTail,
    envelope: Option<ResultEnvelope>,
    head: bool,
    body: Option<BodyStream>,
    failure: Option<Error>,
    broken: bool,
    settle: AbortController,
    settle_timer: Option<Timer>,
    started_ms: f64,
}

impl<'a> Follower<'a> {
    /// Follows the frames of `nonce`; a streamed body is bounded by `max_body_bytes`
    /// (`maxOutputBytes`); `timing` is the `Server-Timing` value of a Response answered at its head;
    /// a body cut by the `caller`'s abort fails with its reason. `settle` is aborted
    /// [`SETTLE_MS`] after a result frame.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        nonce: &str,
        max_body_bytes: u64,
        events: &'a RunEvents,
        reply: &'a Reply,
        cancel: &'a AbortController,
        caller: Option<&'a web_sys::AbortSignal>,
        timing: String,
        settle: AbortController,
    ) -> Follower<'a> {
        // A frame holds at most 64 KiB of body (base64) or one result envelope (maxOutputBytes).
        let max_frame = usize::try_from(max_body_bytes).unwrap_or(usize::MAX).saturating_add(128 * 1024);
        Follower {
            scanner: FrameScanner::new(nonce, max_frame),
            events,
            reply,
            cancel,
            caller,
            timing,
            max_body_bytes,
            body_bytes: 0,
            stdout: OutputTail::new(TAIL_BYTES),
            stderr: OutputTail::new(TAIL_BYTES),
            envelope: None,
            head: false,
            body: None,
            failure: None,
            broken: false,
            settle,
            settle_timer: None,
            started_ms: crate::sys::performance_now(),
        }
    }

    /// Aborted [`SETTLE_MS`] after a result frame: the command's stream may be let go.
    pub fn settle_signal(&self) -> web_sys::AbortSignal {
        self.settle.signal()
    }

    /// Whether the stream was let go after the result frame (not ended by the command's exit).
    pub fn settled(&self) -> bool {
        self.settle.signal().aborted()
    }

    fn arm_settle(&mut self) {
        if self.settle_timer.is_none() {
            let settle = self.settle.clone();
            // Owned: a result that comes with the command's end clears it, and its closure
            // (holding `settle`) is freed with it.
            self.settle_timer = Some(Timer::once(move || settle.abort(), SETTLE_MS));
        }
    }

    /// One piece of the command's output, as the provider delivered it.
    pub fn on_output(&mut self, stream: OutputStream, text: &str) {
        if stream == OutputStream::Stderr {
            self.stderr.push(text);
            self.events.log(stream, text);
            return;
        }
        let mut pieces = Vec::new();
        if let Err(error) = self.scanner.push(text, &mut pieces) {
            self.fail(error);
        }
        self.take(pieces);
    }

    fn take(&mut self, pieces: Vec<StdoutPiece>) {
        for piece in pieces {
            match piece {
                StdoutPiece::Output(text) => {
                    self.stdout.push(&text);
                    self.events.log(OutputStream::Stdout, &text);
                }
                StdoutPiece::Frame(json) => match parse_frame(&json) {
                    Ok(frame) => self.frame(frame),
                    Err(error) => self.fail(error),
                },
            }
        }
    }

    fn frame(&mut self, frame: Frame) {
        match frame {
            Frame::Head { status, status_text, headers } if !self.head && self.envelope.is_none() => {
                self.head = true;
                match BodyStream::response(status, &status_text, &headers, &self.timing, self.cancel) {
                    Ok((response, body)) => {
                        self.body = body;
                        self.reply.resolve(&response.into());
                    }
                    Err(error) => self.fail(error),
                }
            }
            Frame::Body(bytes) if self.head => {
                self.body_bytes += bytes.len() as u64;
                if self.body_bytes > self.max_body_bytes {
                    let error = Error::new(ErrorCode::TransferLimit, "Sandbox result exceeds maxOutputBytes.")
                        .with_limit("maxOutputBytes", self.body_bytes, self.max_body_bytes)
                        .for_output();
                    return self.fail(error);
                }
                if let Some(body) = &self.body {
                    body.push(&bytes);
                }
            }
            Frame::End if self.head => {
                if let Some(body) = &self.body {
                    body.end();
                }
            }
            Frame::Result(envelope) => {
                if self.head {
                    // A failure after the head: a limit the harness found keeps its code and
                    // details, by the rule of a plain result (run/recover.rs); else the body threw.
                    let error = envelope_error(envelope.error.clone(), 0);
                    let error = if error.code() == ErrorCode::HandlerError {
                        let message = envelope.error.as_ref().and_then(|e| e.message.clone()).unwrap_or_default();
                        Error::new(ErrorCode::HandlerError, format!("The Response body failed: {message}"))
                    } else {
                        error
                    };
                    self.fail(error);
                } else {
                    self.arm_settle();
                    self.answer_plain(&envelope);
                }
                self.envelope = Some(*envelope);
            }
            _ => self.fail(
                Error::new(ErrorCode::HandlerError, "the harness output is not a valid result envelope").for_output(),
            ),
        }
    }

    /// Answers a plain JSON result at its frame (`ok`, [`ResultEnvelope::plain_json`] within
    /// `maxOutputBytes`), its Server-Timing closed by `exec` up to now; any other result, or a
    /// failure before it, waits for the command's exit and recovery (run/recover.rs answers it).
    fn answer_plain(&self, envelope: &ResultEnvelope) {
        let Some(json) = envelope.plain_json.as_deref().filter(|json| json.len() as u64 <= self.max_body_bytes) else {
            return;
        };
        if !envelope.ok || self.failure.is_some() || self.reply.is_settled() {
            return;
        }
        let exec = format!("exec;dur={:.1}", (crate::sys::performance_now() - self.started_ms).max(0.0));
        let timing = if self.timing.is_empty() { exec } else { format!("{}, {exec}", self.timing) };
        if let Ok(response) = crate::response::json_response_timed(json, &timing) {
            self.reply.resolve(&response.into());
        }
    }

    fn fail(&mut self, error: Error) {
        if self.head {
            self.broken = true;
            if let Some(body) = &self.body {
                body.fail(error, self.caller);
            }
        } else if self.failure.is_none() {
            self.failure = Some(error);
        }
    }

    /// The command exited (or its stream failed with `error`): flushes what was held back and
    /// says what the Run has.
    ///
    /// # Errors
    /// The first protocol failure (an invalid frame, a limit) when no Response was answered yet;
    /// `error` likewise.
    pub fn finish(&mut self, error: Option<Error>) -> Result<Followed> {
        drop(self.settle_timer.take());
        let mut pieces = Vec::new();
        self.scanner.finish(&mut pieces);
        self.take(pieces);
        if self.head {
            if self.body.as_ref().is_some_and(|b| !b.is_done()) {
                self.fail(error.unwrap_or_else(|| {
                    Error::new(ErrorCode::HandlerError, "The entry ended before its Response body ended.")
                }));
            }
            return Ok(Followed::Streamed);
        }
        if let Some(error) = error.or_else(|| self.failure.take()) {
            return Err(error);
        }
        Ok(Followed::Envelope(self.envelope.take()))
    }

    /// Whether a streamed body ended normally.
    pub fn streamed_ok(&self) -> bool {
        !self.broken
    }

    /// The entry's own stdout (frames removed) and stderr, their last 16 KiB.
    pub fn tails(self) -> (String, String) {
        (self.stdout.into_string(), self.stderr.into_string())
    }
}
