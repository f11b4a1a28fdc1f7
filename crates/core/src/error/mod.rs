//! The crate's one error type: [`Error`] with a stable [`ErrorCode`], its HTTP status and the
//! public JSON body of a failed Run.
//!
//! Owned by no layer in particular: every layer returns [`Result`]. This module is pure (no JS
//! types); turning an [`Error`] into a JS `Error` or a Web `Response` happens at the wasm edge.
//! It must not classify errors by message text, and it never puts secrets, host paths or stack
//! traces into a public body (callers scrub text with [`redact`]).
//!
//! Source: DESIGN.md §5 (Response contract), STYLE.md §2.4 (Error type).

use crate::provider_kind::ProviderKind;
use serde_json::{Map, Value};
use std::fmt;

mod redact;

pub use redact::redact;

/// The header of every failure Response the runtime makes, holding its `SANDBOX_*` code. A
/// Response a Definition returns never carries it (the runtime removes it from the entry's
/// headers), so it tells the package's own errors from an entry's answer of the same shape.
pub const ERROR_HEADER: &str = "x-vite-hub-sandbox-error";

/// Upper bound of a public error message, in bytes (16 KiB), including the `…` marker.
pub const MAX_MESSAGE_BYTES: usize = 16_384;

/// The stable `SANDBOX_*` error codes of a failed Run.
///
/// Codes are never renamed once shipped; new ones are added instead. The status of each code is
/// fixed by [`ErrorCode::http_status`] (an exhaustive match).
///
/// Source: DESIGN.md §5 table.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `SANDBOX_INVALID_ARGUMENT`, 400: bad options, a bad Definition name or Definition files,
    /// an invalid payload or context.
    InvalidArgument,
    /// `SANDBOX_SERIALIZATION_ERROR`, 400 for input / 500 for output: a value is not
    /// JSON-serializable (cycle, bigint, function, symbol, non-finite number).
    SerializationError,
    /// `SANDBOX_TRANSFER_LIMIT`, 413 for input / 500 for output: a transfer exceeded
    /// `maxInputBytes`, `maxOutputBytes`, `maxDepth`, `maxSidecars` or `maxSidecarBytes`.
    TransferLimit,
    /// `SANDBOX_NOT_FOUND`, 500: no Definition has the requested name (the message names it).
    NotFound,
    /// `SANDBOX_PROVIDER_REQUIRED`, 500: no Provider could be chosen from config or environment.
    ProviderRequired,
    /// `SANDBOX_HANDLER_ERROR`, 500: the Definition's entry threw or rejected (the message is its
    /// bounded message).
    HandlerError,
    /// `SANDBOX_EXECUTION_ERROR`, 500: package install or staging failed inside the Box.
    ExecutionError,
    /// `SANDBOX_RUNTIME_ERROR`, 500: anything else, including a failed cleanup.
    RuntimeError,
    /// `SANDBOX_NOT_SUPPORTED`, 501: the Provider cannot perform the operation.
    NotSupported,
    /// `SANDBOX_TRANSPORT_ERROR`, 502: the Provider answered badly or the connection failed.
    TransportError,
    /// `SANDBOX_PROVIDER_UNAVAILABLE`, 503: Provider capacity or startup still failing after
    /// bounded retries.
    ProviderUnavailable,
    /// `SANDBOX_TIMEOUT`, 504: one attempt exceeded its timeout; the Box process was killed.
    Timeout,
    /// `SANDBOX_INVALID_STATE`, 409: the operation does not fit the handle's state (a Session
    /// used after `close()`, or whose Box lifetime ran out).
    InvalidState,
    /// `SANDBOX_PROVIDER_AUTH`, 500: the provider refused the configured credentials (it answered
    /// 401 or 403, `details.status`): a wrong or expired token is the app's configuration, so the
    /// Run is not retried and the caller sees a server fault, not an auth challenge.
    ProviderAuth,
}

