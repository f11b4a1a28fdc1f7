//! One Run: stage → install → execute → recover → close, on a [`BoxSession`], bounded by the
//! Definition timeout, ending in a Web `Response` (DESIGN.md §3, §5).
//!
//! No provider branches here: everything provider-specific is behind [`BoxProvider`].

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal};

use crate::command::Command;
use crate::definition::Definition;
use crate::error::{Direction, Error, ErrorCode, Operation, Result};
use crate::harness::{paths, HARNESS_SOURCE};
use crate::install_output::{install_failure_message, INSTALL_STDERR_BYTES, INSTALL_STDOUT_BYTES};
use crate::provider::vercel::client::OutputCaps;
use crate::response::{error_response, value_response, ServerTiming};
use crate::session::{BoxProvider, BoxSession, BoxSpec};
use crate::sys;
use crate::transfer::bundle::BundleEntry;
use crate::transfer::envelope::{revive_value, Encoder, Sidecar};
use crate::transfer::frame::{find_result_frame, new_nonce, parse_result_envelope};
use crate::transfer::{TransferLimits, VALUE_MARKER};

/// What a Run needs besides the Definition.
#[derive(Debug)]
pub struct RunOptions {
    /// Second argument of the entry (`undefined` when absent).
    pub context: JsValue,
    /// The caller's signal: when it fires, the Run stops, closes the Box and rejects with its reason.
    pub signal: Option<AbortSignal>,
    /// Who supplies the Box.
    pub provider: BoxProvider,
    /// Vercel `projectId` for the create call, when the provider needs one.
    pub project_id: Option<String>,
    /// What to ask of the provider for the Box.
    pub box_spec: BoxSpec,
    /// Transfer limits.
    pub limits: TransferLimits,
}

/// The encoded input of a Run: the envelope JSON and its sidecars.
struct Input {
    nonce: String,
    json: Vec<u8>,
    sidecars: Vec<Sidecar>,
}

async fn encode_input(definition: &Definition, payload: &JsValue, context: &JsValue, limits: &TransferLimits) -> Result<Input> {
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
            "maxOutputBytes": limits.max_output_bytes, "maxDepth": limits.max_depth,
            "maxSidecars": limits.max_sidecars, "maxSidecarBytes": limits.max_sidecar_bytes,
        }),
    );
    let json = serde_json::to_vec(&Value::Object(envelope))
        .map_err(|e| Error::new(ErrorCode::SerializationError, format!("Sandbox input could not be encoded: {e}")))?;
    limits.check_input_bytes(json.len() as u64)?;
    Ok(Input { nonce, json, sidecars })
}

/// The internal abort signal of a Run: fires on the caller's abort or at the deadline.
struct RunSignal {
    controller: AbortController,
    timed_out: Rc<Cell<bool>>,
    deadline_ms: Cell<Option<f64>>,
    timer: Cell<Option<JsValue>>,
    on_timeout: Closure<dyn FnMut()>,
    on_caller_abort: Closure<dyn FnMut()>,
    caller: Option<AbortSignal>,
}

impl RunSignal {
    fn new(caller: Option<AbortSignal>) -> Result<RunSignal> {
        let controller = AbortController::new().map_err(|_| Error::new(ErrorCode::RuntimeError, "AbortController is not available"))?;
        let timed_out = Rc::new(Cell::new(false));
        let on_timeout = {
            let controller = controller.clone();
            let timed_out = timed_out.clone();
            Closure::<dyn FnMut()>::new(move || {
                timed_out.set(true);
                controller.abort();
            })
        };
        let on_caller_abort = {
            let controller = controller.clone();
            Closure::<dyn FnMut()>::new(move || controller.abort())
        };
        if let Some(caller) = &caller {
            let _ = caller.add_event_listener_with_callback("abort", on_caller_abort.as_ref().unchecked_ref());
        }
        Ok(RunSignal { controller, timed_out, deadline_ms: Cell::new(None), timer: Cell::new(None), on_timeout, on_caller_abort, caller })
    }

