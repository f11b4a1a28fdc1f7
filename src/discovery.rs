//! Definition discovery: which files of an app are Definitions, under which names.
//!
//! Pure: the JS glue walks the app root (it skips `node_modules/`, `.git/`, build output and dot
//! directories) and hands over relative POSIX paths plus the directories that hold a
//! `package.json` or a `pnpm-workspace.yaml`; every rule about what is a Definition lives here.
//! Nothing here reads files or validates a package's contents: that is [`crate::definition`].
//!
//! Two kinds of Definition:
//! - **package projects**: a directory below `server/sandboxes/` with a `package.json` and exactly
//!   one of `index.ts`, `index.mts`, `index.js`, `index.mjs`; name = its path below
//!   `server/sandboxes` (`tools/image-optimizer`). Package directories inside it (helpers, nested
//!   packages, pnpm workspace internals) are not Definitions. Loose files directly in
//!   `server/sandboxes/` are ignored.
//! - **free-form files**: `<path>.sandbox.{ts,mts,cts,js,mjs,cjs}` outside `server/sandboxes/`
//!   and `src/server/sandboxes/`; name = path without a leading `src/` and without the suffix
//!   (`src/content/summary.sandbox.ts` → `content/summary`); its project is the nearest ancestor
//!   directory with a `package.json`.
//!
//! Source: vitehub-sandbox-contract.md §4.2 (discovery rules), §4.3 (nearest package.json);
//! issue 3 item 1.

use crate::definition::validate_name;
use crate::error::{quoted, Error, ErrorCode, Result};
use crate::transfer::bundle::path_problem;
use std::collections::{BTreeMap, BTreeSet};

/// The directory (relative to the app root) whose sub-directories are package projects.
pub const SANDBOXES_DIR: &str = "server/sandboxes";

/// Directories (with their trailing `/`) where free-form `*.sandbox.*` files are ignored.
const IGNORED_FREE_FORM_PREFIXES: [&str; 2] = ["server/sandboxes/", "src/server/sandboxes/"];

/// The entry file names of a package project, in the order they are listed in messages.
const ENTRY_NAMES: [&str; 4] = ["index.ts", "index.mts", "index.js", "index.mjs"];

/// The suffixes that make a file a free-form Definition.
const FREE_FORM_SUFFIXES: [&str; 6] = [
    ".sandbox.ts",
    ".sandbox.mts",
    ".sandbox.cts",
    ".sandbox.js",
    ".sandbox.mjs",
    ".sandbox.cjs",
];

/// How a Definition was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefinitionKind {
    /// A package project below `server/sandboxes/` (JS name `"package"`).
    PackageEntry,
    /// A free-form `<path>.sandbox.*` file (JS name `"free-form"`).
    FreeForm,
}

impl DefinitionKind {
    /// The JS name: `"package"` or `"free-form"`.
    pub fn as_str(self) -> &'static str {
        match self {
            DefinitionKind::PackageEntry => "package",
            DefinitionKind::FreeForm => "free-form",
        }
    }
}

/// One discovered Definition. Paths are relative to the app root, `/`-separated.
///
/// Shape (JS, from `discoverDefinitions`):
/// ```ts
/// { name: string, kind: 'package' | 'free-form', dir: string, entry: string }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredDefinition {
    /// The Definition name, valid per [`validate_name`] (`tools/image-optimizer`).
    pub name: String,
    /// How it was found.
    pub kind: DefinitionKind,
    /// The package project directory: the Definition's folder for a package project, the nearest
    /// directory with a `package.json` for a free-form file (`""` = the app root).
    pub dir: String,
    /// The entry file (`server/sandboxes/release-notes/index.ts`, `src/content/summary.sandbox.ts`).
    pub entry: String,
}

