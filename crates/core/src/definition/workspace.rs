//! pnpm workspace resolution: does a Definition package belong to an enclosing pnpm workspace,
//! and which workspace directories and patch files must travel with it.
//!
//! The JS glue finds the nearest `pnpm-workspace.yaml` between the Definition folder and the app
//! root, parses it (npm `yaml`), lists the `package.json` files below the workspace root and
//! calls [`resolve_workspace`]; it then reads exactly the directories and files the answer names
//! (docs/internals/build-steps.md, "Project resolution").
//!
//! Rules (vitehub-sandbox-contract.md §4.3):
//! * the workspace applies when the package's own `packageManager` does not name another manager
//!   than pnpm, and the package *is* the workspace root or its path matches the `packages:`
//!   globs ([`WorkspaceGlobs`]);
//! * workspace packages are the root and every directory with a `package.json` matching the
//!   globs, found by their manifest `name`;
//! * shipped: the transitive closure of `workspace:` dependencies (from `dependencies`,
//!   `devDependencies`, `optionalDependencies`, `peerDependencies`) starting at the package, and
//!   the patch files named by the root manifest's `pnpm.patchedDependencies` and the workspace
//!   file's `patchedDependencies`. The JS side adds the root `package.json`,
//!   `pnpm-workspace.yaml` and `pnpm-lock.yaml`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use super::glob::WorkspaceGlobs;
use super::install::{declared_manager, PackageManager};
use super::parse_package_json;
use crate::error::{Error, ErrorCode, Result};
use crate::transfer::box_file::path_problem;

/// Dependency fields whose `workspace:` entries join the closure.
const DEPENDENCY_FIELDS: [&str; 4] = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"];

/// What the JS glue read about one pnpm workspace. Paths are relative to the workspace root,
/// `/`-separated, `""` = the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceInput {
    /// The workspace root for messages, relative to the app root (e.g. `examples/app`, `""`).
    pub root_label: String,
    /// The Definition package directory.
    pub package_path: String,
    /// `packages:` of `pnpm-workspace.yaml`, in file order (empty when absent).
    pub globs: Vec<String>,
    /// `patchedDependencies` of `pnpm-workspace.yaml` (expected: an object of relative paths).
    pub workspace_patches: Option<Value>,
    /// Every `package.json` below the workspace root (not under `node_modules`): its directory
    /// and its text. Must hold the root (`""`) and `package_path`.
    pub manifests: Vec<(String, String)>,
}

/// The answer of [`resolve_workspace`] when the workspace applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePlan {
    /// The package path relative to the workspace root (the install root in the Box).
    pub package_path: String,
    /// Package directories to ship whole, sorted: the package and its `workspace:` closure.
    pub dirs: Vec<String>,
    /// Patch files to ship, sorted and deduplicated.
    pub patch_files: Vec<String>,
}

