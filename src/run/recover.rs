//! Recovering a Run's result: the result envelope framed on stdout with the run's nonce (found
//! while following the command, [`crate::run::follow`]; when the frame is missing, the harness's
//! output file), its result sidecars, and the revived JS value.
//!
//! Source: docs/internals/transfer.md "Envelopes" (result frame, `output.json`, sidecars); DESIGN.md §6.

use serde_json::Value;
use wasm_bindgen::JsValue;
use web_sys::AbortSignal;

use crate::provider::BoxSession;
use crate::provider::FileRead;
use crate::run::stage::box_path;
use crate::transfer::envelope::revive_value;
use vite_hub_sandbox_core::definition::Definition;
use vite_hub_sandbox_core::error::{Direction, Error, ErrorCode, Result};
use vite_hub_sandbox_core::harness::paths;
use vite_hub_sandbox_core::transfer::frame::{parse_result_envelope, EnvelopeError, ResultEnvelope};
use vite_hub_sandbox_core::transfer::{TransferLimits, VALUE_MARKER};

/// What the harness command left: its exit code and the entry's own output (frames removed).
#[derive(Debug)]
pub struct Exited {
    /// The command's exit code.
    pub exit_code: i32,
    /// The last bytes of the entry's own stdout.
    pub stdout: String,
    /// The last bytes of its stderr.
    pub stderr: String,
}

/// A recovered result: a JS value, or the text of a plain JSON result as the harness wrote it.
#[derive(Debug)]
pub enum Recovered {
    /// `undefined`, a revived `Response`, or a value with its binary parts revived.
    Value(JsValue),
    /// A result without any value marker: its JSON text, at most `maxOutputBytes`, the
    /// Response's body as is ([`crate::response::json_response`]).
    Json(String),
}

/// The entry's result (a plain JSON result as its text, [`Recovered::Json`]; else a JS value:
/// `undefined`, a revived `Response`, or a value with its binary parts revived), from the result envelope framed on stdout (`framed`), else from the
/// harness's output file (one read, only when no frame arrived).
///
/// # Errors
/// `SANDBOX_HANDLER_ERROR` when the entry threw (with its `name` and `stack` in the details) or
/// no result was produced; `SANDBOX_SERIALIZATION_ERROR` / `SANDBOX_TRANSFER_LIMIT` (500) for a
/// result the harness or the limits refuse; transport errors of the reads.
pub async fn recover_result(
    session: &dyn BoxSession,
    run_dir: &str,
    definition: &Definition,
    framed: Option<ResultEnvelope>,
    exited: &Exited,
    limits: &TransferLimits,
    signal: Option<&AbortSignal>,
) -> Result<Recovered> {
    let provider = session.provider();
    let envelope = match framed {
        Some(envelope) => envelope,
        // Read by size first: a file larger than the limit (a sparse multi-GiB one included) is
        // refused before any of it is buffered.
        None => match session.read_file(&box_path(run_dir, paths::OUTPUT_FILE), limits.max_output_bytes, signal).await?
        {
            FileRead::TooLarge(size) => return Err(output_too_large(limits, size)),
            FileRead::Bytes(bytes) if !bytes.is_empty() => {
                let json = String::from_utf8(bytes).map_err(|_| {
                    Error::new(ErrorCode::HandlerError, "the harness output is not valid UTF-8").for_output()
                })?;
                limits.check_output_bytes(json.len() as u64)?;
                let mut envelope = parse_result_envelope(&json)?;
                // The file is the harness's fallback, but anything in the Box can write it: only
                // a frame (which carries the Run's nonce) may claim a package code, so an error
                // read here is the handler's.
                if let Some(error) = envelope.error.as_mut() {
                    error.code = None;
                    error.details = None;
                }
                envelope
            }
            _ => {
                return Err(Error::new(
                    ErrorCode::HandlerError,
                    format!(
                        "Sandbox \"{}\" exited with code {}{} before producing a result.",
                        definition.name,
                        exited.exit_code,
                        exit_hint(exited.exit_code)
                    ),
                )
                .with_exit_code(exited.exit_code)
                .with_output_tails(&exited.stdout, &exited.stderr)
                .with_provider(provider));
            }
        },
    };
    if !envelope.ok {
        let error = envelope_error(envelope.error, exited.exit_code);
        let error = if error.code() == ErrorCode::HandlerError {
            error.with_output_tails(&exited.stdout, &exited.stderr)
        } else {
            error
        };
        return Err(error.with_provider(provider));
    }
    if let Some(json) = envelope.plain_json {
        // The harness bounds its output by maxOutputBytes: a text past it is refused here too.
        limits.check_output_bytes(json.len() as u64)?;
        return Ok(Recovered::Json(json));
    }
    let Some(result) = envelope.result else { return Ok(Recovered::Value(JsValue::UNDEFINED)) };
    let mut found = Vec::new();
    collect_sidecars(&result, &|| "result".to_owned(), &mut found);
    // A binary value becomes the Response's body only as the whole result: nested in JSON it would
    // come out of JSON.stringify as `{"0":1,…}` (a Blob as `{}`), lost without a word.
    if let Some((_, at)) = found.iter().find(|(_, at)| at != "result") {
        return Err(Error::new(
            ErrorCode::SerializationError,
            format!("Sandbox result must be JSON-serializable; unsupported binary value at \"{at}\" (a Blob, Uint8Array or Buffer is carried only as the whole result)."),
        )
        .for_output());
    }
    let ids: Vec<u32> = found.into_iter().map(|(id, _)| id).collect();
    limits.check_sidecars(u32::try_from(ids.len()).unwrap_or(u32::MAX), 0, Direction::Output)?;
    // By id; a result has few sidecars, each costing a file read.
    let mut sidecars: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut total = 0u64;
    for id in ids {
        let path = box_path(run_dir, &format!("{}.files/{id}", paths::OUTPUT_FILE));
        // Each read is capped by what is left of the total budget.
        let left = limits.max_sidecar_bytes.saturating_sub(total);
        let bytes = match session.read_file(&path, left, signal).await? {
            FileRead::Bytes(bytes) => bytes,
            FileRead::Missing => {
                return Err(Error::new(
                    ErrorCode::SerializationError,
                    format!("Sandbox result sidecar {id} does not exist."),
                )
                .for_output())
            }
            FileRead::TooLarge(size) => {
                limits.check_sidecars(
                    0,
                    total.saturating_add(size).max(limits.max_sidecar_bytes.saturating_add(1)),
                    Direction::Output,
                )?;
                return Err(Error::new(ErrorCode::TransferLimit, "the result sidecars are too large").for_output());
            }
        };
        total += bytes.len() as u64;
        match sidecars.iter_mut().find(|(known, _)| *known == id) {
            Some(slot) => slot.1 = bytes,
            None => sidecars.push((id, bytes)),
        }
    }
    limits.check_sidecars(sidecars.len() as u32, total, Direction::Output)?;
    if let Some(response) = crate::response::response_marker(&result) {
        return response.map(Recovered::Value);
    }
    revive_value(&result, &|id| sidecars.iter().find(|(known, _)| *known == id).map(|(_, bytes)| bytes.clone()))
        .map(Recovered::Value)
}

