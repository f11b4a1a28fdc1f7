//! Definition: one runnable unit, a named JS package project (package.json + one ESM entry),
//! validated and reduced to what a Run needs: its files, entry module, timeout, install plan
//! and content digest.
//!
//! Pure, and provider-agnostic: no provider branches and no Box paths here. The JS glue reads the
//! folder and compiles TypeScript (`X.ts` → `X.ts.mjs`) before calling
//! [`Definition::from_files`]; every rule about what a valid Definition is lives here.
//!
//! Source: DESIGN.md §7; vitehub-sandbox-contract.md §4.2 (discovery), §4.3 (package manager,
//! files, timeout key), §4.6 (timeouts); docs/internals.md "TypeScript".

pub mod sandbox_options;

use crate::error::{Error, ErrorCode, Result};
use crate::transfer::bundle::path_problem;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

pub mod module_graph;

/// Timeout of one attempt when the Definition sets none, in ms (5 minutes).
pub const DEFAULT_TIMEOUT_MS: u32 = 300_000;

/// Largest allowed Definition timeout, in ms (2³¹ − 1, the JS timer maximum).
pub const MAX_TIMEOUT_MS: u32 = 2_147_483_647;

/// Longest allowed Definition name, in bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// Largest total size of a Definition's files, in bytes (64 MiB). Dependencies are installed in
/// the Box, never shipped, so a package project is small; the bound keeps staging in memory safe.
pub const MAX_DEFINITION_BYTES: u64 = 64 * 1024 * 1024;

/// The root entry file names, in the order they are listed in messages.
const ENTRY_NAMES: [&str; 4] = ["index.ts", "index.mts", "index.js", "index.mjs"];

/// One file of a Definition, as read by the JS glue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionFile {
    /// Path relative to the package root, `/`-separated, e.g. `lib/util.mjs`.
    pub path: String,
    /// The file bytes.
    pub content: Vec<u8>,
    /// Unix permission bits when they matter (e.g. `0o755` for an executable); `None` = 0o644.
    pub mode: Option<u32>,
}

/// The package manager that installs a Definition's dependencies inside the Box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PackageManager {
    /// npm (the default).
    Npm,
    /// pnpm.
    Pnpm,
    /// Yarn (1 or Berry).
    Yarn,
    /// Bun.
    Bun,
}

impl PackageManager {
    /// The executable name: `"npm"`, `"pnpm"`, `"yarn"` or `"bun"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PackageManager::Npm => "npm",
            PackageManager::Pnpm => "pnpm",
            PackageManager::Yarn => "yarn",
            PackageManager::Bun => "bun",
        }
    }

    fn parse(s: &str) -> Option<PackageManager> {
        match s {
            "npm" => Some(PackageManager::Npm),
            "pnpm" => Some(PackageManager::Pnpm),
            "yarn" => Some(PackageManager::Yarn),
            "bun" => Some(PackageManager::Bun),
            _ => None,
        }
    }
}

/// How to install a Definition's dependencies: run `command args…` in the project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallPlan {
    /// The chosen package manager.
    pub manager: PackageManager,
    /// The executable (`manager.as_str()`).
    pub command: String,
    /// Its arguments, e.g. `["ci", "--no-audit", "--no-fund"]`.
    pub args: Vec<String>,
}

/// What a caller may set besides the files (e.g. a prepared free-form Definition, see
/// `pkg-template/free-form.mjs`). `Default` = no override.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DefinitionOverrides {
    /// The module node imports, relative to the package root (e.g.
    /// `.vite-hub-sandbox/definition.mjs`): skips the `index.*` lookup. Must be a shipped `.mjs`
    /// or `.js` file; a `.mjs` entry does not need `"type": "module"`.
    pub entry: Option<String>,
    /// Timeout of one attempt in ms, replacing `vitehub.sandbox.timeout`; a positive integer
    /// <= [`MAX_TIMEOUT_MS`] (checked here, as the JS number it came from).
    pub timeout_ms: Option<f64>,
}

