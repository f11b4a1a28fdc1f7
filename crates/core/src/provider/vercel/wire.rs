//! Serde shapes of the Vercel Sandbox REST API, as spoken by `@vercel/sandbox` 3.5.0
//! (REST v2 + v3), for the requests we send and the responses we read.
//!
//! Provider layer, pure. Upstream vocabulary (`sessionId`, `cmd`, `sandbox`) stays here; the
//! provider's `mod.rs` maps it to Boxes and Commands. Request fields that are optional are
//! omitted when `None` (the SDK's `undefined`), never sent as `null`; unknown response keys are
//! ignored.
//!
//! Source: vercel-sandbox-protocol.md §6 (data model), §7 (endpoints), §4.2–4.3 (errors).

use crate::env_map::EnvMap;
use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

/// Body of `POST /v3/sandboxes` (or `/v2/sandboxes` when `runtime` is set).
///
/// Shape (mirrors @vercel/sandbox 3.5.0 / REST v3):
/// ```ts
/// { projectId?: string, ports: number[], timeout?: number /* ms */, runtime?: string,
///   networkPolicy?: object, env?: Record<string,string>, persistent?: boolean }
/// ```
/// Minimal body seen on the wire: `{"projectId":"P","ports":[]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateSandboxRequest {
    /// The Vercel project (`projectId`); always sent by the SDK.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Ports to expose; `[]` by default (always sent).
    #[serde(default)]
    pub ports: Vec<u16>,
    /// Session lifetime in ms (server default 300 000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Legacy runtime (`node22`, `node24`, …); selects `POST /v2/sandboxes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Network policy, request shape (§6.7), e.g. `{"mode":"deny-all"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network_policy: Option<Value>,
    /// Environment of every command in the sandbox. Values may be secrets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvMap>,
    /// Whether the sandbox keeps its files across sessions (server default: persistent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub persistent: Option<bool>,
    /// Where the Box's files come from; we send only create-from-snapshot,
    /// `{"type":"snapshot","snapshotId":"…"}` (§7.1, §7.5). Absent: an empty Box.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Value>,
    /// The sandbox name (unique in the project); we name only a Box whose snapshot will be a
    /// prepared project (`vitehub-prepared-<digest>`), so the list endpoint finds it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The snapshot id of a `POST /v2/sandboxes/sessions/{id}/snapshot` answer,
/// `{snapshot: {id, …}, session}` (§7.5); `None` when the body has none.
pub fn snapshot_id(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value.get("snapshot")?.get("id")?.as_str().map(str::to_owned)
}

/// Response of create / get sandbox: `{ sandbox, session, routes }`
/// (mirrors @vercel/sandbox 3.5.0 `SandboxAndSessionResponse`, REST v2/v3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxAndSessionResponse {
    /// The named sandbox record (§6.2), kept opaque.
    pub sandbox: Value,
    /// The session (VM) that commands and files go to.
    pub session: Session,
    /// Public routes `{url, subdomain, port}` (§6.3), kept opaque; `[]` when absent.
    #[serde(default)]
    pub routes: Vec<Value>,
}

/// A session, the VM behind a sandbox; only the fields we use (mirrors @vercel/sandbox 3.5.0
/// `Session`, REST v2). Unknown keys are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Session id, used raw in `/v2/sandboxes/sessions/{id}/…` paths.
    pub id: String,
    /// Default working directory, e.g. `/vercel/sandbox`.
    pub cwd: String,
    /// `pending | running | stopping | stopped | failed | aborted | snapshotting`.
    pub status: String,
    /// What code in the Box can reach; sent by the local Box host only (not a Vercel field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_authority: Option<Value>,
}

impl SandboxAndSessionResponse {
    /// Reads a create / get answer: `sandbox` and `session` required, `routes` an array or absent.
    ///
    /// # Errors
    /// serde's words for what is wrong, naming the key (e.g. ``missing field `session` ``).
    pub fn from_value(value: &Value) -> std::result::Result<SandboxAndSessionResponse, String> {
        SandboxAndSessionResponse::deserialize(value).map_err(|e| e.to_string())
    }
}

