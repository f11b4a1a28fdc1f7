//! Definition: one runnable unit, a named JS package project (package.json + one ESM entry),
//! validated and reduced to what a Run needs: its files, entry module, timeout, install plan
//! and content digest.
//!
//! Pure, and provider-agnostic: no provider branches and no Box paths here. The JS glue reads the
//! folder (and, for a package inside a pnpm workspace, the workspace parts [`workspace`] names)
//! and compiles TypeScript (`X.ts` → `X.ts.mjs`) before calling [`Definition::from_source`];
//! every rule about what a valid Definition is lives here.
//!
//! Files are relative to the *install root* (Box dir `project/`); the package itself is at
//! `package_path` below it (`""` unless the package is inside a pnpm workspace).
//!
//! Source: DESIGN.md §7; vitehub-sandbox-contract.md §4.2 (discovery), §4.3 (package manager,
//! files, timeout key, workspace closure), §4.6 (timeouts); docs/internals/build-steps.md "TypeScript" and
//! "Project resolution".

pub mod box_project;
pub mod sandbox_options;

use crate::error::{quoted, Error, ErrorCode, Result};
use crate::transfer::box_file::path_problem;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

pub mod discovery;
pub mod glob;
pub mod install;
pub mod module_graph;
pub mod suggest;
pub mod workspace;

use install::{choose_manager, declares_dependencies, install_plan, ProjectFacts};
pub use install::{InstallPlan, PackageManager};

/// A package manager's JSON file (`package.json`, `package-lock.json`) parsed as Node and npm
/// read it: a leading UTF-8 byte order mark is skipped (Node's package.json reader and npm's
/// `json-parse-even-better-errors` strip it; an editor that saves "UTF-8 with BOM" writes one).
///
/// # Errors
/// serde_json's, when what follows is not JSON.
pub fn parse_package_json(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes))
}

/// Timeout of one attempt when the Definition sets none, in ms (5 minutes).
pub const DEFAULT_TIMEOUT_MS: u32 = 300_000;

/// Largest allowed Definition timeout, in ms (2³¹ − 1, the JS timer maximum).
pub const MAX_TIMEOUT_MS: u32 = 2_147_483_647;

/// How much longer a Box lives than the Definition timeout, in ms: room to recover the result
/// and close the Box after an attempt that used its whole timeout.
pub const BOX_GRACE_MS: u32 = 60_000;

/// The lifetime asked for a Box that runs a Definition with `timeout_ms`: the timeout plus
/// [`BOX_GRACE_MS`], capped at [`MAX_TIMEOUT_MS`] (a host may keep it in a JS timer, whose
/// maximum that is).
pub fn box_lifetime_ms(timeout_ms: u32) -> u32 {
    timeout_ms.saturating_add(BOX_GRACE_MS).min(MAX_TIMEOUT_MS)
}

/// Longest allowed Definition name, in bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// Largest total size of a Definition's files, in bytes (64 MiB). Dependencies are installed in
/// the Box, never shipped, so a package project is small; the bound keeps staging in memory safe.
pub const MAX_DEFINITION_BYTES: u64 = 64 * 1024 * 1024;

/// The root entry file names, in the order they are listed in messages.
/// The entry file names of a package Definition, in the order they are looked up.
pub const ENTRY_NAMES: [&str; 4] = ["index.ts", "index.mts", "index.js", "index.mjs"];

/// One file of a Definition, as read by the JS glue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionFile {
    /// Path relative to the install root, `/`-separated, e.g. `lib/util.mjs` or
    /// `packages/util/index.js`.
    pub path: String,
    /// The file bytes.
    pub content: Vec<u8>,
    /// Unix permission bits when they matter (e.g. `0o755` for an executable); `None` = 0o644.
    pub mode: Option<u32>,
}