/// A validated Definition, ready to be staged into a Box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The name, e.g. `tools/image-optimizer` (see [`validate_name`]).
    pub name: String,
    /// The files to ship, sorted by path, excluded files dropped.
    pub files: Vec<DefinitionFile>,
    /// The entry *source* name at the package root, e.g. `index.ts`.
    pub entry: String,
    /// What node imports: `<entry>.mjs` for a TypeScript entry (`index.ts.mjs`), else `entry`.
    pub entry_module: String,
    /// Timeout of one attempt, in ms (`vitehub.sandbox.timeout`, default
    /// [`DEFAULT_TIMEOUT_MS`]).
    pub timeout_ms: u32,
    /// How to install dependencies; `None` when package.json declares none.
    pub install: Option<InstallPlan>,
    /// Content digest: lowercase hex SHA-256 over the sorted `(path, mode, content)` of `files`
    /// (see [`content_digest`]). Equal digests mean an installed project can be reused.
    pub digest: String,
}

/// Checks a Definition name.
///
/// Allowed: 1–200 bytes of `/`-separated segments made of `A-Z a-z 0-9 . _ -`, without a
/// leading or trailing `/` and without empty, `.` or `..` segments (e.g. `release-notes`,
/// `tools/image-optimizer`).
///
/// # Errors
/// `InvalidArgument` naming the value, the problem and what is allowed.
pub fn validate_name(name: &str) -> Result<()> {
    let problem = if name.is_empty() {
        "it is empty".to_owned()
    } else if name.len() > MAX_NAME_BYTES {
        format!("it is longer than {MAX_NAME_BYTES} bytes")
    } else if name.starts_with('/') || name.ends_with('/') {
        "it starts or ends with '/'".to_owned()
    } else if name.split('/').any(str::is_empty) {
        "it has an empty segment".to_owned()
    } else if name.split('/').any(|s| s == "." || s == "..") {
        "it has a '.' or '..' segment".to_owned()
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
    {
        format!("it contains the character {}", Value::from(c.to_string()))
    } else {
        return Ok(());
    };
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!(
            "Invalid sandbox name {}: {problem}. A name is 1-{MAX_NAME_BYTES} bytes of '/'-separated segments \
             of letters, digits, '.', '_' and '-', without empty, '.' or '..' segments.",
            quoted(name)
        ),
    ))
}

/// Whether a file is never shipped: `node_modules` and `.git` trees (at any depth), `.env`,
/// `.env.*` and `.npmrc` files (at any depth), and a root `bun.lockb`.
pub fn is_excluded_path(path: &str) -> bool {
    let mut segments = path.split('/');
    let base = path.rsplit('/').next().unwrap_or(path);
    path == "bun.lockb"
        || segments.any(|s| s == "node_modules" || s == ".git")
        || base == ".env"
        || base == ".envrc"
        || base.starts_with(".env.")
        || base == ".npmrc"
}