/// Body of `POST /v2/sandboxes/sessions/{id}/cmd` (mirrors @vercel/sandbox 3.5.0, REST v2).
///
/// Shape, in the SDK's key order:
/// ```ts
/// { command: string, args: string[], cwd?: string, env: Record<string,string>, sudo: boolean,
///   wait?: true, logs?: true, timeout?: number /* ms, SIGKILL after */, attachStdin?: true }
/// ```
/// `attachStdin` (REST "Execute a command"; the SDK's `stdin: true`, which 3.5.0 lacks) gives
/// the command a stdin pipe written by `POST …/cmd/{cmdId}/stdin` ([`WriteStdinRequest`]).
/// `wait` and `logs` are both `true` for a waiting run (NDJSON answer) and both absent for a
/// detached one (JSON `{command}` answer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCommandRequest {
    /// The executable.
    pub command: String,
    /// Its arguments (`[]` by default).
    #[serde(default)]
    pub args: Vec<String>,
    /// Working directory; the session cwd when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Per-command environment (`{}` by default). Values may be secrets.
    #[serde(default)]
    pub env: EnvMap,
    /// Run as root.
    #[serde(default)]
    pub sudo: bool,
    /// Hold the response until the command exits, streaming NDJSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Include stdout/stderr lines in the NDJSON stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<bool>,
    /// Kill the command after this many ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Give the command a stdin pipe (absent: it reads an empty stdin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach_stdin: Option<bool>,
}

impl RunCommandRequest {
    /// The body for `command`: `waited` holds the response until the command exits with its
    /// output as an NDJSON stream (`wait` and `logs` true); otherwise the command is detached
    /// (both absent) and the answer is its id.
    pub fn for_command(command: &crate::command::Command, waited: bool) -> RunCommandRequest {
        RunCommandRequest {
            command: command.program.clone(),
            args: command.args.clone(),
            cwd: command.cwd.clone(),
            env: command.env.clone(),
            sudo: false,
            wait: waited.then_some(true),
            logs: waited.then_some(true),
            timeout: command.timeout_ms,
            attach_stdin: None,
        }
    }
}

/// Most bytes of stdin one `POST …/cmd/{cmdId}/stdin` carries (512 KiB; a larger write is sent
/// in order as several, each within the host's 1 MiB JSON body once base64-encoded).
pub const MAX_STDIN_WRITE_BYTES: usize = 512 * 1024;

/// Body of `POST /v2/sandboxes/sessions/{id}/cmd/{cmdId}/stdin` (REST "Write to command stdin").
///
/// Shape: `{ data?: string /* base64 */, close?: true, offset?: number /* bytes */ }` →
/// `{ bytesWritten: number }`. `offset` (the bytes of stdin before `data`) makes a resent write
/// safe: bytes already taken are skipped, an offset past them is 409. Errors: 400
/// `command_stdin_unavailable` (no open stdin), 404 once the command exited, 504 when it does
/// not read within 30 s. The REST page names these fields; the official SDK 3.5.0 sends no
/// stdin request, so `data`'s encoding (base64) is the local Box host's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteStdinRequest {
    /// The bytes, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// Close stdin after `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close: Option<bool>,
    /// Bytes of stdin before `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

/// Body of `POST /v2/sandboxes/sessions/{id}/extend-timeout` (as @vercel/sandbox 3.5.0 sends
/// it): `{ duration: number }`, ms added to the session's deadline; answer `{ session }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtendTimeoutRequest {
    /// Ms added to the deadline.
    pub duration: u64,
}

/// A command as reported by the API (mirrors @vercel/sandbox 3.5.0 `Command`, REST v2).
///
/// `exitCode` is required but nullable: `null` while running, a number once finished; a
/// missing key is a decode error (as in the SDK's zod schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    /// Command id (`cmdId`).
    pub id: String,
    /// The executable.
    pub name: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory.
    pub cwd: String,
    /// The session it runs in.
    pub session_id: String,
    /// Exit status; `None` while running. Always serialized (as `null` when `None`).
    #[serde(deserialize_with = "required_nullable")]
    pub exit_code: Option<i32>,
    /// Start time, epoch ms.
    pub started_at: f64,
}