/// A validated Definition, ready to be staged into a Box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The name, e.g. `tools/image-optimizer` (see [`validate_name`]).
    pub name: String,
    /// The files to ship, relative to the install root, sorted by path, excluded files dropped.
    pub files: Vec<DefinitionFile>,
    /// The package directory relative to the install root, `/`-separated; `""` = the root.
    pub package_path: String,
    /// The entry *source* path relative to the package directory, e.g. `index.ts` or
    /// `.vite-hub-sandbox/definition.mjs`.
    pub entry: String,
    /// What node imports, relative to the package directory: `<entry>.mjs` for a TypeScript
    /// entry (`index.ts.mjs`), else `entry`.
    pub entry_module: String,
    /// Timeout of one attempt, in ms: [`DefinitionSource::timeout`], else
    /// `vitehub.sandbox.timeout` of the package's package.json, else [`DEFAULT_TIMEOUT_MS`].
    pub timeout_ms: u32,
    /// The package manager of the project (see [`install`]), also when nothing is installed.
    pub manager: PackageManager,
    /// How to install dependencies at the install root; `None` when no shipped manifest
    /// declares any.
    pub install: Option<InstallPlan>,
    /// Content digest ([`project_digest`] of files, manager and package path). Equal digests
    /// mean an installed project can be reused.
    pub digest: String,
}

/// What `registerSandbox(name, definition)` receives, decoded (shape in `pkg-template/runtime/index.d.ts`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DefinitionSource {
    /// The files, relative to the install root.
    pub files: Vec<DefinitionFile>,
    /// The package directory relative to the install root (`packagePath`, default `""`).
    pub package_path: String,
    /// An explicit entry module relative to the package directory (`entry`); when set, the
    /// `index.*` lookup is skipped, and a `.mjs` entry needs no `"type": "module"`. Used for
    /// bundled free-form Definitions.
    pub entry: Option<String>,
    /// The timeout in ms (`timeout`), overriding `vitehub.sandbox.timeout`; any JSON value, so
    /// the rule (positive integer ≤ [`MAX_TIMEOUT_MS`]) is checked here.
    pub timeout: Option<Value>,
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
    } else if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))) {
        format!("it contains the character {}", quoted(&c.to_string()))
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

/// Whether a path (relative to the Definition root, `/`-separated) is never shipped: anything in
/// a `node_modules` or `.git` tree (at any depth, the directory itself included), `.env`,
/// `.env.*`, `.envrc` and `.npmrc` files (at any depth), and a root `bun.lockb`. Names compare
/// ASCII case-insensitively (`.ENV`, `.Env.local`, `Node_Modules/x` are excluded: case-insensitive
/// file systems treat them as the same files); `prod.env` is not a dotenv file and is shipped.
/// The JS walker asks this rule through the `isExcludedPath` wasm export (the tooling crate's `api/project.rs`).
pub fn is_excluded_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let base = lower.rsplit('/').next().unwrap_or(&lower);
    EXCLUDED.root_files.contains(&lower.as_str())
        || lower.split('/').any(|s| EXCLUDED.directories.contains(&s))
        || EXCLUDED.files.contains(&base)
        || EXCLUDED.file_prefixes.iter().any(|prefix| base.starts_with(prefix))
}

/// The names [`is_excluded_path`] never ships (lowercase; compared ASCII case-insensitively).
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExcludedNames {
    /// Directories excluded with everything below them, at any depth.
    pub directories: &'static [&'static str],
    /// File names excluded at any depth.
    pub files: &'static [&'static str],
    /// File name prefixes excluded at any depth (`.env.local`, `.env.production`).
    pub file_prefixes: &'static [&'static str],
    /// Paths excluded only at the Definition root.
    pub root_files: &'static [&'static str],
}

/// The one list of never-shipped names.
pub const EXCLUDED: ExcludedNames = ExcludedNames {
    directories: &["node_modules", ".git"],
    files: &[".env", ".envrc", ".npmrc"],
    file_prefixes: &[".env."],
    root_files: &["bun.lockb"],
};