/// Decides whether the workspace applies and what it ships; `Ok(None)` when it does not apply
/// (the Definition folder alone is then the install root).
///
/// # Errors
/// `InvalidArgument`, naming the file: the root or package `package.json` is missing, not JSON
/// or not an object; a `packages:` pattern is malformed ([`WorkspaceGlobs::parse`]); a
/// `workspace:` dependency names no workspace package ("references missing pnpm workspace
/// dependency"); two workspace packages share a name; a patch path is not a string naming a safe
/// relative path.
pub fn resolve_workspace(input: &WorkspaceInput) -> Result<Option<WorkspacePlan>> {
    let label = |dir: &str, file: &str| {
        [input.root_label.as_str(), dir, file].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("/")
    };
    let invalid = |message: String| Error::new(ErrorCode::InvalidArgument, message);
    let texts: BTreeMap<&str, &str> = input.manifests.iter().map(|(d, t)| (d.as_str(), t.as_str())).collect();
    let required = |dir: &str| -> Result<Map<String, Value>> {
        let text = texts
            .get(dir)
            .ok_or_else(|| invalid(format!("{} is missing: a pnpm workspace needs it.", label(dir, "package.json"))))?;
        match parse_package_json(text.as_bytes()) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(invalid(format!("{} is not a JSON object; fix its syntax.", label(dir, "package.json")))),
        }
    };
    let package = required(&input.package_path)?;
    let root = required("")?;
    if let Some(manager) = package.get("packageManager").and_then(declared_manager) {
        if manager != PackageManager::Pnpm {
            return Ok(None);
        }
    }
    let globs = WorkspaceGlobs::parse(&input.globs)
        .map_err(|detail| invalid(format!("{} \"packages\" {detail}", label("", "pnpm-workspace.yaml"))))?;
    if !input.package_path.is_empty() && !globs.matches(&input.package_path) {
        return Ok(None);
    }

    let mut by_name: BTreeMap<String, &str> = BTreeMap::new();
    let mut manifests: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    for (dir, text) in &input.manifests {
        if !dir.is_empty() && !globs.matches(dir) {
            continue;
        }
        let Ok(Value::Object(manifest)) = parse_package_json(text.as_bytes()) else { continue };
        if let Some(name) = manifest.get("name").and_then(Value::as_str) {
            if let Some(other) = by_name.insert(name.to_owned(), dir) {
                return Err(invalid(format!(
                    "{} and {} are both named {}; workspace package names must be unique.",
                    label(other, "package.json"),
                    label(dir, "package.json"),
                    Value::from(name)
                )));
            }
        }
        manifests.insert(dir.as_str(), manifest);
    }
    manifests.insert(input.package_path.as_str(), package);

    let mut shipped: BTreeSet<&str> = BTreeSet::from([input.package_path.as_str()]);
    let mut queue = VecDeque::from([input.package_path.as_str()]);
    while let Some(dir) = queue.pop_front() {
        let Some(manifest) = manifests.get(dir) else { continue };
        for (dependency, target) in workspace_dependencies(manifest) {
            let Some(&target_dir) = by_name.get(&target) else {
                return Err(invalid(format!(
                    "{} references missing pnpm workspace dependency {} ({}: {}); add a package with that name under a \"packages\" pattern of {} or remove the dependency.",
                    label(dir, "package.json"),
                    Value::from(target.as_str()),
                    Value::from(dependency.0.as_str()),
                    Value::from(dependency.1.as_str()),
                    label("", "pnpm-workspace.yaml"),
                )));
            };
            if shipped.insert(target_dir) {
                queue.push_back(target_dir);
            }
        }
    }

    let mut patch_files = BTreeSet::new();
    let root_patches = root.get("pnpm").and_then(|p| p.get("patchedDependencies"));
    for (source, patches) in [
        (format!("{} \"pnpm.patchedDependencies\"", label("", "package.json")), root_patches),
        (format!("{} \"patchedDependencies\"", label("", "pnpm-workspace.yaml")), input.workspace_patches.as_ref()),
    ] {
        let Some(patches) = patches.filter(|p| !p.is_null()) else { continue };
        let entries = patches
            .as_object()
            .ok_or_else(|| invalid(format!("{source} must be an object of dependency → patch file path.")))?;
        for (dependency, path) in entries {
            let problem = match path.as_str() {
                None => Some("it is not a string".to_owned()),
                Some(path) => path_problem(path.strip_prefix("./").unwrap_or(path)).map(str::to_owned),
            };
            if let Some(problem) = problem {
                return Err(invalid(format!(
                    "{source} entry {} has an invalid patch path {path}: {problem}; use a path relative to the workspace root.",
                    Value::from(dependency.as_str())
                )));
            }
            let path = path.as_str().unwrap_or_default();
            patch_files.insert(path.strip_prefix("./").unwrap_or(path).to_owned());
        }
    }

    Ok(Some(WorkspacePlan {
        package_path: input.package_path.clone(),
        dirs: shipped.into_iter().map(str::to_owned).collect(),
        patch_files: patch_files.into_iter().collect(),
    }))
}

/// The `workspace:` dependencies of a manifest: `((key, spec), target package name)`. The target
/// is the key, or the aliased name of `workspace:<name>@<range>`.
pub(crate) fn workspace_dependencies(manifest: &Map<String, Value>) -> Vec<((String, String), String)> {
    let mut out = Vec::new();
    for field in DEPENDENCY_FIELDS {
        let Some(dependencies) = manifest.get(field).and_then(Value::as_object) else { continue };
        for (key, spec) in dependencies {
            let Some(range) = spec.as_str().and_then(|s| s.strip_prefix("workspace:")) else { continue };
            let target = match range.rfind('@') {
                Some(at) if at > 0 => range[..at].to_owned(),
                _ => key.clone(),
            };
            out.push(((key.clone(), spec.as_str().unwrap_or_default().to_owned()), target));
        }
    }
    out
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