/// Makes an `Option` field required-but-nullable: with `deserialize_with` (and no `default`)
/// serde reports a missing key instead of defaulting to `None`.
fn required_nullable<'de, D>(deserializer: D) -> std::result::Result<Option<i32>, D::Error>
where
    D: Deserializer<'de>,
{
    Option::<i32>::deserialize(deserializer)
}

/// `{ command: Command }`: answer of a detached run, get command, wait and kill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandResponse {
    /// The command.
    pub command: CommandInfo,
}

/// One line of a command NDJSON stream (`POST …/cmd` with `wait`, `GET …/cmd/{id}/logs`).
///
/// Shapes: `{"command":Command}` | `{"stream":"stdout"|"stderr","data":string}` |
/// `{"stream":"error","data":{"code":string,"message":string}}` (§7.3, §4.3).
#[derive(Debug, Clone, PartialEq)]
pub enum CommandStreamLine {
    /// Command state: first line (`exitCode: null`) and last line (numeric `exitCode`).
    Command(CommandInfo),
    /// A piece of stdout text.
    Stdout(String),
    /// A piece of stderr text.
    Stderr(String),
    /// An in-stream error; the stream is over.
    Error {
        /// Upstream error code, e.g. `"stream_ended_early"`.
        code: String,
        /// Upstream message.
        message: String,
    },
}

/// The keys of a stream line, each optional (absent or `null`); a present `command` must be a
/// command and a present `stream` a string.
#[derive(Deserialize)]
struct RawStreamLine {
    #[serde(default)]
    command: Option<CommandInfo>,
    #[serde(default)]
    stream: Option<String>,
    #[serde(default)]
    data: Option<Value>,
}

/// The `data` of an in-stream error: `{ code?: string | null, message?: string | null }`.
#[derive(Deserialize)]
struct StreamError {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

impl CommandStreamLine {
    /// The line as JSON (write it with [`crate::http::ndjson::ndjson_line`]).
    pub fn to_json(&self) -> Value {
        match self {
            CommandStreamLine::Command(command) => json!({ "command": command }),
            CommandStreamLine::Stdout(data) => json!({ "stream": "stdout", "data": data }),
            CommandStreamLine::Stderr(data) => json!({ "stream": "stderr", "data": data }),
            CommandStreamLine::Error { code, message } => {
                json!({ "stream": "error", "data": { "code": code, "message": message } })
            }
        }
    }
}

/// Parses one line of a command NDJSON stream.
///
/// # Errors
/// `TransportError` when the line is not JSON or matches none of the shapes of
/// [`CommandStreamLine`] (the message never quotes the line: it may hold user output).
pub fn parse_command_stream_line(line: &str) -> Result<CommandStreamLine> {
    let malformed = |what: &str| {
        Error::new(ErrorCode::TransportError, format!("the provider sent a malformed command stream line ({what})"))
    };
    let raw: RawStreamLine =
        serde_json::from_slice(line.as_bytes()).map_err(|_| malformed("not a JSON object of a known shape"))?;
    if let Some(command) = raw.command {
        return Ok(CommandStreamLine::Command(command));
    }
    match (raw.stream.as_deref(), raw.data) {
        (Some("stdout"), Some(Value::String(data))) => Ok(CommandStreamLine::Stdout(data)),
        (Some("stderr"), Some(Value::String(data))) => Ok(CommandStreamLine::Stderr(data)),
        (Some("error"), Some(data @ Value::Object(_))) => {
            let error = StreamError::deserialize(&data).map_err(|_| malformed("bad error data"))?;
            Ok(CommandStreamLine::Error {
                code: error.code.unwrap_or_default(),
                message: error.message.unwrap_or_default(),
            })
        }
        (Some("error"), Some(_)) => Err(malformed("bad error data")),
        (Some("stdout" | "stderr"), _) => Err(malformed("log data is not a string")),
        (Some(_), _) => Err(malformed("unknown stream")),
        (None, _) => Err(malformed("neither command nor stream")),
    }
}

/// Body of `POST /v2/sandboxes/sessions/{id}/fs/read` (mirrors @vercel/sandbox 3.5.0, REST v2):
/// `{ path: string, cwd?: string }`. The answer is the raw bytes (`application/octet-stream`),
/// or 404 when the file is missing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadFileRequest {
    /// File path, absolute or relative to `cwd`.
    pub path: String,
    /// Base of a relative `path`; the session cwd when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// Body of `POST /v2/sandboxes/sessions/{id}/fs/mkdir` (mirrors @vercel/sandbox 3.5.0, REST v2):
/// `{ path: string }`; not recursive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MkdirRequest {
    /// Directory to create.
    pub path: String,
}