impl ErrorCode {
    /// Every code, in declaration order (for tables and tests).
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::InvalidArgument,
        ErrorCode::SerializationError,
        ErrorCode::TransferLimit,
        ErrorCode::NotFound,
        ErrorCode::ProviderRequired,
        ErrorCode::HandlerError,
        ErrorCode::ExecutionError,
        ErrorCode::RuntimeError,
        ErrorCode::NotSupported,
        ErrorCode::TransportError,
        ErrorCode::ProviderUnavailable,
        ErrorCode::Timeout,
        ErrorCode::InvalidState,
        ErrorCode::ProviderAuth,
    ];

    /// The stable code string, e.g. `"SANDBOX_INVALID_ARGUMENT"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "SANDBOX_INVALID_ARGUMENT",
            ErrorCode::SerializationError => "SANDBOX_SERIALIZATION_ERROR",
            ErrorCode::TransferLimit => "SANDBOX_TRANSFER_LIMIT",
            ErrorCode::NotFound => "SANDBOX_NOT_FOUND",
            ErrorCode::ProviderRequired => "SANDBOX_PROVIDER_REQUIRED",
            ErrorCode::HandlerError => "SANDBOX_HANDLER_ERROR",
            ErrorCode::ExecutionError => "SANDBOX_EXECUTION_ERROR",
            ErrorCode::RuntimeError => "SANDBOX_RUNTIME_ERROR",
            ErrorCode::NotSupported => "SANDBOX_NOT_SUPPORTED",
            ErrorCode::TransportError => "SANDBOX_TRANSPORT_ERROR",
            ErrorCode::ProviderUnavailable => "SANDBOX_PROVIDER_UNAVAILABLE",
            ErrorCode::Timeout => "SANDBOX_TIMEOUT",
            ErrorCode::InvalidState => "SANDBOX_INVALID_STATE",
            ErrorCode::ProviderAuth => "SANDBOX_PROVIDER_AUTH",
        }
    }

    /// Parses a stable code string (the inverse of [`ErrorCode::as_str`]); `None` when unknown.
    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|code| code.as_str() == s)
    }

    /// The HTTP status of the code. For `SerializationError` and `TransferLimit` this is the
    /// *input* status (400, 413); [`Error::http_status`] gives 500 for output-side errors.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidArgument => 400,
            ErrorCode::SerializationError => 400,
            ErrorCode::TransferLimit => 413,
            ErrorCode::NotFound => 500,
            ErrorCode::ProviderRequired => 500,
            ErrorCode::HandlerError => 500,
            ErrorCode::ExecutionError => 500,
            ErrorCode::RuntimeError => 500,
            ErrorCode::NotSupported => 501,
            ErrorCode::TransportError => 502,
            ErrorCode::ProviderUnavailable => 503,
            ErrorCode::Timeout => 504,
            ErrorCode::InvalidState => 409,
            ErrorCode::ProviderAuth => 500,
        }
    }

    /// The fixed public message used when an error's own message is empty.
    pub fn default_message(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "The sandbox request is invalid.",
            ErrorCode::SerializationError => "Sandbox values must be JSON-serializable.",
            ErrorCode::TransferLimit => "The sandbox transfer limit was exceeded.",
            ErrorCode::NotFound => "The sandbox Definition was not found.",
            ErrorCode::ProviderRequired => "No sandbox provider could be chosen; set `provider` in the sandbox config.",
            ErrorCode::HandlerError => "Sandbox execution failed.",
            ErrorCode::ExecutionError => "Sandbox package installation or staging failed.",
            ErrorCode::RuntimeError => "Sandbox execution failed.",
            ErrorCode::NotSupported => "The operation is not supported by this sandbox provider.",
            ErrorCode::TransportError => "The sandbox provider request failed.",
            ErrorCode::ProviderUnavailable => "The sandbox provider is unavailable.",
            ErrorCode::Timeout => "The sandbox run timed out.",
            ErrorCode::InvalidState => "The sandbox handle is not in a state that allows this operation.",
            ErrorCode::ProviderAuth => "The sandbox provider refused the configured credentials.",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way a value was travelling when a transfer error happened.
///
/// Serialization and transfer-limit errors about the *result* (`Output`) are server faults
/// (500); about the payload or context (`Input`) they are client faults (400 / 413).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Payload or context going into the Box (the default).
    #[default]
    Input,
    /// The result coming out of the Box.
    Output,
}