/// The `maxOutputBytes` error of a result file of `size` bytes (larger than the limit).
fn output_too_large(limits: &TransferLimits, size: u64) -> Error {
    match limits.check_output_bytes(size.max(limits.max_output_bytes.saturating_add(1))) {
        Err(error) => error,
        Ok(()) => Error::new(ErrorCode::TransferLimit, "the result is too large").for_output(),
    }
}

/// What an exit code without a result says beyond itself: 137 is SIGKILL, which the Box's memory
/// limit (its cgroup) sends when the entry's processes pass it.
fn exit_hint(exit_code: i32) -> &'static str {
    if exit_code == 137 {
        " (SIGKILL: a kill, or the Box's memory limit)"
    } else {
        ""
    }
}

/// The error of a result envelope with `ok: false`: transfer failures the harness detected keep
/// their code (output side); anything else is the entry's own failure.
pub(crate) fn envelope_error(error: Option<EnvelopeError>, exit_code: i32) -> Error {
    let error = error.unwrap_or(EnvelopeError { name: None, message: None, stack: None, code: None, details: None });
    let message = error.message.unwrap_or_default();
    let detail = |key: &str| error.details.as_ref().and_then(|d| d.get(key)).and_then(Value::as_u64);
    match error.code.as_deref() {
        Some("SANDBOX_SERIALIZATION_ERROR") => Error::new(ErrorCode::SerializationError, message).for_output(),
        Some("SANDBOX_TRANSFER_LIMIT") => {
            let limit = error
                .details
                .as_ref()
                .and_then(|d| d.get("limit"))
                .and_then(Value::as_str)
                .unwrap_or("maxOutputBytes")
                .to_owned();
            Error::new(ErrorCode::TransferLimit, message)
                .with_limit(&limit, detail("value").unwrap_or(0), detail("maximum").unwrap_or(0))
                .for_output()
        }
        _ => {
            Error::new(ErrorCode::HandlerError, message).with_exit_code(exit_code).with_thrown(error.name, error.stack)
        }
    }
}

/// The sidecar ids of `value`'s binary markers with where each one is (`result.list.0`, the
/// harness's path form; `at` names `value`, called only for a binary marker), in walk order.
fn collect_sidecars(value: &Value, at: &dyn Fn() -> String, found: &mut Vec<(u32, String)>) {
    match value {
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_sidecars(item, &|| format!("{}.{index}", at()), found);
            }
        }
        Value::Object(map) => {
            if let Some(marker) = map.get(VALUE_MARKER).filter(|_| map.len() == 1) {
                match marker.get("tag").and_then(Value::as_str) {
                    Some("binary") => {
                        if let Some(id) = marker.get("id").and_then(Value::as_u64).and_then(|id| u32::try_from(id).ok())
                        {
                            found.push((id, at()));
                        }
                    }
                    Some("object") => {
                        for entry in marker.get("entries").and_then(Value::as_array).into_iter().flatten() {
                            // A key is a string or a string marker (its text, for the path).
                            let name = entry
                                .get(0)
                                .and_then(|key| key.as_str().or_else(|| key.get(VALUE_MARKER)?.get("text")?.as_str()));
                            if let (Some(name), Some(item)) = (name, entry.get(1)) {
                                collect_sidecars(item, &|| format!("{}.{name}", at()), found);
                            }
                        }
                    }
                    _ => {}
                }
                return;
            }
            for (name, item) in map {
                collect_sidecars(item, &|| format!("{}.{name}", at()), found);
            }
        }
        _ => {}
    }
}
