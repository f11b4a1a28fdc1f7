//! Workspace dependencies that reachable code imports must expose runtime JavaScript.
//!
//! A pnpm-workspace Definition ships its `workspace:` closure; pnpm links those packages into
//! `node_modules` in the Box and Node loads them as they are. The closure is recomputed here from
//! the shipped manifests: starting at the Definition's package.json, every `workspace:`
//! dependency (dependencies/dev/optional/peer, `workspace:<name>@<range>` aliases followed) whose
//! name is the `name` of a shipped package.json, transitively. Then:
//! - every bare import in the Definition's reachable modules whose package name is in the closure
//!   is resolved as Node would ([`super::package_target`]); the target must be a shipped `.js`,
//!   `.mjs` or `.cjs` (or `.json`) file: a TypeScript target (`.ts`, `.mts`, `.cts`, `.tsx`,
//!   declarations included), another extension, or a missing file is a finding with the rule of
//!   the field that produced it (R0018 `exports`, R0019 `main`, R0020 default `./index.js` or a
//!   plain file path), as are a subpath `exports` does not export and malformed `exports` (R0018);
//! - each `.js`/`.mjs` target is walked: its relative imports must name shipped JavaScript files
//!   (R0020 otherwise) and are walked in turn, its bare imports of closure packages are checked
//!   the same way. `.cjs` targets are not walked (their `require` edges are not ES imports);
//!   `#` imports, URLs and non-literal `import()` inside workspace packages are not checked.
//!
//! Unused workspace packages (a devDependency nothing imports, an unrelated manifest) are never
//! looked at; bare imports outside the closure (npm packages installed in the Box) are not checked.
//!
//! Source: vitehub-sandbox-contract.md §4.4 ("Workspace dependencies that are actually imported
//! must expose runtime JavaScript"); docs/internals/build-steps.md "TypeScript".

use super::package_target::{resolve_package, Resolution, Via};
use super::resolve::{is_relative, join, parent_dir};
use super::{Finding, ImportEdge, ManifestText, ModuleFacts};
use crate::definition::workspace::workspace_dependencies;
use crate::error::{quoted, Result};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

const FIX: &str =
    "Build the workspace package to JavaScript before Sandbox execution (point its exports/main at the built .js).";

/// One workspace package of the closure.
#[derive(Debug)]
pub(super) struct WorkspacePackage {
    /// Its directory in the file list (`""` = the root), without a trailing `/`.
    dir: String,
    /// Its parsed package.json.
    manifest: Map<String, Value>,
}

/// The closure of the Definition's `workspace:` dependencies, by package name. A name several
/// shipped manifests carry is taken from the least nested one (then the first by path).
pub(super) fn closure(
    definition: &Map<String, Value>,
    package_path: &str,
    manifests: &[ManifestText],
) -> BTreeMap<String, WorkspacePackage> {
    let mut by_name: BTreeMap<String, WorkspacePackage> = BTreeMap::new();
    let mut ordered: Vec<&ManifestText> = manifests.iter().collect();
    ordered.sort_by(|a, b| (a.path.matches('/').count(), &a.path).cmp(&(b.path.matches('/').count(), &b.path)));
    for manifest in ordered {
        let Some(dir) = manifest_dir(&manifest.path) else { continue };
        if dir == package_path || dir.split('/').any(|segment| segment == "node_modules") {
            continue;
        }
        let Ok(Value::Object(parsed)) = crate::definition::parse_package_json(manifest.text.as_bytes()) else {
            continue;
        };
        let Some(name) = parsed.get("name").and_then(Value::as_str).map(str::to_owned) else { continue };
        by_name.entry(name).or_insert(WorkspacePackage { dir: dir.to_owned(), manifest: parsed });
    }
    let mut included: BTreeSet<String> = BTreeSet::new();
    let mut pending: Vec<String> = workspace_dependencies(definition).into_iter().map(|(_, target)| target).collect();
    while let Some(name) = pending.pop() {
        let Some(package) = by_name.get(&name) else { continue };
        if included.insert(name) {
            pending.extend(workspace_dependencies(&package.manifest).into_iter().map(|(_, target)| target));
        }
    }
    by_name.retain(|name, _| included.contains(name));
    by_name
}

/// `dir` of `dir/package.json` (`""` for `package.json`); `None` for other files.
fn manifest_dir(path: &str) -> Option<&str> {
    if path == "package.json" {
        return Some("");
    }
    path.strip_suffix("/package.json")
}

/// `name` and subpath (`.` or `./sub`) of a bare specifier; `None` for relative, absolute, `#`,
/// URL-like (`node:fs`) or malformed ones.
pub(super) fn package_specifier(specifier: &str) -> Option<(&str, String)> {
    if is_relative(specifier) || specifier.starts_with(['/', '\\', '#']) || specifier.contains(':') {
        return None;
    }
    let name_end = if specifier.starts_with('@') {
        let slash = specifier.find('/')?;
        specifier[slash + 1..].find('/').map_or(specifier.len(), |at| slash + 1 + at)
    } else {
        specifier.find('/').unwrap_or(specifier.len())
    };
    let (name, rest) = specifier.split_at(name_end);
    (!name.is_empty() && !name.ends_with('/')).then(|| (name, format!(".{rest}")))
}

/// What kind of file a resolved target is.
enum Kind {
    /// `.js` / `.mjs`: an ES-module candidate to walk.
    Walk,
    /// `.cjs` or `.json`: loads, not walked.
    Leaf,
    /// TypeScript (`.ts`, `.mts`, `.cts`, `.tsx`, declarations included).
    TypeScript,
    /// Anything else Node cannot import as code.
    Other,
}

