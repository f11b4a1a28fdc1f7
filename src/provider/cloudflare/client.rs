//! One method per container control API route we use, sent through a [`Fetcher`]: the Durable
//! Object stub's `fetch` (the `Sandbox` DO starts the container and proxies the path to it), or,
//! in local development, the local Box host's container API.
//!
//! Source: cloudflare-sandbox-protocol.md §3 (the DO's `fetch`, its start answers), §3.1 (what a
//! caller of `stub.fetch` must do itself: retry 503s, sessions, env), §4.3 (routes), §4.4 (SSE).
//! Start problems are classified in [`super::classify`]; a request that may have reached the
//! container is never sent twice for a command.
//!
//! Every request carries a deadline ([`Deadline`], the caller's signal or the request's own
//! bound, whichever fires first) that also bounds reading its answer: a container (or a Durable
//! Object) that accepts a request and never answers, or stops mid-answer, cannot hold a Run, a
//! Session or a close past it (issue 9, item 1).

use base64::Engine;
use futures::future::{select, Either, LocalBoxFuture};
use gloo_net::http::Response;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::classify::{self, RejectionFlags, StartupRetry, Verdict};
use super::liveness::{next_chunk_while_running, Watched};
use super::wire::{
    self, DeleteRequest, ExecEvent, ExecuteRequest, ExecuteResponse, ExistsRequest, MkdirRequest, ProcessEvent,
    ReadRequest, ReadResponse, WriteRequest,
};
use crate::http::deadline::Deadline;
use crate::http::fetch::{
    body_bytes, js_message, sleep_unless_aborted, AbortWait, BodyChunks, Fetcher, HttpRequest, SendError,
};
use crate::provider::output::{LogStream, OutputEntry, OutputStream};
use vite_hub_sandbox_core::command::{last_bytes, Command, CommandOutcome, OutputTail};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::http::sse::{SseEnd, SseReader};
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// Bound of a request that is not a command (files, reads, `mkdir`, `configure`, starting a
/// process), all its start retries and its answer included, in ms: the first request of a Box
/// waits for the container to start (the SDK allows 30 s for an instance and 90 s for its port).
pub const REQUEST_DEADLINE_MS: u32 = 180_000;
/// Bound of a kill or a destroy on the local Box host, in ms.
pub const STOP_DEADLINE_MS: u32 = 15_000;
/// Time a command request may run past the command's own timeout before it is cut, in ms.
pub const EXEC_SLACK_MS: u64 = 30_000;

/// The bound of a command request whose command has `timeout_ms` (none: only the caller's signal).
fn command_bound(timeout_ms: Option<u64>) -> u32 {
    timeout_ms.map_or(u32::MAX, |ms| u32::try_from(ms.saturating_add(EXEC_SLACK_MS)).unwrap_or(u32::MAX))
}

/// Whether a request may be sent again after a start problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resend {
    /// Files, directories, reads, `configure`: the same request twice has the same effect.
    Allowed,
    /// A command: never sent twice (it may have run).
    Never,
}

/// A container answer that is not 2xx and not a start problem: the container's own error.
#[derive(Debug)]
struct Refused {
    status: u16,
    body: Vec<u8>,
}

/// A client of one Box's container control API.
#[derive(Debug, Clone)]
pub struct ContainerClient {
    fetcher: Fetcher,
    base_url: String,
    token: Option<String>,
    retry: StartupRetry,
    /// The Durable Object whose container state a silent command stream checks
    /// ([`super::liveness`]); none on the local Box host.
    state_of: Option<crate::sys::DurableObjectStub>,
}

impl ContainerClient {
    /// A client sending `<base_url>/api/...` through `fetcher`, with `Authorization: Bearer
    /// <token>` when a token is given (the local Box host; the DO stub needs none, and the host
    /// part of its URL is not looked at).
    pub fn new(fetcher: Fetcher, base_url: String, token: Option<String>, retry: StartupRetry) -> ContainerClient {
        ContainerClient { fetcher, base_url, token, retry, state_of: None }
    }

