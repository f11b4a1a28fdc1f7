//! The install step of a Run: the Command that installs a Definition's dependencies at the
//! install root, and the error of a failed install: the command, its exit code and the last
//! lines of both its stdout and stderr (pnpm prints `ERR_PNPM_*` to stdout, npm to stderr),
//! bounded so the whole message stays under [`crate::error::MAX_MESSAGE_BYTES`].
//!
//! Pure (unit-tested natively).

use crate::env_map::EnvMap;

use crate::command::{last_bytes, Command, CommandOutcome};
use crate::definition::install::{InstallPlan, PackageManager};
use crate::error::{Error, ErrorCode, Operation};
use crate::provider_kind::ProviderKind;

/// Bytes of stdout asked of the Box for an install (the last ones).
pub const INSTALL_STDOUT_BYTES: usize = 6 * 1024;
/// Bytes of stderr asked of the Box for an install (the last ones).
pub const INSTALL_STDERR_BYTES: usize = 8 * 1024;

/// Environment of a Yarn install (Yarn 1 ignores it): Berry keeps its package cache in the
/// project (`.yarn/cache`, which a prepared project keeps; a Plug'n'Play install reads its
/// packages from there at run time, and the Box's home is not kept) and sends no telemetry.
const YARN_ENV: [(&str, &str); 2] = [("YARN_ENABLE_GLOBAL_CACHE", "false"), ("YARN_ENABLE_TELEMETRY", "0")];

/// The install Command of `plan`, run in `project_dir` (absolute Box path), killed after
/// `timeout_ms` (the Run's remaining time). A Yarn install gets `YARN_ENV` (no global cache, no telemetry).
pub fn install_command(plan: &InstallPlan, project_dir: String, timeout_ms: Option<u64>) -> Command {
    let env: EnvMap = match plan.manager {
        PackageManager::Yarn => YARN_ENV.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        _ => EnvMap::new(),
    };
    Command {
        program: plan.command.clone(),
        args: plan.args.clone(),
        cwd: Some(project_dir),
        env,
        timeout_ms,
        max_stdout_bytes: INSTALL_STDOUT_BYTES,
        max_stderr_bytes: INSTALL_STDERR_BYTES,
    }
}

/// Prefix of the line with which the fingerprint rule (`crates/core/src/harness/fingerprint.cjs`,
/// printed by [`KEPT_SCRIPT`]) gives its digest.
pub const FINGERPRINT_PREFIX: &str = "vitehub-fingerprint:";

/// The line [`sealed_install`] prints last when its clean-up succeeded.
pub const SEALED_LINE: &str = "vitehub-prepared:sealed";

/// The clean-up a sealed install runs once the install succeeded, from the project directory:
/// in the Box cwd (its parent), removes everything but `project/`, and in `project/` every
/// non-directory outside the installed trees (every `node_modules`, Yarn's `.yarn/` and `.pnp.*`
/// at the project root) and every directory left empty outside them; then prints
/// [`SEALED_LINE`]. Paths are relative: a Box of plain processes (the local Box host without
/// isolation) sees only its cwd mapped to where it is.
const SEAL_SCRIPT: &str = "\"$0\" \"$@\" || exit\n\
    cd .. \
    && find . -mindepth 1 -maxdepth 1 ! -name project -exec rm -rf {} + \
    && find project -mindepth 1 ! -type d ! -path '*/node_modules/*' ! -path 'project/.yarn/*' ! -path 'project/.pnp.*' -exec rm -f {} + \
    && find project -mindepth 1 -depth -type d -empty ! -path '*/node_modules/*' ! -path 'project/.yarn/*' -delete \
    && echo vitehub-prepared:sealed\n\
    exit 0\n";

