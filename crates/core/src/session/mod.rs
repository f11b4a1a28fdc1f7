//! Sessions: one live Box a caller drives by hand (`openSandboxSession`): the handle's status,
//! the after-close rule, and the rules for the arguments of its operations. Pure; the runtime's
//! wasm edge (`src/api/session/`) reads JS values into the plain values checked here, then calls
//! its `provider::session::BoxSession`.
//!
//! Source: vitehub-sandbox-contract.md §3 (the Box session: `exec`, `spawn`, files, an idempotent
//! `close()` after which every operation rejects).

pub mod authority;
pub mod ports;

use crate::error::{Error, ErrorCode, Result};

pub use authority::ExecutionAuthority;

/// Largest Command timeout and Box lifetime, in ms (the JS timer maximum, as `timeout` of a Definition).
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

/// Bytes of stdout and of stderr an `exec` result keeps (the last ones): 16 MiB each.
pub const MAX_EXEC_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

/// The live status of a Session handle.
///
/// Shape (JS): `'pending' | 'running' | 'stopped' | 'failed' | 'expired'`.
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
    /// The Box's lifetime ran out (its clock passed, or the provider answered 410 `sandbox_stopped`,
    /// vercel-sandbox-protocol.md §4.2): the provider stopped it; operations are refused.
    Expired,
}

impl SessionStatus {
    /// The JS word.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Pending => "pending",
            SessionStatus::Running => "running",
            SessionStatus::Stopped => "stopped",
            SessionStatus::Failed => "failed",
            SessionStatus::Expired => "expired",
        }
    }
}

/// Box lifetime, in ms, of a Session opened without `timeout` on the Vercel API and the local
/// Box host (their server-side default, vercel-sandbox-protocol.md "Default timeout").
pub const DEFAULT_LIFETIME_MS: u64 = 300_000;

/// What a Session allows now. `closed` is set by the first `close()` and never cleared: every
/// operation after it rejects, whatever the outcome of the cleanup. A Session whose Box lifetime
/// ran out is `Expired` and refuses every operation too.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionState {
    /// The status reported to JS.
    pub status: SessionStatus,
    /// Whether `close()` was called.
    pub closed: bool,
    /// The Box lifetime in ms, when the provider has one (not Cloudflare).
    pub lifetime_ms: Option<u64>,
    /// When that lifetime ends, in `performance.now()` ms (measured from the open's answer, so
    /// never before the provider's own end).
    pub ends_at_ms: Option<f64>,
    /// Whether the provider said the Box is gone (410) before the clock did.
    pub stopped_by_provider: bool,
    /// Whether `snapshot()` stopped the Box (then `closed` is set too; see
    /// [`SessionState::snapshotted`]).
    pub snapshotted: bool,
}

impl SessionState {
    /// A Session whose Box is open since `now_ms`, for `lifetime_ms` (none: no known end).
    pub fn running(lifetime_ms: Option<u64>, now_ms: f64) -> SessionState {
        SessionState {
            status: SessionStatus::Running,
            closed: false,
            lifetime_ms,
            ends_at_ms: lifetime_ms.map(|ms| now_ms + ms as f64),
            stopped_by_provider: false,
            snapshotted: false,
        }
    }

    /// `snapshot()` took the Box's files and the provider stopped it (vercel-sandbox-protocol.md
    /// §6.9: a snapshot stops the session): the Session is `Stopped` and closed, and every later
    /// operation is refused naming the snapshot (a later `close()` has nothing to stop).
    pub fn snapshotted(&mut self) {
        self.closed = true;
        self.snapshotted = true;
        self.status = SessionStatus::Stopped;
    }

    /// Moves the end of the lifetime `ms` later (the provider extended the Box by `ms`). A
    /// Session without a lifetime keeps none.
    pub fn extend(&mut self, ms: u64) {
        self.lifetime_ms = self.lifetime_ms.map(|lifetime| lifetime.saturating_add(ms));
        self.ends_at_ms = self.ends_at_ms.map(|end| end + ms as f64);
    }

    /// The status at `now_ms`: a running Session past its lifetime becomes `Expired`.
    pub fn status_at(&mut self, now_ms: f64) -> SessionStatus {
        if self.status == SessionStatus::Running && !self.closed && self.ends_at_ms.is_some_and(|end| now_ms >= end) {
            self.status = SessionStatus::Expired;
        }
        self.status
    }

