//! Free-form Definitions: the options of `export default defineSandbox({ run, ... })` and
//! whether the nearest project (its `package.json` + lockfile) ships with the bundle.
//!
//! Pure. The JS glue (`pkg-template/vite/free-form.mjs`) compiles the `<path>.sandbox.*` file with
//! esbuild, parses it with acorn and hands over *facts* ([`SandboxFileFacts`]: what the default
//! export is, the properties of its object literal with source lines, static values) and, after
//! bundling, the bare import specifiers that stayed external. Every rule lives here.
//!
//! Source: vitehub-sandbox-contract.md §4.2 (one direct object literal, a `run` handler, static
//! JSON options, `project` boolean; a local binding yields no metadata), §4.5 (project attached
//! only when a runtime package dependency is imported, `project: true|false`), §4.6 (timeout);
//! §1.6 (the option keys of the reference: `timeout`, `env`, `transfer`).

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;

use crate::definition::MAX_TIMEOUT_MS;
use crate::error::{quoted, Error, ErrorCode, Result};

/// The `defineSandbox` keys this package implements, in the order messages list them.
pub const SUPPORTED_KEYS: [&str; 5] = ["run", "timeout", "project", "description", "input"];

/// The longest `description` accepted, in bytes (it becomes a tool description an agent reads).
pub const MAX_DESCRIPTION_BYTES: usize = 4096;

/// Keys of the reference contract (§1.2) that this package does not implement yet: rejected
/// with their own message rather than ignored.
const NOT_YET_SUPPORTED_KEYS: [&str; 2] = ["env", "transfer"];

/// The exported name the default export must call.
const DEFINE_SANDBOX: &str = "defineSandbox";

/// What the JS glue read from one free-form file (JSON, camelCase).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxFileFacts {
    /// The file, relative to the app root, `/`-separated (named in every message).
    pub file: String,
    /// The `export default …` declaration; `None` when the file has none.
    pub default_export: Option<DefaultExportFacts>,
}

/// What `export default <expression>` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DefaultExportKind {
    /// A call expression `callee(...)`.
    Call,
    /// A local binding (`export default definition`, `export { definition as default }`).
    Binding,
    /// Anything else (an object, a function, ...).
    Other,
}

/// The default export declaration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DefaultExportFacts {
    /// 1-based line in the source file.
    pub line: u32,
    /// What is exported.
    pub kind: DefaultExportKind,
    /// For a call: the callee's name as imported (`defineSandbox` for
    /// `import { defineSandbox as d } from '@vite-hub/sandbox'`), else its identifier; `None`
    /// for a member expression or another callee.
    #[serde(default)]
    pub callee: Option<String>,
    /// For a binding: the local name.
    #[serde(default)]
    pub binding: Option<String>,
    /// For a binding initialised with a call: that call's callee, resolved like `callee`.
    #[serde(default)]
    pub binding_callee: Option<String>,
    /// For a call: its arguments.
    #[serde(default)]
    pub arguments: Vec<ArgumentFacts>,
}

/// What one call argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgumentKind {
    /// An object literal `{ ... }`.
    Object,
    /// A spread argument `...x`.
    Spread,
    /// Anything else (an identifier, a call, ...).
    Other,
}

/// One call argument.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArgumentFacts {
    /// 1-based line in the source file.
    pub line: u32,
    /// What it is.
    pub kind: ArgumentKind,
    /// For an object literal: its properties in source order.
    #[serde(default)]
    pub properties: Vec<PropertyFacts>,
}

/// One property of the object literal.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PropertyFacts {
    /// The key (identifier or string/number literal key); `None` for a computed key or a spread.
    pub key: Option<String>,
    /// 1-based line in the source file.
    pub line: u32,
    /// 1-based column in the source file.
    pub column: u32,
    /// A spread property `...x`.
    #[serde(default)]
    pub spread: bool,
    /// The value is a function (method, function or arrow expression).
    #[serde(default)]
    pub function: bool,
    /// The value is static JSON: literals, negative numbers, template strings without
    /// expressions, arrays and objects of those.
    #[serde(rename = "static")]
    pub is_static: bool,
    /// The JSON value when static (absent or `null` otherwise).
    #[serde(default)]
    pub value: Option<Value>,
}