fn kind(path: &str) -> Kind {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js" | "mjs") => Kind::Walk,
        Some("cjs" | "json") => Kind::Leaf,
        Some("ts" | "mts" | "cts" | "tsx") => Kind::TypeScript,
        _ => Kind::Other,
    }
}

/// The walk state: findings so far and the workspace modules still to read.
struct Walk<'a> {
    closure: &'a BTreeMap<String, WorkspacePackage>,
    files: &'a BTreeSet<String>,
    findings: Vec<Finding>,
    walked: BTreeSet<String>,
    /// (module path, name of the workspace package it belongs to).
    pending: Vec<(String, String)>,
}

impl Walk<'_> {
    fn finding(&mut self, from: &str, edge: &ImportEdge, text: String) {
        self.findings.push(Finding { path: from.to_owned(), line: edge.line, column: edge.column, text });
    }

    fn enqueue(&mut self, path: String, package: &str) {
        if self.walked.insert(path.clone()) {
            self.pending.push((path, package.to_owned()));
        }
    }

    /// Checks a bare import of `from`; imports of packages outside the closure are ignored.
    fn bare(&mut self, from: &str, edge: &ImportEdge, specifier: &str) {
        let Some((name, subpath)) = package_specifier(specifier) else { return };
        let Some(package) = self.closure.get(name) else { return };
        let manifest_path =
            if package.dir.is_empty() { "package.json".to_owned() } else { format!("{}/package.json", package.dir) };
        let (via, target) = match resolve_package(&package.dir, &package.manifest, &subpath, self.files) {
            Resolution::Target { via, path } => (via, path),
            Resolution::NotExported => {
                let text = format!(
                    "imports {}, but workspace package {} ({}) does not export {} (R0018). Add the subpath to its \"exports\" or import one it exports.",
                    quoted(specifier), quoted(name), quoted(&manifest_path), quoted(&subpath)
                );
                return self.finding(from, edge, text);
            }
            Resolution::InvalidExports(detail) => {
                let text = format!(
                    "imports {}, but the \"exports\" of workspace package {} ({}) are invalid: {detail} (R0018). Fix its \"exports\" (targets are \"./\"-relative paths inside the package).",
                    quoted(specifier), quoted(name), quoted(&manifest_path)
                );
                return self.finding(from, edge, text);
            }
        };
        let problem = match (self.files.contains(&target), kind(&target)) {
            (false, _) => "which is not a shipped file",
            (true, Kind::TypeScript) => "a TypeScript file",
            (true, Kind::Other) => "which is not a JavaScript file (.js, .mjs, .cjs)",
            (true, Kind::Walk) => return self.enqueue(target, name),
            (true, Kind::Leaf) => return,
        };
        let text = format!(
            "imports {}, which workspace package {} resolves {} to {}, {problem} ({}). {FIX}",
            quoted(specifier),
            quoted(name),
            via.how(),
            quoted(&target),
            via.rule()
        );
        self.finding(from, edge, text);
    }

    /// Checks a relative import inside a workspace package: Node loads exactly the named file.
    fn relative(&mut self, from: &str, package: &str, edge: &ImportEdge, specifier: &str) {
        let path_part = &specifier[..specifier.find(['?', '#']).unwrap_or(specifier.len())];
        let target = join(parent_dir(from), path_part);
        let problem = match target.as_deref().map(|t| (t, self.files.contains(t), kind(t))) {
            Some((target, true, Kind::Walk)) => return self.enqueue(target.to_owned(), package),
            Some((_, true, Kind::Leaf)) => return,
            Some((target, true, Kind::TypeScript)) => format!("the TypeScript file {}", quoted(target)),
            Some((target, true, Kind::Other)) => {
                format!("{}, which is not a JavaScript file (.js, .mjs, .cjs)", quoted(target))
            }
            Some((target, false, _)) => format!("{}, which is not a shipped file", quoted(target)),
            None => "a path above the install root".to_owned(),
        };
        let text = format!(
            "imports {} of workspace package {}, {problem} ({}). {FIX}",
            quoted(specifier),
            quoted(package),
            Via::FilePath.rule()
        );
        self.finding(from, edge, text);
    }
}

/// The findings of the bare imports of `reached` (the Definition's reachable modules) and of the
/// workspace modules they lead to, in discovery order (the caller sorts).
///
/// # Errors
/// What `facts_of` returns for a module without facts (a glue bug).
pub(super) fn workspace_findings<'m>(
    closure: &BTreeMap<String, WorkspacePackage>,
    reached: &BTreeSet<String>,
    files: &BTreeSet<String>,
    facts_of: impl Fn(&str) -> Result<&'m ModuleFacts>,
) -> Result<Vec<Finding>> {
    let mut walk = Walk { closure, files, findings: Vec::new(), walked: BTreeSet::new(), pending: Vec::new() };
    if closure.is_empty() {
        return Ok(walk.findings);
    }
    for path in reached {
        for edge in &facts_of(path)?.imports {
            if let Some(specifier) = edge.specifier.as_deref() {
                walk.bare(path, edge, specifier);
            }
        }
    }
    while let Some((path, package)) = walk.pending.pop() {
        for edge in &facts_of(&path)?.imports {
            match edge.specifier.as_deref() {
                Some(specifier) if is_relative(specifier) => walk.relative(&path, &package, edge, specifier),
                Some(specifier) => walk.bare(&path, edge, specifier),
                None => {}
            }
        }
    }
    Ok(walk.findings)
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
