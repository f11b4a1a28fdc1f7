//! Serde shapes of the Cloudflare Sandbox container control API routes we call, and of the one
//! Durable Object RPC argument we send (`configure`).
//!
//! Provider layer, pure. Mirrors `@cloudflare/sandbox` 0.12.10 (container server 0.12.7 source):
//! routes and bodies in cloudflare-sandbox-protocol.md §4.3, the error body in §4.1, the stream
//! events in §4.4, sessionless execution in §3.1 and §4.2, `configure` in §1.1 (step 4) and §2.1.
//! Upstream vocabulary (`sessionId`, `exitCode`, `httpStatus`) stays here.

use crate::env_map::EnvMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};

/// The reserved session id that makes the container run each command in a fresh `bash -c`
/// (no shell state, cwd `body.cwd`, env = container env + `body.env`; §4.2).
pub const NO_SESSION: &str = "__DISABLE_SESSION__";

/// `POST /api/execute` and `POST /api/execute/stream` request (§4.3).
///
/// ```ts
/// { command: string, sessionId: "__DISABLE_SESSION__", timeoutMs?: number,
///   env?: Record<string, string>, cwd?: string }
/// ```
/// `timeoutMs` is honoured by `/api/execute` only: the process group is killed and the answer is
/// a 200 with `exitCode: 124` (§5.2, §6.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteRequest {
    /// A `bash -c` command line.
    pub command: String,
    /// Always [`NO_SESSION`] here.
    pub session_id: &'static str,
    /// Kill the command after this many ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Extra environment variables.
    #[serde(skip_serializing_if = "EnvMap::is_empty")]
    pub env: EnvMap,
    /// Working directory (absolute container path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// `POST /api/execute` answer (a non-zero exit is a 200 with `success: false`).
///
/// ```ts
/// { success: boolean, exitCode: number, stdout: string, stderr: string, command: string,
///   duration: number, timestamp: string, sessionId?: string }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteResponse {
    /// The exit status.
    pub exit_code: i32,
    /// Whole stdout.
    pub stdout: String,
    /// Whole stderr.
    pub stderr: String,
}

/// A JSON object from bytes, or why not (serde's words).
fn object(bytes: &[u8]) -> std::result::Result<Map<String, Value>, String> {
    serde_json::from_slice(bytes).map_err(|e| e.to_string())
}

fn string(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn exit_code(map: &Map<String, Value>) -> Option<i32> {
    map.get("exitCode").and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok())
}

impl ExecuteResponse {
    /// Reads the answer; `exitCode` is required, missing outputs are empty.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` naming what is wrong.
    pub fn from_slice(bytes: &[u8]) -> Result<ExecuteResponse> {
        let bad = |why: String| {
            Error::new(
                ErrorCode::TransportError,
                format!("the container answered the command with an unexpected body: {why}"),
            )
        };
        let map = object(bytes).map_err(bad)?;
        let exit_code = exit_code(&map).ok_or_else(|| bad("no integer exitCode".into()))?;
        Ok(ExecuteResponse {
            exit_code,
            stdout: string(&map, "stdout").unwrap_or_default(),
            stderr: string(&map, "stderr").unwrap_or_default(),
        })
    }
}

/// One event of `/api/execute/stream` (§4.4): `start`, then `stdout`/`stderr` chunks, then
/// `complete` (or `error`), each a JSON `data:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecEvent {
    /// The command started.
    Start,
    /// A chunk of stdout.
    Stdout(String),
    /// A chunk of stderr.
    Stderr(String),
    /// The command ended; the exit status is missing when the process ended in state `error`.
    Complete(Option<i32>),
    /// The stream failed (the container's `error` or `data` text).
    Error(String),
}

/// Parses one SSE `data:` payload of `/api/execute/stream`
/// (`{ type, data?, exitCode?, error?, timestamp }`); an unknown `type` is `None`.
///
/// # Errors
/// `SANDBOX_TRANSPORT_ERROR` when the payload is not a JSON object with a string `type`.
pub fn parse_exec_event(data: &str) -> Result<Option<ExecEvent>> {
    let bad = |why: String| {
        Error::new(ErrorCode::TransportError, format!("the container sent a malformed stream event: {why}"))
    };
    let map = object(data.as_bytes()).map_err(bad)?;
    let kind = string(&map, "type").ok_or_else(|| bad("no string type".into()))?;
    Ok(match kind.as_str() {
        "start" => Some(ExecEvent::Start),
        "stdout" => Some(ExecEvent::Stdout(string(&map, "data").unwrap_or_default())),
        "stderr" => Some(ExecEvent::Stderr(string(&map, "data").unwrap_or_default())),
        "complete" => Some(ExecEvent::Complete(exit_code(&map))),
        "error" => Some(ExecEvent::Error(string(&map, "error").or_else(|| string(&map, "data")).unwrap_or_default())),
        _ => None,
    })
}

