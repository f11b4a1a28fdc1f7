//! The free-form Definition wasm exports: facts read by `pkg-template/vite/free-form.mjs` in,
//! [`vite_hub_sandbox_core::definition::sandbox_options`] out.
//!
//! Glue only: decodes JSON, calls the pure rules, encodes the answer. Facts travel as JSON text
//! so numbers and `null` keep their JSON meaning.

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use vite_hub_sandbox_core::definition::box_project::{box_project, AppLock};
use vite_hub_sandbox_core::definition::sandbox_options::{project_plan, sandbox_options, SandboxFileFacts};
use vite_hub_sandbox_core::error::{Error, ErrorCode};

fn decode<'a, T: Deserialize<'a>>(json: &'a str, what: &str) -> vite_hub_sandbox_core::error::Result<T> {
    serde_json::from_str(json)
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("{what} has an unexpected shape: {e}")))
}

fn encode<T: Serialize>(value: &T) -> vite_hub_sandbox_core::error::Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("could not encode the free-form answer: {e}")))
}

#[derive(Serialize)]
struct OptionsAnswer {
    timeout: Option<u32>,
    project: Option<bool>,
    description: Option<String>,
    input: bool,
}

/// `checkSandboxOptions(factsJson) → { timeout: number | null, project: boolean | null,
/// description: string | null, input: boolean }` (`input`: the file declares a payload schema).
///
/// `factsJson` is a [`SandboxFileFacts`] as JSON; `timeout` is in ms.
///
/// # Errors
/// Throws a `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` for every rule of
/// [`sandbox_options`] (the message starts with `<file>:<line>:`), or when the facts have
/// another shape.
#[wasm_bindgen(js_name = checkSandboxOptions)]
pub fn check_sandbox_options(facts_json: &str) -> crate::error::js::JsResult<JsValue> {
    let facts: SandboxFileFacts = decode(facts_json, "the free-form facts")?;
    let options = sandbox_options(&facts)?;
    Ok(encode(&OptionsAnswer {
        timeout: options.timeout_ms,
        project: options.project.map(|(p, _)| p),
        input: options.input_line.is_some(),
        description: options.description,
    })?)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProjectRequest {
    manifest: String,
    manifest_json: String,
    external_specifiers: Vec<String>,
    /// The project's npm lockfile: its name (`npm-shrinkwrap.json` / `package-lock.json`) and text.
    #[serde(default)]
    npm_lock: Option<(String, String)>,
    /// The project's `pnpm-lock.yaml`, parsed to JSON.
    #[serde(default)]
    pnpm_lock: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct GeneratedAnswer {
    path: &'static str,
    text: String,
}

#[derive(Serialize)]
struct ProjectAnswer {
    attach: bool,
    dependencies: Vec<String>,
    files: Vec<String>,
    generated: Vec<GeneratedAnswer>,
}

/// `planFreeFormProject(factsJson, requestJson) → { attach: boolean, dependencies: string[], files: string[], generated: Array<{ path: string, text: string }> }`.
///
/// `requestJson` is `{ manifest: string, manifestJson: string, externalSpecifiers: string[],
/// npmLock?: [name, text], pnpmLock?: object }` (the project `package.json` path relative to the
/// app root, its text, the bare imports the bundle kept external, the project's npm lockfile and
/// its parsed `pnpm-lock.yaml`). With `project: true`, `files` are the project files to ship when
/// they exist (relative to the project directory); when the project is attached because the
/// bundle imports packages, `generated` is the Box project instead (a `package.json` of only those
/// packages, pinned to the lockfile's versions, and a `package-lock.json` from an npm lock; see
/// [`box_project`]); both are empty when nothing is attached.
///
/// # Errors
/// Throws a `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` for the rules of
/// [`sandbox_options`] and [`project_plan`] (e.g. "declares project: false but has a runtime
/// dependency ..."), or when the inputs have another shape.
#[wasm_bindgen(js_name = planFreeFormProject)]
pub fn plan_free_form_project(facts_json: &str, request_json: &str) -> crate::error::js::JsResult<JsValue> {
    let facts: SandboxFileFacts = decode(facts_json, "the free-form facts")?;
    let request: ProjectRequest = decode(request_json, "the free-form project request")?;
    let options = sandbox_options(&facts)?;
    let plan =
        project_plan(&facts.file, &options, &request.manifest, &request.manifest_json, &request.external_specifiers)?;
    // Attached because the bundle imports packages (not `project: true`): the Box gets only
    // those, pinned to the app's lockfile (box_project.rs), instead of the whole project.
    let imports_only = plan.attach && options.project.map(|(p, _)| p) != Some(true);
    if !imports_only {
        return Ok(encode(&ProjectAnswer {
            attach: plan.attach,
            dependencies: plan.dependencies,
            files: plan.files,
            generated: Vec::new(),
        })?);
    }
    let manifest = match vite_hub_sandbox_core::definition::parse_package_json(request.manifest_json.as_bytes()) {
        Ok(serde_json::Value::Object(map)) => map,
        // project_plan already refused a manifest that is not an object.
        _ => serde_json::Map::new(),
    };
    let (lock_name, npm_text) = match &request.npm_lock {
        Some((name, text)) => (name.as_str(), Some(text.as_str())),
        None => ("package-lock.json", None),
    };
    let lock = AppLock { npm: npm_text, pnpm: request.pnpm_lock.as_ref() };
    let generated = box_project(&facts.file, &manifest, &plan.dependencies, &lock, lock_name)?
        .into_iter()
        .map(|file| GeneratedAnswer { path: file.path, text: file.text })
        .collect();
    Ok(encode(&ProjectAnswer { attach: plan.attach, dependencies: plan.dependencies, files: Vec::new(), generated })?)
}
