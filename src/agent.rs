//! The agent capability `sandbox({ commands })` and its one tool, `sandbox_exec`: the allowlist
//! rules, the tool's description and JSON Schema, and the checks of one tool input, in the order
//! of the contract (vitehub-sandbox-contract.md §7).
//!
//! Pure: no JS types. The glue (`src/api/agent_input.rs`) reads a JS value into an
//! [`ExecInput`] and turns an [`ExecCall`] back into JS; the package entry
//! `@vite-hub/sandbox/agent` runs the call on a Session. Nothing here opens a Box, so a refused
//! input provably never reaches one.

use crate::error::{Error, ErrorCode, Result};

/// The tool's name (AI SDK tool key, MCP `tools/list` name).
pub const TOOL_NAME: &str = "sandbox_exec";
/// At most this many `args`.
pub const MAX_ARGS: usize = 128;
/// At most this many characters (UTF-16 code units, as JS counts `length`) in one argument or
/// one env value.
pub const MAX_TEXT_CHARS: usize = 32_768;
/// At most this many `env` entries.
pub const MAX_ENV_ENTRIES: usize = 64;
/// Largest `timeout`, in ms (the largest delay a JS timer accepts).
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;
/// The pattern every allowed command name matches.
pub const COMMAND_PATTERN: &str = "^[A-Za-z0-9_.-]+$";
/// The pattern every env name matches.
pub const ENV_NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_]*$";
/// The env names a caller may not set (compared upper-cased); `LD_*` and `DYLD_*` neither.
const BLOCKED_ENV_NAMES: [&str; 3] = ["PATH", "NODE_OPTIONS", "NODE_PATH"];
/// The keys of a `sandbox_exec` input.
const INPUT_KEYS: &str = "command, args, cwd, env and timeout";

/// One value of a tool input as JS gave it. Containers hold what the glue read of them (at most
/// [`MAX_ARGS`] + 1 items, so a longer one still fails the length rule).
#[derive(Debug, Clone, PartialEq)]
pub enum InputValue {
    /// An absent key, `undefined`, or a hole in an array.
    Undefined,
    /// A string.
    Text(String),
    /// A number (any, including NaN and fractions).
    Number(f64),
    /// An array, its items in order.
    List(Vec<InputValue>),
    /// A non-array object: its own enumerable string keys with their values, in order.
    Record(Vec<(String, InputValue)>),
    /// Anything else: `null`, a boolean, a bigint, a symbol, a function, or a value nested too deep.
    Other,
}

/// A `sandbox_exec` input: the five keys and the first other key, if any. Not an object reads
/// as all [`InputValue::Undefined`].
#[derive(Debug, Clone, PartialEq)]
pub struct ExecInput {
    /// `command`.
    pub command: InputValue,
    /// `args`.
    pub args: InputValue,
    /// `cwd`.
    pub cwd: InputValue,
    /// `env`.
    pub env: InputValue,
    /// `timeout` (ms).
    pub timeout: InputValue,
    /// The first own key that is none of the five.
    pub unknown_key: Option<String>,
}

impl Default for ExecInput {
    fn default() -> ExecInput {
        ExecInput {
            command: InputValue::Undefined,
            args: InputValue::Undefined,
            cwd: InputValue::Undefined,
            env: InputValue::Undefined,
            timeout: InputValue::Undefined,
            unknown_key: None,
        }
    }
}

/// A checked `sandbox_exec` input: what the Session's `exec` receives.
///
/// Shape (JS side): `{ command: string, args: string[], options: { cwd?: string, env?:
/// Record<string, string> (null prototype), timeout?: number } }`; absent options are omitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecCall {
    /// One of the allowed names, exactly.
    pub command: String,
    /// The arguments (`[]` when none were given).
    pub args: Vec<String>,
    /// Working directory in the Box, passed unchanged.
    pub cwd: Option<String>,
    /// Extra environment variables, in the order given.
    pub env: Option<Vec<(String, String)>>,
    /// Kill the Command after this many ms.
    pub timeout_ms: Option<u64>,
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// `text` for a message: quoted, cut to 128 characters.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(128) {
        Some((end, _)) => format!("\"{}…\"", &text[..end]),
        None => format!("\"{text}\""),
    }
}