/// The validated options of a free-form Definition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxOptions {
    /// `timeout`, in ms.
    pub timeout_ms: Option<u32>,
    /// `project`, with the line it is set on.
    pub project: Option<(bool, u32)>,
    /// `description`: what the Definition does (its tool description), a non-empty string of at
    /// most [`MAX_DESCRIPTION_BYTES`] bytes.
    pub description: Option<String>,
    /// `input`: the line of the payload's Standard Schema (an expression: the JS glue evaluates
    /// it at build time for its Standard JSON Schema), when the Definition declares one.
    pub input_line: Option<u32>,
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// Checks the facts of a free-form file against the `defineSandbox` rules.
///
/// # Errors
/// `InvalidArgument`, the message starting with `<file>:<line>:` and saying how to fix it, when:
/// there is no default export; the default export is a local binding (even one holding a
/// `defineSandbox(...)` call) or anything but a direct `defineSandbox(...)` call; the call has
/// not exactly one object literal argument; a property is a spread, has a computed key or is set
/// twice; `run` is missing or a static value; a key is not `run`, `timeout`, `project`,
/// `description` or `input` (`env` and `transfer` are named as not supported yet); an option
/// other than `input` is not a static JSON value; `input` is a static value or a function (it
/// must be a Standard Schema expression); `project` is not a boolean; `timeout` is not a positive
/// integer <= [`MAX_TIMEOUT_MS`]; `description` is not a non-empty string of at most
/// [`MAX_DESCRIPTION_BYTES`] bytes.
pub fn sandbox_options(facts: &SandboxFileFacts) -> Result<SandboxOptions> {
    let file = facts.file.as_str();
    let example = "export default defineSandbox({ run(payload, context) { ... } })";
    let Some(export) = &facts.default_export else {
        return Err(invalid(format!(
            "{file}: a free-form Definition must default-export defineSandbox({{ run, ... }}); add {example}."
        )));
    };
    let at = |line: u32| format!("{file}:{line}");
    match export.kind {
        DefaultExportKind::Call if export.callee.as_deref() == Some(DEFINE_SANDBOX) => {}
        DefaultExportKind::Binding if export.binding_callee.as_deref() == Some(DEFINE_SANDBOX) => {
            let binding = export.binding.as_deref().unwrap_or("?");
            return Err(invalid(format!(
                "{}: defineSandbox() is assigned to the local binding {} and that binding is exported, so its options cannot be read; export the call directly: {example}.",
                at(export.line),
                quoted(binding)
            )));
        }
        _ => {
            return Err(invalid(format!(
                "{}: the default export must be a direct defineSandbox({{ ... }}) call; write {example}.",
                at(export.line)
            )))
        }
    }
    let object = match export.arguments.as_slice() {
        [one] if one.kind == ArgumentKind::Object => one,
        _ => {
            return Err(invalid(format!(
                "{}: defineSandbox() takes one direct object literal; pass the options inline: {example}.",
                at(export.line)
            )))
        }
    };

    let mut options = SandboxOptions::default();
    let mut seen = BTreeSet::new();
    for property in &object.properties {
        let here = at(property.line);
        if property.spread {
            return Err(invalid(format!(
                "{here}: defineSandbox() takes one direct object literal without spread (...) properties; write each option inline."
            )));
        }
        let Some(key) = property.key.as_deref() else {
            return Err(invalid(format!(
                "{here}: defineSandbox() options need plain keys, not computed [keys]; write each option inline."
            )));
        };
        if !seen.insert(key) {
            return Err(invalid(format!("{here}: defineSandbox() option {} is set twice; keep one.", quoted(key))));
        }
        if key == "run" {
            if property.is_static && !property.function {
                return Err(invalid(format!(
                    "{here}: defineSandbox() `run` must be a function: run(payload, context) {{ ... }}."
                )));
            }
            continue;
        }
        if key == "input" {
            if property.is_static || property.function {
                return Err(invalid(format!(
                    "{here}: defineSandbox() `input` must be a Standard Schema of the payload (zod 4, valibot, arktype…), e.g. input: z.object({{ text: z.string() }})."
                )));
            }
            options.input_line = Some(property.line);
            continue;
        }
        if NOT_YET_SUPPORTED_KEYS.contains(&key) {
            return Err(invalid(format!(
                "{here}: defineSandbox() option {} is not supported by @vite-hub/sandbox yet; remove it (supported options: {}).",
                quoted(key),
                SUPPORTED_KEYS.join(", ")
            )));
        }
        if !SUPPORTED_KEYS.contains(&key) {
            return Err(invalid(format!(
                "{here}: defineSandbox() has an unknown option {}; supported options: {}.",
                quoted(key),
                SUPPORTED_KEYS.join(", ")
            )));
        }
        if !property.is_static || property.function {
            return Err(invalid(format!(
                "{here}: defineSandbox() options must be static JSON-serializable values, and {} is computed; write a literal (string, number, boolean, null, or an array or object of them).",
                quoted(key)
            )));
        }
        let value = property.value.clone().unwrap_or(Value::Null);
        match key {
            "project" => {
                let project = value.as_bool().ok_or_else(|| {
                    invalid(format!("{here}: defineSandbox() option \"project\" must be a boolean (true or false)."))
                })?;
                options.project = Some((project, property.line));
            }
            "description" => {
                let text = value.as_str().filter(|text| !text.trim().is_empty() && text.len() <= MAX_DESCRIPTION_BYTES);
                let text = text.ok_or_else(|| {
                    invalid(format!(
                        "{here}: defineSandbox() option \"description\" must be a non-empty string of at most {MAX_DESCRIPTION_BYTES} bytes."
                    ))
                })?;
                options.description = Some(text.to_owned());
            }
            _ => {
                options.timeout_ms = Some(timeout_ms(&value).ok_or_else(|| {
                    invalid(format!(
                        "{here}: defineSandbox() option \"timeout\" must be a positive integer <= {MAX_TIMEOUT_MS} (milliseconds)."
                    ))
                })?);
            }
        }
    }
    if !seen.contains("run") {
        return Err(invalid(format!(
            "{}: defineSandbox() requires a `run` handler; add run(payload, context) {{ ... }} to its object.",
            at(object.line)
        )));
    }
    Ok(options)
}

