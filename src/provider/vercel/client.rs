//! One method per Vercel Sandbox REST endpoint we use, over a [`Fetcher`].
//!
//! Source: `shared/reference/vercel-sandbox-protocol.md` §1 (transport), §5 (retries), §7
//! (endpoints), §8 (NDJSON). The token is sent only to the configured base URL and never appears
//! in an error.

use futures::future::{select, Either, LocalBoxFuture};
use gloo_net::http::Response;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use crate::http::deadline::Deadline;
use crate::http::fetch::{body_bytes_capped, AbortWait, BodyChunks, Fetcher, HttpRequest, SendError};
use crate::provider::box_session::FileRead;
use crate::provider::output::{LogStream, OutputEntry, OutputStream};
use crate::provider::vercel::options::VercelEndpoint;
use crate::provider::vercel::wire::{
    self, CommandInfo, CommandStreamLine, CreateSandboxRequest, ExtendTimeoutRequest, KillCommandRequest, MkdirRequest,
    ReadFileRequest, RunCommandRequest, SandboxAndSessionResponse, WriteStdinRequest,
};
use vite_hub_sandbox_core::command::{Command, CommandOutcome, OutputTail};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::http::ndjson::NdjsonReader;
use vite_hub_sandbox_core::http::retry::{RequestSafety, RetryPolicy};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

// The bound of a create (60 s; on the local Box host its own `timeout`): the core's rule.
pub use vite_hub_sandbox_core::provider::vercel::{create_deadline_ms, CREATE_DEADLINE_MS};
/// Bound of one archive write, in ms.
pub const WRITE_DEADLINE_MS: u32 = 120_000;
/// Bound of one file read, in ms.
pub const READ_DEADLINE_MS: u32 = 60_000;
/// Bound of a stop (all attempts), in ms: a provider that never answers `stop` cannot hold the
/// caller longer.
pub const STOP_DEADLINE_MS: u32 = 15_000;
/// Deadline of a snapshot request (ms): the provider copies the Box's files before it answers.
pub const SNAPSHOT_DEADLINE_MS: u32 = 120_000;
/// Time a command stream may run past the command's own timeout before it is cut, in ms.
pub const EXEC_SLACK_MS: u64 = 30_000;
/// Largest JSON answer read (create, errors), in bytes.
const MAX_ANSWER_BYTES: u64 = 1024 * 1024;

/// A Vercel Sandbox REST client.
#[derive(Debug, Clone)]
pub struct VercelClient {
    endpoint: VercelEndpoint,
    fetcher: Fetcher,
    retry: RetryPolicy,
    kind: ProviderKind,
    plain_archives: bool,
}

impl VercelClient {
    /// A client for `endpoint`, reporting errors as provider `kind` (`vercel` or `local`).
    pub fn new(endpoint: VercelEndpoint, fetcher: Fetcher, kind: ProviderKind) -> VercelClient {
        VercelClient { endpoint, fetcher, retry: RetryPolicy::default(), kind, plain_archives: false }
    }

    /// Files are written as a plain tar (`application/x-tar`), not gzip'd: for a host called in
    /// process, where compressing costs CPU on both sides and saves no transfer.
    pub fn with_plain_archives(mut self) -> VercelClient {
        self.plain_archives = true;
        self
    }

    /// Whether [`VercelClient::with_plain_archives`] applies.
    pub fn plain_archives(&self) -> bool {
        self.plain_archives
    }

    /// The provider this client reports in errors.
    pub fn kind(&self) -> ProviderKind {
        self.kind
    }

    fn url(&self, path: &str) -> String {
        let mut url = format!("{}{}", self.endpoint.base_url.trim_end_matches('/'), path);
        if let Some(team_id) = &self.endpoint.team_id {
            url.push_str("?teamId=");
            url.push_str(&js_sys::encode_uri_component(team_id).as_string().unwrap_or_default());
        }
        url
    }

    pub(super) fn request(
        &self,
        method: &'static str,
        path: &str,
        content_type: &str,
        body: Option<Vec<u8>>,
    ) -> HttpRequest {
        let mut headers = vec![("content-type", content_type.to_owned())];
        if !self.endpoint.token.is_empty() {
            headers.push(("authorization", format!("Bearer {}", self.endpoint.token)));
        }
        HttpRequest { method, url: self.url(path), headers, body }
    }