/// JS `string.length`: UTF-16 code units.
fn js_length(text: &str) -> usize {
    text.encode_utf16().count()
}

fn is_command_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_blocked_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    BLOCKED_ENV_NAMES.contains(&upper.as_str()) || upper.starts_with("LD_") || upper.starts_with("DYLD_")
}

/// Checks `sandbox({ commands })` and returns a copy of the names.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` when `commands` is not a non-empty array ("requires at least one
/// executable name"), or an entry is not a string matching [`COMMAND_PATTERN`] ("accepts
/// executable names only, not shell command strings").
pub fn check_commands(commands: &InputValue) -> Result<Vec<String>> {
    let items = match commands {
        InputValue::List(items) if !items.is_empty() => items,
        _ => {
            return Err(invalid(
                "sandbox({ commands }) requires at least one executable name, e.g. sandbox({ commands: ['node'] })".to_string(),
            ))
        }
    };
    let mut names = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let problem = match item {
            InputValue::Text(name) if is_command_name(name) => {
                names.push(name.clone());
                continue;
            }
            InputValue::Text(name) => format!("commands[{index}] {} does not match {COMMAND_PATTERN}", quoted(name)),
            _ => format!("commands[{index}] is not a string"),
        };
        return Err(invalid(format!(
            "sandbox({{ commands }}) accepts executable names only, not shell command strings: {problem} (give the executable, e.g. 'pnpm'; the agent passes its arguments in args)"
        )));
    }
    Ok(names)
}

/// The tool description: `Run one allowed executable in an isolated sandbox. Allowed commands: a, b.`
pub fn tool_description(commands: &[String]) -> String {
    format!("Run one allowed executable in an isolated sandbox. Allowed commands: {}.", commands.join(", "))
}

/// The tool's input JSON Schema (draft-07 and 2020-12 read it alike), as JSON text.
///
/// Shape: `{ type: 'object', additionalProperties: false, required: ['command'], properties: {
/// command: { type: 'string', enum }, args: { type: 'array', items: { type: 'string', maxLength:
/// 32768 }, maxItems: 128 }, cwd: { type: 'string' }, env: { type: 'object', maxProperties: 64,
/// propertyNames: { pattern }, additionalProperties: { type: 'string', maxLength: 32768 } },
/// timeout: { type: 'integer', exclusiveMinimum: 0, maximum: 2147483647 } } }`.
pub fn input_schema_json(commands: &[String]) -> String {
    serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["command"],
        "properties": {
            "command": { "type": "string", "enum": commands },
            "args": { "type": "array", "items": { "type": "string", "maxLength": MAX_TEXT_CHARS }, "maxItems": MAX_ARGS },
            "cwd": { "type": "string" },
            "env": {
                "type": "object",
                "maxProperties": MAX_ENV_ENTRIES,
                "propertyNames": { "pattern": ENV_NAME_PATTERN },
                "additionalProperties": { "type": "string", "maxLength": MAX_TEXT_CHARS }
            },
            "timeout": { "type": "integer", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_MS }
        }
    })
    .to_string()
}

