//! How one import specifier of a package module resolves: to a package file, to an installed
//! dependency (not walked), or to a problem with the rule it breaks.
//!
//! Source: vitehub-sandbox-contract.md §4.4 (R0024–R0031); the TypeScript ESM convention that
//! `./x.js` names `x.ts` and `./x.mjs` names `x.mts` when only the TypeScript source exists (as
//! before this module, the other twin is accepted too: `./x.js` → `x.mts`, `./x.mjs` → `x.ts`).

use crate::error::quoted;
use std::collections::BTreeSet;

/// What a specifier names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A bare package specifier (`slugify`, `@scope/x/sub`, `node:fs`, `fs`): an installed
    /// dependency or a Node built-in; not part of the package's module graph.
    Dependency,
    /// A file of the package: its path in the file list and, when it is a TypeScript source
    /// compiled to `<path>.mjs`, the specifier that loads the compiled sibling (query and hash
    /// kept), e.g. `./lib/x.ts.mjs`.
    File { path: String, compiled_specifier: Option<String> },
}

/// A broken rule: the contract's diagnostic code and the message part after the position
/// (`imports "…", …. <how to fix>.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// `R0024` … `R0031`.
    pub rule: &'static str,
    /// What is wrong and how to fix it.
    pub text: String,
}

/// The package as seen by the resolver.
#[derive(Debug)]
pub(crate) struct Package<'a> {
    /// The package directory inside the file list (`""` = the root), without a trailing `/`.
    pub path: &'a str,
    /// `name` of its package.json, when it has one.
    pub name: Option<&'a str>,
    /// Every file path (`/`-separated, relative to the file-list root).
    pub files: &'a BTreeSet<String>,
}

/// Whether a path is a TypeScript source that the glue compiles to `<path>.mjs`.
pub(crate) fn is_typescript_source(path: &str) -> bool {
    (path.ends_with(".ts") || path.ends_with(".mts")) && !is_declaration(path)
}

/// Whether a path is an ES module the glue analyses (`.js`, `.mjs`, `.ts`, `.mts`, not `.d.ts`).
pub(crate) fn is_executable_module(path: &str) -> bool {
    is_typescript_source(path) || path.ends_with(".js") || path.ends_with(".mjs")
}

fn is_declaration(path: &str) -> bool {
    [".d.ts", ".d.mts", ".d.cts"].iter().any(|suffix| path.ends_with(suffix))
}

fn problem(rule: &'static str, specifier: &str, what: &str, fix: &str) -> Problem {
    Problem { rule, text: format!("imports {}, {what}. {fix}", quoted(specifier)) }
}

/// Whether a specifier starts with a URL scheme (`https:`, `file:`, `data:`, `C:` …).
fn url_scheme(specifier: &str) -> Option<&str> {
    let (scheme, _) = specifier.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(scheme)
}

pub(crate) fn is_relative(specifier: &str) -> bool {
    specifier == "." || specifier == ".." || specifier.starts_with("./") || specifier.starts_with("../")
}

/// `dir` joined with `relative` and normalised; `None` when `..` climbs above the root.
pub(crate) fn join(dir: &str, relative: &str) -> Option<String> {
    let mut segments: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for segment in relative.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            other => segments.push(other),
        }
    }
    Some(segments.join("/"))
}

pub(crate) fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn is_inside(package: &str, path: &str) -> bool {
    package.is_empty() || path == package || path.strip_prefix(package).is_some_and(|rest| rest.starts_with('/'))
}

/// The extension of a file name (`"ts"` for `x.d.ts`), `None` for `util`, `.env` or `dir/`.
fn extension(name: &str) -> Option<&str> {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => Some(ext),
        _ => None,
    }
}

/// Resolves `specifier`, written in the module at `from` (a path of the file list).
///
/// # Errors
/// The [`Problem`] for `#alias` (R0024), a self-import (R0025), an absolute path or a URL other
/// than `node:` (R0026), a relative path leaving the package (R0027), an extensionless or
/// missing target (R0028), a `.cjs`/`.cts` (R0029), `.jsx`/`.tsx` (R0030) or `.d.ts` (R0031)
/// target.
pub(crate) fn resolve(specifier: &str, from: &str, package: &Package<'_>) -> Result<Target, Problem> {
    const RELATIVE_FIX: &str = "Import files of the package by a relative path such as \"./lib/util.ts\".";
    if specifier.starts_with('#') {
        return Err(problem(
            "R0024",
            specifier,
            "a package.json \"imports\" alias, which Sandbox packages do not support",
            RELATIVE_FIX,
        ));
    }
    if specifier.starts_with('/') || specifier.starts_with('\\') {
        return Err(problem("R0026", specifier, "an absolute path", RELATIVE_FIX));
    }
    if let Some(scheme) = url_scheme(specifier) {
        if scheme == "node" {
            return Ok(Target::Dependency);
        }
        let what = format!("a {scheme}: URL");
        return Err(problem(
            "R0026",
            specifier,
            &what,
            "Import files of the package by a relative path and other code as a dependency in package.json.",
        ));
    }
    if !is_relative(specifier) {
        if let Some(name) = package.name.filter(|name| {
            specifier == *name || specifier.strip_prefix(*name).is_some_and(|rest| rest.starts_with('/'))
        }) {
            let what = format!("the package's own name {}", quoted(name));
            return Err(problem("R0025", specifier, &what, RELATIVE_FIX));
        }
        return Ok(Target::Dependency);
    }
    resolve_relative(specifier, from, package)
}