/// What the JS glue found under the app root.
///
/// Shape (JS, input of `discoverDefinitions`):
/// ```ts
/// { files: string[], packageDirs: string[], workspaceDirs: string[] }
/// ```
/// Every path is relative to the app root and `/`-separated; a directory is `""` for the root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryInput {
    /// Every file under the root, excluding `node_modules/` and `.git/` trees (any order).
    pub files: Vec<String>,
    /// The directories that contain a `package.json`.
    pub package_dirs: Vec<String>,
    /// The directories that contain a `pnpm-workspace.yaml`.
    pub workspace_dirs: Vec<String>,
}

/// Finds every Definition of an app, sorted by name.
///
/// A package directory below `server/sandboxes/` without an entry is not an error when it lies
/// inside a Definition, contains one, or is (or lies inside) a pnpm workspace root below
/// `server/sandboxes/` (workspace internals).
///
/// # Errors
/// `InvalidArgument`, with a message naming the folder or file, when:
/// - a path of the input is absolute, empty, or has an empty, `.` or `..` segment;
/// - a package directory has no entry: `Sandbox package "server/sandboxes/x" requires one ESM
///   entrypoint (index.ts, index.mts, index.js or index.mjs).`;
/// - it has several: `Sandbox package "server/sandboxes/x" has multiple entrypoints: index.ts,
///   index.mjs.`;
/// - a free-form file has no `package.json` in its directory or any ancestor up to the root:
///   `Sandbox file "lib/x.sandbox.ts" requires a package.json between its directory and the app
///   root.`;
/// - a derived name is invalid (`Sandbox package "server/sandboxes/a b": Invalid sandbox name …`,
///   `Sandbox file "…": …`, see [`validate_name`]);
/// - two Definitions have one name: `Duplicate sandbox name "x": <a> and <b>.` (folders of
///   package projects, files of free-form Definitions, in path order).
pub fn discover(input: &DiscoveryInput) -> Result<Vec<DiscoveredDefinition>> {
    check_paths(input)?;
    let files: BTreeSet<&str> = input.files.iter().map(String::as_str).collect();
    let package_dirs: BTreeSet<&str> = input.package_dirs.iter().map(String::as_str).collect();
    let workspace_dirs: BTreeSet<&str> = input.workspace_dirs.iter().map(String::as_str).collect();

    let mut found = package_projects(&files, &package_dirs, &workspace_dirs)?;
    found.extend(free_form_files(&files, &package_dirs)?);

    let mut by_name: BTreeMap<String, DiscoveredDefinition> = BTreeMap::new();
    for definition in found {
        if let Some(previous) = by_name.get(&definition.name) {
            let mut origins = [origin(previous), origin(&definition)];
            origins.sort_unstable();
            return Err(invalid(format!(
                "Duplicate sandbox name {}: {} and {}.",
                quoted(&definition.name),
                origins[0],
                origins[1]
            )));
        }
        by_name.insert(definition.name.clone(), definition);
    }
    Ok(by_name.into_values().collect())
}

/// The folder (package project) or file (free-form) a Definition comes from, for messages.
fn origin(definition: &DiscoveredDefinition) -> &str {
    match definition.kind {
        DefinitionKind::PackageEntry => &definition.dir,
        DefinitionKind::FreeForm => &definition.entry,
    }
}

fn check_paths(input: &DiscoveryInput) -> Result<()> {
    let lists = [
        ("files", &input.files, false),
        ("packageDirs", &input.package_dirs, true),
        ("workspaceDirs", &input.workspace_dirs, true),
    ];
    for (field, paths, root_allowed) in lists {
        for path in paths {
            if root_allowed && path.is_empty() {
                continue;
            }
            if let Some(problem) = path_problem(path) {
                return Err(invalid(format!(
                    "Invalid discovery input: {field} entry {} is not a relative POSIX path: {problem}.",
                    quoted(path)
                )));
            }
        }
    }
    Ok(())
}