    /// `Ok` while the Session takes operations at `now_ms`.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` after `close()`: `Session <id> is closed; <operation>() needs an
    /// open Session (open another with openSandboxSession())`; when the lifetime ran out, the
    /// error of [`SessionState::expired_error`].
    pub fn check_open(&mut self, id: &str, operation: &str, now_ms: f64) -> Result<()> {
        if self.closed && self.snapshotted {
            return Err(Error::new(
                ErrorCode::InvalidState,
                format!("Session {id} was stopped by its snapshot(); {operation}() needs an open Session (open one from the snapshot with openSandboxSession({{ snapshotId }}))"),
            ));
        }
        if self.closed {
            return Err(Error::new(
                ErrorCode::InvalidState,
                format!("Session {id} is closed; {operation}() needs an open Session (open another with openSandboxSession())"),
            ));
        }
        if self.status_at(now_ms) == SessionStatus::Expired {
            return Err(self.expired_error(id, operation));
        }
        Ok(())
    }

    /// Marks the Session `Expired` (the provider answered 410: its Box is stopped) and gives the
    /// error of `operation`. A closed Session keeps its status.
    pub fn expire(&mut self, id: &str, operation: &str) -> Error {
        if !self.closed && self.status != SessionStatus::Expired {
            self.status = SessionStatus::Expired;
            self.stopped_by_provider = true;
        }
        self.expired_error(id, operation)
    }

