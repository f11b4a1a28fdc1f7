//! One Command as the container runs it: the `bash -c` line for an argv, the sessionless
//! `/api/execute` request.
//!
//! Provider layer, pure. Source: cloudflare-sandbox-protocol.md §4.2 (sessionless commands run
//! in a fresh `bash -c` with `cwd` and `env` from the body), §4.3.

use super::wire::{self, ExecuteRequest};
use crate::command::Command;

/// The `bash -c` line for an argv: each word quoted unless it is plainly safe.
pub fn shell_line(program: &str, args: &[String]) -> String {
    std::iter::once(program).chain(args.iter().map(String::as_str)).map(shell_quote).collect::<Vec<_>>().join(" ")
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./=:@%+,-".contains(&b)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The sessionless request for `command`, with `cwd` resolved against the Box cwd.
pub fn execute_request(command: &Command, box_cwd: &str) -> ExecuteRequest {
    let cwd = match &command.cwd {
        Some(cwd) if cwd.starts_with('/') => cwd.clone(),
        Some(cwd) => format!("{}/{cwd}", box_cwd.trim_end_matches('/')),
        None => box_cwd.to_owned(),
    };
    ExecuteRequest {
        command: shell_line(&command.program, &command.args),
        session_id: wire::NO_SESSION,
        timeout_ms: command.timeout_ms,
        env: command.env.clone(),
        cwd: Some(cwd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn argv_becomes_a_quoted_bash_line() {
        assert_eq!(
            shell_line("node", &["../.vite-hub/harness.mjs".into(), "a b".into(), "it's".into(), "".into(), "$HOME".into()]),
            "node ../.vite-hub/harness.mjs 'a b' 'it'\\''s' '' '$HOME'"
        );
        assert_eq!(shell_line("npm", &["ci".into(), "--no-audit".into()]), "npm ci --no-audit");
    }

    #[test]
    fn the_request_is_sessionless_with_an_absolute_cwd() {
        let command = Command {
            program: "node".into(),
            args: vec!["x.mjs".into()],
            cwd: Some("project".into()),
            timeout_ms: Some(9),
            env: BTreeMap::from([("A".into(), "1".into())]),
            ..Command::default()
        };
        let r = execute_request(&command, "/workspace/");
        assert_eq!(
            (r.command.as_str(), r.session_id, r.cwd.as_deref(), r.timeout_ms),
            ("node x.mjs", "__DISABLE_SESSION__", Some("/workspace/project"), Some(9))
        );
        assert_eq!(r.env.get("A").map(String::as_str), Some("1"));
        let absolute = Command { cwd: Some("/tmp".into()), ..command.clone() };
        assert_eq!(execute_request(&absolute, "/workspace").cwd.as_deref(), Some("/tmp"));
        let none = Command { cwd: None, ..command };
        assert_eq!(execute_request(&none, "/workspace").cwd.as_deref(), Some("/workspace"));
    }
}
