//! The project a free-form Definition installs in the Box: only the packages its bundle imports,
//! at the versions the app's lockfile resolves, never the app's whole manifest.
//!
//! Pure. Given the app project's `package.json`, the imported package names and the app's
//! lockfile facts, it writes a minimal `package.json` (`{"private":true,"type":"module",
//! "dependencies":{name: version}}`, plus the app's `packageManager`) and, from an npm lockfile
//! (`package-lock.json` / `npm-shrinkwrap.json`, lockfileVersion 2 or 3), a `package-lock.json`
//! holding exactly the entries those packages need (their `node_modules/…` closure, copied from
//! the app's lock at the same paths), so the Box runs `npm ci` with the app's resolution.
//!
//! Versions: npm lock → each package's `node_modules/<name>` entry; pnpm lock → the root
//! importer's resolved `version` (peer suffix `(…)` dropped; no pnpm lockfile is generated, the
//! manifest is pinned); yarn, bun or no lockfile → the app manifest's range. An alias
//! (`npm:real@1.0.0`) stays an alias; a `link:`, `file:` or git resolution keeps the app's spec
//! and no lockfile is written (it cannot be reproduced outside the app).
//!
//! Source: issue 8, item 7 ("installs only the packages it imports, at the versions the app's
//! lockfile resolves"); npm's package-lock.json v3 format (docs.npmjs.com, "package-lock.json");
//! pnpm's lockfile v9 `importers` (pnpm.io).

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, ErrorCode, Result};

/// One generated file of the Box project, relative to the project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// `package.json` or `package-lock.json`.
    pub path: &'static str,
    /// Its text (pretty JSON with a trailing newline).
    pub text: String,
}

/// The app's lockfile facts (what the glue found in the project directory).
#[derive(Debug, Clone, Default)]
pub struct AppLock<'a> {
    /// The text of `npm-shrinkwrap.json`, else `package-lock.json`.
    pub npm: Option<&'a str>,
    /// `pnpm-lock.yaml` parsed to JSON by the glue.
    pub pnpm: Option<&'a Value>,
}

/// The declared dependency fields of a manifest, in the order a name is looked up.
const FIELDS: [&str; 4] = ["dependencies", "optionalDependencies", "peerDependencies", "devDependencies"];

/// The minimal project: `package.json` (always) and `package-lock.json` (from an npm lock that
/// resolves every imported package at the root).
///
/// `file` and `lock_name` name the free-form file and the lockfile in messages.
///
/// # Errors
/// `InvalidArgument` naming the lockfile when the npm lockfile is not JSON.
pub fn box_project(
    file: &str,
    manifest: &Map<String, Value>,
    dependencies: &[String],
    lock: &AppLock<'_>,
    lock_name: &str,
) -> Result<Vec<GeneratedFile>> {
    let npm_lock = match lock.npm {
        Some(text) => match crate::definition::parse_package_json(text.as_bytes()) {
            Ok(Value::Object(map)) => Some(map),
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!(
                        "{file}: its project's {lock_name} is not a JSON object; fix or regenerate it (npm install)."
                    ),
                ))
            }
        },
        None => None,
    };
    let npm_packages = npm_lock.as_ref().and_then(|lock| lock.get("packages")).and_then(Value::as_object);
    let pnpm_importer = lock.pnpm.and_then(pnpm_root_importer);

    let mut pinned = Map::new();
    let mut reproducible = npm_packages.is_some();
    for name in dependencies {
        let declared = declared_spec(manifest, name);
        let resolved = match (npm_packages, pnpm_importer) {
            (Some(packages), _) => npm_spec(packages, name),
            (None, Some(importer)) => pnpm_spec(importer, name),
            (None, None) => None,
        };
        if resolved.is_none() {
            reproducible = false;
        }
        let spec = resolved.or(declared).unwrap_or_else(|| "*".to_owned());
        pinned.insert(name.clone(), Value::String(spec));
    }

    let mut package = Map::new();
    package.insert("private".into(), Value::Bool(true));
    package.insert("type".into(), Value::String("module".into()));
    package.insert("dependencies".into(), Value::Object(pinned.clone()));
    if let Some(manager) = manifest.get("packageManager") {
        package.insert("packageManager".into(), manager.clone());
    }
    let mut files = vec![GeneratedFile { path: "package.json", text: pretty(&Value::Object(package)) }];
    if let (true, Some(packages)) = (reproducible, npm_packages) {
        if let Some(lock_packages) = npm_closure(packages, dependencies) {
            let mut all = Map::new();
            all.insert(String::new(), json!({ "dependencies": pinned }));
            all.extend(lock_packages);
            let lock = json!({ "lockfileVersion": 3, "requires": true, "packages": all });
            files.push(GeneratedFile { path: "package-lock.json", text: pretty(&lock) });
        }
    }
    Ok(files)
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The app manifest's spec for `name` (first of [`FIELDS`] that lists it).
fn declared_spec(manifest: &Map<String, Value>, name: &str) -> Option<String> {
    FIELDS.iter().find_map(|field| manifest.get(*field)?.as_object()?.get(name)?.as_str().map(str::to_owned))
}