/// The content digest of `files`: lowercase hex SHA-256 over, for each file in path order,
/// `len(path) as u64 LE ‖ path ‖ mode flag (0, or 1 ‖ mode as u32 LE) ‖ len(content) as u64 LE ‖
/// content`, after the tag `vite-hub-sandbox/definition/v1\0`.
pub fn content_digest(files: &[DefinitionFile]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"vite-hub-sandbox/definition/v1\0");
    for file in in_path_order(files.iter().collect(), |file| &file.path) {
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
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `items` in path order (as `str` compares, bytewise; equal paths keep their order): the order
/// the digests read files in. Whatever the item type, the sort is of `(path, index)` pairs, so the
/// wasm carries one sort for all of them.
pub(crate) fn in_path_order<T>(items: Vec<T>, path: impl Fn(&T) -> &str) -> Vec<T> {
    let order: Vec<usize> = {
        let mut keyed: Vec<(&str, usize)> = items.iter().map(&path).zip(0..).collect();
        keyed.sort();
        keyed.into_iter().map(|(_, index)| index).collect()
    };
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    order.into_iter().filter_map(|index| slots[index].take()).collect()
}

/// The digest of a project: SHA-256 over [`content_digest`] of `files`, then the manager name
/// and the package path, each as `len as u64 LE ‖ bytes`, after the tag
/// `vite-hub-sandbox/project/v1\0` (our binary analogue of the contract's
/// `sha256(JSON.stringify({files, manager, packagePath}))`). Lowercase hex.
pub fn project_digest(files: &[DefinitionFile], manager: PackageManager, package_path: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"vite-hub-sandbox/project/v1\0");
    hasher.update(content_digest(files).as_bytes());
    for part in [manager.as_str(), package_path] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl Definition {
    /// [`Definition::from_source`] with only files: the package is the install root, the entry
    /// is looked up, the timeout comes from package.json.
    ///
    /// # Errors
    /// As [`Definition::from_source`].
    pub fn from_files(name: &str, files: Vec<DefinitionFile>) -> Result<Definition> {
        Definition::from_source(name, DefinitionSource { files, ..DefinitionSource::default() })
    }

    /// Validates a Definition named `name` and derives its entry, timeout, package manager,
    /// install plan and digest. Excluded files ([`is_excluded_path`]) are silently dropped.
    ///
    /// # Errors
    /// `InvalidArgument` (every message names the Definition) when: the name is invalid; a file
    /// path is not a safe relative path or appears twice; `package_path` is not `""` or a safe
    /// relative path; the package's `package.json` (or, in a workspace, the root one) is missing,
    /// not JSON or not an object; the package's lacks `"type": "module"`; without an explicit
    /// `entry`, there is no package entry or more than one (`index.ts`, `index.mts`, `index.js`,
    /// `index.mjs`); an explicit `entry` is not a shipped `.js`/`.mjs`/`.ts`/`.mts` file; a
    /// TypeScript entry has no compiled `<entry>.mjs`; `vitehub.sandbox` is malformed; the
    /// timeout (option or `vitehub.sandbox.timeout`) is not a positive integer ≤
    /// [`MAX_TIMEOUT_MS`]; `packageManager` is not `npm|pnpm|yarn|bun@<version>`.
    pub fn from_source(name: &str, source: DefinitionSource) -> Result<Definition> {
        validate_name(name)?;
        let invalid =
            |detail: String| Error::new(ErrorCode::InvalidArgument, format!("Sandbox {} {detail}", quoted(name)));
        let package_path = source.package_path.trim_end_matches('/').to_owned();
        if let Some(why) = Some(package_path.as_str()).filter(|p| !p.is_empty()).and_then(path_problem) {
            return Err(invalid(format!("has an invalid packagePath {}: {why}.", quoted(&package_path))));
        }
        let in_package =
            |path: &str| if package_path.is_empty() { path.to_owned() } else { format!("{package_path}/{path}") };
        let files = source.files;
        // The first file (in the given order) with a problem is the one reported; a repeat is a
        // file whose path an earlier one has.
        let mut seen = BTreeSet::new();
        for file in &files {
            if let Some(why) = path_problem(&file.path) {
                return Err(invalid(format!("has an invalid file path {}: {why}.", quoted(&file.path))));
            }
            if !seen.insert(file.path.as_str()) {
                return Err(invalid(format!("has the file {} twice.", quoted(&file.path))));
            }
        }
        let kept: Vec<DefinitionFile> =
            in_path_order(files, |file| &file.path).into_iter().filter(|file| !is_excluded_path(&file.path)).collect();
        let total_bytes: u64 = kept.iter().map(|f| f.content.len() as u64).sum();
        if total_bytes > MAX_DEFINITION_BYTES {
            return Err(invalid(format!(
                "has {total_bytes} bytes of files, over the {MAX_DEFINITION_BYTES}-byte limit; ship sources only (dependencies are installed in the Box).",
            ))
            .with_limit("maxDefinitionBytes", total_bytes, MAX_DEFINITION_BYTES));
        }
        let has = |path: &str| kept.iter().any(|f| f.path == path);
        let content_of = |path: &str| kept.iter().find(|f| f.path == path).map(|f| f.content.as_slice());

        let read_manifest = |path: &str| -> Result<Map<String, Value>> {
            let where_ = if path == "package.json" {
                "at its root".to_owned()
            } else {
                format!("at {}", path.trim_end_matches("package.json"))
            };
            let bytes = content_of(path).ok_or_else(|| invalid(format!("requires a package.json {where_}.")))?;
            match parse_package_json(bytes) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(_) => Err(invalid(format!("has an invalid {path}: it must be a JSON object."))),
                Err(_) => Err(invalid(format!("has an invalid {path}: it is not valid JSON."))),
            }
        };
        let manifest = read_manifest(&in_package("package.json"))?;
        let root_manifest = if package_path.is_empty() { manifest.clone() } else { read_manifest("package.json")? };
        // An explicit `.mjs` entry (a bundled free-form Definition) is ESM whatever the manifest says.
        let explicit_mjs = source.entry.as_deref().is_some_and(|e| e.ends_with(".mjs"));
        if !explicit_mjs && manifest.get("type").and_then(Value::as_str) != Some("module") {
            return Err(invalid(format!(
                "must be an ES module package: add \"type\": \"module\" to its {}.",
                in_package("package.json")
            )));
        }

        let entry = match source.entry {
            Some(entry) => explicit_entry(&entry, &|p| has(&in_package(p))).map_err(invalid)?,
            None => {
                let entries: Vec<&str> = ENTRY_NAMES.iter().copied().filter(|e| has(&in_package(e))).collect();
                match entries.as_slice() {
                    [] => {
                        return Err(invalid(
                            "requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs).".into(),
                        ))
                    }
                    [one] => (*one).to_owned(),
                    several => return Err(invalid(format!("has multiple entrypoints: {}.", several.join(", ")))),
                }
            }
        };
        let entry_module = if entry.ends_with(".ts") || entry.ends_with(".mts") {
            let compiled = format!("{entry}.mjs");
            if !has(&in_package(&compiled)) {
                return Err(invalid(format!("TypeScript entry {entry} was not compiled: {compiled} is missing.")));
            }
            compiled
        } else {
            entry.clone()
        };

        let manifest_timeout = manifest_timeout_ms(&manifest).map_err(invalid)?;
        let timeout_ms = match &source.timeout {
            None => manifest_timeout,
            Some(value) => timeout_value_ms(value).ok_or_else(|| {
                invalid(format!("timeout must be a positive integer <= {MAX_TIMEOUT_MS} (milliseconds), got {value}."))
            })?,
        };

        let facts = ProjectFacts {
            declared: manifest.get("packageManager").or_else(|| root_manifest.get("packageManager")),
            has: &has,
            yarn_lock: content_of("yarn.lock"),
            yarnrc_yml: content_of(".yarnrc.yml"),
        };
        let (manager, declared_major) = choose_manager(&facts).map_err(invalid)?;
        let workspace = has("pnpm-workspace.yaml");
        let installs = declares_dependencies(&manifest)
            || declares_dependencies(&root_manifest)
            || (workspace && kept.iter().any(|f| is_manifest(&f.path) && manifest_declares_dependencies(&f.content)));
        let install = installs.then(|| {
            let inputs: Vec<(&str, Option<u32>, &[u8])> =
                kept.iter().map(|f| (f.path.as_str(), f.mode, f.content.as_slice())).collect();
            install_plan(manager, declared_major, &facts, &package_path, &inputs)
        });
        let digest = project_digest(&kept, manager, &package_path);
        Ok(Definition {
            name: name.to_owned(),
            files: kept,
            package_path,
            entry,
            entry_module,
            timeout_ms,
            manager,
            install,
            digest,
        })
    }
}