/// `install` (in the Box's `project/`) followed, when it succeeds, by the clean-up that leaves
/// only what the install made (`SEAL_SCRIPT`): `sh -c '<script>' <install argv…>`, one request
/// as the install alone, same cwd, env, timeout and output caps. The exit code is the install's
/// (a failed clean-up still exits 0 and prints no [`SEALED_LINE`]: see [`sealed`]). The Box is
/// then snapshotted as the prepared project before any handler runs in it
/// (the runtime's `run::prepared::seal`).
pub fn sealed_install(install: Command) -> Command {
    let mut args = vec!["-c".to_owned(), SEAL_SCRIPT.to_owned(), install.program];
    args.extend(install.args);
    Command { program: "sh".to_owned(), args, ..install }
}

/// Whether the stdout of a [`sealed_install`] says its clean-up succeeded (its last line is
/// [`SEALED_LINE`]).
pub fn sealed(stdout: &str) -> bool {
    stdout.lines().rev().find(|line| !line.trim().is_empty()).is_some_and(|line| line.trim() == SEALED_LINE)
}

/// The fingerprint printed by [`KEPT_SCRIPT`] in `stdout` (its last such line).
pub fn fingerprint_in(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix(FINGERPRINT_PREFIX))
        .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
}

/// Prepared directories a kept Box holds at most (the least recently used beyond are removed).
pub const KEPT_PER_BOX: usize = 4;

/// A Node script (CommonJS, `node -e <script> <dir> <expected fingerprint|-> <install argv…>`,
/// cwd the Run's project directory; source `crates/core/src/harness/kept-prepared.cjs` after the
/// `fingerprint(root)` of `fingerprint.cjs`, embedded by `build.rs`) for a Run in a kept Box.
/// With an expected fingerprint (the isolate's record, the runtime's `run::prepared::kept_fingerprint`;
/// `-` when it has none) and `<dir>/record.json` there, copies `<dir>/tree` into the cwd and
/// fingerprints that copy (the Run's own); equal: prints `vitehub-prepared:restored`. Else (nothing
/// there, no expected fingerprint, or a different one: the copy is undone and `<dir>` removed) runs
/// the install argv, exits with its code when it fails, then copies the cwd's installed trees
/// (every `node_modules`, Yarn's `.yarn/` and `.pnp.*`) to `<dir>.tmp-<pid>`, fingerprints them,
/// writes the record last and renames it to `<dir>`, keeps the [`KEPT_PER_BOX`] most recently used
/// digests, and prints `vitehub-prepared:installed` (`reinstalled` when a tree expected there was
/// missing or changed) and last `vitehub-fingerprint:<hex>` of the kept tree (`…:none` when it
/// could not be kept, said before on a `vitehub-prepared:not-kept <reason>` line).
pub const KEPT_SCRIPT: &str = concat!(
    include_str!(concat!(env!("OUT_DIR"), "/fingerprint.cjs")),
    include_str!(concat!(env!("OUT_DIR"), "/kept-prepared.cjs"))
);

/// The last word of `vitehub-prepared:` lines in `stdout`, and the reason of a `not-kept` line.
pub fn kept_outcome(stdout: &str) -> (Option<&str>, Option<&str>) {
    let mut outcome = None;
    let mut not_kept = None;
    for line in stdout.lines() {
        if let Some(word) = line.trim().strip_prefix("vitehub-prepared:") {
            match word.strip_prefix("not-kept ") {
                Some(reason) => not_kept = Some(reason),
                None => outcome = Some(word),
            }
        }
    }
    (outcome, not_kept)
}

/// How the name of a prepared project begins: Vercel and the local Box host create the Box
/// whose snapshot it is under that name; Cloudflare names the Durable Object that stores it so
/// (and refuses a `sandboxId` that begins so, `provider::cloudflare::options::box_id_from`).
pub const PREPARED_NAME_PREFIX: &str = "vitehub-prepared-";

/// The name of the prepared project of install `digest`: [`PREPARED_NAME_PREFIX`] and the first
/// 40 hex chars of the digest (a Box or Durable Object name of at most 57 characters).
pub fn prepared_name(digest: &str) -> String {
    format!("{PREPARED_NAME_PREFIX}{}", digest.get(..40).unwrap_or(digest))
}

/// Where a kept Box whose Runs share `root` keeps the prepared project of `digest`.
pub fn kept_dir(root: &str, digest: &str) -> String {
    format!("{}/.vite-hub-prepared/{digest}", root.trim_end_matches('/'))
}

