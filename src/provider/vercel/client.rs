//! One method per Vercel Sandbox REST endpoint we use, over a [`Fetcher`].
//!
//! Source: `shared/reference/vercel-sandbox-protocol.md` §1 (transport), §5 (retries), §7
//! (endpoints), §8 (NDJSON). The token is sent only to the configured base URL and never appears
//! in an error.

use gloo_net::http::Response;
use web_sys::AbortSignal;

use crate::command::{Command, CommandOutcome, OutputTail};
use crate::error::{Error, ErrorCode, Operation, Result};
use crate::http::fetch::{body_bytes, BodyChunks, Fetcher, HttpRequest, SendError};
use crate::http::ndjson::NdjsonReader;
use crate::http::retry::{RequestSafety, RetryPolicy};
use crate::provider::vercel::options::VercelEndpoint;
use crate::provider::vercel::wire::{
    self, CommandStreamLine, CreateSandboxRequest, ReadFileRequest, RunCommandRequest, SandboxAndSessionResponse,
};
use crate::provider::ProviderKind;

/// A Vercel Sandbox REST client.
#[derive(Debug, Clone)]
pub struct VercelClient {
    endpoint: VercelEndpoint,
    fetcher: Fetcher,
    retry: RetryPolicy,
    kind: ProviderKind,
}