    pub(super) fn json_request(
        &self,
        method: &'static str,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<HttpRequest> {
        let body = serde_json::to_vec(body)
            .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("cannot encode a request body: {e}")))?;
        Ok(self.request(method, path, "application/json", Some(body)))
    }

    pub(super) fn error(&self, operation: Operation, message: String) -> Error {
        let message = vite_hub_sandbox_core::error::redact(&message, &[self.endpoint.token.as_str()]);
        Error::new(ErrorCode::TransportError, message).with_provider(self.kind).with_operation(operation)
    }

    fn send_error(&self, operation: Operation, error: SendError) -> Error {
        self.error(
            operation,
            format!(
                "{} request to the {} provider failed: {}",
                operation.as_str(),
                self.kind.as_str(),
                error.describe()
            ),
        )
    }

    /// `error`, or `SANDBOX_PROVIDER_UNAVAILABLE` naming the bound when `deadline` ended the
    /// operation.
    pub(super) fn bounded(&self, operation: Operation, deadline: &Deadline, error: Error) -> Error {
        if !deadline.expired() {
            return error;
        }
        Error::new(
            ErrorCode::ProviderUnavailable,
            format!(
                "the {} provider did not complete {} within {}ms",
                self.kind.as_str(),
                operation.as_str(),
                deadline.ms()
            ),
        )
        .with_provider(self.kind)
        .with_operation(operation)
    }

    /// Reads a whole answer body of at most `max_bytes`.
    async fn answer_bytes(&self, response: &Response, operation: Operation, max_bytes: u64) -> Result<Vec<u8>> {
        match body_bytes_capped(response, max_bytes).await.map_err(|e| self.send_error(operation, e))? {
            Ok(bytes) => Ok(bytes),
            Err(size) => Err(self.error(
                operation,
                format!(
                    "{} answered {} with a body of {size} bytes or more (at most {max_bytes} are read)",
                    self.kind.as_str(),
                    operation.as_str()
                ),
            )),
        }
    }

    /// Sends and turns any non-2xx answer into an error: 429/503 → `SANDBOX_PROVIDER_UNAVAILABLE`,
    /// others → `SANDBOX_TRANSPORT_ERROR`, with the upstream status and its `error.message`.
    pub(super) async fn send(
        &self,
        request: &HttpRequest,
        safety: RequestSafety,
        operation: Operation,
        signal: Option<&AbortSignal>,
    ) -> Result<Response> {
        let response =
            self.fetcher.send(request, &self.retry, safety, signal).await.map_err(|e| self.send_error(operation, e))?;
        if response.ok() {
            return Ok(response);
        }
        Err(self.status_error(operation, &response).await)
    }

    /// Sends an idempotent `request`: `Ok(None)` when the provider answers `tolerated` (a status
    /// that means there is nothing to do: 404 for a read, 410 for a stop), the 2xx `Response`, or
    /// the error of any other status (see [`VercelClient::send`]).
    async fn send_tolerating(
        &self,
        request: &HttpRequest,
        operation: Operation,
        tolerated: u16,
        signal: Option<&AbortSignal>,
    ) -> Result<Option<Response>> {
        let response = self
            .fetcher
            .send(request, &self.retry, RequestSafety::Idempotent, signal)
            .await
            .map_err(|e| self.send_error(operation, e))?;
        if response.status() == tolerated {
            return Ok(None);
        }
        if !response.ok() {
            return Err(self.status_error(operation, &response).await);
        }
        Ok(Some(response))
    }

    async fn status_error(&self, operation: Operation, response: &Response) -> Error {
        let status = response.status();
        let body =
            body_bytes_capped(response, 64 * 1024).await.ok().and_then(std::result::Result::ok).unwrap_or_default();
        let detail = wire::error_message(&body).map(|m| format!(": {m}")).unwrap_or_default();
        let code = match status {
            429 | 503 => ErrorCode::ProviderUnavailable,
            401 | 403 => ErrorCode::ProviderAuth,
            // A Command's program, arguments and cwd are the caller's: the provider refusing them
            // (a cwd that is no directory in the Box) is a bad argument, not an outage to retry.
            400 | 422 if operation == Operation::Exec => ErrorCode::InvalidArgument,
            _ => ErrorCode::TransportError,
        };
        let retry_after = response.headers().get("retry-after");
        let hint = match (code, self.kind) {
            (ErrorCode::ProviderAuth, ProviderKind::Local) => {
                "; check local.token against the token the Box host printed (vite-hub-sandbox host)"
            }
            (ErrorCode::ProviderAuth, _) => {
                "; check vercel.token / VERCEL_TOKEN (or VERCEL_OIDC_TOKEN), teamId and projectId"
            }
            _ => "",
        };
        let mut error = self.error(
            operation,
            format!("{} answered {status} to {}{detail}{hint}", self.kind.as_str(), operation.as_str()),
        );
        error = Error::new(code, error.message().to_owned())
            .with_provider(self.kind)
            .with_operation(operation)
            .with_status(status);
        if let Some(ms) = retry_after.as_deref().and_then(vite_hub_sandbox_core::http::retry::parse_retry_after_ms) {
            error = error.with_retry_after_ms(ms);
        }
        error
    }

    /// The JSON answer (`{}` when empty), parsed into a Value whose shape the caller reads.
    pub(super) async fn json(&self, response: &Response, operation: Operation) -> Result<serde_json::Value> {
        let bytes = self.answer_bytes(response, operation, MAX_ANSWER_BYTES).await?;
        let bytes = if bytes.is_empty() { b"{}".to_vec() } else { bytes };
        serde_json::from_slice(&bytes).map_err(|e| self.unexpected_body(operation, &e))
    }

    pub(super) fn unexpected_body(&self, operation: Operation, why: &dyn std::fmt::Display) -> Error {
        self.error(
            operation,
            format!("{} answered {} with an unexpected body: {why}", self.kind.as_str(), operation.as_str()),
        )
    }

    /// Creates a Box. `POST /v3/sandboxes`, or `POST /v2/sandboxes` when a legacy `runtime` is set.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` (see `send`).
    pub async fn create_sandbox(
        &self,
        body: &CreateSandboxRequest,
        signal: Option<&AbortSignal>,
    ) -> Result<SandboxAndSessionResponse> {
        let path = if body.runtime.is_some() { "/v2/sandboxes" } else { "/v3/sandboxes" };
        let request = self.json_request("POST", path, body)?;
        let deadline = Deadline::new(signal, create_deadline_ms(self.kind, body.timeout));
        let signal = deadline.signal();
        let created = async {
            let response = self.send(&request, RequestSafety::Idempotent, Operation::Create, signal.as_ref()).await?;
            let value = self.json(&response, Operation::Create).await?;
            SandboxAndSessionResponse::from_value(&value).map_err(|why| self.unexpected_body(Operation::Create, &why))
        };
        created.await.map_err(|e| self.bounded(Operation::Create, &deadline, e))
    }

    /// Writes one gzip'd tar archive (a plain one with [`VercelClient::with_plain_archives`]),
    /// extracted at `/`. `POST /v2/sandboxes/sessions/{id}/fs/write` with `content-type:
    /// application/gzip` (`application/x-tar`) and `x-cwd: /`.
    pub async fn write_files(&self, session_id: &str, archive: Vec<u8>, signal: Option<&AbortSignal>) -> Result<()> {
        let content_type = if self.plain_archives { "application/x-tar" } else { "application/gzip" };
        let mut request =
            self.request("POST", &format!("/v2/sandboxes/sessions/{session_id}/fs/write"), content_type, Some(archive));
        request.headers.push(("x-cwd", "/".to_owned()));
        let deadline = Deadline::new(signal, WRITE_DEADLINE_MS);
        let signal = deadline.signal();
        let written = async {
            let response = self.send(&request, RequestSafety::Idempotent, Operation::Write, signal.as_ref()).await?;
            self.answer_bytes(&response, Operation::Write, MAX_ANSWER_BYTES).await
        };
        written.await.map(|_| ()).map_err(|e| self.bounded(Operation::Write, &deadline, e))
    }

    /// Runs a command and waits for it, reading the NDJSON stream (`wait:true, logs:true`).
    /// `POST /v2/sandboxes/sessions/{id}/cmd`. The request is never re-sent once it may have
    /// reached the Box.
    pub async fn run_command(
        &self,
        session_id: &str,
        command: &Command,
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        self.run_command_streaming(session_id, command, &mut |_, _| {}, signal).await
    }

    /// [`VercelClient::run_command`], handing each piece of output to `on_output` as the NDJSON
    /// stream delivers it (live), before the command exits.
    pub async fn run_command_streaming(
        &self,
        session_id: &str,
        command: &Command,
        on_output: &mut dyn FnMut(OutputStream, &str),
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        let body = RunCommandRequest::for_command(command, true);
        let request = self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/cmd"), &body)?;
        // The stream lives as long as the command: bounded by its timeout plus a slack (else only
        // by the caller's signal, which a Run's deadline fires).
        let bound = command.timeout_ms.map(|ms| u32::try_from(ms.saturating_add(EXEC_SLACK_MS)).unwrap_or(u32::MAX));
        let deadline = bound.map(|ms| Deadline::new(signal, ms));
        let bounded_signal = deadline.as_ref().and_then(Deadline::signal);
        let signal = if deadline.is_some() { bounded_signal.as_ref() } else { signal };
        let outcome = self.stream_command(session_id, &request, command, on_output, signal).await;
        match &deadline {
            Some(deadline) => outcome.map_err(|e| self.bounded(Operation::Exec, deadline, e)),
            None => outcome,
        }
    }

    async fn stream_command(
        &self,
        session_id: &str,
        request: &HttpRequest,
        command: &Command,
        on_output: &mut dyn FnMut(OutputStream, &str),
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        // The request carries its own signal: an abort before the answer's first line (the
        // Command's id) must not cut the stream, else the id is lost and the Command runs on.
        let own = web_sys::AbortController::new()
            .map_err(|_| self.error(Operation::Exec, "AbortController is missing".to_owned()))?;
        let abort_own = bound_abort(&own);
        let start = Box::pin(start_command(self.clone(), request.clone(), own.signal()));
        let wait = signal.map(AbortWait::new);
        let started = match &wait {
            None => start.await,
            Some(wait) => match select(start, JsFuture::from(wait.promise().clone())).await {
                Either::Left((started, _)) => started,
                Either::Right((_, pending)) => {
                    // Aborted before the id: reject now; the answer is read on in the background
                    // (at most LATE_START_MS) and the Command killed once its id arrives.
                    let timer = abort_own.as_ref().map(|abort| crate::sys::set_timeout(abort, LATE_START_MS));
                    let (client, session_id) = (self.clone(), session_id.to_owned());
                    wasm_bindgen_futures::spawn_local(async move {
                        if let Ok(mut start) = pending.await {
                            start.chunks.cancel();
                            if let Some(id) = &start.id {
                                let _ = client.kill_command(&session_id, id, 9, None).await;
                            }
                        }
                        if let Some(timer) = &timer {
                            crate::sys::clear_timeout(timer);
                        }
                    });
                    return Err(self.send_error(Operation::Exec, SendError::Aborted));
                }
            },
        };
        let mut start = started.map_err(|e| e.with_provider(self.kind).with_operation(Operation::Exec))?;
        // From here the caller's abort ends the read (the stream is cancelled and the Command
        // killed below). The read races the abort itself: aborting the request's own signal does
        // not reliably cut a body whose `Request` object was garbage-collected (Node's undici:
        // nodejs/node#55428), so that abort alone left an aborted exec running to its end.
        let read = Box::pin(self.read_command_stream(&mut start, command, on_output));
        let result = match &wait {
            None => read.await,
            Some(wait) => match select(read, JsFuture::from(wait.promise().clone())).await {
                Either::Left((result, _)) => result,
                Either::Right(_) => {
                    own.abort();
                    Err(self.send_error(Operation::Exec, SendError::Aborted))
                }
            },
        }
        .map_err(|e| e.with_provider(self.kind).with_operation(Operation::Exec));
        start.chunks.cancel();
        // An aborted wait leaves no Command running: it is killed (SIGKILL, best effort; the Box's
        // close would end it anyway).
        if let (Err(_), Some(id)) = (&result, &start.id) {
            if signal.is_some_and(AbortSignal::aborted) {
                let _ = self.kill_command(session_id, id, 9, None).await;
            }
        }
        result
    }

    /// Reads the stream to the final `command` line, handing output to `on_output` as it comes
    /// (the lines [`start_command`] read first, then the rest).
    async fn read_command_stream(
        &self,
        start: &mut CommandStart,
        command: &Command,
        on_output: &mut dyn FnMut(OutputStream, &str),
    ) -> Result<CommandOutcome> {
        let mut stdout = OutputTail::new(command.max_stdout_bytes);
        let mut stderr = OutputTail::new(command.max_stderr_bytes);
        // A malformed line is counted and skipped (a result framed in stdout survives it); only
        // its number is ever reported, never its content.
        let mut line_number = 0u64;
        let mut malformed: Option<(u64, u64)> = None;
        let mut first = Some((std::mem::take(&mut start.lines), start.ended));
        loop {
            let (lines, ended) = match first.take() {
                Some(read) => read,
                None => match start.chunks.next_chunk().await.map_err(|e| self.send_error(Operation::Exec, e))? {
                    Some(bytes) => (start.reader.push(&bytes)?, false),
                    None => (std::mem::take(&mut start.reader).finish()?.into_iter().collect(), true),
                },
            };
            for line in &lines {
                line_number += 1;
                let Ok(parsed) = wire::parse_command_stream_line(line) else {
                    let (count, first) = malformed.unwrap_or((0, line_number));
                    malformed = Some((count + 1, first));
                    continue;
                };
                match parsed {
                    CommandStreamLine::Stdout(text) => {
                        on_output(OutputStream::Stdout, &text);
                        stdout.push(&text);
                    }
                    CommandStreamLine::Stderr(text) => {
                        on_output(OutputStream::Stderr, &text);
                        stderr.push(&text);
                    }
                    CommandStreamLine::Error { code, message } => {
                        return Err(
                            self.error(Operation::Exec, format!("the command stream failed: {code}: {message}"))
                        );
                    }
                    CommandStreamLine::Command(info) => {
                        if let Some(exit_code) = info.exit_code {
                            return Ok(CommandOutcome::from_tails(exit_code, stdout, stderr));
                        }
                    }
                }
            }
            if ended {
                let skipped = malformed
                    .map(|(count, first)| format!(" ({count} malformed line(s) skipped, the first at line {first})"))
                    .unwrap_or_default();
                return Err(self
                    .error(Operation::Exec, format!("the command stream ended before the command finished{skipped}")));
            }
        }
    }

    /// Reads a file. `POST /v2/sandboxes/sessions/{id}/fs/read`; `None` when the file is missing (404).
    ///
    /// At most `max_bytes` are read: a larger file (by its `content-length`, before reading, or
    /// while streaming) is `Err(FileTooLarge)` and nothing more is buffered.
    pub async fn read_file(
        &self,
        session_id: &str,
        path: &str,
        max_bytes: u64,
        signal: Option<&AbortSignal>,
    ) -> Result<FileRead> {
        let body = ReadFileRequest { path: path.to_owned(), cwd: None };
        let request = self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/fs/read"), &body)?;
        let deadline = Deadline::new(signal, READ_DEADLINE_MS);
        let signal = deadline.signal();
        let read = async {
            let Some(response) = self.send_tolerating(&request, Operation::Read, 404, signal.as_ref()).await? else {
                return Ok(FileRead::Missing);
            };
            match body_bytes_capped(&response, max_bytes).await.map_err(|e| self.send_error(Operation::Read, e))? {
                Ok(bytes) => Ok(FileRead::Bytes(bytes)),
                Err(size) => Ok(FileRead::TooLarge(size)),
            }
        };
        read.await.map_err(|e| self.bounded(Operation::Read, &deadline, e))
    }

    /// Stops the Box. `POST /v2/sandboxes/sessions/{id}/stop` (empty body, JSON content type).
    /// Bounded by [`STOP_DEADLINE_MS`] (all attempts) and by `signal`. A 410 (the session is
    /// already stopped, e.g. its host shut down or its lifetime ended) counts as stopped: the stop
    /// happens after the Response, so it may come second.
    pub async fn stop_session(&self, session_id: &str, signal: Option<&AbortSignal>) -> Result<()> {
        let request =
            self.request("POST", &format!("/v2/sandboxes/sessions/{session_id}/stop"), "application/json", None);
        let deadline = Deadline::new(signal, STOP_DEADLINE_MS);
        let signal = deadline.signal();
        let stopped = async {
            match self.send_tolerating(&request, Operation::Stop, 410, signal.as_ref()).await? {
                Some(response) => self.answer_bytes(&response, Operation::Stop, MAX_ANSWER_BYTES).await.map(|_| ()),
                None => Ok(()),
            }
        };
        stopped.await.map_err(|e| self.bounded(Operation::Stop, &deadline, e))
    }
}