/// The content digest of `files`: lowercase hex SHA-256 over, for each file in path order,
/// `len(path) as u64 LE ‖ path ‖ mode flag (0, or 1 ‖ mode as u32 LE) ‖ len(content) as u64 LE ‖
/// content`, after the tag `vite-hub-sandbox/definition/v1\0`.
pub fn content_digest(files: &[DefinitionFile]) -> String {
    let mut sorted: Vec<&DefinitionFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut hasher = Sha256::new();
    hasher.update(b"vite-hub-sandbox/definition/v1\0");
    for file in sorted {
        hasher.update((file.path.len() as u64).to_le_bytes());
        hasher.update(file.path.as_bytes());
        match file.mode {
            None => hasher.update([0u8]),
            Some(mode) => {
                hasher.update([1u8]);
                hasher.update(mode.to_le_bytes());
            }
        }
        hasher.update((file.content.len() as u64).to_le_bytes());
        hasher.update(&file.content);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Definition {
    /// Validates a Definition named `name` made of `files` and derives its entry, timeout,
    /// install plan and digest. Excluded files ([`is_excluded_path`]) are silently dropped.
    ///
    /// # Errors
    /// `InvalidArgument` (every message names the Definition) when: the name is invalid; a file
    /// path is not a safe relative path or appears twice; the root `package.json` is missing,
    /// not JSON or not an object; it lacks `"type": "module"`; there is no root entry or more
    /// than one (`index.ts`, `index.mts`, `index.js`, `index.mjs`); a TypeScript entry has no
    /// compiled `<entry>.mjs`; `vitehub.sandbox` is malformed or its `timeout` is not a positive
    /// integer ≤ [`MAX_TIMEOUT_MS`]; `packageManager` is not `npm|pnpm|yarn|bun@<version>`.
    pub fn from_files(name: &str, files: Vec<DefinitionFile>) -> Result<Definition> {
        Definition::from_files_with(name, files, &DefinitionOverrides::default())
    }

    /// [`Definition::from_files`] with an explicit entry and/or timeout ([`DefinitionOverrides`]).
    ///
    /// # Errors
    /// Those of [`Definition::from_files`] (except the entry lookup and, for a `.mjs` entry,
    /// `"type": "module"` when `overrides.entry` is set), plus `InvalidArgument` when the
    /// explicit entry is not a safe path, not a `.mjs`/`.js` file or not among the shipped
    /// files, or the explicit timeout is not a positive integer <= [`MAX_TIMEOUT_MS`].
    pub fn from_files_with(
        name: &str,
        files: Vec<DefinitionFile>,
        overrides: &DefinitionOverrides,
    ) -> Result<Definition> {
        validate_name(name)?;
        let invalid = |detail: String| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("Sandbox {} {detail}", quoted(name)),
            )
        };
        let mut seen = BTreeSet::new();
        let mut kept = Vec::with_capacity(files.len());
        for file in files {
            if let Some(why) = path_problem(&file.path) {
                return Err(invalid(format!(
                    "has an invalid file path {}: {why}.",
                    quoted(&file.path)
                )));
            }
            if !seen.insert(file.path.clone()) {
                return Err(invalid(format!(
                    "has the file {} twice.",
                    quoted(&file.path)
                )));
            }
            if !is_excluded_path(&file.path) {
                kept.push(file);
            }
        }
        kept.sort_by(|a, b| a.path.cmp(&b.path));
        let total_bytes: u64 = kept.iter().map(|f| f.content.len() as u64).sum();
        if total_bytes > MAX_DEFINITION_BYTES {
            return Err(invalid(format!(
                "has {total_bytes} bytes of files, over the {MAX_DEFINITION_BYTES}-byte limit; ship sources only (dependencies are installed in the Box).",
            ))
            .with_limit("maxDefinitionBytes", total_bytes, MAX_DEFINITION_BYTES));
        }
        let has = |path: &str| kept.iter().any(|f| f.path == path);
        let content_of = |path: &str| kept.iter().find(|f| f.path == path).map(|f| &f.content);

        let manifest_bytes = content_of("package.json")
            .ok_or_else(|| invalid("requires a package.json at its root.".into()))?;
        let manifest: Map<String, Value> = match serde_json::from_slice::<Value>(manifest_bytes) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                return Err(invalid(
                    "has an invalid package.json: it must be a JSON object.".into(),
                ))
            }
            Err(_) => {
                return Err(invalid(
                    "has an invalid package.json: it is not valid JSON.".into(),
                ))
            }
        };
        let explicit_mjs = overrides.entry.as_deref().is_some_and(|e| e.ends_with(".mjs"));
        if !explicit_mjs && manifest.get("type").and_then(Value::as_str) != Some("module") {
            return Err(invalid(
                "must be an ES module package: add \"type\": \"module\" to its package.json."
                    .into(),
            ));
        }

        let (entry, entry_module) = match &overrides.entry {
            Some(explicit) => {
                explicit_entry(explicit, &has).map_err(invalid)?;
                (explicit.clone(), explicit.clone())
            }
            None => root_entry(&has).map_err(invalid)?,
        };

        let manifest_timeout = manifest_timeout_ms(&manifest).map_err(invalid)?;
        let timeout_ms = match overrides.timeout_ms {
            Some(ms) => timeout_override_ms(ms).map_err(invalid)?,
            None => manifest_timeout,
        };
        let install = install_plan(&manifest, &has, content_of("yarn.lock")).map_err(invalid)?;
        let digest = content_digest(&kept);
        Ok(Definition {
            name: name.to_owned(),
            files: kept,
            entry,
            entry_module,
            timeout_ms,
            install,
            digest,
        })
    }
}