impl VercelClient {
    /// A client for `endpoint`, reporting errors as provider `kind` (`vercel` or `local`).
    pub fn new(endpoint: VercelEndpoint, fetcher: Fetcher, kind: ProviderKind) -> VercelClient {
        VercelClient { endpoint, fetcher, retry: RetryPolicy::default(), kind }
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

    fn request(&self, method: &'static str, path: &str, content_type: &str, body: Option<Vec<u8>>) -> HttpRequest {
        let mut headers = vec![("content-type", content_type.to_owned())];
        if !self.endpoint.token.is_empty() {
            headers.push(("authorization", format!("Bearer {}", self.endpoint.token)));
        }
        HttpRequest { method, url: self.url(path), headers, body }
    }

    fn json_request(&self, method: &'static str, path: &str, body: &impl serde::Serialize) -> Result<HttpRequest> {
        let body = serde_json::to_vec(body)
            .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("cannot encode a request body: {e}")))?;
        Ok(self.request(method, path, "application/json", Some(body)))
    }

    fn error(&self, operation: Operation, message: String) -> Error {
        let message = crate::error::redact(&message, &[self.endpoint.token.as_str()]);
        Error::new(ErrorCode::TransportError, message).with_provider(self.kind).with_operation(operation)
    }

    fn send_error(&self, operation: Operation, error: SendError) -> Error {
        self.error(operation, format!("{} request to the {} provider failed: {}", operation.as_str(), self.kind.as_str(), error.describe()))
    }

    /// Sends and turns any non-2xx answer into an error: 429/503 → `SANDBOX_PROVIDER_UNAVAILABLE`,
    /// others → `SANDBOX_TRANSPORT_ERROR`, with the upstream status and its `error.message`.
    async fn send(
        &self,
        request: &HttpRequest,
        safety: RequestSafety,
        operation: Operation,
        signal: Option<&AbortSignal>,
    ) -> Result<Response> {
        let response = self
            .fetcher
            .send(request, &self.retry, safety, signal)
            .await
            .map_err(|e| self.send_error(operation, e))?;
        if response.ok() {
            return Ok(response);
        }
        Err(self.status_error(operation, &response).await)
    }

    async fn status_error(&self, operation: Operation, response: &Response) -> Error {
        let status = response.status();
        let body = body_bytes(response).await.unwrap_or_default();
        let detail = wire::error_message(&body).map(|m| format!(": {m}")).unwrap_or_default();
        let code = if status == 429 || status == 503 { ErrorCode::ProviderUnavailable } else { ErrorCode::TransportError };
        let retry_after = response.headers().get("retry-after");
        let mut error = self.error(operation, format!("{} answered {status} to {}{detail}", self.kind.as_str(), operation.as_str()));
        error = Error::new(code, error.message().to_owned())
            .with_provider(self.kind)
            .with_operation(operation)
            .with_status(status);
        if let Some(ms) = retry_after.as_deref().and_then(crate::http::retry::parse_retry_after_ms) {
            error = error.with_retry_after_ms(ms);
        }
        error
    }

    async fn json<T: serde::de::DeserializeOwned>(&self, response: &Response, operation: Operation) -> Result<T> {
        let bytes = body_bytes(response).await.map_err(|e| self.send_error(operation, e))?;
        let bytes = if bytes.is_empty() { b"{}".to_vec() } else { bytes };
        serde_json::from_slice(&bytes).map_err(|e| {
            self.error(operation, format!("{} answered {} with an unexpected body: {e}", self.kind.as_str(), operation.as_str()))
        })
    }

    /// Creates a Box. `POST /v3/sandboxes`, or `POST /v2/sandboxes` when a legacy `runtime` is set.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` (see `send`).
    pub async fn create_sandbox(&self, body: &CreateSandboxRequest, signal: Option<&AbortSignal>) -> Result<SandboxAndSessionResponse> {
        let path = if body.runtime.is_some() { "/v2/sandboxes" } else { "/v3/sandboxes" };
        let request = self.json_request("POST", path, body)?;
        let response = self.send(&request, RequestSafety::Idempotent, Operation::Create, signal).await?;
        self.json(&response, Operation::Create).await
    }

    /// Writes one gzip'd tar archive, extracted at `/`. `POST /v2/sandboxes/sessions/{id}/fs/write`
    /// with `content-type: application/gzip` and `x-cwd: /`.
    pub async fn write_files(&self, session_id: &str, tar_gz: Vec<u8>, signal: Option<&AbortSignal>) -> Result<()> {
        let mut request = self.request("POST", &format!("/v2/sandboxes/sessions/{session_id}/fs/write"), "application/gzip", Some(tar_gz));
        request.headers.push(("x-cwd", "/".to_owned()));
        self.send(&request, RequestSafety::Idempotent, Operation::Write, signal).await?;
        Ok(())
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
        let body = RunCommandRequest {
            command: command.program.clone(),
            args: command.args.clone(),
            cwd: command.cwd.clone(),
            env: command.env.clone(),
            sudo: false,
            wait: Some(true),
            logs: Some(true),
            timeout: command.timeout_ms,
        };
        let request = self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/cmd"), &body)?;
        let response = self.send(&request, RequestSafety::NonIdempotent, Operation::Exec, signal).await?;
        let content_type = response.headers().get("content-type").unwrap_or_default();
        if !crate::http::media_type::media_type_is(&content_type, "application/x-ndjson") {
            return Err(self.error(Operation::Exec, format!("expected a stream of command data, got content-type {content_type:?}")));
        }
        let mut chunks = BodyChunks::new(&response).map_err(|e| self.send_error(Operation::Exec, e))?;
        let result = self
            .read_command_stream(&mut chunks, command)
            .await
            .map_err(|e| e.with_provider(self.kind).with_operation(Operation::Exec));
        chunks.cancel();
        result
    }

    async fn read_command_stream(&self, chunks: &mut BodyChunks, command: &Command) -> Result<CommandOutcome> {
        let mut reader = NdjsonReader::default();
        let mut stdout = OutputTail::new(command.max_stdout_bytes);
        let mut stderr = OutputTail::new(command.max_stderr_bytes);
        // A malformed line is counted and skipped (a result framed in stdout survives it); only
        // its number is ever reported, never its content.
        let mut line_number = 0u64;
        let mut malformed: Option<(u64, u64)> = None;
        loop {
            let chunk = chunks.next_chunk().await.map_err(|e| self.send_error(Operation::Exec, e))?;
            let (lines, ended) = match chunk {
                Some(bytes) => (reader.push(&bytes)?, false),
                None => (std::mem::take(&mut reader).finish()?.into_iter().collect(), true),
            };
            for line in &lines {
                line_number += 1;
                let Ok(parsed) = wire::parse_command_stream_line(line) else {
                    let (count, first) = malformed.unwrap_or((0, line_number));
                    malformed = Some((count + 1, first));
                    continue;
                };
                match parsed {
                    CommandStreamLine::Stdout(text) => stdout.push(&text),
                    CommandStreamLine::Stderr(text) => stderr.push(&text),
                    CommandStreamLine::Error { code, message } => {
                        return Err(self.error(Operation::Exec, format!("the command stream failed: {code}: {message}")));
                    }
                    CommandStreamLine::Command(info) => {
                        if let Some(exit_code) = info.exit_code {
                            return Ok(CommandOutcome { exit_code, stdout: stdout.into_string(), stderr: stderr.into_string() });
                        }
                    }
                }
            }
            if ended {
                let skipped = malformed
                    .map(|(count, first)| format!(" ({count} malformed line(s) skipped, the first at line {first})"))
                    .unwrap_or_default();
                return Err(self.error(Operation::Exec, format!("the command stream ended before the command finished{skipped}")));
            }
        }
    }

    /// Reads a file. `POST /v2/sandboxes/sessions/{id}/fs/read`; `None` when the file is missing (404).
    pub async fn read_file(&self, session_id: &str, path: &str, signal: Option<&AbortSignal>) -> Result<Option<Vec<u8>>> {
        let body = ReadFileRequest { path: path.to_owned(), cwd: None };
        let request = self.json_request("POST", &format!("/v2/sandboxes/sessions/{session_id}/fs/read"), &body)?;
        let response = self
            .fetcher
            .send(&request, &self.retry, RequestSafety::Idempotent, signal)
            .await
            .map_err(|e| self.send_error(Operation::Read, e))?;
        if response.status() == 404 {
            return Ok(None);
        }
        if !response.ok() {
            return Err(self.status_error(Operation::Read, &response).await);
        }
        body_bytes(&response).await.map(Some).map_err(|e| self.send_error(Operation::Read, e))
    }

    /// Stops the Box. `POST /v2/sandboxes/sessions/{id}/stop` (empty body, JSON content type).
    pub async fn stop_session(&self, session_id: &str, signal: Option<&AbortSignal>) -> Result<()> {
        let request = self.request("POST", &format!("/v2/sandboxes/sessions/{session_id}/stop"), "application/json", None);
        self.send(&request, RequestSafety::Idempotent, Operation::Stop, signal).await?;
        Ok(())
    }

    /// Snapshots a session, which stops it. `POST /v2/sandboxes/sessions/{id}/snapshot`, no body
    /// (§7.5); the id of `{snapshot: {id}}`.
    pub async fn snapshot_session(&self, session_id: &str) -> Result<String> {
        let request = self.request("POST", &format!("/v2/sandboxes/sessions/{session_id}/snapshot"), "application/json", None);
        let response = self.send(&request, RequestSafety::NonIdempotent, Operation::Snapshot, None).await?;
        let body = body_bytes(&response).await.map_err(|e| self.send_error(Operation::Snapshot, e))?;
        wire::snapshot_id(&body).ok_or_else(|| self.error(Operation::Snapshot, format!("{} answered a snapshot without an id", self.kind.as_str())))
    }

    /// Lists snapshots, newest first, one page of up to 100, of the sandbox `name` when given:
    /// `GET /v2/sandboxes/snapshots?project=<p>&name=<n>&limit=100` → `(id, sizeBytes, createdAt)`.
    pub async fn list_snapshots(&self, project_id: Option<&str>, name: Option<&str>) -> Result<Vec<(String, u64, u64)>> {
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
        let response = self.send(&request, RequestSafety::Idempotent, Operation::Snapshot, None).await?;
        let value: serde_json::Value = self.json(&response, Operation::Snapshot).await?;
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

    /// Deletes a snapshot. `DELETE /v2/sandboxes/snapshots/{id}`; `false` on 404.
    pub async fn delete_snapshot(&self, id: &str) -> Result<bool> {
        let request = self.request("DELETE", &format!("/v2/sandboxes/snapshots/{id}"), "application/json", None);
        let response = self
            .fetcher
            .send(&request, &self.retry, RequestSafety::Idempotent, None)
            .await
            .map_err(|e| self.send_error(Operation::Snapshot, e))?;
        if response.status() == 404 {
            return Ok(false);
        }
        if !response.ok() {
            return Err(self.status_error(Operation::Snapshot, &response).await);
        }
        Ok(true)
    }
}
