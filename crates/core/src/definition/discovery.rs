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
use crate::transfer::box_file::path_problem;
use std::collections::{BTreeMap, BTreeSet};

/// The directory (relative to the app root) whose sub-directories are package projects.
pub const SANDBOXES_DIR: &str = "server/sandboxes";

/// Directories (with their trailing `/`) where free-form `*.sandbox.*` files are ignored.
const IGNORED_FREE_FORM_PREFIXES: [&str; 2] = ["server/sandboxes/", "src/server/sandboxes/"];

/// The entry file names of a package project, in the order they are listed in messages.
use crate::definition::ENTRY_NAMES;

/// The suffixes that make a file a free-form Definition.
const FREE_FORM_SUFFIXES: [&str; 6] =
    [".sandbox.ts", ".sandbox.mts", ".sandbox.cts", ".sandbox.js", ".sandbox.mjs", ".sandbox.cjs"];

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

/// A folder or file that looks like a Definition but cannot be one (see [`discover`] for the
/// rules), found by [`discover_all`].
#[derive(Debug)]
pub struct DiscoveryProblem {
    /// The Definition name it would have, when that name is valid (`None` for an invalid name).
    pub name: Option<String>,
    /// The folder or file it is about (for a duplicated name: the claimants joined by `" and "`).
    pub origin: String,
    /// The error, naming the folder or file.
    pub error: Error,
}

/// Everything discovery found: the Definitions (sorted by name) and the problems (in the order
/// [`discover`] reports them).
#[derive(Debug, Default)]
pub struct Discovery {
    /// The valid Definitions, sorted by name; a name claimed twice is in neither.
    pub definitions: Vec<DiscoveredDefinition>,
    /// Folders and files that are not valid Definitions.
    pub problems: Vec<DiscoveryProblem>,
}

/// Finds every Definition of an app, sorted by name.
///
/// A package directory below `server/sandboxes/` without an entry is not an error when it lies
/// inside a Definition, contains one, or is (or lies inside) a pnpm workspace root at or below
/// `server/sandboxes/` (workspace internals).
///
/// # Errors
/// The first problem of [`discover_all`]: `InvalidArgument`, with a message naming the folder or
/// file, when:
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
    let discovery = discover_all(input)?;
    match discovery.problems.into_iter().next() {
        Some(problem) => Err(problem.error),
        None => Ok(discovery.definitions),
    }
}