/// `install` run through [`KEPT_SCRIPT`] with the prepared directory `dir` (an absolute Box path)
/// and the fingerprint the isolate expects of it (`None`: the tree is not trusted, the Run
/// installs); same cwd, timeout and output caps; one request, as the install alone. The script
/// is given `dir` relative to the install's cwd ([`relative_box_path`]): a Box of plain processes
/// (the local Box host without isolation) finds its Box paths below its host directory, where an
/// absolute Box path in an argument would lead elsewhere on the host.
pub fn kept_install(install: Command, dir: &str, expected: Option<String>) -> Command {
    let dir = install.cwd.as_deref().map_or_else(|| dir.to_owned(), |cwd| relative_box_path(cwd, dir));
    let mut args =
        vec!["-e".to_owned(), KEPT_SCRIPT.to_owned(), dir, expected.unwrap_or_else(|| "-".to_owned()), install.program];
    args.extend(install.args);
    Command { program: "node".to_owned(), args, ..install }
}

/// The path of the absolute Box path `to` relative to the absolute Box directory `from`
/// (`..` segments up to their common ancestor, then down; `.` when they are one), for Command
/// arguments: a Command's cwd is mapped to where its process sees it, its arguments are not.
/// Both paths are normalised Box paths (no `.` or `..` segments).
///
/// Shape: `relative_box_path("/w/.runs/r/project", "/w/.kept/ab") == "../../../.kept/ab"`.
pub fn relative_box_path(from: &str, to: &str) -> String {
    let from: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let parts: Vec<&str> = std::iter::repeat_n("..", from.len() - common).chain(to[common..].iter().copied()).collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// The `Server-Timing` description of an install in a kept Box, from [`kept_outcome`].
pub fn kept_desc(outcome: Option<&str>) -> &'static str {
    match outcome {
        Some("restored") => "prepared",
        Some("reinstalled") => "fresh-fallback",
        _ => "fresh",
    }
}

/// `SANDBOX_EXECUTION_ERROR` for an install that exited with `outcome.exit_code != 0`, with the
/// exit code, operation `install` and [`install_failure_message`].
pub fn install_failure(plan: &InstallPlan, outcome: &CommandOutcome, provider: ProviderKind) -> Error {
    let command_line = format!("{} {}", plan.command, plan.args.join(" "));
    Error::new(
        ErrorCode::ExecutionError,
        install_failure_message(&command_line, outcome.exit_code, &outcome.stdout, &outcome.stderr),
    )
    .with_exit_code(outcome.exit_code)
    .with_output_tails(&outcome.stdout, &outcome.stderr)
    .with_operation(Operation::Install)
    .with_provider(provider)
}

/// Whether a line says nothing about the failure: empty lines, npm's bare `npm error` /
/// `npm notice` lines, and npm's "A complete log of this run can be found in: <path>" (a path
/// inside the Box, which is gone once the Run ends).
fn is_noise(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty()
        || trimmed == "npm error"
        || trimmed.starts_with("npm notice")
        || trimmed.contains("A complete log of this run can be found in")
}

/// The last non-noise lines of `text` whose total size (with newlines) is at most `budget` bytes.
/// A single line longer than the budget is kept by its last bytes, cut at a char boundary.
fn tail_lines(text: &str, budget: usize) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for line in text.lines().rev().filter(|line| !is_noise(line)) {
        let line = line.trim_end();
        if used + line.len() + 1 > budget {
            if kept.is_empty() {
                kept.push(last_bytes(line, budget.saturating_sub(1)));
            }
            break;
        }
        used += line.len() + 1;
        kept.push(line);
    }
    kept.reverse();
    kept.join("\n")
}