    fn signal(&self) -> AbortSignal {
        self.controller.signal()
    }

    fn start_deadline(&self, timeout_ms: u32) {
        self.deadline_ms.set(Some(sys::performance_now() + f64::from(timeout_ms)));
        let handle = sys::set_timeout(self.on_timeout.as_ref().unchecked_ref(), f64::from(timeout_ms));
        self.timer.set(Some(handle));
    }

    /// Milliseconds left before the deadline (at least 1).
    fn remaining_ms(&self) -> Option<u64> {
        self.deadline_ms.get().map(|d| (d - sys::performance_now()).max(1.0).ceil() as u64)
    }

    fn deadline_passed(&self) -> bool {
        self.timed_out.get() || self.deadline_ms.get().is_some_and(|d| sys::performance_now() >= d - 50.0)
    }

    fn caller_aborted(&self) -> Option<JsValue> {
        self.caller.as_ref().filter(|c| c.aborted()).map(AbortSignal::reason)
    }

    fn stop_deadline(&self) {
        if let Some(handle) = self.timer.take() {
            sys::clear_timeout(&handle);
        }
    }
}

impl Drop for RunSignal {
    fn drop(&mut self) {
        self.stop_deadline();
        if let Some(caller) = &self.caller {
            let _ = caller.remove_event_listener_with_callback("abort", self.on_caller_abort.as_ref().unchecked_ref());
        }
    }
}

/// Runs `definition` with `payload`.
///
/// Resolves to a `Response` for success and for every failure (non-2xx JSON with a
/// `SANDBOX_*` code), and rejects only with the caller's abort reason. The Box is stopped after
/// every Run; a failed stop is reported as `SANDBOX_RUNTIME_ERROR`.
pub async fn run_definition(definition: &Definition, payload: &JsValue, options: RunOptions) -> std::result::Result<web_sys::Response, JsValue> {
    if let Some(reason) = options.signal.as_ref().filter(|s| s.aborted()).map(AbortSignal::reason) {
        return Err(reason);
    }
    let mut timing = ServerTiming::start();
    let provider = options.provider.kind();
    let input = match encode_input(definition, payload, &options.context, &options.limits).await {
        Ok(input) => input,
        Err(error) => {
            timing.mark("encode");
            return Ok(error_response(&error.with_provider(provider), &timing));
        }
    };
    let run_signal = RunSignal::new(options.signal.clone()).map_err(|e| JsValue::from_str(e.message()))?;
    let signal = run_signal.signal();
    let opened = options.provider.open(&options.box_spec, options.project_id.clone(), Some(&signal)).await;
    timing.mark("box");
    let session = match opened {
        Ok(session) => session,
        Err(error) => {
            if let Some(reason) = run_signal.caller_aborted() {
                return Err(reason);
            }
            return Ok(error_response(&error, &timing));
        }
    };
    run_signal.start_deadline(definition.timeout_ms);
    let outcome = attempt(&session, definition, &input, &options.limits, &run_signal, &mut timing).await;
    run_signal.stop_deadline();
    timing.end_current();
    let outcome = outcome.map_err(|error| {
        if run_signal.deadline_passed() && run_signal.caller_aborted().is_none() {
            Error::new(ErrorCode::Timeout, format!("Sandbox \"{}\" timed out after {}ms.", definition.name, definition.timeout_ms))
                .with_timeout_ms(u64::from(definition.timeout_ms))
                .with_provider(provider)
        } else {
            error
        }
    });
    let closed = session.close().await;
    timing.mark("close");
    if let Some(reason) = run_signal.caller_aborted() {
        return Err(reason);
    }
    let outcome = match (outcome, closed) {
        (outcome, Ok(())) => outcome,
        (Ok(_), Err(close)) => Err(Error::new(ErrorCode::RuntimeError, format!("The Box could not be stopped: {}", close.message()))
            .with_provider(provider)
            .with_operation(Operation::Stop)),
        (Err(run), Err(close)) => Err(Error::new(run.code(), format!("{} Cleanup failed: {}", run.message(), close.message()))
            .with_provider(provider)),
    };
    Ok(match outcome {
        Ok(value) => value_response(value, &timing).unwrap_or_else(|error| error_response(&error, &timing)),
        Err(error) => error_response(&error, &timing),
    })
}

