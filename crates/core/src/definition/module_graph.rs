//! The module graph of a package Definition: which imports and CommonJS uses its reachable code
//! may have, and how relative imports of compiled TypeScript are rewritten.
//!
//! Pure. The JS glue (`pkg-template/vite/definition-modules.mjs`, `module-facts.mjs`) compiles each
//! TypeScript file, parses every executable module and hands over facts: import edges with
//! positions, and the CommonJS names no declaration binds. Every rule lives here:
//! - the graph is walked from the entry over relative static and literal dynamic imports;
//! - in reachable modules: R0023 non-literal `import()`, R0024 `#alias`, R0025 self-import,
//!   R0026 absolute path or URL (not `node:`), R0027 leaving the package directory, R0028
//!   extensionless or missing target, R0029 `.cjs/.cts`, R0030 `.jsx/.tsx`, R0031 `.d.ts`,
//!   R0022 CommonJS usage (see `resolve` for the import rules), R0032 a bare import of a
//!   package the manifest does not declare in dependencies/peer/optional (see `dependencies`);
//! - in the manifest: R0033 a dependency linked to a local path the Definition does not ship
//!   (`file:`/`link:` out of its folder; see `linked`);
//! - bare imports of shipped pnpm workspace packages (the Definition's `workspace:` closure,
//!   from `manifests`) must resolve, as Node would, to shipped JavaScript: R0018 `exports`, R0019
//!   `main`, R0020 default `./index.js` / plain file path; the imported workspace modules are
//!   walked too (see `workspace`, `package_target`);
//! - in every compiled module (reachable or not): each relative import whose target is a
//!   TypeScript source gets an [`Edit`] to the compiled sibling (`"./x.ts.mjs"`).
//!
//! Only a Definition-shaped package is checked: a package.json that is a JSON object with
//! `"type": "module"` and exactly one root entry. Anything else is left to
//! [`super::Definition::from_files`], so its errors (missing manifest, R0016, R0017, no or
//! several entries) win over module-graph errors.
//!
//! Source: vitehub-sandbox-contract.md §4.4; docs/internals/build-steps.md "TypeScript"; issue 3 item 2.

mod dependencies;
mod linked;
mod package_target;
mod resolve;
mod workspace;

use crate::error::{quoted, Error, ErrorCode, Result};
use resolve::{is_executable_module, is_typescript_source, resolve, Package, Target};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Input of [`check_module_graph`] (camelCase on the JS side).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModuleGraphInput {
    /// The Definition name for messages (`Sandbox "<name>": …`); `None` → `Sandbox package: …`.
    #[serde(default)]
    pub name: Option<String>,
    /// The text of `<package_path>/package.json`, `None` when there is none.
    #[serde(default)]
    pub manifest: Option<String>,
    /// The package directory inside `files` (`""` = the root), `/`-separated, no trailing `/`.
    #[serde(default)]
    pub package_path: String,
    /// The entry's source path (e.g. `index.ts`); `None` = the one `index.{ts,mts,js,mjs}` in
    /// `package_path`.
    #[serde(default)]
    pub entry: Option<String>,
    /// Every file path of the package, `/`-separated.
    pub files: Vec<String>,
    /// Facts of every executable module (`.js`, `.mjs`, `.ts`, `.mts`, not `.d.ts`).
    pub modules: Vec<ModuleFacts>,
    /// Every `package.json` of `files` with its text (the Definition's own may be included): the
    /// shipped pnpm workspace packages whose runtime JavaScript is checked (see `workspace`).
    #[serde(default)]
    pub manifests: Vec<ManifestText>,
}

/// One `package.json` of the file list.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestText {
    /// Its path in the file list (`packages/lib/package.json`, `package.json`).
    pub path: String,
    /// Its text.
    pub text: String,
}