/// The `processId` of a `POST /api/process/start` answer (`{ processId, pid?, command }`; the
/// request is an [`ExecuteRequest`], the same fields).
///
/// # Errors
/// `SANDBOX_TRANSPORT_ERROR` when the answer has no string `processId`.
pub fn process_started(bytes: &[u8]) -> Result<String> {
    let bad = |why: String| {
        Error::new(
            ErrorCode::TransportError,
            format!("the container answered process/start with an unexpected body: {why}"),
        )
    };
    let map = object(bytes).map_err(bad)?;
    string(&map, "processId").filter(|id| !id.is_empty()).ok_or_else(|| bad("no string processId".into()))
}

/// One event of `GET /api/process/{id}/stream` (§4.4): `process_info`, then the output so far and
/// live `stdout`/`stderr` chunks, then `exit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessEvent {
    /// A chunk of stdout.
    Stdout(String),
    /// A chunk of stderr.
    Stderr(String),
    /// The process ended (`exitCode` missing when it ended in state `error`).
    Exit(Option<i32>),
}

/// Parses one SSE `data:` payload of a process stream; `process_info` and unknown types are `None`.
///
/// # Errors
/// `SANDBOX_TRANSPORT_ERROR` when the payload is not a JSON object with a string `type`.
pub fn parse_process_event(data: &str) -> Result<Option<ProcessEvent>> {
    let bad = |why: String| {
        Error::new(ErrorCode::TransportError, format!("the container sent a malformed process event: {why}"))
    };
    let map = object(data.as_bytes()).map_err(bad)?;
    let kind = string(&map, "type").ok_or_else(|| bad("no string type".into()))?;
    Ok(match kind.as_str() {
        "stdout" => Some(ProcessEvent::Stdout(string(&map, "data").unwrap_or_default())),
        "stderr" => Some(ProcessEvent::Stderr(string(&map, "data").unwrap_or_default())),
        "exit" => Some(ProcessEvent::Exit(exit_code(&map))),
        _ => None,
    })
}

/// `POST /api/write` request: `{ path, content, encoding: "base64" }` (bytes always travel as
/// base64; the container checks the alphabet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteRequest {
    /// Absolute container path.
    pub path: String,
    /// Base64 of the bytes.
    pub content: String,
    /// Always `"base64"`.
    pub encoding: &'static str,
}

/// `POST /api/read` request: `{ path, encoding: "base64" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadRequest {
    /// Absolute container path.
    pub path: String,
    /// Always `"base64"`, so binary files survive.
    pub encoding: &'static str,
}

/// `POST /api/read` answer: `{ path, content, encoding: "utf-8" | "base64", isBinary, mimeType, size }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResponse {
    /// The file content, encoded per `encoding`.
    pub content: String,
    /// `"base64"` or `"utf-8"`.
    pub encoding: Option<String>,
}

impl ReadResponse {
    /// Reads the answer; `content` is required.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` naming what is wrong.
    pub fn from_slice(bytes: &[u8]) -> Result<ReadResponse> {
        let bad = |why: String| {
            Error::new(ErrorCode::TransportError, format!("the container answered read with an unexpected body: {why}"))
        };
        let map = object(bytes).map_err(bad)?;
        let content = string(&map, "content").ok_or_else(|| bad("no string content".into()))?;
        Ok(ReadResponse { content, encoding: string(&map, "encoding") })
    }

    /// The file bytes.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` for base64 that does not decode.
    pub fn into_bytes(self) -> Result<Vec<u8>> {
        match self.encoding.as_deref() {
            Some("base64") => {
                base64::Engine::decode(&base64::engine::general_purpose::STANDARD, self.content.as_bytes()).map_err(
                    |e| {
                        Error::new(
                            ErrorCode::TransportError,
                            format!("the container sent file content that is not base64: {e}"),
                        )
                    },
                )
            }
            _ => Ok(self.content.into_bytes()),
        }
    }
}

/// `POST /api/mkdir` request: `{ path, recursive }` (runs `mkdir [-p]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MkdirRequest {
    /// Absolute container path.
    pub path: String,
    /// `true` for `mkdir -p` (what a Run's staging always sends).
    pub recursive: bool,
}

/// `POST /api/delete` request: `{ path }` (a file; directories are refused with 400 `IS_DIRECTORY`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeleteRequest {
    /// Absolute container path.
    pub path: String,
}