/// The output of one detached command, as `GET …/cmd/{cmdId}/logs` streams it (NDJSON: the
/// whole history from the start, then live output; the stream ends when the command exits).
#[derive(Debug)]
pub struct CommandLogs {
    chunks: BodyChunks,
    reader: NdjsonReader,
    pending: std::collections::VecDeque<OutputEntry>,
    ended: bool,
    kind: ProviderKind,
}

impl LogStream for CommandLogs {
    /// The next entry; `None` once the command has exited and every entry was read.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` for a failed read, a malformed line or an in-stream error line.
    fn next(&mut self) -> LocalBoxFuture<'_, Result<Option<OutputEntry>>> {
        Box::pin(async move {
            loop {
                if let Some(entry) = self.pending.pop_front() {
                    return Ok(Some(entry));
                }
                if self.ended {
                    return Ok(None);
                }
                let failed = |message: String| {
                    Error::new(ErrorCode::TransportError, message)
                        .with_provider(self.kind)
                        .with_operation(Operation::Exec)
                };
                let chunk = self
                    .chunks
                    .next_chunk()
                    .await
                    .map_err(|e| failed(format!("the command logs stream failed: {}", e.describe())))?;
                let lines = match chunk {
                    Some(bytes) => self.reader.push(&bytes)?,
                    None => {
                        self.ended = true;
                        std::mem::take(&mut self.reader).finish()?.into_iter().collect()
                    }
                };
                for line in lines {
                    match wire::parse_command_stream_line(&line).map_err(|e| e.with_provider(self.kind))? {
                        CommandStreamLine::Stdout(data) => {
                            self.pending.push_back(OutputEntry { stream: OutputStream::Stdout, data })
                        }
                        CommandStreamLine::Stderr(data) => {
                            self.pending.push_back(OutputEntry { stream: OutputStream::Stderr, data })
                        }
                        CommandStreamLine::Error { code, message } => {
                            self.ended = true;
                            return Err(failed(format!("the command logs stream failed: {code}: {message}")));
                        }
                        CommandStreamLine::Command(_) => {}
                    }
                }
            }
        })
    }

    /// Stops reading (the request is cancelled).
    fn cancel(&mut self) {
        self.ended = true;
        self.pending.clear();
        self.chunks.cancel();
    }
}