    /// This client, whose command streams, while silent, ask `stub` whether the container has
    /// stopped (`liveness::next_chunk_while_running`).
    pub fn with_container_state_of(mut self, stub: crate::sys::DurableObjectStub) -> ContainerClient {
        self.state_of = Some(stub);
        self
    }

    fn error(&self, code: ErrorCode, operation: Operation, message: String) -> Error {
        let message = match &self.token {
            Some(token) => vite_hub_sandbox_core::error::redact(&message, &[token.as_str()]),
            None => message,
        };
        Error::new(code, message).with_provider(ProviderKind::Cloudflare).with_operation(operation)
    }

    /// `error`, or `SANDBOX_PROVIDER_UNAVAILABLE` naming the bound when `deadline` (not the
    /// caller) ended the request.
    fn bounded(&self, operation: Operation, deadline: &Deadline, error: Error) -> Error {
        if !deadline.expired() {
            return error;
        }
        self.error(
            ErrorCode::ProviderUnavailable,
            operation,
            format!("the container did not complete {} within {}ms", operation.as_str(), deadline.ms()),
        )
    }

    fn request(&self, method: &'static str, path: &str, body: Option<Vec<u8>>) -> HttpRequest {
        let mut headers = vec![("content-type", "application/json".to_owned())];
        if let Some(token) = &self.token {
            headers.push(("authorization", format!("Bearer {token}")));
        }
        HttpRequest { method, url: format!("{}{path}", self.base_url.trim_end_matches('/')), headers, body }
    }

    /// Sends once, racing the caller's signal (a stub may not honour a `Request`'s signal).
    async fn send_once(
        &self,
        request: &HttpRequest,
        signal: Option<&AbortSignal>,
    ) -> std::result::Result<Response, SendError> {
        let Some(signal) = signal else {
            return self.fetcher.send_once(request, None).await;
        };
        let send = Box::pin(self.fetcher.send_once(request, Some(signal)));
        let wait = AbortWait::new(signal);
        let aborted = JsFuture::from(wait.promise().clone());
        match select(send, aborted).await {
            Either::Left((result, _)) => result,
            Either::Right(_) => Err(SendError::Aborted),
        }
    }

    /// Sends `request`, retrying start problems per [`StartupRetry`] when `resend` allows it.
    /// A 2xx answer is returned unread; a container's own error as [`Refused`].
    ///
    /// Boxed: every route's future awaits this one.
    fn send<'a>(
        &'a self,
        request: &'a HttpRequest,
        operation: Operation,
        resend: Resend,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<std::result::Result<Response, Refused>>> {
        Box::pin(self.send_with_retries(request, operation, resend, signal))
    }