/// Checks one `sandbox_exec` input against the allowed `commands`, in the contract's order:
/// `command` a string; exactly one of `commands`; `args`; `cwd`; `env`; `timeout`; then no other
/// key.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT`, the message naming the first rule broken; a command off the list
/// gives exactly `Sandbox command "<name>" is not allowed.`
pub fn check_exec_input(commands: &[String], input: &ExecInput) -> Result<ExecCall> {
    let command = match &input.command {
        InputValue::Text(command) => command,
        _ => return Err(invalid(format!("sandbox_exec requires a command: a string naming one of the allowed executables ({})", commands.join(", ")))),
    };
    if !commands.iter().any(|allowed| allowed == command) {
        return Err(invalid(format!("Sandbox command {} is not allowed.", quoted(command))));
    }
    let args = check_args(&input.args)?;
    let cwd = match &input.cwd {
        InputValue::Undefined => None,
        InputValue::Text(cwd) => Some(cwd.clone()),
        _ => return Err(invalid("sandbox_exec cwd must be a string.".to_string())),
    };
    let env = check_env(&input.env)?;
    let timeout_ms = match input.timeout {
        InputValue::Undefined => None,
        InputValue::Number(ms) if ms.fract() == 0.0 && ms > 0.0 && ms <= MAX_TIMEOUT_MS as f64 => Some(ms as u64),
        _ => return Err(invalid(format!("sandbox_exec timeout must be a positive integer no greater than {MAX_TIMEOUT_MS} (milliseconds)."))),
    };
    if let Some(key) = &input.unknown_key {
        return Err(invalid(format!("sandbox_exec input has an unknown key {}; its keys are {INPUT_KEYS}.", quoted(key))));
    }
    Ok(ExecCall { command: command.clone(), args, cwd, env, timeout_ms })
}

fn check_args(args: &InputValue) -> Result<Vec<String>> {
    let items = match args {
        InputValue::Undefined => return Ok(Vec::new()),
        InputValue::List(items) => items,
        _ => return Err(args_error("args is not an array".to_string())),
    };
    if items.len() > MAX_ARGS {
        return Err(args_error(format!("it has more than {MAX_ARGS}")));
    }
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item {
            InputValue::Text(arg) if js_length(arg) <= MAX_TEXT_CHARS => out.push(arg.clone()),
            InputValue::Text(_) => return Err(args_error(format!("args[{index}] is longer"))),
            _ => return Err(args_error(format!("args[{index}] is not a string"))),
        }
    }
    Ok(out)
}

fn args_error(problem: String) -> Error {
    invalid(format!("sandbox_exec args must be an array of no more than {MAX_ARGS} strings, each no longer than {MAX_TEXT_CHARS} characters ({problem})."))
}