/// The provider-facing step that failed; public as `details.operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Creating (opening) a Box.
    Create,
    /// Writing files into a Box.
    Write,
    /// Executing a Command in a Box.
    Exec,
    /// Installing the Definition's packages.
    Install,
    /// Reading a file from a Box.
    Read,
    /// Stopping (closing) a Box.
    Stop,
    /// Staging the Definition and envelope into a Box.
    Stage,
    /// Resolving config, Provider or Definition before any Box exists.
    Resolve,
    /// Taking, listing or deleting a snapshot (a prepared project).
    Snapshot,
    /// Creating a directory in a Box (a Session's `mkdir`).
    Mkdir,
    /// Removing a file or tree in a Box (a Session's `remove`).
    Remove,
    /// Writing to or closing a Command's stdin (a Session process's `writeStdin`/`closeStdin`).
    Stdin,
    /// Moving a Box's end of lifetime later (a Session's `extendTimeout`).
    ExtendTimeout,
    /// Changing a running Box's network policy (a Session's `updateNetworkPolicy`).
    UpdateNetworkPolicy,
    /// Reattaching to a running Box by its id (`openSandboxSession({ id })`).
    Attach,
    /// Listing the provider's Boxes (`listSandboxSessions()`).
    ListSessions,
}

impl Operation {
    /// The stable lowercase name, e.g. `"create"`, `"exec"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Write => "write",
            Operation::Exec => "exec",
            Operation::Install => "install",
            Operation::Read => "read",
            Operation::Stop => "stop",
            Operation::Stage => "stage",
            Operation::Resolve => "resolve",
            Operation::Snapshot => "snapshot",
            Operation::Mkdir => "mkdir",
            Operation::Remove => "remove",
            Operation::Stdin => "stdin",
            Operation::ExtendTimeout => "extendTimeout",
            Operation::UpdateNetworkPolicy => "updateNetworkPolicy",
            Operation::Attach => "attach",
            Operation::ListSessions => "listSandboxSessions",
        }
    }
}

/// Typed public details of an [`Error`]; each field maps to one allowlisted JSON key.
///
/// Shape (JSON, absent when `None`):
/// ```ts
/// { status?: number, timeoutMs?: number, exitCode?: number, limit?: string, value?: number, maximum?: number,
///   stdout?: string, stderr?: string, name?: string, stack?: string }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details {
    /// Upstream HTTP status of the Provider response (`status`).
    pub status: Option<u16>,
    /// Timeout that was exceeded, in ms (`timeoutMs`).
    pub timeout_ms: Option<u64>,
    /// Exit code of the failed Command (`exitCode`).
    pub exit_code: Option<i32>,
    /// Name of the exceeded transfer limit, e.g. `"maxInputBytes"` (`limit`).
    pub limit: Option<String>,
    /// Measured value for `limit` (bytes, depth or count) (`value`).
    pub value: Option<u64>,
    /// Configured maximum for `limit` (`maximum`).
    pub maximum: Option<u64>,
    /// The last [`OUTPUT_TAIL_BYTES`] of a failed Command's stdout (`stdout`).
    pub stdout: Option<String>,
    /// The last [`OUTPUT_TAIL_BYTES`] of a failed Command's stderr (`stderr`).
    pub stderr: Option<String>,
    /// The `name` of the value the entry threw, e.g. `"TypeError"` (`name`).
    pub name: Option<String>,
    /// The stack of the error the entry threw, as the Box printed it (`stack`; Box paths only).
    pub stack: Option<String>,
}

/// Bytes of each output stream a failed Command's error keeps (the last ones; 4 KiB).
pub const OUTPUT_TAIL_BYTES: usize = 4096;

impl Details {
    fn is_empty(&self) -> bool {
        self == &Details::default()
    }
}

#[derive(Debug)]
struct Inner {
    code: ErrorCode,
    message: String,
    provider: Option<ProviderKind>,
    operation: Option<Operation>,
    direction: Direction,
    upstream_status: Option<u16>,
    retry_after_ms: Option<u64>,
    details: Details,
    source: Option<Box<dyn std::error::Error + 'static>>,
}

/// The crate's error: a code, a message and optional provider, operation, details and cause.
///
/// Built with [`Error::new`] and the `with_*` builders; never from a bare string.
#[derive(Debug)]
pub struct Error {
    inner: Box<Inner>,
}

