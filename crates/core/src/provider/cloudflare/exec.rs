//! One Command as the container runs it: the `bash -c` line for an argv, the sessionless
//! `/api/execute` request.
//!
//! A Run's files arrive as one archive (one `/api/write`); the Command that runs next unpacks it
//! first, in the same `bash -c` line ([`unpack_then`]), so staging costs no request of its own.
//!
//! Provider layer, pure. Source: cloudflare-sandbox-protocol.md §4.2 (sessionless commands run
//! in a fresh `bash -c` with `cwd` and `env` from the body), §4.3 (`/api/write` creates the
//! file's parent directories: the container writes with `Bun.write`, which creates a missing
//! parent by default, <https://bun.sh/reference/globals/bun/write>).

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

/// The staged archive (gzip'd tar of [`crate::transfer::tar::write_tar`]), in the
/// Box cwd.
pub const STAGED_ARCHIVE: &str = ".vite-hub-stage.tgz";
/// Where the unpacking's stderr goes, in the Box cwd; left behind only when it failed.
pub const STAGED_ERRORS: &str = ".vite-hub-stage.err";
/// Exit code of a line whose staged archive could not be unpacked (the Command did not run); a
/// Command's own exit with it is told apart by [`STAGED_ERRORS`] being absent.
pub const STAGE_EXIT: i32 = 96;

/// Exit code of a line whose prepared project (the staged file's first `prepared` bytes, see
/// [`unpack_then`]) could not be unpacked: what it unpacked is removed, the Run's own files
/// are not unpacked and the Command did not run.
pub const PREPARED_EXIT: i32 = 97;

/// The `bash -c` line that, in the Box cwd, unpacks the staged archive (modes kept, owners not,
/// the first `strip` path segments dropped, extraction time as mtime), deletes it, then runs
/// `line` in `cd` (relative to the Box cwd; `None`: the Box cwd) in place of the shell. A failed
/// unpacking leaves its stderr in [`STAGED_ERRORS`] and exits [`STAGE_EXIT`].
///
/// With `prepared` (bytes): the staged file begins with a prepared project's archive of that
/// length ([`pack_prepared`]: paths relative to the Box cwd), unpacked first on its own; when it fails, the line removes the
/// `project/` it was unpacking into and exits [`PREPARED_EXIT`] (its stderr in
/// [`STAGED_ERRORS`]), so a damaged prepared project is never taken for the Run's files.
pub fn unpack_then(strip: usize, prepared: Option<usize>, cd: Option<&str>, line: &str) -> String {
    let tar = format!("tar -x -z -p -m -o --strip-components={strip} -f");
    let mut out = match prepared {
        None => format!(
            "{{ {tar} {STAGED_ARCHIVE} 2>{STAGED_ERRORS} && rm -f {STAGED_ARCHIVE} {STAGED_ERRORS}; }} || exit {STAGE_EXIT}; "
        ),
        Some(n) => format!(
            "{{ head -c {n} {STAGED_ARCHIVE} | tar -x -z -p -m -o -f - 2>{STAGED_ERRORS}; }} || {{ rm -rf -- {project}; exit {PREPARED_EXIT}; }}; \
             {{ tail -c +{rest} {STAGED_ARCHIVE} | {tar} - 2>{STAGED_ERRORS} && rm -f {STAGED_ARCHIVE} {STAGED_ERRORS}; }} || exit {STAGE_EXIT}; ",
            project = crate::harness::paths::PROJECT_DIR,
            rest = n + 1
        ),
    };
    if let Some(dir) = cd {
        out.push_str("cd -- ");
        out.push_str(&shell_quote(dir));
        out.push_str(" && ");
    }
    out.push_str("exec ");
    out.push_str(line);
    out
}

/// Where the Run that installs packs its installed trees, in its Box cwd ([`pack_prepared`]).
pub const PREPARED_ARCHIVE: &str = ".vite-hub-prepared.tgz";
/// The largest packed prepared project (bytes, counted on the bytes read, not on what the Box
/// printed) a Worker carries from the Box that installed it to its store: it crosses the Worker
/// whole, in one container answer (base64 in JSON) and one RPC to the store, and sits in the
/// isolate's memory (128 MB on Workers) meanwhile. A larger one is not kept; its Runs install.
pub const MAX_PREPARED_ARCHIVE_BYTES: usize = 8 * 1024 * 1024;