/// What the glue read from one module.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModuleFacts {
    /// The source path (`lib/util.ts`, not the compiled `lib/util.ts.mjs`).
    pub path: String,
    /// Static imports, `export … from`, and dynamic `import()`, in code order.
    #[serde(default)]
    pub imports: Vec<ImportEdge>,
    /// References to `require`, `module` or `exports` that no declaration binds.
    #[serde(default)]
    pub commonjs: Vec<CommonJsUse>,
    /// Set when the module is not valid ES module syntax (only JS sources; TypeScript that
    /// does not compile is reported by the glue).
    #[serde(default)]
    pub parse_error: Option<ParseError>,
}

/// One import of a module.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportEdge {
    /// The specifier; `None` for `import(expr)` with a non-constant argument.
    pub specifier: Option<String>,
    /// UTF-16 offset of the specifier literal (quotes included) in the compiled code; opaque here.
    pub start: u32,
    /// UTF-16 offset just past it.
    pub end: u32,
    /// Line in the original source, 1-based (`None`: unknown).
    pub line: Option<u32>,
    /// Column in the original source, 1-based, UTF-16 units (`None`: unknown).
    pub column: Option<u32>,
    /// `import()` rather than a declaration.
    #[serde(default)]
    pub dynamic: bool,
}

/// How CommonJS is used (JS names in kebab-case, e.g. `"require-call"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommonJsUsage {
    /// `require(…)`.
    RequireCall,
    /// TypeScript `import x = require(…)`.
    ImportRequire,
    /// `require.<prop>` (e.g. `require.resolve`).
    RequireMember,
    /// `require` as a value (`const r = require`, `typeof require`).
    RequireReference,
    /// `module.exports = …` or `module.exports.x = …`.
    ModuleExportsAssignment,
    /// `module.exports` read.
    ModuleExportsReference,
    /// `module` otherwise.
    ModuleReference,
    /// `exports = …` or `exports.x = …`.
    ExportsAssignment,
    /// `exports` read.
    ExportsReference,
}

/// One CommonJS reference.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommonJsUse {
    /// `require`, `module` or `exports`.
    pub name: String,
    /// How it is used.
    pub usage: CommonJsUsage,
    /// The property of a [`CommonJsUsage::RequireMember`] (`resolve`), when constant.
    #[serde(default)]
    pub property: Option<String>,
    /// Line in the original source, 1-based.
    pub line: Option<u32>,
    /// Column in the original source, 1-based.
    pub column: Option<u32>,
}

/// A syntax error of a JS module, positions in its source.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ParseError {
    /// The parser's message.
    pub message: String,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column.
    pub column: Option<u32>,
}

/// Replace `start..end` (UTF-16 offsets of the compiled code) by `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// Start offset, from the [`ImportEdge`].
    pub start: u32,
    /// End offset, from the [`ImportEdge`].
    pub end: u32,
    /// The new specifier literal, JSON-quoted (`"./x.ts.mjs"`).
    pub text: String,
}

/// The answer of [`check_module_graph`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleGraphPlan {
    /// Whether the rules ran (false when the package is not Definition-shaped, see the module doc).
    pub checked: bool,
    /// Edits per compiled source path (`lib/x.ts`), in offset order; modules without edits absent.
    pub rewrites: BTreeMap<String, Vec<Edit>>,
}

/// One broken rule, sortable into the reported order.
struct Finding {
    path: String,
    line: Option<u32>,
    column: Option<u32>,
    text: String,
}

