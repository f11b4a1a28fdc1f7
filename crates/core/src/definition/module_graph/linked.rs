//! R0033: a dependency the Definition's package.json links to a local path (`file:`, `link:`, or
//! a bare `./`, `../`, `/`, `~/` path, as npm reads one) must point at files the Definition ships.
//! The Box installs from the shipped files only: a link that leaves them resolves to nothing in
//! the Box (npm leaves a dangling link, or fails on a missing tarball), and a built `.output/`
//! carries no such path, moved or not. Refused where it is declared, at build time, naming the
//! dependency and its spec.
//!
//! Pure. Paths are POSIX, relative to the install root (`files`), the package at `package_path`.
//! Source: issue 32, item 8 ("a linked install builds an `.output/` that fails once moved").

use super::Finding;
use crate::error::quoted;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The manifest fields whose packages are installed in the Box for the Run.
const INSTALLED: [&str; 3] = ["dependencies", "optionalDependencies", "peerDependencies"];

/// The local path a dependency spec names, when it names one (`file:x`, `link:x`, `./x`,
/// `../x`, `/x`, `~/x`); `None` for a registry range, a tag, an alias, a URL, `workspace:`.
fn local_path(spec: &str) -> Option<&str> {
    let path = spec.strip_prefix("file:").or_else(|| spec.strip_prefix("link:")).unwrap_or(spec);
    let bare = ["./", "../", "/", "~/"].iter().any(|p| path.starts_with(p)) || path == "." || path == "..";
    (spec.starts_with("file:") || spec.starts_with("link:") || bare).then_some(path)
}

/// `path` (relative, POSIX) joined to `base` and normalized; `None` when it is absolute, starts
/// at a home directory, or climbs above the install root.
fn inside_root(base: &str, path: &str) -> Option<String> {
    if path.starts_with('/') || path.starts_with('~') {
        return None;
    }
    let mut parts: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// Whether `path` (relative to the install root) is a shipped file or a folder holding one.
fn is_shipped(path: &str, files: &BTreeSet<String>) -> bool {
    let prefix = format!("{path}/");
    files.contains(path) || files.iter().any(|file| path.is_empty() || file.starts_with(&prefix))
}

/// One finding per installed dependency of `manifest` whose local path is not shipped, placed
/// on the package's `package.json` (no line: the facts carry none for JSON).
pub(super) fn linked_findings(
    manifest: &Map<String, Value>,
    package_path: &str,
    files: &BTreeSet<String>,
) -> Vec<Finding> {
    let manifest_path =
        if package_path.is_empty() { "package.json".to_owned() } else { format!("{package_path}/package.json") };
    let mut findings = Vec::new();
    for field in INSTALLED {
        let Some(deps) = manifest.get(field).and_then(Value::as_object) else { continue };
        for (name, spec) in deps {
            let Some(path) = spec.as_str().and_then(local_path) else { continue };
            let spec = spec.as_str().unwrap_or_default();
            let why = match inside_root(package_path, path) {
                None => "a path outside the Definition's folder".to_owned(),
                Some(target) if !is_shipped(&target, files) => {
                    format!("a path the Definition does not ship ({})", quoted(&target))
                }
                Some(_) => continue,
            };
            findings.push(Finding {
                path: manifest_path.clone(),
                line: None,
                column: None,
                text: format!(
                    "declares {} in {} as {}, {why} (R0033): the Box installs from the Definition's shipped files only, so the linked package would be missing there, and a built .output/ cannot carry a link to the app's folders. Copy the package into the Definition's folder and declare it as \"file:./<folder>\", or install it from a registry.",
                    quoted(name),
                    quoted(field),
                    quoted(spec),
                ),
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn files(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| (*p).to_owned()).collect()
    }

    fn texts(manifest: Value, package_path: &str, shipped: &[&str]) -> Vec<String> {
        linked_findings(manifest.as_object().unwrap(), package_path, &files(shipped))
            .into_iter()
            .map(|f| format!("{} {}", f.path, f.text))
            .collect()
    }

    #[test]
    fn a_link_outside_the_folder_is_refused_naming_the_dependency_and_spec() {
        let found = texts(
            json!({"dependencies": {"linked-lib": "file:../../../lib", "slugify": "^1.6.6"}}),
            "",
            &["package.json", "index.mjs"],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("package.json declares \"linked-lib\" in \"dependencies\" as \"file:../../../lib\", a path outside the Definition's folder (R0033)"),
            "{}",
            found[0]
        );
        for spec in ["link:../lib", "../lib", "/abs/lib", "~/lib", "file:/abs/lib.tgz"] {
            assert_eq!(texts(json!({"optionalDependencies": {"x": spec}}), "", &["package.json"]).len(), 1, "{spec}");
        }
    }

    #[test]
    fn a_link_to_shipped_files_passes_and_one_to_unshipped_files_is_refused() {
        let shipped =
            ["package.json", "index.mjs", "vendor/lib/package.json", "vendor/lib/index.mjs", "vendor/pkg.tgz"];
        assert!(texts(
            json!({"dependencies": {"a": "file:./vendor/lib", "b": "file:vendor/pkg.tgz", "c": "./vendor/lib/"}}),
            "",
            &shipped
        )
        .is_empty());
        let found = texts(json!({"dependencies": {"d": "file:./vendor/missing"}}), "", &shipped);
        assert_eq!(found.len(), 1);
        assert!(found[0].contains("a path the Definition does not ship (\"vendor/missing\")"), "{}", found[0]);
    }

    #[test]
    fn in_a_workspace_a_link_is_resolved_from_the_package_folder() {
        let shipped = ["package.json", "apps/report/package.json", "packages/lib/package.json"];
        assert!(texts(json!({"dependencies": {"lib": "link:../../packages/lib"}}), "apps/report", &shipped).is_empty());
        let found = texts(json!({"dependencies": {"lib": "link:../../../lib"}}), "apps/report", &shipped);
        assert!(found[0].starts_with("apps/report/package.json declares \"lib\""), "{}", found[0]);
    }

    #[test]
    fn registry_ranges_aliases_urls_and_workspace_specs_are_not_links() {
        for spec in ["^1.0.0", "latest", "npm:real@1.0.0", "https://example.com/x.tgz", "github:a/b", "workspace:*"] {
            assert!(texts(json!({"dependencies": {"x": spec}}), "", &["package.json"]).is_empty(), "{spec}");
        }
    }
}