/// `Package install failed: \`&lt;command line&gt;\` exited with code <exit_code>.` followed by, for
/// each stream with something left after dropping noise, `stdout:` / `stderr:` and its last lines
/// (at most [`INSTALL_STDOUT_BYTES`] and [`INSTALL_STDERR_BYTES`] bytes: together with the
/// header below the 16 KiB message limit, so neither stream's tail is cut by the bound).
pub fn install_failure_message(command_line: &str, exit_code: i32, stdout: &str, stderr: &str) -> String {
    let mut message = format!("Package install failed: `{command_line}` exited with code {exit_code}.");
    for (label, text, budget) in [("stdout", stdout, INSTALL_STDOUT_BYTES), ("stderr", stderr, INSTALL_STDERR_BYTES)] {
        let tail = tail_lines(text, budget);
        if !tail.is_empty() {
            message.push_str(&format!("\n{label}:\n{tail}"));
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MAX_MESSAGE_BYTES;

    #[test]
    fn a_box_path_relative_to_a_directory_climbs_to_their_common_ancestor() {
        assert_eq!(
            relative_box_path("/vercel/sandbox/.vite-hub-runs/r1/project", "/vercel/sandbox/.vite-hub-prepared/ab"),
            "../../../.vite-hub-prepared/ab"
        );
        assert_eq!(
            relative_box_path("/workspace/run/project", "/workspace/.vite-hub-prepared/ab"),
            "../../.vite-hub-prepared/ab"
        );
        assert_eq!(relative_box_path("/a/b", "/a/b"), ".");
        assert_eq!(relative_box_path("/a/b", "/a/b/c"), "c");
        assert_eq!(relative_box_path("/a/bc", "/a/b"), "../b");
        assert_eq!(relative_box_path("/", "/x/y"), "x/y");
    }

    #[test]
    fn a_kept_install_is_the_script_then_the_install_argv_and_its_outcome_is_read_back() {
        let install = Command {
            program: "npm".into(),
            args: vec!["ci".into()],
            cwd: Some("/w/r/project".into()),
            timeout_ms: Some(9),
            ..Command::default()
        };
        let kept = kept_install(install.clone(), &kept_dir("/w/", "ab"), Some("f0".to_owned()));
        assert_eq!(kept.program, "node");
        assert_eq!(kept.args[0], "-e");
        // Relative to the install's cwd: a plain-process Box sees its Box paths below its host dir.
        assert_eq!(&kept.args[2..], ["../../.vite-hub-prepared/ab", "f0", "npm", "ci"]);
        assert_eq!(
            &kept_install(install, &kept_dir("/w", "ab"), None).args[2..],
            ["../../.vite-hub-prepared/ab", "-", "npm", "ci"]
        );
        // One source of the fingerprint rule: the kept script begins with fingerprint.cjs's function.
        assert!(KEPT_SCRIPT.starts_with("function fingerprint(root) {"));
        assert_eq!((kept.cwd.as_deref(), kept.timeout_ms), (Some("/w/r/project"), Some(9)));
        assert!(
            KEPT_SCRIPT.contains(&format!("const KEPT_PER_BOX = {KEPT_PER_BOX};")),
            "the script keeps KEPT_PER_BOX digests"
        );
        let stdout = "added 1 package\nvitehub-prepared:not-kept ENOSPC: no space\nvitehub-prepared:installed\n";
        assert_eq!(kept_outcome(stdout), (Some("installed"), Some("ENOSPC: no space")));
        assert_eq!(kept_desc(kept_outcome(stdout).0), "fresh");
        assert_eq!(kept_desc(kept_outcome("vitehub-prepared:restored\n").0), "prepared");
        assert_eq!(kept_desc(kept_outcome("vitehub-prepared:reinstalled").0), "fresh-fallback");
        assert_eq!(kept_outcome("npm ci output only"), (None, None));
    }

    #[test]
    fn both_streams_are_kept_and_labelled() {
        let message = install_failure_message(
            "pnpm install --frozen-lockfile",
            1,
            "Lockfile is up to date\n ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with \"frozen-lockfile\"\n",
            "some warning\n",
        );
        assert_eq!(
            message,
            "Package install failed: `pnpm install --frozen-lockfile` exited with code 1.\nstdout:\nLockfile is up to date\n ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with \"frozen-lockfile\"\nstderr:\nsome warning"
        );
    }

    #[test]
    fn npm_noise_is_dropped_so_the_cause_survives_a_long_usage_text() {
        let mut stderr =
            String::from("npm error code EUSAGE\nnpm error\nnpm error Missing: left-pad@1.3.0 from lock file\n");
        for i in 0..60 {
            stderr.push_str(&format!(
                "npm error\nnpm error   --option-{i}\nnpm error     Some help text for option {i}.\n"
            ));
        }
        stderr.push_str("npm notice New major version\nnpm error A complete log of this run can be found in: /root/.npm/_logs/x.log\n");
        let message = install_failure_message("npm ci", 1, "", &stderr);
        assert!(message.contains("Missing: left-pad@1.3.0 from lock file"), "{message}");
        assert!(!message.contains("/root/.npm"), "{message}");
        assert!(!message.contains("npm notice"), "{message}");
        assert!(!message.contains("stdout:"), "{message}");
        assert!(message.ends_with("Some help text for option 59."), "{message}");
    }

    #[test]
    fn huge_output_keeps_the_last_lines_under_the_message_limit() {
        let stdout: String = (0..10_000).map(|i| format!("out line {i}\n")).collect();
        let stderr: String = (0..10_000).map(|i| format!("err line {i}\n")).collect();
        let message = install_failure_message("npm ci", 2, &stdout, &stderr);
        assert!(message.len() < MAX_MESSAGE_BYTES, "{}", message.len());
        assert!(message.contains("out line 9999\nstderr:\n"), "{message}");
        assert!(message.ends_with("err line 9999"));
        assert!(!message.contains("out line 0\n"));
    }

    #[test]
    fn one_overlong_line_is_kept_by_its_end_at_a_char_boundary() {
        let stderr = format!("{}END", "é".repeat(INSTALL_STDERR_BYTES));
        let message = install_failure_message("npm ci", 1, "", &stderr);
        let tail = message.split("stderr:\n").nth(1).unwrap();
        assert!(tail.ends_with("END") && tail.len() < INSTALL_STDERR_BYTES, "{}", tail.len());
    }

    #[test]
    fn the_fingerprint_is_the_last_well_formed_line_and_a_sealed_install_says_when_it_cleaned() {
        let hex = "ab".repeat(32);
        assert_eq!(fingerprint_in(&format!("added 1 package\nvitehub-fingerprint:{hex}\n")), Some(hex.clone()));
        assert_eq!(fingerprint_in("vitehub-fingerprint:xyz\n"), None);
        assert_eq!(fingerprint_in("added 1 package\n"), None);
        let wrapped = sealed_install(install_command(
            &crate::definition::Definition::from_files(
                "d",
                vec![
                    crate::definition::DefinitionFile {
                        path: "package.json".into(),
                        content: br#"{"type":"module","dependencies":{"a":"1"}}"#.to_vec(),
                        mode: None,
                    },
                    crate::definition::DefinitionFile {
                        path: "index.mjs".into(),
                        content: b"export default 1".to_vec(),
                        mode: None,
                    },
                ],
            )
            .unwrap()
            .install
            .unwrap(),
            "/w/project".into(),
            Some(5),
        ));
        assert_eq!(wrapped.program, "sh");
        assert_eq!(&wrapped.args[2..], ["npm", "install", "--no-audit", "--no-fund"]);
        assert_eq!(wrapped.cwd.as_deref(), Some("/w/project"));
        assert_eq!(wrapped.timeout_ms, Some(5));
        assert!(wrapped.args[1].starts_with("\"$0\" \"$@\" || exit\n"), "the install's own exit code first");
        assert!(sealed("added 1 package\nvitehub-prepared:sealed\n"));
        assert!(!sealed("added 1 package\n"));
        assert!(!sealed("vitehub-prepared:sealed\nfind: cannot delete\n"));
    }

    #[test]
    fn silent_failures_have_only_the_header() {
        assert_eq!(
            install_failure_message("npm ci", 137, "\n\n", ""),
            "Package install failed: `npm ci` exited with code 137."
        );
    }
}