fn resolve_relative(specifier: &str, from: &str, package: &Package<'_>) -> Result<Target, Problem> {
    let split = specifier.find(['?', '#']).unwrap_or(specifier.len());
    let (path_part, suffix) = specifier.split_at(split);
    let Some(target) = join(parent_dir(from), path_part).filter(|target| is_inside(package.path, target)) else {
        let where_ = if package.path.is_empty() {
            "the package directory".to_owned()
        } else {
            format!("the package directory {}", quoted(package.path))
        };
        let what = format!("which leaves {where_}");
        return Err(problem(
            "R0027",
            specifier,
            &what,
            "Move the file into the package, or publish it as a dependency and import it by its package name.",
        ));
    };
    let written_name = path_part.rsplit('/').next().unwrap_or("");
    let Some(ext) = extension(written_name).filter(|_| !matches!(written_name, "." | "..")) else {
        let fix = match suggest_file(&target, package.files) {
            Some(found) => format!("Write the file name with its extension: {}.", quoted(&rewrite_name(path_part, &found, ""))),
            None => "Write the file name with its extension, e.g. \"./lib/util.ts\" (ES modules do not resolve extensions or directory index files).".to_owned(),
        };
        return Err(Problem {
            rule: "R0028",
            text: format!("imports {} without a file extension. {fix}", quoted(specifier)),
        });
    };
    if is_declaration(written_name) {
        return Err(problem(
            "R0031",
            specifier,
            "a declaration file with no runtime code",
            "Use \"import type\" for types, or import the module that implements them.",
        ));
    }
    if matches!(ext, "cjs" | "cts") {
        return Err(problem(
            "R0029",
            specifier,
            "a CommonJS file",
            "Convert it to an ES module (.js, .mjs, .ts or .mts in this \"type\": \"module\" package) and import that.",
        ));
    }
    if matches!(ext, "jsx" | "tsx") {
        return Err(problem(
            "R0030",
            specifier,
            "a JSX file, which Sandbox packages do not compile",
            "Move the code to a .ts or .js file without JSX.",
        ));
    }
    // The TypeScript twins of a missing `.js` / `.mjs` target, the conventional one first.
    let stem = &target[..target.len() - ext.len()];
    let twins: &[&str] = match ext {
        "js" => &["ts", "mts"],
        "mjs" => &["mts", "ts"],
        _ => &[],
    };
    let twin = || twins.iter().map(|twin| format!("{stem}{twin}")).find(|twin| package.files.contains(twin));
    let resolved = if package.files.contains(&target) {
        target
    } else if let Some(twin) = twin() {
        twin
    } else {
        let what = format!("but {} is not a file of the package", quoted(&target));
        return Err(problem(
            "R0028",
            specifier,
            &what,
            "Check the path: relative imports are resolved from the importing file's directory.",
        ));
    };
    let compiled_specifier = is_typescript_source(&resolved).then(|| {
        let name = resolved.rsplit('/').next().unwrap_or(&resolved);
        rewrite_name(path_part, &format!("{name}.mjs"), suffix)
    });
    Ok(Target::File { path: resolved, compiled_specifier })
}

/// `path_part` with its last segment replaced by `name` (which may hold a `/`), plus `suffix`.
fn rewrite_name(path_part: &str, name: &str, suffix: &str) -> String {
    match path_part.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{name}{suffix}"),
        None => format!("./{name}{suffix}"),
    }
}

/// The file an extensionless `target` probably meant: `target.{ts,mts,js,mjs}` or
/// `target/index.{ts,mts,js,mjs}` (the path, relative to `target`'s directory, as `x.ts` or
/// `x/index.ts`).
fn suggest_file(target: &str, files: &BTreeSet<String>) -> Option<String> {
    let name = target.rsplit('/').next().unwrap_or(target);
    ["ts", "mts", "js", "mjs"]
        .iter()
        .find(|ext| files.contains(&format!("{target}.{ext}")))
        .map(|ext| format!("{name}.{ext}"))
        .or_else(|| {
            ["ts", "mts", "js", "mjs"]
                .iter()
                .find(|ext| files.contains(&format!("{target}/index.{ext}")))
                .map(|ext| format!("{name}/index.{ext}"))
        })
}