/// `POST /api/exists` request: `{ path }`; the answer is `{ path, exists }` (`test -e`, §4.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExistsRequest {
    /// Absolute container path.
    pub path: String,
}

/// The `exists` boolean of a `POST /api/exists` answer.
///
/// # Errors
/// `SANDBOX_TRANSPORT_ERROR` when the answer is not an object with a boolean `exists`.
pub fn exists_answer(bytes: &[u8]) -> Result<bool> {
    let bad = |why: String| {
        Error::new(ErrorCode::TransportError, format!("the container answered exists with an unexpected body: {why}"))
    };
    let map = object(bytes).map_err(bad)?;
    map.get("exists").and_then(Value::as_bool).ok_or_else(|| bad("no boolean exists".into()))
}

/// The container's (and the Durable Object's) JSON error body (§4.1, §3):
/// `{ code, message, context?, operation?, httpStatus, timestamp, suggestion? }`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorBody {
    /// E.g. `FILE_NOT_FOUND`, `CONTAINER_UNAVAILABLE`, `INTERNAL_ERROR`.
    pub code: Option<String>,
    /// Human text (the only carrier of "container is starting" in some answers).
    pub message: Option<String>,
}

/// Reads an error body; `None` when it is not the JSON shape (the Durable Object's proxy errors
/// are plain text).
pub fn error_body(bytes: &[u8]) -> Option<ErrorBody> {
    let map = object(bytes).ok()?;
    Some(ErrorBody { code: string(&map, "code"), message: string(&map, "message") })
        .filter(|b| b.code.is_some() || b.message.is_some())
}

/// The argument of the Durable Object RPC `configure(cfg)`, as `getSandbox` sends it (§1.1 step 4):
/// `{ sandboxName: { name, normalizeId }, sleepAfter, keepAlive }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigureRequest {
    /// The stored name (set once per Durable Object).
    pub sandbox_name: SandboxName,
    /// Seconds or `<n>s|m|h`.
    pub sleep_after: Value,
    /// Never sleep on inactivity.
    pub keep_alive: bool,
}