/// `Result` with the crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The same error without its `source` (an error kept in a resolved config is handed to each
    /// Run that needs it; the source chain stays with the original).
    pub fn to_public(&self) -> Error {
        let inner = &self.inner;
        Error {
            inner: Box::new(Inner {
                code: inner.code,
                message: inner.message.clone(),
                provider: inner.provider,
                operation: inner.operation,
                direction: inner.direction,
                upstream_status: inner.upstream_status,
                retry_after_ms: inner.retry_after_ms,
                details: inner.details.clone(),
                source: None,
            }),
        }
    }

    /// A new error with `code` and `message` (kept as given; bounded only in the public body).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            inner: Box::new(Inner {
                code,
                message: message.into(),
                provider: None,
                operation: None,
                direction: Direction::Input,
                upstream_status: None,
                retry_after_ms: None,
                details: Details::default(),
                source: None,
            }),
        }
    }

    /// Sets the Provider involved (public as `details.provider`).
    pub fn with_provider(mut self, provider: ProviderKind) -> Error {
        self.inner.provider = Some(provider);
        self
    }

    /// Sets the operation that failed (public as `details.operation`).
    pub fn with_operation(mut self, operation: Operation) -> Error {
        self.inner.operation = Some(operation);
        self
    }

    /// Sets the upstream HTTP status of the Provider response (also `details.status`).
    pub fn with_status(mut self, status: u16) -> Error {
        self.inner.upstream_status = Some(status);
        self.inner.details.status = Some(status);
        self
    }

    /// Sets the timeout that was exceeded, in ms (`details.timeoutMs`).
    pub fn with_timeout_ms(mut self, timeout_ms: u64) -> Error {
        self.inner.details.timeout_ms = Some(timeout_ms);
        self
    }

    /// Sets the exit code of the failed Command (`details.exitCode`).
    pub fn with_exit_code(mut self, exit_code: i32) -> Error {
        self.inner.details.exit_code = Some(exit_code);
        self
    }

    /// Keeps the last [`OUTPUT_TAIL_BYTES`] of a failed Command's stdout and stderr
    /// (`details.stdout`, `details.stderr`; an empty stream is left out), so a failure explains
    /// itself. Box output holds no host secret; callers strip anything of their own protocol.
    pub fn with_output_tails(mut self, stdout: &str, stderr: &str) -> Error {
        let keep = |text: &str| {
            Some(crate::command::last_bytes(text, OUTPUT_TAIL_BYTES).to_owned()).filter(|t| !t.trim().is_empty())
        };
        self.inner.details.stdout = keep(stdout);
        self.inner.details.stderr = keep(stderr);
        self
    }

    /// Drops the thrown error's `stack` (`details.stack`), keeping its `name` and message: a
    /// handler error's Response outside `configureSandbox({ debug: true })`.
    pub fn without_stack(mut self) -> Error {
        self.inner.details.stack = None;
        self
    }

    /// Keeps what the entry threw: its error `name` and `stack` (`details.name`, `details.stack`;
    /// the stack is bounded to [`OUTPUT_TAIL_BYTES`] from its start).
    pub fn with_thrown(mut self, name: Option<String>, stack: Option<String>) -> Error {
        self.inner.details.name = name.filter(|n| !n.is_empty()).map(|n| bound_message(&n));
        self.inner.details.stack = stack.filter(|s| !s.trim().is_empty()).map(|s| {
            let mut end = s.len().min(OUTPUT_TAIL_BYTES);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s[..end].to_owned()
        });
        self
    }

    /// Sets the exceeded limit: its name (e.g. `"maxOutputBytes"`), the measured value and the
    /// maximum (`details.limit`, `details.value`, `details.maximum`).
    pub fn with_limit(mut self, name: &str, value: u64, maximum: u64) -> Error {
        self.inner.details.limit = Some(name.to_owned());
        self.inner.details.value = Some(value);
        self.inner.details.maximum = Some(maximum);
        self
    }

    /// Marks the error as concerning the result ([`Direction::Output`]): serialization and
    /// transfer-limit errors then have status 500.
    pub fn for_output(mut self) -> Error {
        self.inner.direction = Direction::Output;
        self
    }

    /// Sets the Provider's `Retry-After`, in ms.
    pub fn with_retry_after_ms(mut self, retry_after_ms: u64) -> Error {
        self.inner.retry_after_ms = Some(retry_after_ms);
        self
    }

    /// Keeps `source` as the cause (returned by [`std::error::Error::source`], never public).
    pub fn with_source(mut self, source: impl std::error::Error + 'static) -> Error {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// The error code.
    pub fn code(&self) -> ErrorCode {
        self.inner.code
    }

    /// The message as given (may be empty, unbounded; see [`Error::public_message`]).
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The public message: bounded to [`MAX_MESSAGE_BYTES`], or the code's default when empty.
    pub fn public_message(&self) -> String {
        if self.inner.message.is_empty() {
            self.inner.code.default_message().to_owned()
        } else {
            bound_message(&self.inner.message)
        }
    }

    /// The HTTP status of the failed Run: the code's status, except 500 for
    /// `SerializationError` / `TransferLimit` about the result ([`Direction::Output`]).
    pub fn http_status(&self) -> u16 {
        match (self.inner.code, self.inner.direction) {
            (ErrorCode::SerializationError | ErrorCode::TransferLimit, Direction::Output) => 500,
            (code, _) => code.http_status(),
        }
    }

    /// Which way the value was travelling ([`Direction::Input`] unless [`Error::for_output`]).
    pub fn direction(&self) -> Direction {
        self.inner.direction
    }

    /// The Provider involved, if known.
    pub fn provider(&self) -> Option<ProviderKind> {
        self.inner.provider
    }

    /// The operation that failed, if known.
    pub fn operation(&self) -> Option<Operation> {
        self.inner.operation
    }

    /// The typed public details.
    pub fn details(&self) -> &Details {
        &self.inner.details
    }

    /// The upstream HTTP status, if the error came from a Provider response.
    pub fn upstream_status(&self) -> Option<u16> {
        self.inner.upstream_status
    }

    /// The Provider's `Retry-After`, in ms, if known.
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.inner.retry_after_ms
    }

    /// Whether retrying the same request may succeed: with an upstream status, only 429 and
    /// 5xx; without one, `TransportError` (connection failed) and `ProviderUnavailable`.
    pub fn is_retryable(&self) -> bool {
        match self.inner.upstream_status {
            Some(status) => status == 429 || (500..=599).contains(&status),
            None => matches!(self.inner.code, ErrorCode::TransportError | ErrorCode::ProviderUnavailable),
        }
    }

    /// The public JSON body of a failed Run.
    ///
    /// Shape:
    /// ```ts
    /// { error: { code: "SANDBOX_…", message: string, details?: { operation?, provider?, status?,
    ///   timeoutMs?, exitCode?, limit?, value?, maximum? } } }
    /// ```
    /// `details` is present only when non-empty and holds only the allowlisted keys; the message
    /// is [`Error::public_message`]. No source, stack or upstream body is included.
    pub fn to_json_body(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), Value::from(self.inner.code.as_str()));
        error.insert("message".into(), Value::from(self.public_message()));
        let details = self.public_details();
        if !details.is_empty() {
            error.insert("details".into(), Value::Object(details));
        }
        let mut body = Map::new();
        body.insert("error".into(), Value::Object(error));
        Value::Object(body)
    }

    fn public_details(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if let Some(operation) = self.inner.operation {
            out.insert("operation".into(), Value::from(operation.as_str()));
        }
        if let Some(provider) = self.inner.provider {
            out.insert("provider".into(), Value::from(provider.as_str()));
        }
        let d = &self.inner.details;
        if d.is_empty() {
            return out;
        }
        if let Some(status) = d.status {
            out.insert("status".into(), Value::from(status));
        }
        if let Some(timeout_ms) = d.timeout_ms {
            out.insert("timeoutMs".into(), Value::from(timeout_ms));
        }
        if let Some(exit_code) = d.exit_code {
            out.insert("exitCode".into(), Value::from(exit_code));
        }
        if let Some(limit) = &d.limit {
            out.insert("limit".into(), Value::from(bound_message(limit)));
        }
        if let Some(value) = d.value {
            out.insert("value".into(), Value::from(value));
        }
        if let Some(maximum) = d.maximum {
            out.insert("maximum".into(), Value::from(maximum));
        }
        if let Some(stdout) = &d.stdout {
            out.insert("stdout".into(), Value::from(stdout.as_str()));
        }
        if let Some(stderr) = &d.stderr {
            out.insert("stderr".into(), Value::from(stderr.as_str()));
        }
        if let Some(name) = &d.name {
            out.insert("name".into(), Value::from(name.as_str()));
        }
        if let Some(stack) = &d.stack {
            out.insert("stack".into(), Value::from(stack.as_str()));
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inner.message.is_empty() {
            f.write_str(self.inner.code.default_message())
        } else {
            f.write_str(&self.inner.message)
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.source.as_deref()
    }
}

/// Bounds `text` to [`MAX_MESSAGE_BYTES`] bytes: longer text is cut at a char boundary and ends
/// with `…` (the result, marker included, is at most 16 384 bytes).
pub fn bound_message(text: &str) -> String {
    if text.len() <= MAX_MESSAGE_BYTES {
        return text.to_owned();
    }
    const MARKER: &str = "…";
    let mut end = MAX_MESSAGE_BYTES - MARKER.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::with_capacity(end + MARKER.len());
    out.push_str(&text[..end]);
    out.push_str(MARKER);
    out
}

/// A text as a JSON string literal, for messages (`a"b` → `"a\"b"`): names, paths and values
/// are quoted this way in every error message.
pub fn quoted(text: &str) -> String {
    Value::from(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quoted_is_a_json_string_literal() {
        assert_eq!(quoted("a\"b"), "\"a\\\"b\"");
    }

    #[test]
    fn without_stack_keeps_the_message_and_name() {
        let thrown = Error::new(ErrorCode::HandlerError, "boom")
            .with_thrown(Some("TypeError".into()), Some("TypeError: boom\n    at x".into()));
        assert_eq!(thrown.to_json_body()["error"]["details"]["stack"], json!("TypeError: boom\n    at x"));
        let body = thrown.without_stack().to_json_body();
        assert_eq!(body["error"]["message"], json!("boom"));
        assert_eq!(body["error"]["details"]["name"], json!("TypeError"));
        assert!(body["error"]["details"].get("stack").is_none(), "{body}");
    }

    #[test]
    fn code_table_snapshot() {
        let table: Vec<String> = ErrorCode::ALL.iter().map(|c| format!("{} {}", c.as_str(), c.http_status())).collect();
        assert_eq!(
            table.join("\n"),
            "SANDBOX_INVALID_ARGUMENT 400\n\
             SANDBOX_SERIALIZATION_ERROR 400\n\
             SANDBOX_TRANSFER_LIMIT 413\n\
             SANDBOX_NOT_FOUND 500\n\
             SANDBOX_PROVIDER_REQUIRED 500\n\
             SANDBOX_HANDLER_ERROR 500\n\
             SANDBOX_EXECUTION_ERROR 500\n\
             SANDBOX_RUNTIME_ERROR 500\n\
             SANDBOX_NOT_SUPPORTED 501\n\
             SANDBOX_TRANSPORT_ERROR 502\n\
             SANDBOX_PROVIDER_UNAVAILABLE 503\n\
             SANDBOX_TIMEOUT 504\n\
             SANDBOX_INVALID_STATE 409\n\
             SANDBOX_PROVIDER_AUTH 500"
        );
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            assert!(!code.default_message().is_empty());
        }
        assert_eq!(ErrorCode::parse("SANDBOX_EXEC_FAILED"), None);
    }

    #[test]
    fn operation_names() {
        let names: Vec<&str> = [
            Operation::Create,
            Operation::Write,
            Operation::Exec,
            Operation::Install,
            Operation::Read,
            Operation::Stop,
            Operation::Stage,
            Operation::Resolve,
        ]
        .iter()
        .map(|o| o.as_str())
        .collect();
        assert_eq!(names, ["create", "write", "exec", "install", "read", "stop", "stage", "resolve"]);
    }

    #[test]
    fn body_shape_without_details() {
        let err = Error::new(ErrorCode::NotFound, "Sandbox \"x\" was not found.");
        assert_eq!(
            err.to_json_body(),
            json!({"error": {"code": "SANDBOX_NOT_FOUND", "message": "Sandbox \"x\" was not found."}})
        );
        assert_eq!(err.http_status(), 500);
        assert_eq!(err.to_string(), "Sandbox \"x\" was not found.");
    }

    #[test]
    fn body_details_allowlist() {
        let err = Error::new(ErrorCode::TransportError, "upstream failed")
            .with_provider(ProviderKind::Vercel)
            .with_operation(Operation::Exec)
            .with_status(502)
            .with_timeout_ms(1000)
            .with_exit_code(3)
            .with_retry_after_ms(500)
            .with_source(std::io::Error::other("secret host path /home/x"));
        let body = err.to_json_body();
        assert_eq!(
            body,
            json!({"error": {"code": "SANDBOX_TRANSPORT_ERROR", "message": "upstream failed",
                "details": {"operation": "exec", "provider": "vercel", "status": 502,
                    "timeoutMs": 1000, "exitCode": 3}}})
        );
        let keys: Vec<&String> = body["error"]["details"].as_object().unwrap().keys().collect();
        for key in keys {
            assert!(["operation", "provider", "status", "timeoutMs", "exitCode", "limit", "value", "maximum"]
                .contains(&key.as_str()));
        }
        assert_eq!(err.retry_after_ms(), Some(500));
        assert_eq!(err.upstream_status(), Some(502));
        assert!(std::error::Error::source(&err).is_some());
        assert_eq!(err.to_string(), "upstream failed");
    }

    #[test]
    fn output_direction_is_500() {
        let input = Error::new(ErrorCode::TransferLimit, "too big").with_limit("maxInputBytes", 10, 5);
        assert_eq!(input.http_status(), 413);
        assert_eq!(input.direction(), Direction::Input);
        assert_eq!(
            input.to_json_body()["error"]["details"],
            json!({"limit": "maxInputBytes", "value": 10, "maximum": 5})
        );
        let output = Error::new(ErrorCode::TransferLimit, "too big").for_output();
        assert_eq!(output.http_status(), 500);
        assert_eq!(Error::new(ErrorCode::SerializationError, "x").http_status(), 400);
        assert_eq!(Error::new(ErrorCode::SerializationError, "x").for_output().http_status(), 500);
        assert_eq!(Error::new(ErrorCode::Timeout, "x").for_output().http_status(), 504);
    }

    #[test]
    fn message_is_bounded_at_a_char_boundary() {
        let long = "é".repeat(MAX_MESSAGE_BYTES);
        let err = Error::new(ErrorCode::HandlerError, long.clone());
        let body = err.to_json_body();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.len() <= MAX_MESSAGE_BYTES);
        assert!(message.len() > MAX_MESSAGE_BYTES - 8);
        assert!(message.ends_with("é…"));
        assert_eq!(err.message(), long);
        let exact = "a".repeat(MAX_MESSAGE_BYTES);
        assert_eq!(bound_message(&exact), exact);
    }

    #[test]
    fn empty_message_uses_default() {
        let err = Error::new(ErrorCode::HandlerError, "");
        assert_eq!(err.to_json_body()["error"]["message"], "Sandbox execution failed.");
        assert_eq!(err.to_string(), "Sandbox execution failed.");
        assert_eq!(Error::new(ErrorCode::RuntimeError, "").public_message(), "Sandbox execution failed.");
    }

    #[test]
    fn retryable_rules() {
        assert!(Error::new(ErrorCode::TransportError, "reset").is_retryable());
        assert!(Error::new(ErrorCode::ProviderUnavailable, "").is_retryable());
        assert!(Error::new(ErrorCode::TransportError, "").with_status(429).is_retryable());
        assert!(Error::new(ErrorCode::RuntimeError, "").with_status(503).is_retryable());
        assert!(!Error::new(ErrorCode::TransportError, "").with_status(400).is_retryable());
        assert!(!Error::new(ErrorCode::Timeout, "").is_retryable());
        assert!(!Error::new(ErrorCode::InvalidArgument, "").is_retryable());
    }

    #[test]
    fn output_tails_keep_the_last_4_kib_at_a_char_boundary_and_drop_empty_streams() {
        let stdout = format!("{}END", "é".repeat(OUTPUT_TAIL_BYTES));
        let error = Error::new(ErrorCode::HandlerError, "boom").with_output_tails(&stdout, "  \n");
        let body = error.to_json_body();
        let kept = body["error"]["details"]["stdout"].as_str().unwrap();
        assert!(kept.ends_with("END") && kept.len() <= OUTPUT_TAIL_BYTES, "{}", kept.len());
        assert!(body["error"]["details"].get("stderr").is_none());
    }
}
