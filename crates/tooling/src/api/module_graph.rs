//! The `checkModuleGraph` wasm export: module facts from the JS glue in,
//! [`vite_hub_sandbox_core::definition::module_graph`] out.
//!
//! Glue only: decodes the plain object, calls [`check_module_graph`], encodes the result. Internal
//! (used by `pkg-template/vite/definition-modules.mjs`, not declared in `index.d.ts`).

use serde::Serialize;
use wasm_bindgen::prelude::*;

use vite_hub_sandbox_core::definition::module_graph::{check_module_graph, ModuleGraphInput};
use vite_hub_sandbox_core::error::{Error, ErrorCode};

/// `checkModuleGraph(input)`: checks the module graph of a package and plans the specifier
/// rewrites of its compiled TypeScript.
///
/// Shape:
/// ```ts
/// (input: {
///   name?: string, manifest?: string, packagePath?: string, entry?: string, files: string[],
///   modules: Array<{ path: string,
///     imports: Array<{ specifier: string | null, start: number, end: number, line: number | null, column: number | null, dynamic: boolean }>,
///     commonjs: Array<{ name: string, usage: string, property?: string | null, line: number | null, column: number | null }>,
///     parseError?: { message: string, line: number | null, column: number | null } }>,
///   manifests?: Array<{ path: string, text: string }>,   // every package.json of `files`
/// }) => { checked: boolean, rewrites: Record<string, Array<{ start: number, end: number, text: string }>> }
/// ```
/// Offsets are UTF-16 units of the compiled code; lines and columns are 1-based, in the source.
///
/// # Errors
/// Throws a `SandboxError` with code `SANDBOX_INVALID_ARGUMENT` when the input has another shape
/// or for the first broken rule of [`check_module_graph`] (the message names file, line and column).
#[wasm_bindgen(js_name = checkModuleGraph)]
pub fn check_module_graph_js(input: JsValue) -> crate::error::js::JsResult<JsValue> {
    let input: ModuleGraphInput = serde_wasm_bindgen::from_value(input).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("checkModuleGraph expects {{ files: string[], modules: object[], … }}: {e}"),
        )
    })?;
    let plan = check_module_graph(&input)?;
    plan.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("could not encode the module graph plan: {e}")).into())
}
