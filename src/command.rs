//! Command: one process started in a Box (argv, cwd, env, timeout) and its outcome.
//!
//! Pure value types shared by the Run, the Session and the providers. No provider vocabulary here: each
//! provider's `wire` module maps these to its request shapes.

use std::collections::BTreeMap;

/// One process to start in a Box: `program` with `args` as argv (no shell).
///
/// Shape (JS side): `{ program: string, args: string[], cwd?: string, env: Record<string,string>,
/// timeoutMs?: number }`. The output caps are the caller's: how many bytes of each stream it
/// needs (the tail is kept, so a result frame written last survives).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    /// The executable, e.g. `"node"` or `"npm"` (looked up on the Box's `PATH`).
    pub program: String,
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// Working directory inside the Box (absolute, or relative to the Box cwd);
    /// `None` = the Box's default cwd.
    pub cwd: Option<String>,
    /// Extra environment variables, merged over the Box environment. Values may be secrets:
    /// never log them or put them in an error.
    pub env: BTreeMap<String, String>,
    /// Kill the process after this many ms; `None` = no per-Command timeout.
    pub timeout_ms: Option<u64>,
    /// Bytes of stdout kept in the [`CommandOutcome`] (the last ones); 0 keeps nothing.
    pub max_stdout_bytes: usize,
    /// Bytes of stderr kept in the [`CommandOutcome`] (the last ones); 0 keeps nothing.
    pub max_stderr_bytes: usize,
}

/// What a finished Command produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutcome {
    /// The process exit status (0 = success). Named `exit_code`, never `code` (reserved for
    /// error codes).
    pub exit_code: i32,
    /// The last [`Command::max_stdout_bytes`] bytes the process wrote to stdout, decoded as
    /// UTF-8 (cut at a character boundary).
    pub stdout: String,
    /// The last [`Command::max_stderr_bytes`] bytes the process wrote to stderr, likewise.
    pub stderr: String,
}

impl CommandOutcome {
    /// Whether the process exited with status 0.
    pub fn success(&self) -> bool {
        self.exit_code == 0
    }
}