    async fn send_with_retries(
        &self,
        request: &HttpRequest,
        operation: Operation,
        resend: Resend,
        signal: Option<&AbortSignal>,
    ) -> Result<std::result::Result<Response, Refused>> {
        let mut attempts = 0u32;
        let mut waited_ms = 0u64;
        // What the last answer said while the container was retried as starting: an abort (the
        // Run's deadline) then means the container never started, and the error says so.
        let mut starting: Option<String> = None;
        let aborted = |attempts: u32, starting: &Option<String>| match starting {
            Some(problem) => self.error(
                ErrorCode::ProviderUnavailable,
                operation,
                format!(
                    "the container never started ({} was still waiting for it after {attempts} attempts: {problem})",
                    operation.as_str()
                ),
            ),
            None => self.error(ErrorCode::TransportError, operation, format!("{} was aborted", operation.as_str())),
        };
        loop {
            attempts += 1;
            let (verdict, retry_after_ms, problem) = match self.send_once(request, signal).await {
                Err(SendError::Aborted) => return Err(aborted(attempts - 1, &starting)),
                Err(error @ SendError::Redirected(_)) => {
                    return Err(self.error(
                        ErrorCode::TransportError,
                        operation,
                        format!("{} failed: {}", operation.as_str(), error.describe()),
                    ));
                }
                Err(SendError::Network(value)) => {
                    let message = js_message(&value);
                    // The local Box host (SANDBOX_LOCAL_URL) starts no container: when it does not
                    // answer a second time it is not running, and waiting for it is no use.
                    if self.token.is_some() && attempts > 1 {
                        let message = format!("{} failed: the local Box host at {} did not answer ({message}); is it running? check SANDBOX_LOCAL_URL", operation.as_str(), self.base_url);
                        return Err(self.error(ErrorCode::ProviderUnavailable, operation, message));
                    }
                    (classify::classify_rejection(&message, rejection_flags(&value)), None, message)
                }
                Ok(response) if response.ok() => return Ok(Ok(response)),
                Ok(response) => {
                    let status = response.status();
                    let body = body_bytes(&response).await.unwrap_or_default();
                    // Only the local Box host (SANDBOX_LOCAL_URL) checks a token, and it refuses
                    // one with 401. Its 403 is the container API's PERMISSION_DENIED (a path
                    // that leaves the Box): the container's own answer, told below.
                    if status == 401 && self.token.is_some() {
                        let message = format!(
                            "{} failed: the local Box host answered {status}{}; check SANDBOX_LOCAL_TOKEN",
                            operation.as_str(),
                            detail(&body)
                        );
                        return Err(self.error(ErrorCode::ProviderAuth, operation, message).with_status(status));
                    }
                    let verdict = classify::classify_answer(status, &body);
                    if verdict == Verdict::Container {
                        return Ok(Err(Refused { status, body }));
                    }
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .as_deref()
                        .and_then(vite_hub_sandbox_core::http::retry::parse_retry_after_ms);
                    (verdict, retry_after, format!("status {status}{}", detail(&body)))
                }
            };
            let delay = match (resend, verdict.is_retryable()) {
                (Resend::Allowed, true) => self.retry.delay_ms(attempts, waited_ms, retry_after_ms),
                _ => None,
            };
            let Some(delay) = delay else {
                let what = match verdict {
                    Verdict::Starting => "the container did not start",
                    Verdict::StartFailed => "the container cannot start",
                    Verdict::NoContainers => verdict.fix().unwrap_or_default(),
                    Verdict::Thrown => "the Sandbox Durable Object threw (retrying runs the same code again)",
                    _ => "the container connection failed",
                };
                let tries = if attempts > 1 { format!(" after {attempts} attempts") } else { String::new() };
                return Err(self.error(
                    verdict.code(),
                    operation,
                    format!("{} failed: {what}{tries} ({problem})", operation.as_str()),
                ));
            };
            starting = Some(problem);
            sleep_unless_aborted(delay as f64, signal).await.map_err(|_| aborted(attempts, &starting))?;
            waited_ms += delay;
        }
    }

