//! wasm export for the Vite plugin's Cloudflare Provider Output
//! (`pkg-template/vite/provider-output.mjs`): decode, call [`crate::provider_output`], encode.
//! No rule lives here.

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::provider_output::{merge_provider_output, OutputOptions, COMPATIBILITY_DATE, DEFAULT_BINDING};
use vite_hub_sandbox_core::error::{Error, ErrorCode};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OutputRequest {
    #[serde(default)]
    existing: serde_json::Value,
    file: String,
    #[serde(default)]
    binding: Option<String>,
    sandbox_version: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OutputAnswer {
    config: serde_json::Value,
    dockerfile: String,
    image: String,
    added: Vec<String>,
    compatibility_date: &'static str,
}

/// `mergeCloudflareProviderOutput({ existing, file, binding?, sandboxVersion }) → { config,
/// dockerfile, image, added, compatibilityDate }`: the wrangler config `existing` (parsed by the
/// caller from `file`; `null` for none) with the Cloudflare Provider Output merged in. Rules:
/// [`crate::provider_output::merge_provider_output`]. Throws `SANDBOX_INVALID_ARGUMENT` naming
/// `file` and the key (a binding name taken, a migration tag reused, a malformed key).
#[wasm_bindgen(js_name = mergeCloudflareProviderOutput)]
pub fn merge_cloudflare_provider_output(request: JsValue) -> crate::error::js::JsResult<JsValue> {
    let request: OutputRequest = serde_wasm_bindgen::from_value(request)
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("invalid Provider Output request: {e}")))?;
    let options = OutputOptions {
        file: request.file,
        binding: request.binding.unwrap_or_else(|| DEFAULT_BINDING.to_string()),
        sandbox_version: request.sandbox_version,
    };
    let out = merge_provider_output(&request.existing, &options)?;
    let answer = OutputAnswer {
        config: out.config,
        dockerfile: out.dockerfile,
        image: out.image,
        added: out.added,
        compatibility_date: COMPATIBILITY_DATE,
    };
    answer
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, e.to_string()).into())
}

/// `cloudflareCompatibilityDate() → string`: the compatibility date the Provider Output pins when
/// neither the app nor its framework chose one ([`COMPATIBILITY_DATE`]).
#[wasm_bindgen(js_name = cloudflareCompatibilityDate)]
pub fn cloudflare_compatibility_date() -> String {
    COMPATIBILITY_DATE.to_string()
}