/// Body of `POST /v2/sandboxes/sessions/{id}/cmd/{cmdId}/kill` (mirrors @vercel/sandbox 3.5.0,
/// REST v2): `{ signal: number }` (a signal number, e.g. 15 for SIGTERM, 9 for SIGKILL; §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillCommandRequest {
    /// The signal number.
    pub signal: u8,
}

/// An error answer body (mirrors @vercel/sandbox 3.5.0 / REST v2):
/// `{ error?: { code?: string, message?: string } }`, e.g.
/// `{"error":{"code":"sandbox_stopped","message":"Sandbox is stopped"}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error, when the body has one.
    #[serde(default)]
    pub error: Option<ErrorBodyInner>,
}

/// The `error` object of an [`ErrorBody`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBodyInner {
    /// Upstream code, e.g. `"sandbox_stopped"`, `"bad_request"`.
    #[serde(default)]
    pub code: Option<String>,
    /// Upstream message (may echo request data: redact before making it public).
    #[serde(default)]
    pub message: Option<String>,
}

/// The `error.message` of an error answer body, if the body is JSON of that shape.
pub fn error_message(body: &[u8]) -> Option<String> {
    // Any other type in those keys means no message.
    serde_json::from_slice::<ErrorBody>(body).ok()?.error?.message
}