/// Checks an explicit `entry` (relative to the package directory); the detail of the error.
fn explicit_entry(entry: &str, has: &dyn Fn(&str) -> bool) -> std::result::Result<String, String> {
    let entry = entry.strip_prefix("./").unwrap_or(entry);
    if let Some(why) = path_problem(entry) {
        return Err(format!("has an invalid entry {}: {why}.", quoted(entry)));
    }
    if ![".js", ".mjs", ".ts", ".mts"].iter().any(|ext| entry.ends_with(ext))
        || entry.ends_with(".d.ts")
        || entry.ends_with(".d.mts")
    {
        return Err(format!("entry {} must be a .js, .mjs, .ts or .mts module.", quoted(entry)));
    }
    if !has(entry) {
        return Err(format!("entry {} is not one of its files; ship it or fix the path.", quoted(entry)));
    }
    Ok(entry.to_owned())
}

/// A `package.json` outside `node_modules` (excluded paths are already dropped).
fn is_manifest(path: &str) -> bool {
    path == "package.json" || path.ends_with("/package.json")
}

fn manifest_declares_dependencies(bytes: &[u8]) -> bool {
    matches!(parse_package_json(bytes), Ok(Value::Object(map)) if declares_dependencies(&map))
}

/// A timeout value in ms when it is a positive integer ≤ [`MAX_TIMEOUT_MS`] (`5e3` counts).
fn timeout_value_ms(value: &Value) -> Option<u32> {
    let as_integer = value.as_u64().or_else(|| {
        value.as_f64().filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= f64::from(MAX_TIMEOUT_MS)).map(|f| f as u64)
    });
    as_integer.filter(|ms| *ms >= 1 && *ms <= u64::from(MAX_TIMEOUT_MS)).map(|ms| ms as u32)
}

