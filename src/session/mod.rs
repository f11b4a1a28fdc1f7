//! Sessions: one live Box a caller drives by hand (`openSandboxSession`): the handle's status,
//! the after-close rule, and the rules for the arguments of its operations. Pure; the wasm edge
//! (`api/session.rs`) reads JS values into the plain values checked here, then calls
//! [`crate::provider::session::BoxSession`].
//!
//! Source: vitehub-sandbox-contract.md §3 (the Box session: `exec`, `spawn`, files, an idempotent
//! `close()` after which every operation rejects).

pub mod authority;

use crate::error::{Error, ErrorCode, Result};

pub use authority::ExecutionAuthority;

/// Largest Command timeout and Box lifetime, in ms (the JS timer maximum, as `timeout` of a Definition).
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

/// Bytes of stdout and of stderr an `exec` result keeps (the last ones): 16 MiB each.
pub const MAX_EXEC_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

/// The live status of a Session handle.
///
/// Shape (JS): `'pending' | 'running' | 'stopped' | 'failed'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    /// The Box is being opened.
    Pending,
    /// The Box is open; operations are accepted.
    Running,
    /// `close()` stopped the Box.
    Stopped,
    /// Opening failed, or `close()` could not stop the Box (a later `close()` tries again).
    Failed,
}

impl SessionStatus {
    /// The JS word.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Pending => "pending",
            SessionStatus::Running => "running",
            SessionStatus::Stopped => "stopped",
            SessionStatus::Failed => "failed",
        }
    }
}

/// What a Session allows now. `closed` is set by the first `close()` and never cleared: every
/// operation after it rejects, whatever the outcome of the cleanup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionState {
    /// The status reported to JS.
    pub status: SessionStatus,
    /// Whether `close()` was called.
    pub closed: bool,
}

impl SessionState {
    /// A Session whose Box is open.
    pub fn running() -> SessionState {
        SessionState { status: SessionStatus::Running, closed: false }
    }

    /// `Ok` while the Session takes operations.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` after `close()`: `Session <id> is closed; <operation>() needs an
    /// open Session (open another with openSandboxSession())`.
    pub fn check_open(&self, id: &str, operation: &str) -> Result<()> {
        if self.closed {
            return Err(Error::new(
                ErrorCode::InvalidState,
                format!("Session {id} is closed; {operation}() needs an open Session (open another with openSandboxSession())"),
            ));
        }
        Ok(())
    }
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// Checks a timeout in ms (a Command's `timeout`, a Session's Box lifetime): a positive integer
/// up to [`MAX_TIMEOUT_MS`]. `what` names it in the message.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` otherwise.
pub fn check_timeout_ms(value: f64, what: &str) -> Result<u64> {
    if value.is_finite() && value.fract() == 0.0 && value >= 1.0 && value <= MAX_TIMEOUT_MS as f64 {
        return Ok(value as u64);
    }
    Err(invalid(format!("{what} must be a positive integer number of ms up to {MAX_TIMEOUT_MS}, got {}", crate::json_read::number_text(value))))
}

/// Checks a Command's executable name: a non-empty string without NUL.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` otherwise.
pub fn check_command(command: &str) -> Result<()> {
    if command.is_empty() {
        return Err(invalid("command must be a non-empty string (the executable, e.g. \"node\")".into()));
    }
    if command.contains('\0') {
        return Err(invalid("command must not contain a NUL character".into()));
    }
    Ok(())
}

/// Checks one argument (`args[index]`): no NUL (argv cannot carry it).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` otherwise.
pub fn check_arg(arg: &str, index: usize) -> Result<()> {
    if arg.contains('\0') {
        return Err(invalid(format!("args[{index}] must not contain a NUL character")));
    }
    Ok(())
}

/// Checks an environment variable name: non-empty, without `=` or NUL.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` otherwise.
pub fn check_env_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(invalid(format!("env name {name:?} is invalid (non-empty, without '=' or NUL)")));
    }
    Ok(())
}

/// The absolute Box path of `path`: an absolute path as given, a relative one joined to the
/// Session's `cwd`. `operation` names the call in the message.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for an empty path or one with NUL.
pub fn box_path(cwd: &str, path: &str, operation: &str) -> Result<String> {
    if path.is_empty() {
        return Err(invalid(format!("{operation}(path) needs a non-empty path")));
    }
    if path.contains('\0') {
        return Err(invalid(format!("{operation}(path): the path must not contain a NUL character")));
    }
    if path.starts_with('/') {
        return Ok(path.to_owned());
    }
    Ok(format!("{}/{}", cwd.trim_end_matches('/'), path.trim_start_matches("./")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_after_close_are_refused() {
        let mut state = SessionState::running();
        assert!(state.check_open("s1", "exec").is_ok());
        state.closed = true;
        state.status = SessionStatus::Failed;
        let error = state.check_open("s1", "exec").unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidState);
        assert!(error.message().contains("Session s1 is closed; exec()"));
    }

    #[test]
    fn timeouts_are_positive_integers_in_range() {
        assert_eq!(check_timeout_ms(1.0, "timeout").unwrap(), 1);
        assert_eq!(check_timeout_ms(2_147_483_647.0, "timeout").unwrap(), MAX_TIMEOUT_MS);
        for bad in [0.0, -5.0, 1.5, f64::NAN, f64::INFINITY, 2_147_483_648.0] {
            let error = check_timeout_ms(bad, "exec option timeout").unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidArgument);
            assert!(error.message().starts_with("exec option timeout must be a positive integer"));
        }
    }

    #[test]
    fn commands_args_env_and_paths() {
        assert!(check_command("node").is_ok());
        assert!(check_command("").is_err());
        assert!(check_command("a\0b").is_err());
        assert!(check_arg("x", 0).is_ok());
        assert!(check_arg("x\0", 3).unwrap_err().message().contains("args[3]"));
        assert!(check_env_name("A_1").is_ok());
        assert!(check_env_name("A=B").is_err());
        assert!(check_env_name("").is_err());
        assert_eq!(box_path("/vercel/sandbox", "a/b.txt", "read").unwrap(), "/vercel/sandbox/a/b.txt");
        assert_eq!(box_path("/workspace/", "./x", "read").unwrap(), "/workspace/x");
        assert_eq!(box_path("/workspace", "/tmp/x", "read").unwrap(), "/tmp/x");
        assert!(box_path("/w", "", "read").is_err());
    }
}