impl VercelClient {
    /// Starts a command without waiting (detached): `POST /v2/sandboxes/sessions/{id}/cmd` without
    /// `wait`/`logs`; answers the command id. Never re-sent.
    pub async fn start_command(
        &self,
        session_id: &str,
        command: &Command,
        signal: Option<&AbortSignal>,
    ) -> Result<String> {
        let body = RunCommandRequest::for_command(command, false);
        let request = self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/cmd"), &body)?;
        let response = self.send(&request, RequestSafety::NonIdempotent, Operation::Exec, signal).await?;
        Ok(self.command_answer(&response).await?.id)
    }

    /// [`VercelClient::start_command`] with a stdin pipe: `attachStdin: true` in the body.
    pub async fn start_command_with_stdin(
        &self,
        session_id: &str,
        command: &Command,
        signal: Option<&AbortSignal>,
    ) -> Result<String> {
        let body = RunCommandRequest { attach_stdin: Some(true), ..RunCommandRequest::for_command(command, false) };
        let request = self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/cmd"), &body)?;
        let response = self.send(&request, RequestSafety::NonIdempotent, Operation::Exec, signal).await?;
        Ok(self.command_answer(&response).await?.id)
    }

    /// Writes `data` to a command's stdin, in writes of at most [`wire::MAX_STDIN_WRITE_BYTES`]
    /// each carrying its `offset` (so a resent one skips what the command took), then closes it
    /// when `close`: `POST /v2/sandboxes/sessions/{id}/cmd/{cmdId}/stdin`.
    pub async fn write_stdin(
        &self,
        session_id: &str,
        command_id: &str,
        data: &[u8],
        close: bool,
        signal: Option<&AbortSignal>,
    ) -> Result<()> {
        use base64::Engine as _;
        let path = format!("/v2/sandboxes/sessions/{session_id}/cmd/{command_id}/stdin");
        let mut chunks: Vec<&[u8]> = data.chunks(wire::MAX_STDIN_WRITE_BYTES).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        let last = chunks.len() - 1;
        let mut offset: Option<u64> = None;
        for (index, chunk) in chunks.into_iter().enumerate() {
            let body = WriteStdinRequest {
                data: (!chunk.is_empty()).then(|| base64::engine::general_purpose::STANDARD.encode(chunk)),
                close: (close && index == last).then_some(true),
                offset,
            };
            let request = self.json_request("POST", &path, &body)?;
            // A write that carries its offset is safe to resend (the host skips what it took);
            // the first, whose offset is unknown here, is never resent.
            let safety = if offset.is_some() { RequestSafety::Idempotent } else { RequestSafety::NonIdempotent };
            let response = self.send(&request, safety, Operation::Stdin, signal).await?;
            let written = self.json(&response, Operation::Stdin).await?.get("bytesWritten").and_then(|v| v.as_u64());
            offset = written;
        }
        Ok(())
    }

