//! The free-form Definition wasm exports: facts read by `pkg-template/build/free-form.mjs` in,
//! [`crate::definition::sandbox_options`] out.
//!
//! Glue only: decodes JSON, calls the pure rules, encodes the answer. Facts travel as JSON text
//! so numbers and `null` keep their JSON meaning.

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::definition::sandbox_options::{project_plan, sandbox_options, SandboxFileFacts};
use crate::error::{Error, ErrorCode};

fn decode<'a, T: Deserialize<'a>>(json: &'a str, what: &str) -> crate::error::Result<T> {
    serde_json::from_str(json).map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("{what} has an unexpected shape: {e}")))
}

fn encode<T: Serialize>(value: &T) -> crate::error::Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("could not encode the free-form answer: {e}")))
}

#[derive(Serialize)]
struct OptionsAnswer {
    timeout: Option<u32>,
    project: Option<bool>,
}

/// `checkSandboxOptions(factsJson) → { timeout: number | null, project: boolean | null }`.
///
/// `factsJson` is a [`SandboxFileFacts`] as JSON; `timeout` is in ms.
///
/// # Errors
/// Throws a `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` for every rule of
/// [`sandbox_options`] (the message starts with `<file>:<line>:`), or when the facts have
/// another shape.
#[wasm_bindgen(js_name = checkSandboxOptions)]
pub fn check_sandbox_options(facts_json: &str) -> crate::error::Result<JsValue> {
    let facts: SandboxFileFacts = decode(facts_json, "the free-form facts")?;
    let options = sandbox_options(&facts)?;
    encode(&OptionsAnswer { timeout: options.timeout_ms, project: options.project.map(|(p, _)| p) })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProjectRequest {
    manifest: String,
    manifest_json: String,
    external_specifiers: Vec<String>,
}

#[derive(Serialize)]
struct ProjectAnswer {
    attach: bool,
    dependencies: Vec<String>,
    files: Vec<String>,
}

/// `planFreeFormProject(factsJson, requestJson) → { attach: boolean, dependencies: string[], files: string[] }`.
///
/// `requestJson` is `{ manifest: string, manifestJson: string, externalSpecifiers: string[] }`
/// (the project `package.json` path relative to the app root, its text, the bare imports the
/// bundle kept external). `files` are the project files to ship when they exist (relative to
/// the project directory), empty when the project is not attached.
///
/// # Errors
/// Throws a `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` for the rules of
/// [`sandbox_options`] and [`project_plan`] (e.g. "declares project: false but has a runtime
/// dependency ..."), or when the inputs have another shape.
#[wasm_bindgen(js_name = planFreeFormProject)]
pub fn plan_free_form_project(facts_json: &str, request_json: &str) -> crate::error::Result<JsValue> {
    let facts: SandboxFileFacts = decode(facts_json, "the free-form facts")?;
    let request: ProjectRequest = decode(request_json, "the free-form project request")?;
    let options = sandbox_options(&facts)?;
    let plan = project_plan(&facts.file, &options, &request.manifest, &request.manifest_json, &request.external_specifiers)
        ?;
    encode(&ProjectAnswer { attach: plan.attach, dependencies: plan.dependencies, files: plan.files })
}