    /// Encodes `body` now and sends it ([`ContainerClient::post_bytes`]).
    fn post_json<'a>(
        &'a self,
        path: &'a str,
        body: &impl serde::Serialize,
        operation: Operation,
        resend: Resend,
        bound_ms: u32,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<std::result::Result<Vec<u8>, Refused>>> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| self.error(ErrorCode::RuntimeError, operation, format!("cannot encode a request body: {e}")));
        self.post_bytes(path, bytes, operation, resend, bound_ms, signal)
    }

    /// Sends a JSON body (or fails with its encoding error) and reads the whole answer, both
    /// within `bound_ms` (boxed, see [`ContainerClient::send`]). The read races the deadline too:
    /// a stub's answer body need not follow the request's signal.
    fn post_bytes<'a>(
        &'a self,
        path: &'a str,
        bytes: Result<Vec<u8>>,
        operation: Operation,
        resend: Resend,
        bound_ms: u32,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<std::result::Result<Vec<u8>, Refused>>> {
        Box::pin(async move {
            let bytes = bytes?;
            let deadline = Deadline::new(signal, bound_ms);
            let bounded_signal = deadline.signal();
            let answer =
                self.send(&self.request("POST", path, Some(bytes)), operation, resend, bounded_signal.as_ref()).await;
            let response = match answer {
                Ok(Ok(response)) => response,
                Ok(Err(refused)) => return Ok(Err(refused)),
                Err(error) => return Err(self.bounded(operation, &deadline, error)),
            };
            let read = match &bounded_signal {
                Some(signal) => read_until_aborted(&response, signal).await,
                None => body_bytes(&response).await,
            };
            read.map(Ok).map_err(|e| {
                let error = self.error(
                    ErrorCode::TransportError,
                    operation,
                    format!("{} answer could not be read: {}", operation.as_str(), e.describe()),
                );
                self.bounded(operation, &deadline, error)
            })
        })
    }

    fn refused(&self, operation: Operation, refused: &Refused) -> Error {
        self.error(
            ErrorCode::TransportError,
            operation,
            format!("the container answered {} to {}{}", refused.status, operation.as_str(), detail(&refused.body)),
        )
        .with_status(refused.status)
    }

    /// `body` to `path` (resent when allowed), any answer but a 2xx refused. Not `async`: one
    /// future type ([`ContainerClient::answered_ok`]) for every route that only needs a 2xx.
    fn post_ok<'a>(
        &'a self,
        path: &'a str,
        body: &impl serde::Serialize,
        operation: Operation,
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<()>> + 'a {
        self.answered_ok(self.post_json(path, body, operation, Resend::Allowed, REQUEST_DEADLINE_MS, signal), operation)
    }

    async fn answered_ok(
        &self,
        sent: LocalBoxFuture<'_, Result<std::result::Result<Vec<u8>, Refused>>>,
        operation: Operation,
    ) -> Result<()> {
        match sent.await? {
            Ok(_) => Ok(()),
            Err(refused) => Err(self.refused(operation, &refused)),
        }
    }

    /// `POST /api/mkdir { path, recursive: true }`. The first request of a Box: it is the one that
    /// waits for the container to start.
    pub fn mkdir<'a>(
        &'a self,
        path: &str,
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<()>> + 'a {
        self.post_ok("/api/mkdir", &MkdirRequest { path: path.to_owned(), recursive: true }, Operation::Write, signal)
    }

    /// `POST /api/mkdir { path, recursive }` for a Session's `mkdir`.
    pub fn mkdir_with<'a>(
        &'a self,
        path: &str,
        recursive: bool,
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<()>> + 'a {
        self.post_ok("/api/mkdir", &MkdirRequest { path: path.to_owned(), recursive }, Operation::Mkdir, signal)
    }

    /// `POST /api/exists { path }` → whether the path exists.
    pub async fn exists(&self, path: &str, signal: Option<&AbortSignal>) -> Result<bool> {
        match self
            .post_json(
                "/api/exists",
                &ExistsRequest { path: path.to_owned() },
                Operation::Read,
                Resend::Allowed,
                REQUEST_DEADLINE_MS,
                signal,
            )
            .await?
        {
            Ok(bytes) => wire::exists_answer(&bytes)
                .map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(Operation::Read)),
            Err(refused) => Err(self.refused(Operation::Read, &refused)),
        }
    }

    /// `POST /api/write { path, content: <base64>, encoding: "base64" }`.
    pub fn write_file<'a>(
        &'a self,
        path: &str,
        bytes: &[u8],
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<()>> + 'a {
        let body = WriteRequest {
            path: path.to_owned(),
            content: base64::engine::general_purpose::STANDARD.encode(bytes),
            encoding: "base64",
        };
        self.post_ok("/api/write", &body, Operation::Write, signal)
    }

    /// `POST /api/read { path, encoding: "base64" }`; `None` when the file does not exist (404).
    pub async fn read_file(&self, path: &str, signal: Option<&AbortSignal>) -> Result<Option<Vec<u8>>> {
        let body = ReadRequest { path: path.to_owned(), encoding: "base64" };
        match self.post_json("/api/read", &body, Operation::Read, Resend::Allowed, REQUEST_DEADLINE_MS, signal).await? {
            Ok(bytes) => {
                let read = ReadResponse::from_slice(&bytes)
                    .map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(Operation::Read))?;
                read.into_bytes()
                    .map(Some)
                    .map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(Operation::Read))
            }
            Err(refused) if refused.status == 404 => Ok(None),
            Err(refused) => Err(self.refused(Operation::Read, &refused)),
        }
    }

    /// `POST /api/delete { path }` (a file; a missing one is no error).
    pub async fn delete_file(&self, path: &str, signal: Option<&AbortSignal>) -> Result<()> {
        match self
            .post_json(
                "/api/delete",
                &DeleteRequest { path: path.to_owned() },
                Operation::Stop,
                Resend::Allowed,
                REQUEST_DEADLINE_MS,
                signal,
            )
            .await?
        {
            Ok(_) => Ok(()),
            Err(refused) if refused.status == 404 => Ok(()),
            Err(refused) => Err(self.refused(Operation::Stop, &refused)),
        }
    }

    /// `POST /api/execute` (sessionless, `timeoutMs` honoured by the container, whole output in
    /// one JSON answer). Never sent twice.
    ///
    /// # Errors
    /// `SANDBOX_TIMEOUT` when the container killed the command at `timeoutMs` (exit 124 and its
    /// stderr line); `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` for failed requests.
    pub async fn execute(
        &self,
        body: &ExecuteRequest,
        command: &Command,
        operation: Operation,
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        let bytes = match self
            .post_json("/api/execute", body, operation, Resend::Never, command_bound(body.timeout_ms), signal)
            .await?
        {
            Ok(bytes) => bytes,
            Err(refused) => return Err(self.refused(operation, &refused)),
        };
        let answer = ExecuteResponse::from_slice(&bytes)
            .map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(operation))?;
        if classify::is_sessionless_timeout(answer.exit_code, &answer.stderr) {
            let timeout_ms = body.timeout_ms.unwrap_or_default();
            return Err(self
                .error(ErrorCode::Timeout, operation, format!("the command timed out after {timeout_ms}ms"))
                .with_timeout_ms(timeout_ms));
        }
        Ok(CommandOutcome {
            exit_code: answer.exit_code,
            stdout: last_bytes(&answer.stdout, command.max_stdout_bytes).to_owned(),
            stderr: last_bytes(&answer.stderr, command.max_stderr_bytes).to_owned(),
            truncated: answer.stdout.len() > command.max_stdout_bytes || answer.stderr.len() > command.max_stderr_bytes,
        })
    }

    /// `POST /api/execute/stream`: the output arrives as SSE while the command runs (`start`,
    /// `stdout`/`stderr` chunks, `complete`). The container does not apply `timeoutMs` here; the
    /// caller's signal ends the wait. Never sent twice.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when the stream ends (or is cut, even mid-event) before
    /// `complete`, or carries an `error` event; `SANDBOX_RUNTIME_ERROR` when, while the stream
    /// is silent, the Durable Object says the container stopped (it died before the result).
    pub async fn execute_stream(
        &self,
        body: &ExecuteRequest,
        command: &Command,
        operation: Operation,
        on_output: &mut dyn FnMut(OutputStream, &str),
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        let bytes = serde_json::to_vec(body).map_err(|e| {
            self.error(ErrorCode::RuntimeError, operation, format!("cannot encode a request body: {e}"))
        })?;
        // The stream lives as long as the command: bounded by its timeout plus a slack (else only
        // by the caller's signal, which a Run's deadline fires).
        let deadline = Deadline::new(signal, command_bound(command.timeout_ms));
        let signal = deadline.signal();
        let signal = signal.as_ref();
        let sent = self
            .send(&self.request("POST", "/api/execute/stream", Some(bytes)), operation, Resend::Never, signal)
            .await;
        let response = match sent.map_err(|e| self.bounded(operation, &deadline, e))? {
            Ok(response) => response,
            Err(refused) => return Err(self.refused(operation, &refused)),
        };
        let mut chunks =
            BodyChunks::new(&response).map_err(|e| self.error(ErrorCode::TransportError, operation, e.describe()))?;
        let result = self.read_exec_stream(&mut chunks, command, operation, on_output, signal).await;
        chunks.cancel();
        result.map_err(|e| self.bounded(operation, &deadline, e))
    }

    async fn read_exec_stream(
        &self,
        chunks: &mut BodyChunks,
        command: &Command,
        operation: Operation,
        on_output: &mut dyn FnMut(OutputStream, &str),
        signal: Option<&AbortSignal>,
    ) -> Result<CommandOutcome> {
        let mut reader = SseReader::default();
        let (mut stdout, mut stderr) =
            (OutputTail::new(command.max_stdout_bytes), OutputTail::new(command.max_stderr_bytes));
        loop {
            let read: LocalBoxFuture<'_, std::result::Result<Option<Vec<u8>>, SendError>> = match signal {
                Some(signal) => Box::pin(next_chunk_or_abort(chunks, signal)),
                None => Box::pin(chunks.next_chunk()),
            };
            let next = match &self.state_of {
                None => read.await,
                Some(stub) => match next_chunk_while_running(stub, read).await {
                    Watched::Chunk(next) => next,
                    Watched::Stopped(state) => {
                        return Err(self.error(
                            ErrorCode::RuntimeError,
                            operation,
                            format!("the container stopped before the command finished ({})", state.describe()),
                        ));
                    }
                },
            };
            let chunk = next.map_err(|e| {
                self.error(ErrorCode::TransportError, operation, format!("the command stream failed: {}", e.describe()))
            })?;
            let Some(chunk) = chunk else {
                let cut = if reader.finish() == SseEnd::MidEvent { " (cut inside an event)" } else { "" };
                return Err(self.error(
                    ErrorCode::TransportError,
                    operation,
                    format!("the command stream ended before the command finished{cut}"),
                ));
            };
            for event in
                reader.push(&chunk).map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(operation))?
            {
                match wire::parse_exec_event(&event.data)
                    .map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(operation))?
                {
                    Some(ExecEvent::Stdout(data)) => {
                        on_output(OutputStream::Stdout, &data);
                        stdout.push(&data);
                    }
                    Some(ExecEvent::Stderr(data)) => {
                        on_output(OutputStream::Stderr, &data);
                        stderr.push(&data);
                    }
                    Some(ExecEvent::Complete(Some(exit_code))) => {
                        return Ok(CommandOutcome::from_tails(exit_code, stdout, stderr));
                    }
                    Some(ExecEvent::Complete(None)) => {
                        return Err(self.error(
                            ErrorCode::TransportError,
                            operation,
                            "the command ended in an error state without an exit code".into(),
                        ));
                    }
                    Some(ExecEvent::Error(error)) => {
                        return Err(self.error(
                            ErrorCode::TransportError,
                            operation,
                            format!("the command stream failed: {error}"),
                        ));
                    }
                    Some(ExecEvent::Start) | None => {}
                }
            }
        }
    }

    /// `POST /api/process/start` (a background process, sessionless like `/api/execute`); its
    /// `processId`. Never sent twice.
    pub async fn start_process(&self, body: &ExecuteRequest, signal: Option<&AbortSignal>) -> Result<String> {
        match self
            .post_json("/api/process/start", body, Operation::Exec, Resend::Never, REQUEST_DEADLINE_MS, signal)
            .await?
        {
            Ok(bytes) => wire::process_started(&bytes)
                .map_err(|e| e.with_provider(ProviderKind::Cloudflare).with_operation(Operation::Exec)),
            Err(refused) => Err(self.refused(Operation::Exec, &refused)),
        }
    }

    /// `GET /api/process/{id}/stream`: the process's output so far, then live, then its exit (SSE).
    pub async fn process_stream(&self, id: &str, signal: Option<&AbortSignal>) -> Result<ProcessLogs> {
        // Only the caller's signal bounds a follow: the stream lasts as long as the process.
        let request = self.request("GET", &format!("/api/process/{id}/stream"), None);
        let response = match self.send(&request, Operation::Exec, Resend::Allowed, signal).await? {
            Ok(response) => response,
            Err(refused) => return Err(self.refused(Operation::Exec, &refused)),
        };
        let chunks = BodyChunks::new(&response)
            .map_err(|e| self.error(ErrorCode::TransportError, Operation::Exec, e.describe()))?;
        Ok(ProcessLogs { chunks, reader: SseReader::default(), pending: Default::default(), exit: None, ended: false })
    }

    /// `GET /api/process/{id}`: `Ok` when the container knows the process (running or exited);
    /// 404 `PROCESS_NOT_FOUND` otherwise.
    pub async fn get_process(&self, id: &str, signal: Option<&AbortSignal>) -> Result<()> {
        let request = self.request("GET", &format!("/api/process/{id}"), None);
        match self.send(&request, Operation::Exec, Resend::Allowed, signal).await? {
            Ok(_) => Ok(()),
            Err(refused) => Err(self.refused(Operation::Exec, &refused)),
        }
    }

    /// `DELETE /api/process/{id}`: kills the process.
    pub async fn kill_process(&self, id: &str, signal: Option<&AbortSignal>) -> Result<()> {
        let request = self.request("DELETE", &format!("/api/process/{id}"), None);
        let deadline = Deadline::new(signal, STOP_DEADLINE_MS);
        let sent = self.send(&request, Operation::Exec, Resend::Allowed, deadline.signal().as_ref()).await;
        match sent.map_err(|e| self.bounded(Operation::Exec, &deadline, e))? {
            Ok(_) => Ok(()),
            Err(refused) => Err(self.refused(Operation::Exec, &refused)),
        }
    }

    /// `DELETE <base>` on the local Box host: its stand-in for the DO's `destroy()`.
    pub async fn destroy_on_local_host(&self, signal: Option<&AbortSignal>) -> Result<()> {
        let request = self.request("DELETE", "", None);
        let deadline = Deadline::new(signal, STOP_DEADLINE_MS);
        let sent = self.send(&request, Operation::Stop, Resend::Allowed, deadline.signal().as_ref()).await;
        match sent.map_err(|e| self.bounded(Operation::Stop, &deadline, e))? {
            Ok(_) => Ok(()),
            Err(refused) if refused.status == 404 => Ok(()),
            Err(refused) => Err(self.refused(Operation::Stop, &refused)),
        }
    }
}