    /// Looks a command up: `GET /v2/sandboxes/sessions/{id}/cmd/{cmdId}` → `{ command }`.
    pub async fn get_command(
        &self,
        session_id: &str,
        command_id: &str,
        signal: Option<&AbortSignal>,
    ) -> Result<CommandInfo> {
        let request = self.request(
            "GET",
            &format!("/v2/sandboxes/sessions/{session_id}/cmd/{command_id}"),
            "application/json",
            None,
        );
        let response = self.send(&request, RequestSafety::Idempotent, Operation::Exec, signal).await?;
        self.command_answer(&response).await
    }

    /// Adds `ms` to the session's deadline: `POST /v2/sandboxes/sessions/{id}/extend-timeout`
    /// `{ duration }`, as the SDK sends it.
    pub fn extend_timeout<'a>(
        &'a self,
        session_id: &str,
        ms: u64,
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<()>> + 'a {
        let request = self.json_request(
            "POST",
            &format!("/v2/sandboxes/sessions/{session_id}/extend-timeout"),
            &ExtendTimeoutRequest { duration: ms },
        );
        self.send_for_2xx(request, Operation::ExtendTimeout, signal)
    }

    /// The `{ command }` of a detached run or wait answer, read with the command stream's line
    /// parser (the same shape as its `command` lines; one decoder in the wasm).
    async fn command_answer(&self, response: &Response) -> Result<CommandInfo> {
        let bytes = self.answer_bytes(response, Operation::Exec, MAX_ANSWER_BYTES).await?;
        let text = String::from_utf8_lossy(&bytes);
        match wire::parse_command_stream_line(&text) {
            Ok(CommandStreamLine::Command(info)) => Ok(info),
            _ => Err(self.error(
                Operation::Exec,
                format!("{} answered a command request with an unexpected body", self.kind.as_str()),
            )),
        }
    }

    /// Follows a command's output: `GET /v2/sandboxes/sessions/{id}/cmd/{cmdId}/logs`.
    pub async fn command_logs(
        &self,
        session_id: &str,
        command_id: &str,
        signal: Option<&AbortSignal>,
    ) -> Result<CommandLogs> {
        let request = self.request(
            "GET",
            &format!("/v2/sandboxes/sessions/{session_id}/cmd/{command_id}/logs"),
            "application/json",
            None,
        );
        let response = self.send(&request, RequestSafety::Idempotent, Operation::Exec, signal).await?;
        let content_type = response.headers().get("content-type").unwrap_or_default();
        if !vite_hub_sandbox_core::http::media_type::media_type_is(&content_type, "application/x-ndjson") {
            return Err(self.error(
                Operation::Exec,
                format!(
                    "expected a stream of command logs, got content-type {content_type}",
                    content_type = vite_hub_sandbox_core::error::quoted(&content_type)
                ),
            ));
        }
        let chunks = BodyChunks::new(&response).map_err(|e| self.send_error(Operation::Exec, e))?;
        Ok(CommandLogs {
            chunks,
            reader: NdjsonReader::default(),
            pending: Default::default(),
            ended: false,
            kind: self.kind,
        })
    }

    /// Waits for a command's exit: `GET /v2/sandboxes/sessions/{id}/cmd/{cmdId}?wait=true`
    /// (long-poll); answers its exit code.
    pub async fn wait_command(&self, session_id: &str, command_id: &str, signal: Option<&AbortSignal>) -> Result<i32> {
        let mut request = self.request(
            "GET",
            &format!("/v2/sandboxes/sessions/{session_id}/cmd/{command_id}"),
            "application/json",
            None,
        );
        request.url.push_str(if request.url.contains('?') { "&wait=true" } else { "?wait=true" });
        let response = self.send(&request, RequestSafety::Idempotent, Operation::Exec, signal).await?;
        self.command_answer(&response)
            .await?
            .exit_code
            .ok_or_else(|| self.error(Operation::Exec, "the command wait answered without an exit code".to_owned()))
    }

    /// Sends `signal` (a number) to a command: `POST /v2/sandboxes/sessions/{id}/cmd/{cmdId}/kill`.
    pub fn kill_command<'a>(
        &'a self,
        session_id: &str,
        command_id: &str,
        signal_number: u8,
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<()>> + 'a {
        let body = KillCommandRequest { signal: signal_number };
        let request =
            self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/cmd/{command_id}/kill"), &body);
        self.send_for_2xx(request, Operation::Exec, signal)
    }

    /// Creates one directory (not recursive): `POST /v2/sandboxes/sessions/{id}/fs/mkdir`.
    pub fn mkdir<'a>(
        &'a self,
        session_id: &str,
        path: &str,
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<()>> + 'a {
        let request = self.json_request(
            "POST",
            &format!("/v2/sandboxes/sessions/{session_id}/fs/mkdir"),
            &MkdirRequest { path: path.to_owned() },
        );
        self.send_for_2xx(request, Operation::Mkdir, signal)
    }

    /// Sends an idempotent `request` (or fails with its encoding error) for its 2xx alone: one
    /// future type for the routes whose answer is not read.
    async fn send_for_2xx(
        &self,
        request: Result<HttpRequest>,
        operation: Operation,
        signal: Option<&AbortSignal>,
    ) -> Result<()> {
        self.send(&request?, RequestSafety::Idempotent, operation, signal).await?;
        Ok(())
    }

    /// The local Box host's executionAuthority for a Box created with `network_policy` (request
    /// shape): `GET /_vite-hub/execution-authority?networkPolicy=<JSON>`, a route of the local Box
    /// host only (computed by the function its create uses). Opens no Box.
    pub async fn local_host_execution_authority(
        &self,
        network_policy: Option<&serde_json::Value>,
        signal: Option<&AbortSignal>,
    ) -> Result<serde_json::Value> {
        let mut request = self.request("GET", "/_vite-hub/execution-authority", "application/json", None);
        if let Some(policy) = network_policy {
            let encoded = js_sys::encode_uri_component(&policy.to_string()).as_string().unwrap_or_default();
            request.url.push_str(if request.url.contains('?') { "&" } else { "?" });
            request.url.push_str("networkPolicy=");
            request.url.push_str(&encoded);
        }
        let response = self.send(&request, RequestSafety::Idempotent, Operation::Resolve, signal).await?;
        self.json(&response, Operation::Resolve).await
    }

    /// Snapshots a session, which stops it. `POST /v2/sandboxes/sessions/{id}/snapshot`, no body
    /// (§7.5); the id of `{snapshot: {id}}`. Bounded by [`SNAPSHOT_DEADLINE_MS`].
    pub async fn snapshot_session(&self, session_id: &str) -> Result<String> {
        let request =
            self.request("POST", &format!("/v2/sandboxes/sessions/{session_id}/snapshot"), "application/json", None);
        let deadline = Deadline::new(None, SNAPSHOT_DEADLINE_MS);
        let signal = deadline.signal();
        let taken = async {
            let response =
                self.send(&request, RequestSafety::NonIdempotent, Operation::Snapshot, signal.as_ref()).await?;
            let body = self.answer_bytes(&response, Operation::Snapshot, MAX_ANSWER_BYTES).await?;
            wire::snapshot_id(&body).ok_or_else(|| {
                self.error(Operation::Snapshot, format!("{} answered a snapshot without an id", self.kind.as_str()))
            })
        };
        taken.await.map_err(|e| self.bounded(Operation::Snapshot, &deadline, e))
    }

    /// Lists snapshots, newest first, one page of up to 100, of the sandbox `name` when given:
    /// `GET /v2/sandboxes/snapshots?project=<p>&name=<n>&limit=100` → `(id, sizeBytes, createdAt)`.
    /// Bounded by [`READ_DEADLINE_MS`].
    pub async fn list_snapshots(
        &self,
        project_id: Option<&str>,
        name: Option<&str>,
    ) -> Result<Vec<(String, u64, u64)>> {
        let mut request = self.request("GET", "/v2/sandboxes/snapshots", "application/json", None);
        request.url.push(if request.url.contains('?') { '&' } else { '?' });
        for (key, value) in [("project", project_id), ("name", name)] {
            if let Some(value) = value {
                request.url.push_str(key);
                request.url.push('=');
                request.url.push_str(&js_sys::encode_uri_component(value).as_string().unwrap_or_default());
                request.url.push('&');
            }
        }
        request.url.push_str("limit=100");
        let deadline = Deadline::new(None, READ_DEADLINE_MS);
        let signal = deadline.signal();
        let listed = async {
            let response = self.send(&request, RequestSafety::Idempotent, Operation::Snapshot, signal.as_ref()).await?;
            self.json(&response, Operation::Snapshot).await
        };
        let value = listed.await.map_err(|e| self.bounded(Operation::Snapshot, &deadline, e))?;
        let items = value.get("snapshots").and_then(serde_json::Value::as_array).cloned().unwrap_or_default();
        Ok(items
            .iter()
            .filter_map(|item| {
                let id = item.get("id")?.as_str()?.to_owned();
                let size = item.get("sizeBytes").and_then(serde_json::Value::as_u64).unwrap_or(0);
                let created = item.get("createdAt").and_then(serde_json::Value::as_u64).unwrap_or(0);
                Some((id, size, created))
            })
            .collect())
    }

    /// Deletes a snapshot. `DELETE /v2/sandboxes/snapshots/{id}`; `false` on 404. Bounded by
    /// [`READ_DEADLINE_MS`].
    pub async fn delete_snapshot(&self, id: &str) -> Result<bool> {
        let request = self.request("DELETE", &format!("/v2/sandboxes/snapshots/{id}"), "application/json", None);
        let deadline = Deadline::new(None, READ_DEADLINE_MS);
        let signal = deadline.signal();
        let deleted = async {
            let response = self
                .fetcher
                .send(&request, &self.retry, RequestSafety::Idempotent, signal.as_ref())
                .await
                .map_err(|e| self.send_error(Operation::Snapshot, e))?;
            if response.status() == 404 {
                return Ok(false);
            }
            if !response.ok() {
                return Err(self.status_error(Operation::Snapshot, &response).await);
            }
            Ok(true)
        };
        deleted.await.map_err(|e| self.bounded(Operation::Snapshot, &deadline, e))
    }
}