fn box_path(cwd: &str, relative: &str) -> String {
    format!("{}/{relative}", cwd.trim_end_matches('/'))
}

fn stage_entries(cwd: &str, definition: &Definition, input: &Input) -> Vec<BundleEntry> {
    let root = cwd.trim_start_matches('/').trim_end_matches('/');
    let at = |relative: &str| if root.is_empty() { relative.to_owned() } else { format!("{root}/{relative}") };
    let mut entries: Vec<BundleEntry> = definition
        .files
        .iter()
        .map(|f| BundleEntry { path: at(&format!("{}/{}", paths::PROJECT_DIR, f.path)), bytes: f.content.clone(), mode: f.mode.unwrap_or(0o644) })
        .collect();
    entries.push(BundleEntry { path: at(paths::HARNESS_FILE), bytes: HARNESS_SOURCE.as_bytes().to_vec(), mode: 0o644 });
    entries.push(BundleEntry { path: at(paths::INPUT_FILE), bytes: input.json.clone(), mode: 0o600 });
    for sidecar in &input.sidecars {
        entries.push(BundleEntry { path: at(&format!("{}.files/{}", paths::INPUT_FILE, sidecar.id)), bytes: sidecar.bytes.clone(), mode: 0o600 });
    }
    entries
}

/// The part of a Run bounded by the deadline: stage, install, exec, recover.
async fn attempt(
    session: &BoxSession,
    definition: &Definition,
    input: &Input,
    limits: &TransferLimits,
    run_signal: &RunSignal,
    timing: &mut ServerTiming,
) -> Result<JsValue> {
    let signal = run_signal.signal();
    let signal = Some(&signal);
    let provider = definition_provider(session);
    let cwd = session.cwd().to_owned();
    let project_dir = box_path(&cwd, paths::PROJECT_DIR);
    let package_dir = box_path(&cwd, &paths::package_dir(&definition.package_path));
    timing.begin("stage");
    session.write_files(&stage_entries(&cwd, definition, input), signal).await.map_err(|e| e.with_operation(Operation::Stage))?;
    timing.mark("stage");
    if let Some(plan) = &definition.install {
        let install = Command {
            program: plan.command.clone(),
            args: plan.args.clone(),
            cwd: Some(project_dir.clone()),
            env: BTreeMap::new(),
            timeout_ms: run_signal.remaining_ms(),
        };
        timing.begin("install");
        let caps = OutputCaps { stdout_bytes: INSTALL_STDOUT_BYTES, stderr_bytes: INSTALL_STDERR_BYTES };
        let outcome = session.exec(&install, caps, signal).await?;
        timing.mark("install");
        if outcome.exit_code != 0 {
            let command_line = format!("{} {}", plan.command, plan.args.join(" "));
            return Err(Error::new(
                ErrorCode::ExecutionError,
                install_failure_message(&command_line, outcome.exit_code, &outcome.stdout, &outcome.stderr),
            )
            .with_exit_code(outcome.exit_code)
            .with_operation(Operation::Install)
            .with_provider(provider));
        }
    }
    let exec = Command {
        program: "node".to_owned(),
        args: paths::node_args(&definition.package_path).to_vec(),
        cwd: Some(package_dir),
        env: BTreeMap::new(),
        timeout_ms: run_signal.remaining_ms(),
    };
    let caps = OutputCaps { stdout_bytes: limits.max_output_bytes as usize + 64 * 1024, stderr_bytes: 16 * 1024 };
    timing.begin("exec");
    let outcome = session.exec(&exec, caps, signal).await?;
    timing.mark("exec");
    timing.begin("recover");
    let framed = find_result_frame(&outcome.stdout, &input.nonce).map(str::to_owned);
    let envelope_json = match framed {
        Some(json) => json,
        None => match session.read_file(&box_path(&cwd, paths::OUTPUT_FILE), signal).await? {
            Some(bytes) if !bytes.is_empty() => String::from_utf8(bytes).map_err(|_| {
                Error::new(ErrorCode::HandlerError, "the harness output is not valid UTF-8").for_output()
            })?,
            _ => {
                return Err(Error::new(
                    ErrorCode::HandlerError,
                    format!("Sandbox \"{}\" exited with code {} before producing a result.", definition.name, outcome.exit_code),
                )
                .with_exit_code(outcome.exit_code)
                .with_provider(provider));
            }
        },
    };
    limits.check_output_bytes(envelope_json.len() as u64)?;
    let envelope = parse_result_envelope(&envelope_json)?;
    if !envelope.ok {
        return Err(envelope_error(envelope.error, outcome.exit_code).with_provider(provider));
    }
    let Some(result) = envelope.result else { return Ok(JsValue::UNDEFINED) };
    let mut ids = Vec::new();
    collect_sidecar_ids(&result, &mut ids);
    let mut sidecars = BTreeMap::new();
    for id in ids {
        let path = box_path(&cwd, &format!("{}.files/{id}", paths::OUTPUT_FILE));
        let bytes = session.read_file(&path, signal).await?.ok_or_else(|| {
            Error::new(ErrorCode::SerializationError, format!("Sandbox result sidecar {id} does not exist.")).for_output()
        })?;
        sidecars.insert(id, bytes);
    }
    timing.mark("recover");
    let total: u64 = sidecars.values().map(|b| b.len() as u64).sum();
    limits.check_sidecars(sidecars.len() as u32, total, Direction::Output)?;
    if let Some(response) = crate::response::response_marker(&result) {
        return response;
    }
    revive_value(&result, &|id| sidecars.get(&id).cloned())
}