/// The next chunk of `chunks`, or [`SendError::Aborted`] when `signal` fires first (a stub's body
/// need not follow the request's signal).
async fn next_chunk_or_abort(
    chunks: &mut BodyChunks,
    signal: &AbortSignal,
) -> std::result::Result<Option<Vec<u8>>, SendError> {
    let wait = AbortWait::new(signal);
    match select(Box::pin(chunks.next_chunk()), JsFuture::from(wait.promise().clone())).await {
        Either::Left((next, _)) => next,
        Either::Right(_) => Err(SendError::Aborted),
    }
}

/// A whole answer body, read chunk by chunk until `signal` fires (the rest is then cancelled).
async fn read_until_aborted(response: &Response, signal: &AbortSignal) -> std::result::Result<Vec<u8>, SendError> {
    let mut chunks = BodyChunks::new(response)?;
    let mut bytes = Vec::new();
    loop {
        match next_chunk_or_abort(&mut chunks, signal).await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) => return Ok(bytes),
            Err(error) => {
                chunks.cancel();
                return Err(error);
            }
        }
    }
}

/// `: <message>` of a JSON error body, else of a short text body (cut to 200 chars).
/// The flags workerd sets on the error of a rejected Durable Object call (`retryable`,
/// `overloaded`; both false on any other value), for [`classify::classify_rejection`].
pub(super) fn rejection_flags(value: &wasm_bindgen::JsValue) -> RejectionFlags {
    let flag = |name: &str| {
        value.is_object() && js_sys::Reflect::get(value, &name.into()).ok().and_then(|v| v.as_bool()) == Some(true)
    };
    RejectionFlags { retryable: flag("retryable"), overloaded: flag("overloaded") }
}

