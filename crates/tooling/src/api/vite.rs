//! wasm exports for the Vite plugin (`pkg-template/vite/vite.mjs`): decode, call [`crate::plugin`],
//! encode. No rule lives here.

use vite_hub_sandbox_core::env_map::EnvMap;

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::plugin::{artifact_stems, resolve_plugin_config};
use vite_hub_sandbox_core::error::{Error, ErrorCode};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PluginConfigRequest {
    #[serde(default)]
    plugin: serde_json::Value,
    #[serde(default)]
    vite: serde_json::Value,
    #[serde(default)]
    env: EnvMap,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PluginConfigAnswer {
    config: serde_json::Value,
    provider: Option<&'static str>,
    dev_provider: &'static str,
}

fn to_js<T: Serialize>(value: &T) -> vite_hub_sandbox_core::error::Result<JsValue> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, e.to_string()))
}

/// `resolveSandboxPluginConfig({ plugin, vite, env }) → { config, provider, devProvider }`:
/// merges `hubSandbox(options)` under the Vite config key `sandbox`, validates the result with
/// the same `SandboxConfig` parsing as `configureSandbox`, and names the provider (`provider`:
/// explicitly named by the config or env `SANDBOX_PROVIDER`, else `null`; `devProvider`: what a
/// run in `vite dev` would use). Rules: [`crate::plugin::resolve_plugin_config`].
///
/// Throws `SANDBOX_INVALID_ARGUMENT` for secrets or runtime-only keys (`vercel.token`, …), unknown
/// keys, bad values or an unknown provider name.
#[wasm_bindgen(js_name = resolveSandboxPluginConfig)]
pub fn resolve_sandbox_plugin_config(request: JsValue) -> crate::error::js::JsResult<JsValue> {
    let request: PluginConfigRequest = serde_wasm_bindgen::from_value(request)
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("invalid plugin config request: {e}")))?;
    let resolved = resolve_plugin_config(&request.plugin, &request.vite, &request.env)?;
    Ok(to_js(&PluginConfigAnswer {
        config: resolved.config,
        provider: resolved.provider.map(|p| p.as_str()),
        dev_provider: resolved.dev_provider.as_str(),
    })?)
}

/// `sandboxArtifactStems(names: string[]) → string[]`: the generated module stem of each
/// Definition (`/` → `__`). Throws `SANDBOX_INVALID_ARGUMENT` naming both Definitions when two
/// collide. Rules: [`crate::plugin::artifact_stems`].
#[wasm_bindgen(js_name = sandboxArtifactStems)]
pub fn sandbox_artifact_stems(names: Vec<String>) -> crate::error::js::JsResult<Vec<String>> {
    Ok(artifact_stems(&names)?)
}