/// [`discover`] that keeps going: every valid Definition, and every problem of the rules of
/// [`discover`] as a [`DiscoveryProblem`] (a folder with several entrypoints or an invalid name
/// still covers its sub-folders; a duplicated name leaves both out). Used where one broken
/// folder must not hide the others (`vite dev`, `inspect`).
///
/// # Errors
/// `InvalidArgument` only for malformed input (a path that is not a relative POSIX path).
pub fn discover_all(input: &DiscoveryInput) -> Result<Discovery> {
    check_paths(input)?;
    let files: BTreeSet<&str> = input.files.iter().map(String::as_str).collect();
    let package_dirs: BTreeSet<&str> = input.package_dirs.iter().map(String::as_str).collect();
    let workspace_dirs: BTreeSet<&str> = input.workspace_dirs.iter().map(String::as_str).collect();

    let mut problems = Vec::new();
    let mut found = package_projects(&files, &package_dirs, &workspace_dirs, &mut problems);
    found.extend(free_form_files(&files, &package_dirs, &mut problems));

    let mut by_name: BTreeMap<String, Vec<DiscoveredDefinition>> = BTreeMap::new();
    for definition in found {
        by_name.entry(definition.name.clone()).or_default().push(definition);
    }
    let mut definitions = Vec::with_capacity(by_name.len());
    for (name, mut claimants) in by_name {
        if claimants.len() == 1 {
            definitions.extend(claimants.pop());
            continue;
        }
        let mut origins: Vec<&str> = claimants.iter().map(origin).collect();
        origins.sort_unstable();
        let origin = origins.join(" and ");
        let error = invalid(format!("Duplicate sandbox name {}: {origin}.", quoted(&name)));
        problems.push(DiscoveryProblem { name: Some(name), origin, error });
    }
    Ok(Discovery { definitions, problems })
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
    problems: &mut Vec<DiscoveryProblem>,
) -> Vec<DiscoveredDefinition> {
    let prefix = format!("{SANDBOXES_DIR}/");
    let mut candidates: Vec<&str> = package_dirs.iter().copied().filter(|dir| dir.starts_with(&prefix)).collect();
    candidates.sort_by_key(|dir| (dir.split('/').count(), *dir));

    let entries_of = |dir: &str| -> Vec<&'static str> {
        ENTRY_NAMES.into_iter().filter(|name| files.contains(format!("{dir}/{name}").as_str())).collect()
    };

    // The folders that are Definitions, or would be but for a problem: their sub-folders are theirs.
    let mut claimed: Vec<&str> = Vec::new();
    let mut selected: Vec<DiscoveredDefinition> = Vec::new();
    for dir in &candidates {
        if claimed.iter().any(|claim| is_inside(claim, dir)) {
            continue;
        }
        let name = &dir[prefix.len()..];
        let entries = entries_of(dir);
        match entries.as_slice() {
            [] => continue,
            [entry] => {
                claimed.push(dir);
                match validate_name(name) {
                    Ok(()) => selected.push(DiscoveredDefinition {
                        name: name.to_owned(),
                        kind: DefinitionKind::PackageEntry,
                        dir: (*dir).to_owned(),
                        entry: format!("{dir}/{entry}"),
                    }),
                    Err(e) => problems.push(DiscoveryProblem {
                        name: None,
                        origin: (*dir).to_owned(),
                        error: located("Sandbox package", dir, &e),
                    }),
                }
            }
            several => {
                claimed.push(dir);
                let error = invalid(format!(
                    "Sandbox package {} has multiple entrypoints: {}.",
                    quoted(dir),
                    several.join(", ")
                ));
                problems.push(DiscoveryProblem { name: valid_name(name), origin: (*dir).to_owned(), error });
            }
        }
    }

    // A workspace root at `server/sandboxes/` itself counts like one below it (issue 8 item 8).
    let in_workspace = |dir: &str| {
        workspace_dirs
            .iter()
            .any(|ws| (*ws == SANDBOXES_DIR || ws.starts_with(&prefix)) && (*ws == dir || is_inside(ws, dir)))
    };
    for dir in &candidates {
        let covered = claimed.iter().any(|claim| claim == dir || is_inside(claim, dir) || is_inside(dir, claim));
        if !covered && !in_workspace(dir) {
            let error = invalid(format!(
                "Sandbox package {} requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs).",
                quoted(dir)
            ));
            problems.push(DiscoveryProblem {
                name: valid_name(&dir[prefix.len()..]),
                origin: (*dir).to_owned(),
                error,
            });
        }
    }

    // An entry file in a folder with no package.json at or above it (below the sandboxes
    // directory): most likely a Definition whose manifest is not written yet.
    let mut reported: BTreeSet<&str> = BTreeSet::new();
    for file in files.iter().filter(|f| f.starts_with(&prefix)) {
        let Some((dir, base)) = file.rsplit_once('/') else { continue };
        if dir == SANDBOXES_DIR || !ENTRY_NAMES.contains(&base) || reported.contains(dir) {
            continue;
        }
        let has_manifest = candidates.iter().any(|candidate| *candidate == dir || is_inside(candidate, dir));
        if !has_manifest {
            reported.insert(dir);
            let error = invalid(format!(
                "Sandbox folder {} has {base} but no package.json; add one with \"type\": \"module\".",
                quoted(dir)
            ));
            problems.push(DiscoveryProblem { name: valid_name(&dir[prefix.len()..]), origin: dir.to_owned(), error });
        }
    }
    selected
}

/// `name` when it is a valid Definition name.
fn valid_name(name: &str) -> Option<String> {
    validate_name(name).is_ok().then(|| name.to_owned())
}

/// The free-form `*.sandbox.*` files outside the sandboxes directories, in path order.
fn free_form_files(
    files: &BTreeSet<&str>,
    package_dirs: &BTreeSet<&str>,
    problems: &mut Vec<DiscoveryProblem>,
) -> Vec<DiscoveredDefinition> {
    let mut out = Vec::new();
    for file in files {
        if IGNORED_FREE_FORM_PREFIXES.iter().any(|prefix| file.starts_with(prefix)) {
            continue;
        }
        let Some(stem) = FREE_FORM_SUFFIXES.iter().find_map(|suffix| file.strip_suffix(suffix)) else {
            continue;
        };
        if stem.is_empty() || stem.ends_with('/') {
            continue;
        }
        let name = stem.strip_prefix("src/").unwrap_or(stem);
        if let Err(e) = validate_name(name) {
            problems.push(DiscoveryProblem {
                name: None,
                origin: (*file).to_owned(),
                error: located("Sandbox file", file, &e),
            });
            continue;
        }
        let Some(dir) = ancestors(file).find(|dir| package_dirs.contains(dir)) else {
            let error = invalid(format!(
                "Sandbox file {} requires a package.json between its directory and the app root.",
                quoted(file)
            ));
            problems.push(DiscoveryProblem { name: Some(name.to_owned()), origin: (*file).to_owned(), error });
            continue;
        };
        out.push(DiscoveredDefinition {
            name: name.to_owned(),
            kind: DefinitionKind::FreeForm,
            dir: dir.to_owned(),
            entry: (*file).to_owned(),
        });
    }
    out
}

/// The directories containing `path`, innermost first, ending with the root `""`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let parents = path.char_indices().rev().filter(|(_, c)| *c == '/').map(move |(i, _)| &path[..i]);
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