/// Checks the module graph of a package and plans the specifier rewrites of its compiled
/// TypeScript.
///
/// # Errors
/// `InvalidArgument` for the first broken rule in reachable code, ordered by module path, then
/// line and column (a position the source map does not know comes last). Message:
/// `Sandbox "<name>": <file>:<line>:<column> <what is wrong>. <how to fix>.` (`<file>` alone when
/// the position is unknown). Also `InvalidArgument` when the entry or a reachable executable
/// module has no facts (a glue bug).
pub fn check_module_graph(input: &ModuleGraphInput) -> Result<ModuleGraphPlan> {
    let files: BTreeSet<String> = input.files.iter().cloned().collect();
    let manifest = module_manifest(input.manifest.as_deref());
    let package = Package {
        path: input.package_path.trim_end_matches('/'),
        name: manifest.as_ref().and_then(|m| m.get("name")).and_then(Value::as_str),
        files: &files,
    };
    let modules: BTreeMap<&str, &ModuleFacts> = input.modules.iter().map(|m| (m.path.as_str(), m)).collect();
    let rewrites = plan_rewrites(&modules, &package);
    let entry = match (&input.entry, &manifest) {
        (_, None) => None,
        (Some(entry), Some(_)) => Some(entry.clone()),
        (None, Some(_)) => root_entry(package.path, &files),
    };
    let Some(entry) = entry else {
        return Ok(ModuleGraphPlan { checked: false, rewrites });
    };
    let prefix = match &input.name {
        Some(name) => format!("Sandbox {}:", quoted(name)),
        None => "Sandbox package:".to_owned(),
    };
    let facts_of = |path: &str| {
        modules.get(path).copied().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{prefix} {} is a module of the package but no facts were given for it.", quoted(path)),
            )
        })
    };

    let mut findings = Vec::new();
    let declared = manifest.as_ref().map(|manifest| dependencies::Declared::new(manifest, &files));
    let mut reached = BTreeSet::from([entry.clone()]);
    let mut pending = vec![entry];
    while let Some(path) = pending.pop() {
        let module = facts_of(&path)?;
        findings.extend(module_findings(module, &package, declared.as_ref(), |target| {
            if is_executable_module(target) && reached.insert(target.to_owned()) {
                pending.push(target.to_owned());
            }
        }));
    }
    if let Some(manifest) = &manifest {
        findings.extend(linked::linked_findings(manifest, package.path, &files));
        let closure = workspace::closure(manifest, package.path, &input.manifests);
        findings.extend(workspace::workspace_findings(&closure, &reached, &files, facts_of)?);
    }
    findings.sort_by(|a, b| {
        let key = |f: &Finding| (f.line.is_none(), f.line, f.column);
        a.path.cmp(&b.path).then_with(|| key(a).cmp(&key(b)))
    });
    match findings.into_iter().next() {
        Some(finding) => {
            let place = match (finding.line, finding.column) {
                (Some(line), Some(column)) => format!("{}:{line}:{column}", finding.path),
                _ => finding.path.clone(),
            };
            Err(Error::new(ErrorCode::InvalidArgument, format!("{prefix} {place} {}", finding.text)))
        }
        None => Ok(ModuleGraphPlan { checked: true, rewrites }),
    }
}

/// The manifest as an object when it has `"type": "module"`.
fn module_manifest(text: Option<&str>) -> Option<serde_json::Map<String, Value>> {
    match crate::definition::parse_package_json(text?.as_bytes()) {
        Ok(Value::Object(map)) if map.get("type").and_then(Value::as_str) == Some("module") => Some(map),
        _ => None,
    }
}

/// The one `index.{ts,mts,js,mjs}` directly in `package_path`; `None` for zero or several.
fn root_entry(package_path: &str, files: &BTreeSet<String>) -> Option<String> {
    let found: Vec<String> = super::ENTRY_NAMES
        .iter()
        .map(|name| if package_path.is_empty() { (*name).to_owned() } else { format!("{package_path}/{name}") })
        .filter(|path| files.contains(path))
        .collect();
    match <[String; 1]>::try_from(found) {
        Ok([one]) => Some(one),
        Err(_) => None,
    }
}

/// The rewrite edits of every compiled module (reachable or not).
fn plan_rewrites(modules: &BTreeMap<&str, &ModuleFacts>, package: &Package<'_>) -> BTreeMap<String, Vec<Edit>> {
    let mut rewrites = BTreeMap::new();
    for (path, module) in modules.iter().filter(|(path, _)| is_typescript_source(path)) {
        let mut edits: Vec<Edit> = module
            .imports
            .iter()
            .filter_map(|edge| {
                let specifier = edge.specifier.as_deref()?;
                match resolve(specifier, path, package) {
                    Ok(Target::File { compiled_specifier: Some(new), .. }) => {
                        Some(Edit { start: edge.start, end: edge.end, text: quoted(&new) })
                    }
                    _ => None,
                }
            })
            .collect();
        edits.sort_by_key(|edit| edit.start);
        if !edits.is_empty() {
            rewrites.insert((*path).to_owned(), edits);
        }
    }
    rewrites
}