/// A network policy in the request shape of §6.7: the strings `"allow-all"` / `"deny-all"`
/// become `{"mode":"allow-all"}` / `{"mode":"deny-all"}` (as the SDK sends them); anything else
/// (the V2 object) is sent as given.
pub fn network_policy_request(policy: &Value) -> Value {
    match policy.as_str() {
        Some(mode @ ("allow-all" | "deny-all")) => json!({ "mode": mode }),
        _ => policy.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_policy_strings_become_the_sdk_object_shape() {
        assert_eq!(network_policy_request(&serde_json::json!("deny-all")), serde_json::json!({"mode": "deny-all"}));
        assert_eq!(network_policy_request(&serde_json::json!("allow-all")), serde_json::json!({"mode": "allow-all"}));
        let v2 = serde_json::json!({"allow": ["example.com"]});
        assert_eq!(network_policy_request(&v2), v2);
    }
    use serde_json::json;

    // Recorded-looking fixtures (shapes from the protocol note §6.1, §6.4, §7.3, §10).
    const SESSION_JSON: &str = r#"{"id":"sbx_sess_01","memory":4096,"vcpus":2,"region":"iad1",
        "timeout":300000,"status":"running","requestedAt":1760000000000,"startedAt":1760000000500,
        "createdAt":1760000000000,"updatedAt":1760000000500,"cwd":"/vercel/sandbox",
        "networkPolicy":{"mode":"allow-all"}}"#;

    #[test]
    fn create_request_matches_the_wire_trace() {
        let minimal = CreateSandboxRequest { project_id: Some("P".into()), ..Default::default() };
        assert_eq!(serde_json::to_string(&minimal).unwrap(), r#"{"projectId":"P","ports":[]}"#);
        let full = CreateSandboxRequest {
            project_id: Some("prj_y".into()),
            ports: vec![3000],
            timeout: Some(60_000),
            runtime: Some("node22".into()),
            network_policy: Some(json!({"mode": "deny-all"})),
            env: Some(EnvMap::from([("A".into(), "1".into())])),
            persistent: Some(false),
            source: Some(json!({"type": "snapshot", "snapshotId": "snap_1"})),
            name: Some("vitehub-prepared-ab".into()),
        };
        assert_eq!(
            serde_json::to_value(&full).unwrap(),
            json!({"projectId": "prj_y", "ports": [3000], "timeout": 60000, "runtime": "node22",
                "networkPolicy": {"mode": "deny-all"}, "env": {"A": "1"}, "persistent": false,
                "source": {"type": "snapshot", "snapshotId": "snap_1"}, "name": "vitehub-prepared-ab"})
        );
        assert_eq!(
            snapshot_id(br#"{"snapshot":{"id":"snap_9","status":"created"},"session":{}}"#).as_deref(),
            Some("snap_9")
        );
        assert_eq!(snapshot_id(b"{}"), None);
    }

    #[test]
    fn sandbox_and_session_response_ignores_unknown_keys() {
        let body = format!(
            r#"{{"sandbox":{{"name":"demo","persistent":true,"currentSessionId":"sbx_sess_01","status":"running",
                "createdAt":1,"updatedAt":1}},"session":{SESSION_JSON},"routes":[]}}"#
        );
        let response: SandboxAndSessionResponse = serde_json::from_str(&body).unwrap();
        assert_eq!(response.session.id, "sbx_sess_01");
        assert_eq!(response.session.cwd, "/vercel/sandbox");
        assert_eq!(response.session.status, "running");
        assert_eq!(response.session.execution_authority, None);
        assert_eq!(response.sandbox["name"], "demo");
        let with_authority: Session = serde_json::from_value(
            json!({"id": "s", "cwd": "/", "status": "running", "executionAuthority": {"isolation": "process"}}),
        )
        .unwrap();
        assert_eq!(with_authority.execution_authority, Some(json!({"isolation": "process"})));
    }

    #[test]
    fn stdin_and_extend_timeout_bodies() {
        let attached = RunCommandRequest { command: "cat".into(), attach_stdin: Some(true), ..Default::default() };
        assert_eq!(
            serde_json::to_string(&attached).unwrap(),
            r#"{"command":"cat","args":[],"env":{},"sudo":false,"attachStdin":true}"#
        );
        let write = WriteStdinRequest { data: Some("aGk=".into()), offset: Some(3), ..Default::default() };
        assert_eq!(serde_json::to_string(&write).unwrap(), r#"{"data":"aGk=","offset":3}"#);
        let close = WriteStdinRequest { close: Some(true), ..Default::default() };
        assert_eq!(serde_json::to_string(&close).unwrap(), r#"{"close":true}"#);
        assert_eq!(serde_json::to_string(&ExtendTimeoutRequest { duration: 60_000 }).unwrap(), r#"{"duration":60000}"#);
    }

    #[test]
    fn run_command_request_matches_the_sdk_body() {
        let waiting = RunCommandRequest {
            command: "node".into(),
            args: vec!["run.mjs".into(), "arg1".into()],
            cwd: Some("/vercel/sandbox".into()),
            env: EnvMap::from([("A".into(), "1".into())]),
            sudo: false,
            wait: Some(true),
            logs: Some(true),
            timeout: Some(5000),
            attach_stdin: None,
        };
        assert_eq!(
            serde_json::to_string(&waiting).unwrap(),
            r#"{"command":"node","args":["run.mjs","arg1"],"cwd":"/vercel/sandbox","env":{"A":"1"},"sudo":false,"wait":true,"logs":true,"timeout":5000}"#
        );
        let install = RunCommandRequest {
            command: "npm".into(),
            args: vec!["install".into()],
            wait: Some(true),
            logs: Some(true),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&install).unwrap(),
            r#"{"command":"npm","args":["install"],"env":{},"sudo":false,"wait":true,"logs":true}"#
        );
        let detached = RunCommandRequest { command: "sleep".into(), args: vec!["1".into()], ..Default::default() };
        let text = serde_json::to_string(&detached).unwrap();
        assert_eq!(text, r#"{"command":"sleep","args":["1"],"env":{},"sudo":false}"#);
        assert_eq!(serde_json::from_str::<RunCommandRequest>(&text).unwrap(), detached);
    }

    #[test]
    fn command_exit_code_is_required_but_nullable() {
        let running = r#"{"command":{"id":"cmd_1","name":"node","args":["x"],"cwd":"/vercel/sandbox",
            "sessionId":"sbx_sess_01","exitCode":null,"startedAt":1760000001000}}"#;
        let response: CommandResponse = serde_json::from_str(running).unwrap();
        assert_eq!(response.command.exit_code, None);
        assert_eq!(response.command.started_at, 1_760_000_001_000.0);
        let missing = r#"{"command":{"id":"cmd_1","name":"node","args":[],"cwd":"/","sessionId":"s","startedAt":1}}"#;
        let err = serde_json::from_str::<CommandResponse>(missing).unwrap_err();
        assert!(err.to_string().contains("missing field `exitCode`"), "{err}");
        let value = serde_json::to_value(&response.command).unwrap();
        assert_eq!(value["exitCode"], Value::Null);
        assert_eq!(value["sessionId"], "sbx_sess_01");
    }

    #[test]
    fn parses_a_command_stream() {
        let stream = concat!(
            r#"{"command":{"id":"cmd_1","name":"npm","args":["install"],"cwd":"/vercel/sandbox","sessionId":"S","exitCode":null,"startedAt":1760000001000}}"#,
            "\n",
            r#"{"stream":"stdout","data":"added 1 package\n"}"#,
            "\n",
            r#"{"stream":"stderr","data":"npm warn \u00e9"}"#,
            "\n",
            r#"{"command":{"id":"cmd_1","name":"npm","args":["install"],"cwd":"/vercel/sandbox","sessionId":"S","exitCode":0,"durationMs":812,"startedAt":1760000001000}}"#,
            "\n",
        );
        let lines: Vec<CommandStreamLine> = stream.lines().map(|l| parse_command_stream_line(l).unwrap()).collect();
        assert!(matches!(&lines[0], CommandStreamLine::Command(c) if c.exit_code.is_none() && c.id == "cmd_1"));
        assert_eq!(lines[1], CommandStreamLine::Stdout("added 1 package\n".into()));
        assert_eq!(lines[2], CommandStreamLine::Stderr("npm warn \u{e9}".into()));
        assert!(matches!(&lines[3], CommandStreamLine::Command(c) if c.exit_code == Some(0)));
        for line in &lines {
            let text = crate::http::ndjson::ndjson_line(&line.to_json());
            assert_eq!(&parse_command_stream_line(text.trim_end()).unwrap(), line);
        }
    }

    #[test]
    fn parses_stream_errors_and_rejects_malformed_lines() {
        assert_eq!(
            parse_command_stream_line(
                r#"{"stream":"error","data":{"code":"sandbox_stopped","message":"Sandbox is stopped"}}"#
            )
            .unwrap(),
            CommandStreamLine::Error { code: "sandbox_stopped".into(), message: "Sandbox is stopped".into() }
        );
        for bad in [
            "not json",
            "null",
            "[]",
            "{}",
            r#"{"stream":"stdout","data":42}"#,
            r#"{"stream":"stdin","data":"x"}"#,
            r#"{"stream":"error","data":"x"}"#,
            r#"{"command":{"id":"c"}}"#,
        ] {
            let err = parse_command_stream_line(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::TransportError, "{bad}");
        }
    }

    #[test]
    fn fs_requests() {
        assert_eq!(
            serde_json::to_string(&ReadFileRequest { path: "run.mjs".into(), cwd: None }).unwrap(),
            r#"{"path":"run.mjs"}"#
        );
        assert_eq!(
            serde_json::to_string(&ReadFileRequest { path: "a".into(), cwd: Some("/tmp".into()) }).unwrap(),
            r#"{"path":"a","cwd":"/tmp"}"#
        );
        assert_eq!(serde_json::to_string(&MkdirRequest { path: "newdir".into() }).unwrap(), r#"{"path":"newdir"}"#);
    }

    #[test]
    fn error_bodies() {
        assert_eq!(
            error_message(br#"{"error":{"code":"sandbox_stopped","message":"Sandbox is stopped"}}"#),
            Some("Sandbox is stopped".into())
        );
        assert_eq!(error_message(br#"{"error":{"code":"bad_request"}}"#), None);
        assert_eq!(error_message(b"{}"), None);
        assert_eq!(error_message(b""), None);
        assert_eq!(error_message(b"<html>502 Bad Gateway</html>"), None);
        let body: ErrorBody = serde_json::from_slice(br#"{"error":{"code":"not_found","message":"x"}}"#).unwrap();
        assert_eq!(body.error.unwrap().code.as_deref(), Some("not_found"));
    }

    #[test]
    fn answers_follow_serde_field_rules() {
        let command = json!({"id": "c", "name": "node", "args": ["a"], "cwd": "/", "sessionId": "s", "exitCode": 0, "startedAt": 1.5});
        let commands = [
            (command.clone(), true),
            (
                json!({"id": "c", "name": "n", "args": [], "cwd": "/", "sessionId": "s", "exitCode": null, "startedAt": 1, "extra": true}),
                true,
            ),
            (json!({"id": "c", "name": "n", "args": [], "cwd": "/", "sessionId": "s", "startedAt": 1}), false),
            (
                json!({"id": "c", "name": "n", "args": [1], "cwd": "/", "sessionId": "s", "exitCode": 1, "startedAt": 1}),
                false,
            ),
            (
                json!({"id": "c", "name": "n", "args": [], "cwd": "/", "sessionId": "s", "exitCode": 1.5, "startedAt": 1}),
                false,
            ),
            (
                json!({"id": "c", "name": "n", "args": [], "cwd": "/", "sessionId": "s", "exitCode": 4_294_967_296u64, "startedAt": 1}),
                false,
            ),
            (
                json!({"id": "c", "name": "n", "args": [], "cwd": "/", "sessionId": "s", "exitCode": -1, "startedAt": "1"}),
                false,
            ),
            (
                json!({"id": 1, "name": "n", "args": [], "cwd": "/", "sessionId": "s", "exitCode": 0, "startedAt": 1}),
                false,
            ),
            (json!({"name": "n", "args": [], "cwd": "/", "sessionId": "s", "exitCode": 0, "startedAt": 1}), false),
            (json!("x"), false),
        ];
        for (value, ok) in &commands {
            assert_eq!(CommandInfo::deserialize(value).is_ok(), *ok, "{value}");
        }
        let session = json!({"id": "s", "cwd": "/", "status": "running"});
        let answers = [
            (json!({"sandbox": {}, "session": session, "routes": []}), true),
            (json!({"sandbox": null, "session": session}), true),
            (
                json!({"sandbox": {}, "session": {"id": "s", "cwd": "/", "status": "running", "executionAuthority": null}}),
                true,
            ),
            (
                json!({"sandbox": {}, "session": {"id": "s", "cwd": "/", "status": "running", "executionAuthority": {"a": 1}}, "routes": [{"port": 1}]}),
                true,
            ),
            (json!({"sandbox": {}, "session": session, "routes": null}), false),
            (json!({"sandbox": {}, "session": session, "routes": {}}), false),
            (json!({"session": session}), false),
            (json!({"sandbox": {}}), false),
            (json!({"sandbox": {}, "session": {"id": "s", "cwd": "/"}}), false),
            (json!({"sandbox": {}, "session": "s"}), false),
        ];
        for (value, ok) in &answers {
            assert_eq!(SandboxAndSessionResponse::from_value(value).is_ok(), *ok, "{value}");
        }
        assert_eq!(
            SandboxAndSessionResponse::from_value(&json!({"sandbox": {}})).unwrap_err(),
            "missing field `session`"
        );
        let lines = [
            (json!({"command": command}), true),
            (json!({"command": null, "stream": "stdout", "data": "x"}), true),
            (json!({"command": {"id": "c"}, "stream": "stdout", "data": "x"}), false),
            (json!({"stream": 1, "data": "x"}), false),
            (json!({"stream": "error", "data": null}), false),
            (json!({"stream": "error", "data": {"code": "c", "message": null}}), true),
            (json!({"stream": "stderr", "data": 5}), false),
            (json!({"other": 1}), false),
            (json!([1]), false),
        ];
        for (line, ok) in &lines {
            assert_eq!(parse_command_stream_line(&line.to_string()).is_ok(), *ok, "{line}");
        }
        let bodies = [
            (json!({"error": {"code": "c", "message": "m"}}), Some("m")),
            (json!({"error": {"message": "m", "extra": 1}}), Some("m")),
            (json!({"error": {"code": 1, "message": "m"}}), None),
            (json!({"error": {"message": 2}}), None),
            (json!({"error": null}), None),
            (json!({"error": "m"}), None),
            (json!({}), None),
            (json!(null), None),
        ];
        for (body, message) in &bodies {
            assert_eq!(error_message(body.to_string().as_bytes()).as_deref(), *message, "{body}");
        }
    }
}
