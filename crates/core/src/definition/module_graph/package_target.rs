//! Which file an ES module import of a package (`name` or `name/sub`) loads, the way Node's ESM
//! resolver decides it from the package's `package.json`: `exports` (string, array, subpath map,
//! conditions object, `*` subpath patterns), else `main` (with Node's legacy probing), else
//! `./index.js`; without `exports` a subpath is a plain file path.
//!
//! Pure; the file list says which candidates exist. Conditions: `import`, `module-sync`, `node`,
//! `node-addons`, `default`, taken in the key order of each conditions object.
//!
//! Source: Node.js "Modules: Packages" and the ESM resolution algorithm (PACKAGE_RESOLVE,
//! PACKAGE_EXPORTS_RESOLVE, PACKAGE_TARGET_RESOLVE, PATTERN_KEY_COMPARE, LEGACY_MAIN_RESOLVE);
//! vitehub-sandbox-contract.md §4.4 (R0018–R0020).

use crate::error::quoted;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The conditions an ES module `import` matches in Node 20.
pub(crate) const CONDITIONS: [&str; 5] = ["import", "module-sync", "node", "node-addons", "default"];

/// Which field of package.json produced a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    /// `exports`.
    Exports,
    /// `main` (or the `./index.js` fallback Node uses when `main` names no file).
    Main,
    /// Neither `exports` nor `main`: `./index.js`.
    DefaultIndex,
    /// No `exports`: `name/sub/x.js` is the file `sub/x.js`.
    FilePath,
}

impl Via {
    /// The contract's code: R0018 `exports`, R0019 `main`, R0020 default index / plain file path.
    pub(crate) fn rule(self) -> &'static str {
        match self {
            Via::Exports => "R0018",
            Via::Main => "R0019",
            Via::DefaultIndex | Via::FilePath => "R0020",
        }
    }

    /// How the target was found, for messages (`resolves … <how> to "<file>"`).
    pub(crate) fn how(self) -> &'static str {
        match self {
            Via::Exports => "through its \"exports\"",
            Via::Main => "through its \"main\"",
            Via::DefaultIndex => {
                "through the default entry ./index.js (its package.json has neither \"exports\" nor \"main\")"
            }
            Via::FilePath => "as a file path (its package.json has no \"exports\")",
        }
    }
}

/// The answer of [`resolve_package`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// The file Node would load (a path of the file list; it may be missing from it).
    Target { via: Via, path: String },
    /// `exports` does not export the subpath (or excludes it with `null`).
    NotExported,
    /// `exports` is malformed; the detail says how (`target "../x.js" does not start with "./"`).
    InvalidExports(String),
}

/// Resolves `subpath` (`.` or `./sub`) of the package in `dir` (`""` = the root of the file list)
/// whose parsed package.json is `manifest`.
pub(crate) fn resolve_package(
    dir: &str,
    manifest: &Map<String, Value>,
    subpath: &str,
    files: &BTreeSet<String>,
) -> Resolution {
    let in_dir = |relative: &str| join(dir, relative);
    if let Some(exports) = manifest.get("exports").filter(|e| !e.is_null()) {
        return match resolve_exports(exports, subpath) {
            Ok(Some(relative)) => Resolution::Target { via: Via::Exports, path: in_dir(&relative) },
            Ok(None) => Resolution::NotExported,
            Err(detail) => Resolution::InvalidExports(detail),
        };
    }
    if subpath != "." {
        return Resolution::Target { via: Via::FilePath, path: in_dir(&subpath[2..]) };
    }
    let main =
        manifest.get("main").and_then(Value::as_str).map(|m| m.trim_start_matches("./")).filter(|m| !m.is_empty());
    if let Some(main) = main {
        let main = main.trim_end_matches('/');
        let candidates = [main.to_owned(), format!("{main}.js"), format!("{main}/index.js"), "index.js".to_owned()];
        let found = candidates.iter().map(|c| in_dir(c)).find(|path| files.contains(path));
        return Resolution::Target { via: Via::Main, path: found.unwrap_or_else(|| in_dir(main)) };
    }
    Resolution::Target { via: Via::DefaultIndex, path: in_dir("index.js") }
}

/// `relative` (no leading `./`) inside `dir`.
fn join(dir: &str, relative: &str) -> String {
    if dir.is_empty() {
        relative.to_owned()
    } else {
        format!("{dir}/{relative}")
    }
}

/// What one target of `exports` gave.
enum Outcome {
    /// No condition matched (Node: `undefined`): try the next alternative.
    Unmatched,
    /// `null`: explicitly not exported.
    Excluded,
    /// The target, relative to the package directory, without the leading `./`.
    File(String),
}