/// A timeout value in ms when it is a positive integer <= [`MAX_TIMEOUT_MS`].
fn timeout_ms(value: &Value) -> Option<u32> {
    let ms = value.as_f64()?;
    (ms.fract() == 0.0 && ms >= 1.0 && ms <= f64::from(MAX_TIMEOUT_MS)).then_some(ms as u32)
}

/// The npm package a bare import specifier names: `slugify` for `slugify/lib/x`, `@scope/name`
/// for `@scope/name/sub`; `None` for a relative, absolute or URL specifier or a bad scope.
pub fn package_name(specifier: &str) -> Option<&str> {
    if specifier.is_empty()
        || specifier.starts_with('.')
        || specifier.starts_with('/')
        || specifier.starts_with('#')
        || specifier.contains(':')
    {
        return None;
    }
    let mut slashes = specifier.match_indices('/').map(|(i, _)| i);
    let end = if specifier.starts_with('@') {
        let first = slashes.next()?;
        if first == 1 || first + 1 == specifier.len() {
            return None;
        }
        slashes.next().unwrap_or(specifier.len())
    } else {
        slashes.next().unwrap_or(specifier.len())
    };
    Some(&specifier[..end])
}

/// The files of the nearest project that ship with a free-form bundle when it is attached,
/// relative to the project directory: the manifest and every lockfile the install plan reads
/// (those that exist; `bun.lockb` is never shipped, see [`crate::definition::is_excluded_path`]).
pub const PROJECT_FILES: [&str; 6] =
    ["package.json", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock"];

/// The `package.json` keys whose package names count as declared dependencies.
const DEPENDENCY_FIELDS: [&str; 4] = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"];

/// Whether the nearest project ships with a free-form bundle, and the packages it must install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectPlan {
    /// Ship the project's `package.json` and lockfile (so the Box installs them).
    pub attach: bool,
    /// The runtime package dependencies the bundle imports, sorted, without duplicates.
    pub dependencies: Vec<String>,
    /// The project files to ship when they exist ([`PROJECT_FILES`]); empty when not attached
    /// (then the glue synthesizes `{"type":"module","private":true}`).
    pub files: Vec<String>,
}

