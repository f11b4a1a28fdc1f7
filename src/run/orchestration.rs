//! The order of a Run and what bounds it: encode the input (before any provider request), make
//! the provider ready (`host`), open a Box (`box`), then stage, install, exec and recover under
//! the deadline, then close the Box and build the Response.

use std::rc::Rc;

use wasm_bindgen::JsValue;
use web_sys::AbortSignal;

use crate::command::Command;
use crate::definition::Definition;
use crate::error::{Error, ErrorCode, Operation, Result};
use crate::harness::paths;
use crate::provider::session::BoxSession;
use crate::provider::{BoxSpec, PreparedStart, Provider, ProviderKind};
use crate::response::{error_response, value_response};
use crate::run::install::{fingerprint_in, install_command, install_failure, with_fingerprint};
use crate::run::prepared::{install_desc, Prepared};
use crate::run::recover::recover_result;
use crate::run::signal::RunSignal;
use crate::run::stage::{box_path, encode_input, stage_files, Input};
use crate::run::timing::ServerTiming;
use crate::transfer::TransferLimits;

/// Bytes of stderr kept of the harness command (the exec step).
const EXEC_STDERR_BYTES: usize = 16 * 1024;
/// Bytes of stdout kept beyond `maxOutputBytes`, for the frame around the result envelope.
const EXEC_STDOUT_SLACK_BYTES: usize = 64 * 1024;

/// What a Run needs besides the Definition and the payload.
#[derive(Debug)]
pub struct RunOptions {
    /// Second argument of the entry (`undefined` when absent).
    pub context: JsValue,
    /// The caller's signal: when it fires, the Run stops, closes the Box and rejects with its reason.
    pub signal: Option<AbortSignal>,
    /// Who supplies the Box (built once by `configureSandbox`).
    pub provider: Rc<Provider>,
    /// Transfer limits.
    pub limits: TransferLimits,
    /// `runSandbox`'s `sandboxId` (a kept Box; only the Cloudflare provider uses it).
    pub sandbox_id: Option<String>,
}

/// Runs `definition` with `payload`.
///
/// Resolves to a `Response` for success and for every failure (non-2xx JSON with a
/// `SANDBOX_*` code), and rejects only with the caller's abort reason (or, never in a supported
/// runtime, a JS value thrown by a Web constructor). The Box is stopped after every Run; a failed
/// stop is reported as `SANDBOX_RUNTIME_ERROR`.
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
            return error_response(&error.with_provider(provider), &timing);
        }
    };
    match options.provider.ensure_ready().await {
        Ok(Some(started_ms)) => timing.record("host", started_ms),
        Ok(None) => {}
        Err(error) => {
            timing.mark("host");
            return error_response(&error, &timing);
        }
    }
    let mut prepared = match &definition.install {
        Some(plan) => Prepared::lookup(&options.provider, plan, f64::from(definition.timeout_ms), options.signal.as_ref()).await,
        None => None,
    };
    if prepared.as_ref().is_some_and(|p| p.looked_up) {
        timing.mark("lookup");
    }
    if let Some(reason) = options.signal.as_ref().filter(|s| s.aborted()).map(AbortSignal::reason) {
        return Err(reason);
    }
    let run_signal = RunSignal::new(options.signal.clone()).map_err(JsValue::from)?;
    let signal = run_signal.signal();
    let spec = BoxSpec {
        lifetime_ms: Some(u64::from(crate::definition::box_lifetime_ms(definition.timeout_ms))),
        name: definition.name.clone(),
        sandbox_id: options.sandbox_id.clone(),
        prepared: prepared.as_ref().and_then(|p| p.start_from.clone()),
        prepared_name: prepared.as_ref().and_then(Prepared::name_if_owner),
    };
    // The Definition timeout covers the create too (a provider that never answers it).
    run_signal.start_deadline(definition.timeout_ms);
    let opened = options.provider.open(&spec, Some(&signal)).await;
    timing.mark("box");
    let session = match opened {
        Ok(session) => session,
        Err(error) => {
            if let Some(reason) = run_signal.caller_aborted() {
                return Err(reason);
            }
            return error_response(&timed_out(error, &run_signal, definition, provider), &timing);
        }
    };
    if let Some(prepared) = prepared.as_mut() {
        prepared.opened(session.prepared());
    }
    // The Run that prepares the project fingerprints its fresh install (see run::prepared::keep).
    let mut fingerprint = prepared.as_ref().is_some_and(Prepared::owner).then(String::new);
    let outcome = attempt(&session, definition, &input, &options.limits, &run_signal, &mut timing, &mut fingerprint).await;
    run_signal.stop_deadline();
    timing.end_current();
    let outcome = outcome.map_err(|error| timed_out(error, &run_signal, definition, provider));
    // The Run that installed keeps its Box as the prepared project, after the Response.
    let closed = match (prepared, fingerprint.filter(|f| !f.is_empty())) {
        (Some(prepared), Some(fingerprint)) => {
            wasm_bindgen_futures::spawn_local(crate::run::prepared::keep(session, prepared, fingerprint));
            Ok(())
        }
        _ => session.close().await,
    };
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
    match outcome.and_then(|value| value_response(value, &timing)) {
        Ok(response) => Ok(response),
        Err(error) => error_response(&error, &timing),
    }
}