/// The `index.*` entry at the package root and the module node imports; the error detail otherwise.
fn root_entry(has: &dyn Fn(&str) -> bool) -> std::result::Result<(String, String), String> {
    let entries: Vec<&str> = ENTRY_NAMES.iter().copied().filter(|e| has(e)).collect();
    let entry = match entries.as_slice() {
        [] => {
            return Err(
                "requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs).".into(),
            )
        }
        [one] => *one,
        several => return Err(format!("has multiple entrypoints: {}.", several.join(", "))),
    };
    let entry_module = if entry.ends_with(".ts") || entry.ends_with(".mts") {
        let compiled = format!("{entry}.mjs");
        if !has(&compiled) {
            return Err(format!(
                "TypeScript entry {entry} was not compiled: {compiled} is missing."
            ));
        }
        compiled
    } else {
        entry.to_owned()
    };
    Ok((entry.to_owned(), entry_module))
}

/// Checks an explicit entry ([`DefinitionOverrides::entry`]); the error detail otherwise.
fn explicit_entry(entry: &str, has: &dyn Fn(&str) -> bool) -> std::result::Result<(), String> {
    if let Some(why) = path_problem(entry) {
        return Err(format!("has an invalid entry {}: {why}.", quoted(entry)));
    }
    if !(entry.ends_with(".mjs") || entry.ends_with(".js")) {
        return Err(format!(
            "has an invalid entry {}: it must be a .mjs or .js module.",
            quoted(entry)
        ));
    }
    if !has(entry) {
        return Err(format!(
            "has the entry {} but no such file; ship the module it names.",
            quoted(entry)
        ));
    }
    Ok(())
}

/// An explicit timeout ([`DefinitionOverrides::timeout_ms`]) in ms; the error detail otherwise.
fn timeout_override_ms(ms: f64) -> std::result::Result<u32, String> {
    if ms.fract() == 0.0 && ms >= 1.0 && ms <= f64::from(MAX_TIMEOUT_MS) {
        Ok(ms as u32)
    } else {
        Err(format!(
            "timeout must be a positive integer <= {MAX_TIMEOUT_MS} (milliseconds)."
        ))
    }
}

/// A value as a JSON string literal, for messages (`"a\"b"`).
fn quoted(text: &str) -> String {
    Value::from(text).to_string()
}