/// Decides whether the nearest project is attached to a free-form bundle (contract §4.5).
///
/// `external_specifiers` are the bare, non-built-in import specifiers the bundle kept external
/// (they load at run time from the installed project); `manifest` is the project's
/// `package.json` path relative to the app root and `manifest_json` its text. Declared packages
/// are the keys of its `dependencies`, `devDependencies`, `optionalDependencies` and
/// `peerDependencies`.
///
/// The project is attached when `project: true` or when a runtime dependency is imported.
///
/// # Errors
/// `InvalidArgument` naming the file: a specifier that names no package (`"@scope"`); `project:
/// false` with a runtime dependency ("declares project: false but has a runtime dependency
/// ..."); a manifest that is not a JSON object; a dependency the manifest does not declare.
pub fn project_plan(
    file: &str,
    options: &SandboxOptions,
    manifest: &str,
    manifest_json: &str,
    external_specifiers: &[String],
) -> Result<ProjectPlan> {
    let mut dependencies = BTreeSet::new();
    for specifier in external_specifiers {
        let name = package_name(specifier).ok_or_else(|| {
            invalid(format!(
                "{file}: imports {} which names no npm package; import a package (\"name\" or \"@scope/name\") or a relative file.",
                quoted(specifier)
            ))
        })?;
        dependencies.insert(name.to_owned());
    }
    if let (Some((false, line)), Some(first)) = (options.project, dependencies.iter().next()) {
        return Err(invalid(format!(
            "{file}:{line}: declares project: false but has a runtime dependency {}; remove project: false so {manifest} and its lockfile are installed in the Box, or stop importing {}.",
            quoted(first),
            quoted(first)
        )));
    }
    let attach = options.project.map(|(p, _)| p).unwrap_or(false) || !dependencies.is_empty();
    if attach {
        let Ok(Value::Object(manifest_object)) = crate::definition::parse_package_json(manifest_json.as_bytes()) else {
            return Err(invalid(format!(
                "{file}: its project manifest {manifest} is not a JSON object; fix {manifest}."
            )));
        };
        let declares = |name: &str| {
            DEPENDENCY_FIELDS.iter().any(|field| {
                manifest_object.get(*field).and_then(Value::as_object).is_some_and(|deps| deps.contains_key(name))
            })
        };
        if let Some(missing) = dependencies.iter().find(|d| !declares(d)) {
            return Err(invalid(format!(
                "{file}: imports the package {} but {manifest} does not declare it; add it to the dependencies of {manifest}.",
                quoted(missing)
            )));
        }
    }
    Ok(ProjectPlan {
        attach,
        dependencies: dependencies.into_iter().collect(),
        files: if attach { PROJECT_FILES.iter().map(|f| (*f).to_owned()).collect() } else { Vec::new() },
    })
}

#[cfg(test)]
mod tests;