/// `Ok(None)`: not exported; `Err`: malformed `exports`.
fn resolve_exports(exports: &Value, subpath: &str) -> Result<Option<String>, String> {
    let outcome = match exports {
        Value::Object(map) => {
            let dotted = map.keys().filter(|k| k.starts_with('.')).count();
            if dotted == 0 {
                main_export(exports, subpath)?
            } else if dotted != map.len() {
                return Err("they mix subpath keys (\"./…\") with condition keys".to_owned());
            } else {
                subpath_map(map, subpath)?
            }
        }
        _ => main_export(exports, subpath)?,
    };
    Ok(match outcome {
        Outcome::File(path) => Some(path),
        Outcome::Unmatched | Outcome::Excluded => None,
    })
}

/// `exports` that is only the `.` entry (a string, an array or a conditions object).
fn main_export(target: &Value, subpath: &str) -> Result<Outcome, String> {
    if subpath == "." {
        target_resolve(target, None)
    } else {
        Ok(Outcome::Excluded)
    }
}

/// An `exports` object of `./…` keys: the exact key, else the most specific `*` pattern.
fn subpath_map(map: &Map<String, Value>, subpath: &str) -> Result<Outcome, String> {
    if let Some(target) = map.get(subpath).filter(|_| !subpath.contains('*')) {
        return target_resolve(target, None);
    }
    let mut patterns: Vec<&String> = map.keys().filter(|k| k.matches('*').count() == 1).collect();
    patterns.sort_by(|a, b| pattern_key_order(a, b));
    for key in patterns {
        let (base, trailer) = key.split_once('*').unwrap_or((key, ""));
        if subpath.starts_with(base)
            && subpath != base
            && (trailer.is_empty() || (subpath.ends_with(trailer) && subpath.len() >= key.len()))
        {
            let matched = &subpath[base.len()..subpath.len() - trailer.len()];
            return target_resolve(&map[key.as_str()], Some(matched));
        }
    }
    Ok(Outcome::Excluded)
}

/// PATTERN_KEY_COMPARE: the longer prefix before `*` first, then the longer key.
fn pattern_key_order(a: &str, b: &str) -> std::cmp::Ordering {
    let base = |key: &str| key.find('*').unwrap_or(key.len());
    base(b).cmp(&base(a)).then_with(|| b.len().cmp(&a.len()))
}

/// PACKAGE_TARGET_RESOLVE for an ES module import.
fn target_resolve(target: &Value, pattern: Option<&str>) -> Result<Outcome, String> {
    match target {
        Value::String(text) => {
            let Some(rest) = text.strip_prefix("./") else {
                return Err(format!("target {} does not start with \"./\"", quoted(text)));
            };
            if has_invalid_segment(rest) {
                return Err(format!("target {} has a \".\", \"..\", empty or node_modules segment", quoted(text)));
            }
            match pattern {
                Some(matched) if has_invalid_segment(matched) => Ok(Outcome::Excluded),
                Some(matched) => Ok(Outcome::File(rest.replace('*', matched))),
                None => Ok(Outcome::File(rest.to_owned())),
            }
        }
        Value::Object(conditions) => {
            for (key, value) in conditions {
                if CONDITIONS.contains(&key.as_str()) {
                    match target_resolve(value, pattern)? {
                        Outcome::Unmatched => continue,
                        found => return Ok(found),
                    }
                }
            }
            Ok(Outcome::Unmatched)
        }
        Value::Array(alternatives) => {
            let mut last: Option<Result<Outcome, String>> = None;
            for alternative in alternatives {
                match target_resolve(alternative, pattern) {
                    Err(detail) => last = Some(Err(detail)),
                    Ok(Outcome::Unmatched) => {}
                    Ok(Outcome::Excluded) => last = Some(Ok(Outcome::Excluded)),
                    Ok(found) => return Ok(found),
                }
            }
            last.unwrap_or(Ok(Outcome::Unmatched))
        }
        Value::Null => Ok(Outcome::Excluded),
        other => Err(format!("target {other} is neither a string, an array, an object nor null")),
    }
}

/// Whether a path (after `./`) has a segment Node refuses: empty, `.`, `..` or `node_modules`
/// (case-insensitive, `%2e` read as `.`).
fn has_invalid_segment(path: &str) -> bool {
    path.split(['/', '\\']).any(|segment| {
        let segment = segment.to_ascii_lowercase().replace("%2e", ".");
        matches!(segment.as_str(), "" | "." | ".." | "node_modules")
    })
}
