//! The `discoverDefinitions` wasm export: the JS file walk in, [`crate::discovery`] out.
//!
//! Glue only: decodes the plain object, calls [`discover`], encodes the result. No rule about
//! what a Definition is lives here (see [`crate::discovery`]).

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::api::to_js_error;
use crate::discovery::{discover, DiscoveredDefinition, DiscoveryInput};
use crate::error::{Error, ErrorCode};

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
        DiscoveredItem { name: &definition.name, kind: definition.kind.as_str(), dir: &definition.dir, entry: &definition.entry }
    }
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
/// or for any rule of [`discover`] (the message names the folder or file).
#[wasm_bindgen(js_name = discoverDefinitions)]
pub fn discover_definitions(files: JsValue) -> Result<JsValue, JsValue> {
    let request: DiscoverRequest = serde_wasm_bindgen::from_value(files).map_err(|e| {
        to_js_error(&Error::new(
            ErrorCode::InvalidArgument,
            format!("discoverDefinitions expects {{ files: string[], packageDirs: string[], workspaceDirs: string[] }}: {e}"),
        ))
    })?;
    let input = DiscoveryInput { files: request.files, package_dirs: request.package_dirs, workspace_dirs: request.workspace_dirs };
    let definitions = discover(&input).map_err(|e| to_js_error(&e))?;
    let items: Vec<DiscoveredItem<'_>> = definitions.iter().map(DiscoveredItem::from).collect();
    items
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| to_js_error(&Error::new(ErrorCode::RuntimeError, format!("could not encode the discovered Definitions: {e}"))))
}
