//! Staging a Run: the input envelope (payload, context, sidecars, a per-run nonce) and the files
//! written into the Box (the Definition under `project/`, the harness, the input): one batch, or,
//! for a Run that installs, the project before the install and the harness and input after it.
//!
//! Source: docs/internals/transfer.md "Box layout" and "Envelopes"; DESIGN.md §6.

use serde_json::Value;
use wasm_bindgen::JsValue;

use crate::sys;
use crate::transfer::envelope::{Encoder, Sidecar};
use vite_hub_sandbox_core::definition::Definition;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};
use vite_hub_sandbox_core::harness::{paths, HARNESS_SOURCE};
use vite_hub_sandbox_core::transfer::box_file::BoxFile;
use vite_hub_sandbox_core::transfer::frame::new_nonce;
use vite_hub_sandbox_core::transfer::TransferLimits;

/// The encoded input of a Run: the envelope JSON and its sidecars.
#[derive(Debug)]
pub struct Input {
    /// The per-run nonce that frames the result on stdout (32 hex chars).
    pub nonce: String,
    /// The input envelope, UTF-8 JSON.
    pub json: Vec<u8>,
    /// Binary values of payload and context, written next to the envelope.
    pub sidecars: Vec<Sidecar>,
}

/// Encodes `payload` and `context` into the version-1 input envelope.
///
/// # Errors
/// `SANDBOX_SERIALIZATION_ERROR` (400) for values without JSON semantics,
/// `SANDBOX_TRANSFER_LIMIT` (413) over an input limit, `SANDBOX_RUNTIME_ERROR` without
/// `crypto.getRandomValues`. Checked before any provider request.
pub async fn encode_input(
    definition: &Definition,
    payload: &JsValue,
    context: &JsValue,
    limits: &TransferLimits,
) -> Result<Input> {
    let mut encoder = Encoder::new(limits);
    let payload = encoder.encode(payload, "", "payload")?;
    let context = encoder.encode(context, "", "context")?;
    let sidecars = encoder.finish(limits).await?;
    let random = sys::random_bytes::<16>()
        .map_err(|_| Error::new(ErrorCode::RuntimeError, "crypto.getRandomValues is not available in this runtime"))?;
    let nonce = new_nonce(&random);
    let mut envelope = serde_json::Map::new();
    envelope.insert("version".into(), 1.into());
    envelope.insert("nonce".into(), Value::String(nonce.clone()));
    envelope.insert("entry".into(), Value::String(definition.entry_module.clone()));
    if let Some(payload) = payload {
        envelope.insert("payload".into(), payload);
    }
    if let Some(context) = context {
        envelope.insert("context".into(), context);
    }
    envelope.insert(
        "limits".into(),
        serde_json::json!({
            "maxOutputBytes": limits.max_output_bytes,
            "maxDepth": limits.max_depth,
            "maxSidecars": limits.max_sidecars,
            "maxSidecarBytes": limits.max_sidecar_bytes,
        }),
    );
    let json = serde_json::to_vec(&Value::Object(envelope))
        .map_err(|e| Error::new(ErrorCode::SerializationError, format!("Sandbox input could not be encoded: {e}")))?;
    limits.check_input_bytes(json.len() as u64)?;
    Ok(Input { nonce, json, sidecars })
}

/// `<cwd>/<relative>` as an absolute Box path.
pub fn box_path(cwd: &str, relative: &str) -> String {
    format!("{}/{relative}", cwd.trim_end_matches('/'))
}

/// Every file of the Run, paths relative to the Box root: [`project_files`], then
/// [`harness_files`]. For a Run that installs nothing (or starts from its prepared project): one
/// batch.
pub fn stage_files(cwd: &str, definition: &Definition, input: &Input) -> Vec<BoxFile> {
    let mut files = project_files(cwd, definition);
    files.extend(harness_files(cwd, input));
    files
}

/// The Definition's files under `<cwd>/project/`, paths relative to the Box root: what a Run that
/// installs stages before its install.
pub fn project_files(cwd: &str, definition: &Definition) -> Vec<BoxFile> {
    definition
        .files
        .iter()
        .map(|f| BoxFile {
            path: under(cwd, &format!("{}/{}", paths::PROJECT_DIR, f.path)),
            bytes: f.content.clone(),
            mode: f.mode.unwrap_or(0o644),
        })
        .collect()
}

/// The harness, the input envelope (with the Run's nonce) and its sidecars (mode 0600), paths
/// relative to the Box root. A Run that installs stages them only once its install has ended:
/// the install runs the Definition's own scripts (`postinstall`), which could otherwise read the
/// nonce or replace the harness and so forge the Run's result frames.
pub fn harness_files(cwd: &str, input: &Input) -> Vec<BoxFile> {
    let mut files = vec![harness_file(cwd)];
    files.extend(input_files(cwd, input));
    files
}

/// The harness alone, path relative to the Box root: what a warm pool's Box gets with the
/// Definition's files ([`crate::run::warm_pool`]).
pub fn harness_file(cwd: &str) -> BoxFile {
    BoxFile { path: under(cwd, paths::HARNESS_FILE), bytes: HARNESS_SOURCE.as_bytes().to_vec(), mode: 0o644 }
}

/// The input envelope (with the Run's nonce) and its sidecars (mode 0600), paths relative to the
/// Box root: all a Run on a warm pool's Box writes.
pub fn input_files(cwd: &str, input: &Input) -> Vec<BoxFile> {
    let mut files = vec![BoxFile { path: under(cwd, paths::INPUT_FILE), bytes: input.json.clone(), mode: 0o600 }];
    for sidecar in &input.sidecars {
        files.push(BoxFile {
            path: under(cwd, &format!("{}.files/{}", paths::INPUT_FILE, sidecar.id)),
            bytes: sidecar.bytes.clone(),
            mode: 0o600,
        });
    }
    files
}

/// `<cwd>/<relative>` relative to the Box root (no leading `/`).
fn under(cwd: &str, relative: &str) -> String {
    let root = cwd.trim_start_matches('/').trim_end_matches('/');
    if root.is_empty() {
        relative.to_owned()
    } else {
        format!("{root}/{relative}")
    }
}