/// The Command that packs the installed trees of `<cwd>/project` (every `node_modules`
/// directory, Yarn's `.yarn/` and `.pnp.*`; nothing else) into `<cwd>/`[`PREPARED_ARCHIVE`],
/// paths relative to the Box cwd (`project/node_modules/…`, unpacked so by [`unpack_then`];
/// every path in the script is relative to its cwd: a Box of plain processes sees only its cwd
/// where the container has it). Run right after the install, before the handler: what it packs
/// is what the install made. Refuses (exit 3) an archive over [`MAX_PREPARED_ARCHIVE_BYTES`];
/// the Worker counts the bytes it reads again.
pub fn pack_prepared(cwd: &str) -> Command {
    let p = crate::harness::paths::PROJECT_DIR;
    let script = format!(
        "{{ find {p} -type d -name node_modules -prune -print0; for f in {p}/.yarn {p}/.pnp.*; do [ -e \"$f\" ] && printf '%s\\0' \"$f\"; done; }} \
         | tar -c -z -f {PREPARED_ARCHIVE} --null -T - || exit 2; \
         [ \"$(wc -c < {PREPARED_ARCHIVE})\" -le {MAX_PREPARED_ARCHIVE_BYTES} ] || {{ echo 'the archive is over {MAX_PREPARED_ARCHIVE_BYTES} bytes' >&2; exit 3; }}"
    );
    Command {
        program: "sh".to_owned(),
        args: vec!["-c".to_owned(), script],
        cwd: Some(cwd.to_owned()),
        timeout_ms: Some(120_000),
        max_stdout_bytes: 64,
        max_stderr_bytes: 4096,
        ..Command::default()
    }
}

/// `dir` relative to `base` when it is `base` (`None`) or below it; else `dir` itself.
pub fn relative_to<'a>(dir: &'a str, base: &str) -> Option<&'a str> {
    let base = base.trim_end_matches('/');
    match dir.strip_prefix(base) {
        Some("") | Some("/") => None,
        Some(rest) if rest.starts_with('/') => Some(rest.trim_start_matches('/')),
        _ => Some(dir),
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
    use crate::env_map::EnvMap;

    #[test]
    fn argv_becomes_a_quoted_bash_line() {
        assert_eq!(
            shell_line(
                "node",
                &["../.vite-hub/harness.mjs".into(), "a b".into(), "it's".into(), "".into(), "$HOME".into()]
            ),
            "node ../.vite-hub/harness.mjs 'a b' 'it'\\''s' '' '$HOME'"
        );
        assert_eq!(shell_line("npm", &["ci".into(), "--no-audit".into()]), "npm ci --no-audit");
    }

    #[test]
    fn unpacking_comes_first_and_the_command_replaces_the_shell() {
        assert_eq!(
            unpack_then(3, None, Some("project dir"), "node x.mjs"),
            "{ tar -x -z -p -m -o --strip-components=3 -f .vite-hub-stage.tgz 2>.vite-hub-stage.err \
             && rm -f .vite-hub-stage.tgz .vite-hub-stage.err; } || exit 96; cd -- 'project dir' && exec node x.mjs"
        );
        assert!(unpack_then(1, None, None, "npm ci").ends_with("|| exit 96; exec npm ci"));
        let both = unpack_then(1, Some(10), None, "node x.mjs");
        assert!(both.starts_with("{ head -c 10 .vite-hub-stage.tgz | tar -x -z -p -m -o -f - 2>.vite-hub-stage.err; } || { rm -rf -- project; exit 97; }; "), "{both}");
        assert!(both.contains("{ tail -c +11 .vite-hub-stage.tgz | tar -x"), "{both}");
        assert!(both.ends_with("|| exit 96; exec node x.mjs"), "{both}");
        assert_eq!(relative_to("/workspace/r/project", "/workspace/r"), Some("project"));
        assert_eq!(relative_to("/workspace/r", "/workspace/r/"), None);
        assert_eq!(relative_to("/workspace/rx", "/workspace/r"), Some("/workspace/rx"));
        assert_eq!(relative_to("/tmp", "/workspace"), Some("/tmp"));
    }

    #[test]
    fn the_request_is_sessionless_with_an_absolute_cwd() {
        let command = Command {
            program: "node".into(),
            args: vec!["x.mjs".into()],
            cwd: Some("project".into()),
            timeout_ms: Some(9),
            env: EnvMap::from([("A".into(), "1".into())]),
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
