//! R0032: a bare import in the Definition's reachable code must name a package its package.json
//! declares in `dependencies`, `peerDependencies` or `optionalDependencies`: only those are
//! installed in the Box for the Run. Node built-ins (`node:fs`, and bare `fs`, `fs/promises`, …)
//! need no entry; a self-import is R0025 ([`super::resolve`]). A package listed only in
//! `devDependencies` gets its own fix (move it), since a dev-only install is a build-time habit.
//!
//! Checked where the import is written (file:line:column) instead of failing inside the Box.
//! Source: issue 8, item 7; vitehub-sandbox-contract.md §4.3 (what is installed).

use super::workspace::package_specifier;
use crate::definition::install::{choose_manager, PackageManager, ProjectFacts};
use crate::error::quoted;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// Node's built-in modules importable without the `node:` prefix (`module.builtinModules` of
/// Node 20 without the internal `_` ones). Prefix-only built-ins (`node:test`, `node:sqlite`,
/// `node:sea`) take the `node:` path of [`super::resolve`].
const NODE_BUILTINS: [&str; 54] = [
    "assert",
    "assert/strict",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "dns/promises",
    "domain",
    "events",
    "fs",
    "fs/promises",
    "http",
    "http2",
    "https",
    "inspector",
    "inspector/promises",
    "module",
    "net",
    "os",
    "path",
    "path/posix",
    "path/win32",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "readline/promises",
    "repl",
    "stream",
    "stream/consumers",
    "stream/promises",
    "stream/web",
    "string_decoder",
    "sys",
    "timers",
    "timers/promises",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "util/types",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
];

/// Whether `specifier` is a Node built-in importable without `node:`.
fn is_builtin(specifier: &str) -> bool {
    NODE_BUILTINS.contains(&specifier)
}

/// What the Definition's manifest declares, and how its folder installs a package.
pub(super) struct Declared {
    runtime: BTreeSet<String>,
    dev: BTreeSet<String>,
    manager: PackageManager,
}

impl Declared {
    /// Reads `manifest`; `files` (relative to the install root) pick the manager for the fix.
    pub(super) fn new(manifest: &Map<String, Value>, files: &BTreeSet<String>) -> Self {
        let names = |key: &str| -> BTreeSet<String> {
            manifest.get(key).and_then(Value::as_object).map(|deps| deps.keys().cloned().collect()).unwrap_or_default()
        };
        let mut runtime = names("dependencies");
        runtime.extend(names("peerDependencies"));
        runtime.extend(names("optionalDependencies"));
        let has = |path: &str| files.contains(path);
        let facts =
            ProjectFacts { declared: manifest.get("packageManager"), has: &has, yarn_lock: None, yarnrc_yml: None };
        let manager = choose_manager(&facts).map_or(PackageManager::Npm, |(manager, _)| manager);
        Declared { runtime, dev: names("devDependencies"), manager }
    }

    /// The finding text for a bare `specifier` the manifest does not declare; `None` when it does,
    /// or when it is a Node built-in or not a package specifier.
    pub(super) fn check(&self, specifier: &str) -> Option<String> {
        if is_builtin(specifier) {
            return None;
        }
        let (name, _) = package_specifier(specifier)?;
        if self.runtime.contains(name) {
            return None;
        }
        let add = match self.manager {
            PackageManager::Npm => format!("npm i {name}"),
            PackageManager::Pnpm => format!("pnpm add {name}"),
            PackageManager::Yarn => format!("yarn add {name}"),
            PackageManager::Bun => format!("bun add {name}"),
        };
        Some(if self.dev.contains(name) {
            format!(
                "imports {}, but package.json lists {} only in \"devDependencies\", which are not for the Run (R0032). Move it to \"dependencies\": run `{add}` in the Definition's folder.",
                quoted(specifier), quoted(name)
            )
        } else {
            format!(
                "imports {}, but package.json does not list {} in \"dependencies\" (R0032). Run `{add}` in the Definition's folder, so it is installed in the Box.",
                quoted(specifier), quoted(name)
            )
        })
    }
}