/// Every broken rule of one reachable module; `reach` is called with each package file it imports.
fn module_findings(
    module: &ModuleFacts,
    package: &Package<'_>,
    declared: Option<&dependencies::Declared>,
    mut reach: impl FnMut(&str),
) -> Vec<Finding> {
    let finding = |line, column, text: String| Finding { path: module.path.clone(), line, column, text };
    let mut findings = Vec::new();
    if let Some(error) = &module.parse_error {
        findings.push(finding(
            error.line,
            error.column,
            format!(
                "is not a valid ES module: {}. Fix the syntax; Sandbox packages run as ES modules.",
                error.message.trim_end_matches('.')
            ),
        ));
    }
    for edge in &module.imports {
        let Some(specifier) = edge.specifier.as_deref() else {
            findings.push(finding(
                edge.line,
                edge.column,
                "has a dynamic import() whose specifier is not a string literal (R0023). Use a literal path such as import(\"./plugins/a.ts\") so every module of the package can be checked.".to_owned(),
            ));
            continue;
        };
        match resolve(specifier, &module.path, package) {
            Ok(Target::File { path, .. }) => reach(&path),
            Ok(Target::Dependency) => {
                if let Some(text) = declared.and_then(|declared| declared.check(specifier)) {
                    findings.push(finding(edge.line, edge.column, text));
                }
            }
            Err(problem) => findings.push(finding(edge.line, edge.column, with_rule(problem.text, problem.rule))),
        }
    }
    for usage in &module.commonjs {
        findings.push(finding(usage.line, usage.column, commonjs_text(usage)));
    }
    findings
}

/// `text` (`what. fix.`) with the rule code after the first sentence: `what (R0024). fix.`.
fn with_rule(text: String, rule: &str) -> String {
    match text.find(". ") {
        Some(at) => format!("{} ({rule}){}", &text[..at], &text[at..]),
        None => format!("{text} ({rule})"),
    }
}

/// The R0022 message part of one CommonJS use.
fn commonjs_text(usage: &CommonJsUse) -> String {
    let member = format!("require.{}", usage.property.as_deref().unwrap_or("[…]"));
    let (syntax, fix) = match usage.usage {
        CommonJsUsage::RequireCall => ("require()", "Use import (or await import() to load conditionally); for a CommonJS-only API use createRequire(import.meta.url) from \"node:module\"."),
        CommonJsUsage::ImportRequire => ("import x = require()", "Use import x from \"…\" (or import * as x from \"…\") instead."),
        CommonJsUsage::RequireMember if usage.property.as_deref() == Some("resolve") => (member.as_str(), "Use import.meta.resolve() instead."),
        CommonJsUsage::RequireMember => (member.as_str(), "Use createRequire(import.meta.url) from \"node:module\" to get a require function."),
        CommonJsUsage::RequireReference => ("require", "Use import, or createRequire(import.meta.url) from \"node:module\" to get a require function."),
        CommonJsUsage::ModuleExportsAssignment => ("module.exports assignment", "Use export default or named export declarations instead."),
        CommonJsUsage::ModuleExportsReference => ("module.exports", "Use export declarations instead."),
        CommonJsUsage::ModuleReference => ("module", "ES modules have no module object; use export declarations and import.meta instead."),
        CommonJsUsage::ExportsAssignment => ("exports assignment", "Use export declarations instead."),
        CommonJsUsage::ExportsReference => ("exports", "Use export declarations instead."),
    };
    format!("uses CommonJS {syntax}, which does not exist in an ES module (R0022). {fix}")
}

#[cfg(test)]
mod tests;