/// `error`, or `SANDBOX_TIMEOUT` when the Run's deadline (not the caller) ended the Run.
fn timed_out(error: Error, run_signal: &RunSignal, definition: &Definition, provider: ProviderKind) -> Error {
    if run_signal.deadline_passed() && run_signal.caller_aborted().is_none() {
        Error::new(ErrorCode::Timeout, format!("Sandbox \"{}\" timed out after {}ms.", definition.name, definition.timeout_ms))
            .with_timeout_ms(u64::from(definition.timeout_ms))
            .with_provider(provider)
    } else {
        error
    }
}

/// The part of a Run bounded by the deadline: stage, install, exec, recover.
async fn attempt(
    session: &BoxSession,
    definition: &Definition,
    input: &Input,
    limits: &TransferLimits,
    run_signal: &RunSignal,
    timing: &mut ServerTiming,
    fingerprint: &mut Option<String>,
) -> Result<JsValue> {
    let signal = run_signal.signal();
    let signal = Some(&signal);
    let cwd = session.cwd().to_owned();
    timing.begin("stage");
    session.write_files(&stage_files(&cwd, definition, input), signal).await.map_err(|e| e.with_operation(Operation::Stage))?;
    timing.mark("stage");
    if let Some(plan) = &definition.install {
        timing.describe("install", install_desc(session.prepared()));
        if session.prepared() == PreparedStart::Restored {
            timing.record("install", 0.0);
        } else {
            let mut install = install_command(plan, box_path(&cwd, paths::PROJECT_DIR), run_signal.remaining_ms());
            if fingerprint.is_some() {
                install = with_fingerprint(install);
            }
            timing.begin("install");
            let outcome = session.exec(&install, signal).await?;
            timing.mark("install");
            if outcome.exit_code != 0 {
                return Err(install_failure(plan, &outcome, session.provider()));
            }
            *fingerprint = fingerprint.take().and(fingerprint_in(&outcome.stdout));
        }
    }
    let exec = Command {
        program: "node".to_owned(),
        args: paths::node_args(&definition.package_path).to_vec(),
        cwd: Some(box_path(&cwd, &paths::package_dir(&definition.package_path))),
        env: Default::default(),
        timeout_ms: run_signal.remaining_ms(),
        max_stdout_bytes: usize::try_from(limits.max_output_bytes).unwrap_or(usize::MAX).saturating_add(EXEC_STDOUT_SLACK_BYTES),
        max_stderr_bytes: EXEC_STDERR_BYTES,
    };
    timing.begin("exec");
    let outcome = session.exec(&exec, signal).await?;
    timing.mark("exec");
    timing.begin("recover");
    let result = recover_result(session, definition, &input.nonce, &outcome, limits, signal).await?;
    timing.mark("recover");
    Ok(result)
}