    /// `SANDBOX_INVALID_STATE` (409), not `SANDBOX_TIMEOUT`: no operation of the caller ran too
    /// long, the handle's Box is gone, and a retry on it can never succeed (the contract retries
    /// `SANDBOX_TIMEOUT`). `details.timeoutMs` is the lifetime. Message: `Session <id> expired:
    /// its Box lifetime of <n>ms ran out; <operation>() needs an open Session (open another with
    /// openSandboxSession({ timeout }) for a longer lifetime)`.
    pub fn expired_error(&self, id: &str, operation: &str) -> Error {
        let lifetime = match (self.lifetime_ms, self.stopped_by_provider) {
            (Some(ms), false) => format!("its Box lifetime of {ms}ms ran out"),
            // 410 says the Box is gone, not why: a handle of it elsewhere (another request or
            // process, reattached by id) may have closed it.
            (Some(ms), true) => format!(
                "the provider stopped its Box (410: another handle of it closed it, or its lifetime of {ms}ms ran out)"
            ),
            (None, _) => {
                "the provider stopped its Box (410: another handle of it closed it, or its lifetime ran out)".to_owned()
            }
        };
        let error = Error::new(
            ErrorCode::InvalidState,
            format!("Session {id} expired: {lifetime}; {operation}() needs an open Session (open another with openSandboxSession({{ timeout }}) for a longer lifetime)"),
        );
        match self.lifetime_ms {
            Some(ms) => error.with_timeout_ms(ms),
            None => error,
        }
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
    // `-0` reads as `0`, as in JS.
    let shown = if value == 0.0 { 0.0 } else { value };
    Err(invalid(format!("{what} must be a positive integer number of ms up to {MAX_TIMEOUT_MS}, got {shown}")))
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
        return Err(invalid(format!(
            "env name {name} is invalid (non-empty, without '=' or NUL)",
            name = crate::error::quoted(name)
        )));
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

/// The home directory of a local Box host Box (`HOME` of its commands).
pub const LOCAL_BOX_HOME: &str = "/home/box";

/// Checks a Box path of a file helper on the local Box host: it must lie in a directory the
/// Box's commands see as the helpers do: `cwd` (the work directory), `/tmp` or [`LOCAL_BOX_HOME`].
/// Elsewhere (`/etc`, `/usr`, …) the host's commands see the host's own read-only system
/// directories while the helpers would reach the Box's private root, so the path is refused
/// rather than answered from a place no command sees. Vercel and Cloudflare take any absolute
/// path: their helpers and commands share one filesystem (vercel-sandbox-protocol.md §7.4,
/// cloudflare-sandbox-protocol.md files API).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` naming the path and the directories.
pub fn check_local_box_path(path: &str, cwd: &str, operation: &str) -> Result<()> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    let normal = format!("/{}", parts.join("/"));
    let inside = |dir: &str| {
        let dir = dir.trim_end_matches('/');
        normal == dir || normal.starts_with(&format!("{dir}/"))
    };
    if [cwd, "/tmp", LOCAL_BOX_HOME].into_iter().any(inside) {
        return Ok(());
    }
    Err(invalid(format!(
        "{operation}({path}): on the local Box host the file helpers reach {cwd}, /tmp and {LOCAL_BOX_HOME} only, where commands see the same files; \
         elsewhere commands see the host's read-only system directories (read such a file with exec('cat', [path]))", path = crate::error::quoted(path))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_after_close_are_refused() {
        let mut state = SessionState::running(None, 0.0);
        assert!(state.check_open("s1", "exec", 1e12).is_ok());
        state.closed = true;
        state.status = SessionStatus::Failed;
        let error = state.check_open("s1", "exec", 0.0).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidState);
        assert!(error.message().contains("Session s1 is closed; exec()"));
    }

    #[test]
    fn extending_moves_the_end_of_the_lifetime() {
        let mut state = SessionState::running(Some(2_000), 100.0);
        state.extend(3_000);
        assert_eq!((state.lifetime_ms, state.ends_at_ms), (Some(5_000), Some(5_100.0)));
        assert_eq!(state.status_at(5_099.0), SessionStatus::Running);
        assert_eq!(state.status_at(5_100.0), SessionStatus::Expired);
        let mut unbounded = SessionState::running(None, 0.0);
        unbounded.extend(1_000);
        assert_eq!((unbounded.lifetime_ms, unbounded.ends_at_ms), (None, None));
    }

    #[test]
    fn a_session_past_its_lifetime_is_expired_and_refuses_operations() {
        let mut state = SessionState::running(Some(2_000), 100.0);
        assert_eq!(state.status_at(2_099.0), SessionStatus::Running);
        assert!(state.check_open("s1", "exec", 2_099.0).is_ok());
        let error = state.check_open("s1", "read", 2_100.0).unwrap_err();
        assert_eq!(state.status, SessionStatus::Expired);
        assert_eq!(error.code(), ErrorCode::InvalidState);
        assert_eq!(error.details().timeout_ms, Some(2_000));
        assert!(
            error
                .message()
                .starts_with("Session s1 expired: its Box lifetime of 2000ms ran out; read() needs an open Session"),
            "{}",
            error.message()
        );

        // A 410 from the provider expires a Session before the clock does.
        let mut state = SessionState::running(None, 0.0);
        let error = state.expire("s2", "exec");
        assert_eq!(state.status, SessionStatus::Expired);
        assert!(
            error.message().starts_with(
                "Session s2 expired: the provider stopped its Box (410: another handle of it closed it, or its lifetime ran out); exec() needs"
            ),
            "{}",
            error.message()
        );
        let mut state = SessionState::running(Some(5_000), 0.0);
        let error = state.expire("s3", "write");
        assert!(error.message().contains("or its lifetime of 5000ms ran out)"), "{}", error.message());
        assert!(state.check_open("s3", "read", 1.0).is_err(), "an expired Session refuses before any request");
        // snapshot() stops the Box: the Session is stopped and closed, and says why.
        let mut taken = SessionState::running(Some(10_000), 0.0);
        taken.snapshotted();
        assert_eq!(taken.status_at(1.0), SessionStatus::Stopped);
        let error = taken.check_open("s3", "exec", 1.0).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidState);
        assert!(error.message().contains("Session s3 was stopped by its snapshot(); exec()"), "{}", error.message());
        assert_eq!(taken.status_at(1e9), SessionStatus::Stopped, "never expired by the clock after it");
        // close() after expiry keeps refusing with the closed message; a closed Session stays as close() left it.
        let mut closed = SessionState::running(Some(10), 0.0);
        closed.closed = true;
        closed.status = SessionStatus::Stopped;
        assert_eq!(closed.status_at(1e9), SessionStatus::Stopped);
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

    #[test]
    fn local_file_helpers_stay_where_commands_see_the_same_files() {
        for ok in ["/vercel/sandbox", "/vercel/sandbox/a/b", "/tmp/x", "/home/box/.npmrc", "/vercel/sandbox/a/../b"] {
            assert!(check_local_box_path(ok, "/vercel/sandbox", "read").is_ok(), "{ok}");
        }
        for bad in ["/etc/hostname", "/", "/tmpfoo", "/vercel/sandbox/../../etc/passwd", "/vercel", "/home/boxer"] {
            let error = check_local_box_path(bad, "/vercel/sandbox", "write").unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidArgument);
            assert!(
                error.message().contains("the file helpers reach /vercel/sandbox, /tmp and /home/box only"),
                "{}",
                error.message()
            );
        }
    }
}