/// `vitehub.sandbox.timeout` of package.json, in ms; the detail of the error otherwise.
fn manifest_timeout_ms(manifest: &Map<String, Value>) -> std::result::Result<u32, String> {
    let Some(vitehub) = manifest.get("vitehub") else {
        return Ok(DEFAULT_TIMEOUT_MS);
    };
    let vitehub = vitehub.as_object().ok_or("package.json \"vitehub\" must be an object.")?;
    let Some(sandbox) = vitehub.get("sandbox") else {
        return Ok(DEFAULT_TIMEOUT_MS);
    };
    let sandbox = sandbox.as_object().ok_or("package.json \"vitehub.sandbox\" must be an object.")?;
    let unsupported: Vec<&str> = sandbox.keys().map(String::as_str).filter(|k| *k != "timeout").collect();
    if !unsupported.is_empty() {
        return Err(format!("package.json \"vitehub.sandbox\" has unsupported keys: {}.", unsupported.join(", ")));
    }
    let Some(timeout) = sandbox.get("timeout") else {
        return Ok(DEFAULT_TIMEOUT_MS);
    };
    timeout_value_ms(timeout).ok_or_else(|| {
        format!(
            "package.json \"vitehub.sandbox.timeout\" must be a positive integer <= {MAX_TIMEOUT_MS} (milliseconds)."
        )
    })
}

#[cfg(test)]
mod project_tests;
#[cfg(test)]
mod tests;
