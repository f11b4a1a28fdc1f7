//! Command: one process started in a Box (argv, cwd, env, timeout) and its outcome.
//!
//! Pure value types shared by the Run, the Session and the providers. No provider vocabulary here: each
//! provider's `wire` module maps these to its request shapes.

use crate::env_map::EnvMap;

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
    pub env: EnvMap,
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
    /// Whether stdout or stderr lost its beginning to those caps.
    pub truncated: bool,
}

impl CommandOutcome {
    /// Whether the process exited with status 0.
    pub fn success(&self) -> bool {
        self.exit_code == 0
    }
}

/// The last `max_bytes` bytes of `text`, cut forward to a character boundary (so at most
/// `max_bytes`). The one rule for keeping the tail of a Command's output.
pub fn last_bytes(text: &str, max_bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// A Command's output as it streams in, keeping its last `cap` bytes ([`last_bytes`]); memory
/// stays bounded (at most twice the cap, or 64 KiB) however much arrives.
#[derive(Debug)]
pub struct OutputTail {
    text: String,
    cap: usize,
    cut: bool,
}

impl OutputTail {
    /// An empty tail keeping `cap` bytes.
    pub fn new(cap: usize) -> OutputTail {
        OutputTail { text: String::new(), cap, cut: false }
    }

    /// Appends `more`, dropping the oldest bytes once past the memory bound.
    pub fn push(&mut self, more: &str) {
        self.text.push_str(more);
        if self.text.len() > self.cap.saturating_mul(2).max(64 * 1024) {
            self.trim();
        }
    }

    fn trim(&mut self) {
        let start = self.text.len() - last_bytes(&self.text, self.cap).len();
        self.cut |= start > 0;
        self.text.drain(..start);
    }

    /// The last `cap` bytes.
    pub fn into_string(mut self) -> String {
        self.trim();
        self.text
    }

    /// The last `cap` bytes, and whether earlier ones were dropped.
    pub fn finish(mut self) -> (String, bool) {
        self.trim();
        (self.text, self.cut)
    }
}

impl CommandOutcome {
    /// The outcome of `exit_code` with the kept tails of both streams.
    pub fn from_tails(exit_code: i32, stdout: OutputTail, stderr: OutputTail) -> CommandOutcome {
        let ((stdout, out_cut), (stderr, err_cut)) = (stdout.finish(), stderr.finish());
        CommandOutcome { exit_code, stdout, stderr, truncated: out_cut || err_cut }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_cut_at_a_character_boundary_and_stay_bounded() {
        assert_eq!(last_bytes("abcdef", 3), "def");
        assert_eq!(last_bytes("aé", 1), "", "the half of é is dropped");
        assert_eq!(last_bytes("aé", 2), "é");
        let mut tail = OutputTail::new(4);
        for _ in 0..100_000 {
            tail.push("xy");
            assert!(tail.text.len() <= 64 * 1024 + 2);
        }
        assert_eq!(tail.into_string(), "xyxy");
    }

    #[test]
    fn an_outcome_says_when_a_tail_lost_its_beginning() {
        let (mut out, mut err) = (OutputTail::new(4), OutputTail::new(4));
        out.push("abcd");
        err.push("ok");
        assert!(!CommandOutcome::from_tails(0, out, err).truncated, "exactly the cap is whole");
        let (mut out, err) = (OutputTail::new(4), OutputTail::new(4));
        out.push("abcde");
        let outcome = CommandOutcome::from_tails(1, out, err);
        assert_eq!((outcome.stdout.as_str(), outcome.truncated), ("bcde", true));
    }
}