/// `{ name, normalizeId }` of [`ConfigureRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxName {
    /// The Box id.
    pub name: String,
    /// Whether the id was lower-cased.
    pub normalize_id: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn execute_request_is_sessionless_and_omits_empty_fields() {
        let r = ExecuteRequest {
            command: "node 'a b'".into(),
            session_id: NO_SESSION,
            timeout_ms: None,
            env: EnvMap::new(),
            cwd: None,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"command": "node 'a b'", "sessionId": "__DISABLE_SESSION__"})
        );
        let r = ExecuteRequest {
            command: "x".into(),
            session_id: NO_SESSION,
            timeout_ms: Some(5000),
            env: EnvMap::from([("A".to_owned(), "1".to_owned())]),
            cwd: Some("/workspace/p".into()),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"command": "x", "sessionId": "__DISABLE_SESSION__", "timeoutMs": 5000, "env": {"A": "1"}, "cwd": "/workspace/p"})
        );
    }

    #[test]
    fn execute_response_of_the_container_is_read() {
        // §2.1 [verified] shape, sessionless (no sessionId).
        let body = json!({"success": false, "exitCode": 3, "stdout": "hello\n", "stderr": "oops\n", "command": "x", "duration": 0, "timestamp": "2026-11-30T00:00:00Z"});
        let r = ExecuteResponse::from_slice(body.to_string().as_bytes()).unwrap();
        assert_eq!((r.exit_code, r.stdout.as_str(), r.stderr.as_str()), (3, "hello\n", "oops\n"));
        assert_eq!(ExecuteResponse::from_slice(b"{\"stdout\":\"x\"}").unwrap_err().code(), ErrorCode::TransportError);
        assert_eq!(ExecuteResponse::from_slice(b"[]").unwrap_err().code(), ErrorCode::TransportError);
    }

    #[test]
    fn stream_events_of_the_container_are_read() {
        let t = ",\"timestamp\":\"2026-11-30T00:00:00Z\"}";
        assert_eq!(
            parse_exec_event(&format!("{{\"type\":\"start\",\"command\":\"x\"{t}")).unwrap(),
            Some(ExecEvent::Start)
        );
        assert_eq!(
            parse_exec_event(&format!("{{\"type\":\"stdout\",\"data\":\"one\\n\"{t}")).unwrap(),
            Some(ExecEvent::Stdout("one\n".into()))
        );
        assert_eq!(
            parse_exec_event(&format!("{{\"type\":\"stderr\",\"data\":\"e\"{t}")).unwrap(),
            Some(ExecEvent::Stderr("e".into()))
        );
        assert_eq!(
            parse_exec_event(&format!("{{\"type\":\"complete\",\"exitCode\":0{t}")).unwrap(),
            Some(ExecEvent::Complete(Some(0)))
        );
        assert_eq!(parse_exec_event("{\"type\":\"complete\"}").unwrap(), Some(ExecEvent::Complete(None)));
        assert_eq!(
            parse_exec_event("{\"type\":\"error\",\"error\":\"boom\"}").unwrap(),
            Some(ExecEvent::Error("boom".into()))
        );
        assert_eq!(
            parse_exec_event("{\"type\":\"error\",\"data\":\"boom\"}").unwrap(),
            Some(ExecEvent::Error("boom".into()))
        );
        assert_eq!(parse_exec_event("{\"type\":\"process_info\"}").unwrap(), None);
        assert_eq!(parse_exec_event("[DONE]").unwrap_err().code(), ErrorCode::TransportError);
        assert_eq!(parse_exec_event("{\"data\":1}").unwrap_err().code(), ErrorCode::TransportError);
    }

    #[test]
    fn file_requests_and_answers() {
        let w = WriteRequest { path: "/workspace/a".into(), content: "AAE=".into(), encoding: "base64" };
        assert_eq!(
            serde_json::to_value(&w).unwrap(),
            json!({"path": "/workspace/a", "content": "AAE=", "encoding": "base64"})
        );
        let r = ReadRequest { path: "/a".into(), encoding: "base64" };
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"path": "/a", "encoding": "base64"}));
        assert_eq!(
            serde_json::to_value(MkdirRequest { path: "/d".into(), recursive: true }).unwrap(),
            json!({"path": "/d", "recursive": true})
        );
        assert_eq!(serde_json::to_value(DeleteRequest { path: "/f".into() }).unwrap(), json!({"path": "/f"}));
        let read = ReadResponse::from_slice(json!({"success": true, "path": "/a", "content": "AAH/", "encoding": "base64", "isBinary": true, "mimeType": "application/octet-stream", "size": 3}).to_string().as_bytes()).unwrap();
        assert_eq!(read.into_bytes().unwrap(), vec![0, 1, 255]);
        let text =
            ReadResponse::from_slice(json!({"content": "hé", "encoding": "utf-8"}).to_string().as_bytes()).unwrap();
        assert_eq!(text.into_bytes().unwrap(), "hé".as_bytes());
        let bad =
            ReadResponse::from_slice(json!({"content": "*", "encoding": "base64"}).to_string().as_bytes()).unwrap();
        assert_eq!(ReadResponse::from_slice(b"{}").unwrap_err().code(), ErrorCode::TransportError);
        assert_eq!(bad.into_bytes().unwrap_err().code(), ErrorCode::TransportError);
    }

    #[test]
    fn error_bodies() {
        let b = error_body(
            br#"{"code":"FILE_NOT_FOUND","message":"File not found: /x","context":{"path":"/x"},"httpStatus":404,"timestamp":"t"}"#,
        )
        .unwrap();
        assert_eq!((b.code.as_deref(), b.message.as_deref()), (Some("FILE_NOT_FOUND"), Some("File not found: /x")));
        assert_eq!(error_body(b"Container suddenly disconnected, try again"), None);
        assert_eq!(error_body(b"{}"), None);
    }

    #[test]
    fn configure_is_what_get_sandbox_sends() {
        let c = ConfigureRequest {
            sandbox_name: SandboxName { name: "box".into(), normalize_id: false },
            sleep_after: json!("5m"),
            keep_alive: false,
        };
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"sandboxName": {"name": "box", "normalizeId": false}, "sleepAfter": "5m", "keepAlive": false})
        );
    }

    #[test]
    fn process_answers_and_events() {
        assert_eq!(
            process_started(br#"{"success":true,"processId":"proc_1_abcdef","pid":7,"command":"true"}"#).unwrap(),
            "proc_1_abcdef"
        );
        assert!(process_started(br#"{"success":true}"#).is_err());
        assert_eq!(parse_process_event(r#"{"type":"process_info","processId":"p","status":"running"}"#).unwrap(), None);
        assert_eq!(
            parse_process_event(r#"{"type":"stdout","data":"a\n","processId":"p"}"#).unwrap(),
            Some(ProcessEvent::Stdout("a\n".into()))
        );
        assert_eq!(
            parse_process_event(r#"{"type":"stderr","data":"e"}"#).unwrap(),
            Some(ProcessEvent::Stderr("e".into()))
        );
        assert_eq!(parse_process_event(r#"{"type":"exit","exitCode":5}"#).unwrap(), Some(ProcessEvent::Exit(Some(5))));
        assert!(parse_process_event("not json").is_err());
    }
}
