//! The `sharedFacts()` export of the tooling module: [`crate::facts::shared_facts`] as a plain
//! object. `scripts/build.mjs` calls it to generate `runtime/facts.mjs` and the generated blocks of
//! `runtime/index.d.ts`; `tests/package/facts.test.mjs` calls it to prove they have not drifted.

use wasm_bindgen::prelude::*;

use crate::facts::shared_facts;
use vite_hub_sandbox_core::error::{Error, ErrorCode};

/// `sharedFacts() → { errorCodes, transferLimits, definitionLimits, envNames, excluded,
/// entryNames }` (shape in [`crate::facts::SharedFacts`]).
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` if the facts cannot be encoded (never with these types).
#[wasm_bindgen(js_name = sharedFacts)]
pub fn shared_facts_js() -> crate::error::js::JsResult<JsValue> {
    serde::Serialize::serialize(&shared_facts(), &serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| Error::new(ErrorCode::RuntimeError, format!("the shared facts could not be encoded: {e}")).into())
}
