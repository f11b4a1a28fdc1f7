//! The project-reading wasm exports. `resolvePnpmWorkspace`: what the JS glue read about an
//! enclosing pnpm workspace in, [`vite_hub_sandbox_core::definition::workspace`]'s decision out.
//! `isExcludedPath`: the one exclusion rule ([`vite_hub_sandbox_core::definition::is_excluded_path`]).
//!
//! Glue only: decodes the plain object, calls [`resolve_workspace`], encodes the answer
//! (docs/internals/build-steps.md, "Project resolution").

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use vite_hub_sandbox_core::definition::workspace::{resolve_workspace, WorkspaceInput};
use vite_hub_sandbox_core::error::{Error, ErrorCode};

/// One `package.json` below the workspace root.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestItem {
    dir: String,
    text: String,
}

/// Input shape (camelCase on the JS side).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WorkspaceRequest {
    #[serde(default)]
    root_label: String,
    package_path: String,
    #[serde(default)]
    globs: Vec<String>,
    #[serde(default)]
    patched_dependencies: Option<serde_json::Value>,
    manifests: Vec<ManifestItem>,
}

/// Output shape (camelCase on the JS side).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkspaceAnswer {
    package_path: String,
    dirs: Vec<String>,
    patch_files: Vec<String>,
}

/// `resolvePnpmWorkspace({ rootLabel?, packagePath, globs?, patchedDependencies?, manifests:
/// [{ dir, text }] }) → null | { packagePath, dirs, patchFiles }`.
///
/// Paths are relative to the workspace root (`""` = the root); `rootLabel` is the root's path
/// for messages. `null` means the workspace does not apply (the Definition folder alone is the
/// project). Throws `SANDBOX_INVALID_ARGUMENT` for a malformed request or the errors of
/// [`resolve_workspace`] (missing workspace dependency, bad manifest, bad pattern, bad patch path).
#[wasm_bindgen(js_name = resolvePnpmWorkspace)]
pub fn resolve_pnpm_workspace(request: JsValue) -> crate::error::js::JsResult<JsValue> {
    let request: WorkspaceRequest = serde_wasm_bindgen::from_value(request)
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("resolvePnpmWorkspace: invalid request: {e}")))?;
    let input = WorkspaceInput {
        root_label: request.root_label,
        package_path: request.package_path,
        globs: request.globs,
        workspace_patches: request.patched_dependencies,
        manifests: request.manifests.into_iter().map(|m| (m.dir, m.text)).collect(),
    };
    let Some(plan) = resolve_workspace(&input)? else {
        return Ok(JsValue::NULL);
    };
    let answer = WorkspaceAnswer { package_path: plan.package_path, dirs: plan.dirs, patch_files: plan.patch_files };
    Serialize::serialize(&answer, &serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("resolvePnpmWorkspace: {e}")).into())
}

/// `isExcludedPath(path: string) → boolean`: whether a project file or directory is never
/// shipped ([`vite_hub_sandbox_core::definition::is_excluded_path`]; `path` is `/`-separated, relative to the
/// install root). The Node walker (pkg-template/vite/definition-project.mjs) asks this for every
/// entry, so the rule exists only in Rust. Never throws.
#[wasm_bindgen(js_name = isExcludedPath)]
pub fn is_excluded_path_export(path: &str) -> bool {
    vite_hub_sandbox_core::definition::is_excluded_path(path)
}
