//! The `discoverDefinitions` wasm export: the JS file walk in, [`vite_hub_sandbox_core::definition::discovery`] out.
//!
//! Glue only: decodes the plain object, calls [`discover`], encodes the result. No rule about
//! what a Definition is lives here (see [`vite_hub_sandbox_core::definition::discovery`]).

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use vite_hub_sandbox_core::definition::discovery::{discover, discover_all, DiscoveredDefinition, DiscoveryInput};
use vite_hub_sandbox_core::error::{Error, ErrorCode};

/// Input shape (camelCase on the JS side).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DiscoverRequest {
    files: Vec<String>,
    #[serde(default)]
    package_dirs: Vec<String>,
    #[serde(default)]
    workspace_dirs: Vec<String>,
}

/// Output shape of one Definition (camelCase on the JS side).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiscoveredItem<'a> {
    name: &'a str,
    kind: &'static str,
    dir: &'a str,
    entry: &'a str,
}

impl<'a> From<&'a DiscoveredDefinition> for DiscoveredItem<'a> {
    fn from(definition: &'a DiscoveredDefinition) -> Self {
        DiscoveredItem {
            name: &definition.name,
            kind: definition.kind.as_str(),
            dir: &definition.dir,
            entry: &definition.entry,
        }
    }
}

fn decode_request(input: JsValue) -> vite_hub_sandbox_core::error::Result<DiscoveryInput> {
    let request: DiscoverRequest = serde_wasm_bindgen::from_value(input).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("discoverDefinitions expects {{ files: string[], packageDirs: string[], workspaceDirs: string[] }}: {e}"),
        )
    })?;
    Ok(DiscoveryInput {
        files: request.files,
        package_dirs: request.package_dirs,
        workspace_dirs: request.workspace_dirs,
    })
}

fn encode<T: Serialize>(value: &T) -> vite_hub_sandbox_core::error::Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("could not encode the discovered Definitions: {e}")))
}

/// `discoverDefinitions({ files, packageDirs, workspaceDirs })`: the Definitions of an app, sorted
/// by name.
///
/// Shape:
/// ```ts
/// (input: { files: string[], packageDirs?: string[], workspaceDirs?: string[] })
///   => Array<{ name: string, kind: 'package' | 'free-form', dir: string, entry: string }>
/// ```
/// Paths are relative to the app root, `/`-separated; a directory is `""` for the root.
///
/// # Errors
/// Throws a `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` when the input has another shape
/// or for the first rule of [`discover`] that fails (the message names the folder or file).
#[wasm_bindgen(js_name = discoverDefinitions)]
pub fn discover_definitions(files: JsValue) -> crate::error::js::JsResult<JsValue> {
    let definitions = discover(&decode_request(files)?)?;
    let items: Vec<DiscoveredItem<'_>> = definitions.iter().map(DiscoveredItem::from).collect();
    Ok(encode(&items)?)
}

/// One problem of [`discover_all`] (camelCase on the JS side).
#[derive(Serialize)]
struct ProblemItem<'a> {
    name: Option<&'a str>,
    origin: &'a str,
    code: &'static str,
    message: &'a str,
}

/// `discoverDefinitionsAndProblems(input)`: like `discoverDefinitions`, but a folder or file that
/// breaks a rule is reported instead of thrown, so the others are still found (`vite dev`,
/// `inspect`). Internal.
///
/// Shape: `(input as for discoverDefinitions) => { definitions: [...as discoverDefinitions],
/// problems: Array<{ name: string | null, origin: string, code: 'SANDBOX_INVALID_ARGUMENT', message: string }> }`
/// (`origin`: the folder or file, relative to the app root; for a duplicated name, both joined by
/// `" and "`).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` only for malformed input.
#[wasm_bindgen(js_name = discoverDefinitionsAndProblems)]
pub fn discover_definitions_and_problems(files: JsValue) -> crate::error::js::JsResult<JsValue> {
    let discovery = discover_all(&decode_request(files)?)?;
    #[derive(Serialize)]
    struct Answer<'a> {
        definitions: Vec<DiscoveredItem<'a>>,
        problems: Vec<ProblemItem<'a>>,
    }
    Ok(encode(&Answer {
        definitions: discovery.definitions.iter().map(DiscoveredItem::from).collect(),
        problems: discovery
            .problems
            .iter()
            .map(|p| ProblemItem {
                name: p.name.as_deref(),
                origin: &p.origin,
                code: p.error.code().as_str(),
                message: p.error.message(),
            })
            .collect(),
    })?)
}