fn check_env(env: &InputValue) -> Result<Option<Vec<(String, String)>>> {
    let entries = match env {
        InputValue::Undefined => return Ok(None),
        InputValue::Record(entries) => entries,
        _ => return Err(invalid("sandbox_exec env must be an object with string values.".to_string())),
    };
    if entries.len() > MAX_ENV_ENTRIES {
        return Err(invalid(format!("sandbox_exec env must contain no more than {MAX_ENV_ENTRIES} entries.")));
    }
    let mut out = Vec::with_capacity(entries.len());
    for (name, value) in entries {
        if !is_env_name(name) {
            return Err(invalid(format!("sandbox_exec env names must match {ENV_NAME_PATTERN}: {} does not.", quoted(name))));
        }
        if is_blocked_env_name(name) {
            return Err(invalid(format!(
                "sandbox_exec env cannot override PATH, NODE_OPTIONS, NODE_PATH, or loader-related variables (LD_*, DYLD_*): {}.",
                quoted(name)
            )));
        }
        match value {
            InputValue::Text(text) if js_length(text) <= MAX_TEXT_CHARS => out.push((name.clone(), text.clone())),
            _ => {
                return Err(invalid(format!(
                    "sandbox_exec env values must be strings no longer than {MAX_TEXT_CHARS} characters: {} is not.",
                    quoted(name)
                )))
            }
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> InputValue {
        InputValue::Text(s.to_string())
    }

    fn allowed() -> Vec<String> {
        vec!["node".to_string(), "ls".to_string()]
    }

    fn input(command: InputValue) -> ExecInput {
        ExecInput { command, ..ExecInput::default() }
    }

    fn message(result: Result<ExecCall>) -> String {
        let error = result.unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidArgument);
        error.message().to_string()
    }

    #[test]
    fn commands_must_be_a_non_empty_list_of_names() {
        assert_eq!(check_commands(&InputValue::List(vec![text("node"), text("git-lfs"), text("a_b.c")])).unwrap(), ["node", "git-lfs", "a_b.c"]);
        for bad in [InputValue::Undefined, InputValue::List(vec![]), text("node"), InputValue::Other] {
            let error = check_commands(&bad).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidArgument);
            assert!(error.message().contains("requires at least one executable name"), "{}", error.message());
        }
        for bad in [text("pnpm test"), text(""), text("a/b"), text("rm;"), InputValue::Number(1.0)] {
            let error = check_commands(&InputValue::List(vec![text("node"), bad])).unwrap_err();
            assert!(error.message().contains("executable names only, not shell command strings"), "{}", error.message());
            assert!(error.message().contains("commands[1]"), "{}", error.message());
        }
    }

    #[test]
    fn description_and_schema_name_the_commands() {
        assert_eq!(tool_description(&allowed()), "Run one allowed executable in an isolated sandbox. Allowed commands: node, ls.");
        let schema: serde_json::Value = serde_json::from_str(&input_schema_json(&allowed())).unwrap();
        assert_eq!(schema["required"], serde_json::json!(["command"]));
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["command"]["enum"], serde_json::json!(["node", "ls"]));
        assert_eq!(schema["properties"]["args"]["maxItems"], 128);
        assert_eq!(schema["properties"]["args"]["items"]["maxLength"], 32768);
        assert_eq!(schema["properties"]["env"]["maxProperties"], 64);
        assert_eq!(schema["properties"]["env"]["propertyNames"]["pattern"], ENV_NAME_PATTERN);
        assert_eq!(schema["properties"]["timeout"]["maximum"], 2147483647u64);
        assert_eq!(schema["properties"]["timeout"]["exclusiveMinimum"], 0);
    }

    #[test]
    fn command_is_checked_first_and_exactly() {
        assert!(message(check_exec_input(&allowed(), &input(InputValue::Undefined))).starts_with("sandbox_exec requires a command"));
        assert!(message(check_exec_input(&allowed(), &input(InputValue::Number(1.0)))).starts_with("sandbox_exec requires a command"));
        assert_eq!(message(check_exec_input(&allowed(), &input(text("bash")))), "Sandbox command \"bash\" is not allowed.");
        assert_eq!(message(check_exec_input(&allowed(), &input(text("Node")))), "Sandbox command \"Node\" is not allowed.");
        assert_eq!(message(check_exec_input(&allowed(), &input(text("node ")))), "Sandbox command \"node \" is not allowed.");
        // The allowlist comes before every other rule.
        let both_bad = ExecInput { command: text("bash"), args: InputValue::Other, timeout: InputValue::Number(-1.0), ..ExecInput::default() };
        assert_eq!(message(check_exec_input(&allowed(), &both_bad)), "Sandbox command \"bash\" is not allowed.");
    }

    #[test]
    fn a_valid_input_is_normalized() {
        let call = check_exec_input(&allowed(), &input(text("node"))).unwrap();
        assert_eq!(call, ExecCall { command: "node".into(), args: vec![], cwd: None, env: None, timeout_ms: None });
        let full = ExecInput {
            command: text("ls"),
            args: InputValue::List(vec![text("-la"), text("")]),
            cwd: text("provider://workspace/project"),
            env: InputValue::Record(vec![("FOO".into(), text("1")), ("_x9".into(), text(""))]),
            timeout: InputValue::Number(2_147_483_647.0),
            unknown_key: None,
        };
        let call = check_exec_input(&allowed(), &full).unwrap();
        assert_eq!(call.args, ["-la", ""]);
        assert_eq!(call.cwd.as_deref(), Some("provider://workspace/project"));
        assert_eq!(call.env, Some(vec![("FOO".into(), "1".into()), ("_x9".into(), String::new())]));
        assert_eq!(call.timeout_ms, Some(2_147_483_647));
    }

    #[test]
    fn args_rules() {
        let with = |args| ExecInput { command: text("node"), args, ..ExecInput::default() };
        for bad in [
            text("-e"),
            InputValue::Other,
            InputValue::List(vec![InputValue::Undefined]),
            InputValue::List(vec![InputValue::Number(1.0)]),
            InputValue::List(vec![text(&"x".repeat(32_769))]),
            InputValue::List(vec![text("a"); 129]),
        ] {
            assert!(message(check_exec_input(&allowed(), &with(bad))).starts_with("sandbox_exec args must be an array of no more than 128 strings, each no longer than 32768 characters"));
        }
        assert!(check_exec_input(&allowed(), &with(InputValue::List(vec![text(&"é".repeat(32_768))]))).is_ok());
        assert!(check_exec_input(&allowed(), &with(InputValue::List(vec![text("a"); 128]))).is_ok());
    }

    #[test]
    fn cwd_and_timeout_rules() {
        let cwd = ExecInput { command: text("node"), cwd: InputValue::Number(1.0), ..ExecInput::default() };
        assert_eq!(message(check_exec_input(&allowed(), &cwd)), "sandbox_exec cwd must be a string.");
        for bad in [0.0, -1.0, 1.5, 2_147_483_648.0, f64::NAN, f64::INFINITY] {
            let timeout = ExecInput { command: text("node"), timeout: InputValue::Number(bad), ..ExecInput::default() };
            assert_eq!(message(check_exec_input(&allowed(), &timeout)), "sandbox_exec timeout must be a positive integer no greater than 2147483647 (milliseconds).");
        }
        let timeout = ExecInput { command: text("node"), timeout: text("5"), ..ExecInput::default() };
        assert!(message(check_exec_input(&allowed(), &timeout)).starts_with("sandbox_exec timeout must be"));
    }

    #[test]
    fn env_rules() {
        let with = |entries: Vec<(&str, InputValue)>| ExecInput {
            command: text("node"),
            env: InputValue::Record(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
            ..ExecInput::default()
        };
        for name in ["PATH", "path", "Node_Options", "NODE_PATH", "LD_PRELOAD", "ld_library_path", "DYLD_INSERT_LIBRARIES", "dyld_x"] {
            assert_eq!(
                message(check_exec_input(&allowed(), &with(vec![("OK", text("1")), (name, text("x"))]))),
                format!("sandbox_exec env cannot override PATH, NODE_OPTIONS, NODE_PATH, or loader-related variables (LD_*, DYLD_*): \"{name}\".")
            );
        }
        for name in ["1A", "A-B", "", "A B"] {
            assert!(message(check_exec_input(&allowed(), &with(vec![(name, text("x"))]))).starts_with("sandbox_exec env names must match"));
        }
        for value in [InputValue::Number(1.0), InputValue::Undefined, text(&"x".repeat(32_769))] {
            assert_eq!(
                message(check_exec_input(&allowed(), &with(vec![("A", value)]))),
                "sandbox_exec env values must be strings no longer than 32768 characters: \"A\" is not."
            );
        }
        let many: Vec<(String, InputValue)> = (0..65).map(|i| (format!("V{i}"), text("x"))).collect();
        let many = ExecInput { command: text("node"), env: InputValue::Record(many), ..ExecInput::default() };
        assert_eq!(message(check_exec_input(&allowed(), &many)), "sandbox_exec env must contain no more than 64 entries.");
        for bad in [InputValue::List(vec![]), InputValue::Other, text("A=1")] {
            let env = ExecInput { command: text("node"), env: bad, ..ExecInput::default() };
            assert_eq!(message(check_exec_input(&allowed(), &env)), "sandbox_exec env must be an object with string values.");
        }
        // Names like PATHS or MY_PATH are fine.
        assert!(check_exec_input(&allowed(), &with(vec![("PATHS", text("1")), ("MY_PATH", text("2")), ("XLD_A", text("3"))])).is_ok());
    }

    #[test]
    fn unknown_keys_are_refused_last() {
        let shell = ExecInput { command: text("node"), unknown_key: Some("shell".into()), ..ExecInput::default() };
        assert_eq!(message(check_exec_input(&allowed(), &shell)), "sandbox_exec input has an unknown key \"shell\"; its keys are command, args, cwd, env and timeout.");
        let long = "k".repeat(300);
        let shell = ExecInput { command: text(&long), ..ExecInput::default() };
        assert_eq!(message(check_exec_input(&allowed(), &shell)), format!("Sandbox command \"{}…\" is not allowed.", "k".repeat(128)));
    }
}