/// The package projects below [`SANDBOXES_DIR`], shallowest first.
fn package_projects(
    files: &BTreeSet<&str>,
    package_dirs: &BTreeSet<&str>,
    workspace_dirs: &BTreeSet<&str>,
) -> Result<Vec<DiscoveredDefinition>> {
    let prefix = format!("{SANDBOXES_DIR}/");
    let mut candidates: Vec<&str> = package_dirs
        .iter()
        .copied()
        .filter(|dir| dir.starts_with(&prefix))
        .collect();
    candidates.sort_by_key(|dir| (dir.split('/').count(), *dir));

    let entries_of = |dir: &str| -> Vec<&'static str> {
        ENTRY_NAMES
            .into_iter()
            .filter(|name| files.contains(format!("{dir}/{name}").as_str()))
            .collect()
    };

    let mut selected: Vec<DiscoveredDefinition> = Vec::new();
    for dir in &candidates {
        if selected.iter().any(|d| is_inside(&d.dir, dir)) {
            continue;
        }
        let entries = entries_of(dir);
        match entries.as_slice() {
            [] => continue,
            [entry] => {
                let name = &dir[prefix.len()..];
                validate_name(name).map_err(|e| located("Sandbox package", dir, &e))?;
                selected.push(DiscoveredDefinition {
                    name: name.to_owned(),
                    kind: DefinitionKind::PackageEntry,
                    dir: (*dir).to_owned(),
                    entry: format!("{dir}/{entry}"),
                });
            }
            several => {
                return Err(invalid(format!(
                    "Sandbox package {} has multiple entrypoints: {}.",
                    quoted(dir),
                    several.join(", ")
                )))
            }
        }
    }

    let in_workspace = |dir: &str| {
        workspace_dirs
            .iter()
            .any(|ws| ws.starts_with(&prefix) && (*ws == dir || is_inside(ws, dir)))
    };
    for dir in &candidates {
        let covered = selected
            .iter()
            .any(|d| d.dir == *dir || is_inside(&d.dir, dir) || is_inside(dir, &d.dir));
        if !covered && !in_workspace(dir) {
            return Err(invalid(format!(
                "Sandbox package {} requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs).",
                quoted(dir)
            )));
        }
    }
    Ok(selected)
}

/// The free-form `*.sandbox.*` files outside the sandboxes directories, in path order.
fn free_form_files(
    files: &BTreeSet<&str>,
    package_dirs: &BTreeSet<&str>,
) -> Result<Vec<DiscoveredDefinition>> {
    let mut out = Vec::new();
    for file in files {
        if IGNORED_FREE_FORM_PREFIXES
            .iter()
            .any(|prefix| file.starts_with(prefix))
        {
            continue;
        }
        let Some(stem) = FREE_FORM_SUFFIXES
            .iter()
            .find_map(|suffix| file.strip_suffix(suffix))
        else {
            continue;
        };
        if stem.is_empty() || stem.ends_with('/') {
            continue;
        }
        let name = stem.strip_prefix("src/").unwrap_or(stem);
        validate_name(name).map_err(|e| located("Sandbox file", file, &e))?;
        let dir = ancestors(file)
            .find(|dir| package_dirs.contains(dir))
            .ok_or_else(|| {
                invalid(format!(
                "Sandbox file {} requires a package.json between its directory and the app root.",
                quoted(file)
            ))
            })?;
        out.push(DiscoveredDefinition {
            name: name.to_owned(),
            kind: DefinitionKind::FreeForm,
            dir: dir.to_owned(),
            entry: (*file).to_owned(),
        });
    }
    Ok(out)
}

/// The directories containing `path`, innermost first, ending with the root `""`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let parents = path
        .char_indices()
        .rev()
        .filter(|(_, c)| *c == '/')
        .map(move |(i, _)| &path[..i]);
    parents.chain(std::iter::once(""))
}

/// Whether `path` lies strictly inside directory `dir` (`""` is the root).
fn is_inside(dir: &str, path: &str) -> bool {
    (dir.is_empty() && !path.is_empty())
        || path.len() > dir.len() && path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/'
}

/// `error` prefixed with the folder or file it is about: `Sandbox package "x": …`.
fn located(label: &str, origin: &str, error: &Error) -> Error {
    invalid(format!("{label} {}: {}", quoted(origin), error.message()))
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

#[cfg(test)]
mod tests;