/// Whether a lock entry's `resolved` cannot be fetched outside the app (a link, a file, git).
fn local_or_git(entry: &Map<String, Value>) -> bool {
    entry.get("link").and_then(Value::as_bool).unwrap_or(false)
        || entry
            .get("resolved")
            .and_then(Value::as_str)
            .is_some_and(|r| r.starts_with("file:") || r.starts_with("git") || !r.contains("://"))
}

/// The spec pinning `name` to the app's npm lock: `1.2.3`, or `npm:real@1.2.3` for an alias.
fn npm_spec(packages: &Map<String, Value>, name: &str) -> Option<String> {
    let entry = packages.get(&format!("node_modules/{name}"))?.as_object()?;
    if local_or_git(entry) {
        return None;
    }
    let version = entry.get("version")?.as_str()?;
    Some(match entry.get("name").and_then(Value::as_str) {
        Some(real) if real != name => format!("npm:{real}@{version}"),
        _ => version.to_owned(),
    })
}

/// The parent package path of a lock path: `node_modules/a` for `node_modules/a/node_modules/b`,
/// `""` for `node_modules/a` (and for `node_modules/@s/a`).
fn parent_path(path: &str) -> &str {
    match path.rfind("/node_modules/") {
        Some(at) => &path[..at],
        None => "",
    }
}

/// The lock path Node resolves `dependency` to from the package at `from` (nearest `node_modules`).
fn resolve_from<'p>(
    packages: &'p Map<String, Value>,
    from: &str,
    dependency: &str,
) -> Option<(String, &'p Map<String, Value>)> {
    let mut base = from;
    loop {
        let candidate = if base.is_empty() {
            format!("node_modules/{dependency}")
        } else {
            format!("{base}/node_modules/{dependency}")
        };
        if let Some(entry) = packages.get(&candidate).and_then(Value::as_object) {
            return Some((candidate, entry));
        }
        if base.is_empty() {
            return None;
        }
        base = parent_path(base);
    }
}

/// The lock entries `roots` need, at their paths in the app's lock (dev flags dropped: every one
/// is a runtime package of the Box); `None` when one of them cannot be reproduced outside the app
/// (a link, a file, a git dependency).
fn npm_closure(packages: &Map<String, Value>, roots: &[String]) -> Option<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut pending: Vec<(String, Map<String, Value>)> = Vec::new();
    for name in roots {
        let (path, entry) = resolve_from(packages, "", name)?;
        if seen.insert(path.clone()) {
            pending.push((path, entry.clone()));
        }
    }
    while let Some((path, entry)) = pending.pop() {
        if local_or_git(&entry) {
            return None;
        }
        for field in ["dependencies", "optionalDependencies", "peerDependencies"] {
            let Some(deps) = entry.get(field).and_then(Value::as_object) else { continue };
            for dependency in deps.keys() {
                // A missing optional or peer dependency is allowed; npm ci reports a missing required one.
                if let Some((found, next)) = resolve_from(packages, &path, dependency) {
                    if seen.insert(found.clone()) {
                        pending.push((found, next.clone()));
                    }
                }
            }
        }
        let mut copy = entry;
        for flag in ["dev", "devOptional", "extraneous"] {
            copy.remove(flag);
        }
        out.insert(path, Value::Object(copy));
    }
    Some(out)
}

/// The root importer of a parsed pnpm lock: `importers["."]` (v6–v9), else the lock itself (v5).
fn pnpm_root_importer(lock: &Value) -> Option<&Map<String, Value>> {
    match lock.get("importers") {
        Some(importers) => importers.get(".")?.as_object(),
        None => lock.as_object(),
    }
}

/// The spec pinning `name` to the pnpm root importer's resolution.
fn pnpm_spec(importer: &Map<String, Value>, name: &str) -> Option<String> {
    let entry = FIELDS.iter().find_map(|field| importer.get(*field)?.as_object()?.get(name))?;
    // v6+: { specifier, version }; v5: the version string.
    let version = entry.get("version").unwrap_or(entry).as_str()?;
    let version = version.split('(').next().unwrap_or(version);
    if version.starts_with("link:") || version.starts_with("file:") || version.contains("://") {
        return None;
    }
    // An alias resolves to `real@1.0.0` (`@scope/real@1.0.0`): the npm alias spec is `npm:` + that.
    if version.is_empty() {
        return None;
    }
    Some(if version[1..].contains('@') { format!("npm:{version}") } else { version.to_owned() })
}

#[cfg(test)]
mod tests;