fn detail(body: &[u8]) -> String {
    let text = match wire::error_body(body) {
        Some(b) => b.message.or(b.code).unwrap_or_default(),
        None => String::from_utf8_lossy(body).chars().take(200).collect(),
    };
    if text.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", text.trim())
    }
}

/// The output of a background process as `GET /api/process/{id}/stream` sends it (SSE): its
/// whole history, then live output, ending with its `exit` event.
#[derive(Debug)]
pub struct ProcessLogs {
    chunks: BodyChunks,
    reader: SseReader,
    pending: std::collections::VecDeque<OutputEntry>,
    /// The exit code once the `exit` event arrived (`Some(None)`: it carried none).
    exit: Option<Option<i32>>,
    ended: bool,
}

impl ProcessLogs {
    fn failed(message: String) -> Error {
        Error::new(ErrorCode::TransportError, message)
            .with_provider(ProviderKind::Cloudflare)
            .with_operation(Operation::Exec)
    }

    /// Reads to the `exit` event; the exit code.
    ///
    /// # Errors
    /// Those of [`LogStream::next`]; `SANDBOX_TRANSPORT_ERROR` when the process ended without one.
    pub async fn exit_code(&mut self) -> Result<i32> {
        while self.next().await?.is_some() {}
        match self.exit {
            Some(Some(code)) => Ok(code),
            _ => Err(Self::failed("the process ended in an error state without an exit code".into())),
        }
    }
}