/// `vitehub.sandbox.timeout` of package.json, in ms; the detail of the error otherwise.
fn manifest_timeout_ms(manifest: &Map<String, Value>) -> std::result::Result<u32, String> {
    let Some(vitehub) = manifest.get("vitehub") else {
        return Ok(DEFAULT_TIMEOUT_MS);
    };
    let vitehub = vitehub
        .as_object()
        .ok_or("package.json \"vitehub\" must be an object.")?;
    let Some(sandbox) = vitehub.get("sandbox") else {
        return Ok(DEFAULT_TIMEOUT_MS);
    };
    let sandbox = sandbox
        .as_object()
        .ok_or("package.json \"vitehub.sandbox\" must be an object.")?;
    let unsupported: Vec<&str> = sandbox
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "timeout")
        .collect();
    if !unsupported.is_empty() {
        return Err(format!(
            "package.json \"vitehub.sandbox\" has unsupported keys: {}.",
            unsupported.join(", ")
        ));
    }
    let Some(timeout) = sandbox.get("timeout") else {
        return Ok(DEFAULT_TIMEOUT_MS);
    };
    let as_integer = timeout.as_u64().or_else(|| {
        timeout
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= f64::from(MAX_TIMEOUT_MS))
            .map(|f| f as u64)
    });
    match as_integer {
        Some(ms) if ms >= 1 && ms <= u64::from(MAX_TIMEOUT_MS) => Ok(ms as u32),
        _ => Err(format!(
            "package.json \"vitehub.sandbox.timeout\" must be a positive integer <= {MAX_TIMEOUT_MS} (milliseconds)."
        )),
    }
}

/// The install plan from package.json and the root lockfiles; `None` without dependencies.
fn install_plan(
    manifest: &Map<String, Value>,
    has: &dyn Fn(&str) -> bool,
    yarn_lock: Option<&Vec<u8>>,
) -> std::result::Result<Option<InstallPlan>, String> {
    let declares_dependencies = ["dependencies", "devDependencies", "optionalDependencies"]
        .iter()
        .any(|key| {
            manifest
                .get(*key)
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        });
    if !declares_dependencies {
        return Ok(None);
    }
    let declared = match manifest.get("packageManager") {
        None => None,
        Some(value) => Some(parse_package_manager(value).ok_or_else(|| {
            format!(
                "package.json \"packageManager\" must be \"<npm|pnpm|yarn|bun>@<version>\" (got {}).",
                value
            )
        })?),
    };
    let (manager, declared_major) = match declared {
        Some((manager, major)) => (manager, major),
        None => {
            let by_lockfile = [
                ("pnpm-lock.yaml", PackageManager::Pnpm),
                ("package-lock.json", PackageManager::Npm),
                ("yarn.lock", PackageManager::Yarn),
                ("bun.lock", PackageManager::Bun),
            ]
            .into_iter()
            .find(|(file, _)| has(file))
            .map_or(PackageManager::Npm, |(_, manager)| manager);
            (by_lockfile, None)
        }
    };
    let args: &[&str] = match manager {
        PackageManager::Npm if has("package-lock.json") => &["ci", "--no-audit", "--no-fund"],
        PackageManager::Npm => &["install", "--no-audit", "--no-fund"],
        PackageManager::Pnpm if has("pnpm-lock.yaml") => &["install", "--frozen-lockfile"],
        PackageManager::Bun if has("bun.lock") => &["install", "--frozen-lockfile"],
        PackageManager::Pnpm | PackageManager::Bun => &["install"],
        PackageManager::Yarn => match yarn_lock {
            None => &["install"],
            Some(lock) => {
                let yarn1 = match declared_major {
                    Some(major) => major == 1,
                    None => !contains(lock, b"__metadata:"),
                };
                if yarn1 {
                    &["install", "--frozen-lockfile"]
                } else {
                    &["install", "--immutable"]
                }
            }
        },
    };
    Ok(Some(InstallPlan {
        manager,
        command: manager.as_str().to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
    }))
}

/// Parses `packageManager` (`name@version[+hash]`) into the manager and the version's major.
fn parse_package_manager(value: &Value) -> Option<(PackageManager, Option<u64>)> {
    let (name, version) = value.as_str()?.split_once('@')?;
    let manager = PackageManager::parse(name)?;
    let major_text: String = version.chars().take_while(char::is_ascii_digit).collect();
    if major_text.is_empty() {
        return None;
    }
    Some((manager, major_text.parse().ok()))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests;