fn definition_provider(session: &BoxSession) -> crate::provider::ProviderKind {
    match session {
        BoxSession::Vercel { client, .. } => client.kind(),
    }
}

fn envelope_error(error: Option<crate::transfer::frame::EnvelopeError>, exit_code: i32) -> Error {
    let error = error.unwrap_or(crate::transfer::frame::EnvelopeError { name: None, message: None, code: None, details: None });
    let message = error.message.unwrap_or_default();
    let detail = |key: &str| error.details.as_ref().and_then(|d| d.get(key)).and_then(Value::as_u64);
    match error.code.as_deref() {
        Some("SANDBOX_SERIALIZATION_ERROR") => Error::new(ErrorCode::SerializationError, message).for_output(),
        Some("SANDBOX_TRANSFER_LIMIT") => {
            let limit = error.details.as_ref().and_then(|d| d.get("limit")).and_then(Value::as_str).unwrap_or("maxOutputBytes").to_owned();
            Error::new(ErrorCode::TransferLimit, message)
                .with_limit(&limit, detail("value").unwrap_or(0), detail("maximum").unwrap_or(0))
                .for_output()
        }
        _ => Error::new(ErrorCode::HandlerError, message).with_exit_code(exit_code),
    }
}

fn collect_sidecar_ids(value: &Value, ids: &mut Vec<u32>) {
    match value {
        Value::Array(items) => items.iter().for_each(|item| collect_sidecar_ids(item, ids)),
        Value::Object(map) => {
            if let Some(marker) = map.get(VALUE_MARKER).filter(|_| map.len() == 1) {
                match marker.get("tag").and_then(Value::as_str) {
                    Some("binary") => {
                        if let Some(id) = marker.get("id").and_then(Value::as_u64).and_then(|id| u32::try_from(id).ok()) {
                            ids.push(id);
                        }
                    }
                    Some("object") => {
                        if let Some(entries) = marker.get("entries").and_then(Value::as_array) {
                            entries.iter().filter_map(|e| e.get(1)).for_each(|v| collect_sidecar_ids(v, ids));
                        }
                    }
                    _ => {}
                }
                return;
            }
            map.values().for_each(|item| collect_sidecar_ids(item, ids));
        }
        _ => {}
    }
}