impl LogStream for ProcessLogs {
    /// The next entry; `None` after the `exit` event.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` when the stream fails, is malformed or ends before `exit`.
    fn next(&mut self) -> LocalBoxFuture<'_, Result<Option<OutputEntry>>> {
        Box::pin(async move {
            loop {
                if let Some(entry) = self.pending.pop_front() {
                    return Ok(Some(entry));
                }
                if self.exit.is_some() || self.ended {
                    return Ok(None);
                }
                let chunk = self
                    .chunks
                    .next_chunk()
                    .await
                    .map_err(|e| Self::failed(format!("the process stream failed: {}", e.describe())))?;
                let Some(chunk) = chunk else {
                    self.ended = true;
                    return Err(Self::failed("the process stream ended before the process exited".into()));
                };
                for event in self.reader.push(&chunk).map_err(|e| e.with_provider(ProviderKind::Cloudflare))? {
                    match wire::parse_process_event(&event.data)
                        .map_err(|e| e.with_provider(ProviderKind::Cloudflare))?
                    {
                        Some(ProcessEvent::Stdout(data)) => {
                            self.pending.push_back(OutputEntry { stream: OutputStream::Stdout, data })
                        }
                        Some(ProcessEvent::Stderr(data)) => {
                            self.pending.push_back(OutputEntry { stream: OutputStream::Stderr, data })
                        }
                        Some(ProcessEvent::Exit(code)) => {
                            self.exit = Some(code);
                            break;
                        }
                        None => {}
                    }
                }
                if self.exit.is_some() {
                    self.chunks.cancel();
                }
            }
        })
    }

    /// Stops reading (cancels the request).
    fn cancel(&mut self) {
        self.ended = true;
        self.pending.clear();
        self.chunks.cancel();
    }
}