/// How long an exec aborted before the Command's id arrived still reads the answer for that id
/// (to kill the Command), in ms.
const LATE_START_MS: f64 = 30_000.0;

/// The start of a `cmd` answer (NDJSON), read up to the line that names the Command: its id
/// (`None` when the stream ended first), the readers, and every line read so far.
struct CommandStart {
    chunks: BodyChunks,
    reader: NdjsonReader,
    lines: Vec<String>,
    ended: bool,
    id: Option<String>,
}

/// Sends a `cmd` request (never re-sent once it may have reached the Box) and reads its answer
/// up to the Command's id. Owns its parts, so an aborted exec can finish it in the background.
async fn start_command(client: VercelClient, request: HttpRequest, signal: AbortSignal) -> Result<CommandStart> {
    let response = client.send(&request, RequestSafety::NonIdempotent, Operation::Exec, Some(&signal)).await?;
    let content_type = response.headers().get("content-type").unwrap_or_default();
    if !vite_hub_sandbox_core::http::media_type::media_type_is(&content_type, "application/x-ndjson") {
        return Err(client.error(
            Operation::Exec,
            format!(
                "expected a stream of command data, got content-type {content_type}",
                content_type = vite_hub_sandbox_core::error::quoted(&content_type)
            ),
        ));
    }
    let chunks = BodyChunks::new(&response).map_err(|e| client.send_error(Operation::Exec, e))?;
    let mut start = CommandStart { chunks, reader: NdjsonReader::default(), lines: Vec::new(), ended: false, id: None };
    while start.id.is_none() && !start.ended {
        let read = start.chunks.next_chunk().await;
        let new_lines = match read.map_err(|e| client.send_error(Operation::Exec, e))? {
            Some(bytes) => start.reader.push(&bytes)?,
            None => {
                start.ended = true;
                std::mem::take(&mut start.reader).finish()?.into_iter().collect()
            }
        };
        start.id = new_lines.iter().find_map(|line| match wire::parse_command_stream_line(line) {
            Ok(CommandStreamLine::Command(info)) => Some(info.id),
            _ => None,
        });
        start.lines.extend(new_lines);
    }
    Ok(start)
}

/// `controller.abort` bound to `controller` (`None` where it cannot be read).
fn bound_abort(controller: &web_sys::AbortController) -> Option<js_sys::Function> {
    use wasm_bindgen::JsCast;
    let abort = js_sys::Reflect::get(controller, &wasm_bindgen::JsValue::from_str("abort")).ok()?;
    Some(abort.dyn_into::<js_sys::Function>().ok()?.bind0(controller))
}
