//! The order of a Run and what bounds it: encode the input (before any provider request), make
//! the provider ready (`host`), take a Box (`box`: its own, a kept one, [`lease`], or a warm
//! one, [`warm_pool`]), then stage, install and exec under the deadline, following the entry's
//! output live ([`follow`]); answer as soon as the result is known ([`reply`]: a returned
//! Response at its head, anything else once the command exited), and only then give the Box
//! back, bounded by [`RELEASE_DEADLINE_MS`], reporting a failure there through the Run's handle
//! ([`events`]), and top up the Definition's warm pool.
//!
//! [`lease`]: crate::run::lease
//! [`warm_pool`]: crate::run::warm_pool
//! [`follow`]: crate::run::follow
//! [`reply`]: crate::run::reply
//! [`events`]: crate::run::events

use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal};

use crate::http::deadline::stop_within;
use crate::provider::{BoxSpec, PreparedStart, Provider};
use crate::response::{error_response, json_response, value_response};
use crate::run::events::{RunEvents, RunStatus};
use crate::run::follow::{Followed, Follower};
use crate::run::lease::{acquire, Lease, RELEASE_DEADLINE_MS};
use crate::run::prepared::{install_desc, kept_fingerprint, record_kept_fingerprint, seal, Prepared};
use crate::run::recover::{recover_result, Exited, Recovered};
use crate::run::reply::Reply;
use crate::run::signal::RunSignal;
use crate::run::stage::{box_path, encode_input, harness_files, input_files, project_files, stage_files, Input};
use crate::server_timing::ServerTiming;
use vite_hub_sandbox_core::command::Command;
use vite_hub_sandbox_core::definition::Definition;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::harness::paths;
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::run::install::{
    fingerprint_in, install_command, install_failure, kept_desc, kept_dir, kept_install, kept_outcome,
};
use vite_hub_sandbox_core::run::warm_pool::WarmPool;
use vite_hub_sandbox_core::transfer::TransferLimits;

/// What a Run needs besides the Definition and the payload.
#[derive(Debug)]
pub struct RunOptions {
    /// Second argument of the entry (`undefined` when absent).
    pub context: JsValue,
    /// The caller's signal: when it fires, the Run rejects with its reason and gives its Box back.
    pub signal: Option<AbortSignal>,
    /// Who supplies the Box (built once by `configureSandbox`).
    pub provider: Rc<dyn Provider>,
    /// Transfer limits.
    pub limits: TransferLimits,
    /// `runSandbox`'s `sandboxId`: the kept Box to use (see [`crate::run::lease`]).
    pub sandbox_id: Option<String>,
    /// The Run's handle (status, live logs, background work, late failures).
    pub events: RunEvents,
    /// Whether a handler error's Response keeps the thrown `stack` (`configureSandbox({ debug })`).
    pub debug: bool,
    /// `configureSandbox({ warmPool })` when it keeps Boxes ([`crate::run::warm_pool`]).
    pub warm_pool: Option<WarmPool>,
}

/// What the bounded part of a Run produced.
enum Attempted {
    /// The entry's result, to answer with.
    Value(Recovered),
    /// A Response answered at its head; whether its body ended normally.
    Streamed { ok: bool },
}

/// Runs `definition` with `payload`.
///
/// Resolves to a `Response` for success and for every failure (non-2xx JSON with a `SANDBOX_*`
/// code) as soon as it is known: a Response the entry returned resolves at its head frame and
/// its body streams while the entry produces it. Rejects only with the caller's abort reason.
/// The Box is given back after the Response (bounded by [`RELEASE_DEADLINE_MS`]); the work that
/// follows the Response is handed to `events.background` and a failure there to `events.report`.
pub async fn run_definition(
    definition: Rc<Definition>,
    payload: JsValue,
    options: RunOptions,
) -> std::result::Result<web_sys::Response, JsValue> {
    if let Some(reason) = options.signal.as_ref().filter(|s| s.aborted()).map(AbortSignal::reason) {
        return Err(reason);
    }
    let (answer, reply) = Reply::new();
    let events = options.events.clone();
    // Taken with the config the Run uses: a drain after it (a new config) means no refill.
    let drains = crate::run::warm_pool::drains();
    let work = crate::sys::js_promise(Box::pin(async move {
        run(&definition, &payload, &options, &reply, drains).await;
        Ok(JsValue::UNDEFINED)
    }));
    events.background(&work);
    JsFuture::from(answer).await?.dyn_into::<web_sys::Response>()
}

/// Resolves `reply` with the error Response of `error` (and marks the Run failed).
fn answer_error(reply: &Reply, events: &RunEvents, error: &Error, timing: &ServerTiming) {
    match error_response(error, timing) {
        Ok(response) => reply.resolve(&response.into()),
        Err(thrown) => reply.reject(&thrown),
    }
    events.status(RunStatus::Failed);
}

/// `error`, or `SANDBOX_TIMEOUT` when the Run's deadline (not the caller) ended the Run (an
/// error that is one already keeps its details: the output received until then). When the
/// provider was still unavailable at the deadline (a container still starting), the 504 says
/// what it was waiting for: `Sandbox "x" timed out after 300000ms: the container never started (…)`.
fn timed_out(error: Error, run_signal: &RunSignal, definition: &Definition, provider: ProviderKind) -> Error {
    if error.code() != ErrorCode::Timeout && run_signal.deadline_passed() && run_signal.caller_aborted().is_none() {
        let waiting = if error.code() == ErrorCode::ProviderUnavailable {
            format!(": {}", error.message())
        } else {
            ".".to_owned()
        };
        Error::new(
            ErrorCode::Timeout,
            format!("Sandbox \"{}\" timed out after {}ms{waiting}", definition.name, definition.timeout_ms),
        )
        .with_timeout_ms(u64::from(definition.timeout_ms))
        .with_provider(provider)
    } else {
        error
    }
}

/// `drains`: [`crate::run::warm_pool::drains`] when the Run began.
async fn run(definition: &Rc<Definition>, payload: &JsValue, options: &RunOptions, reply: &Reply, drains: u64) {
    let mut timing = ServerTiming::start();
    let events = &options.events;
    let provider = options.provider.kind();
    let input = match Box::pin(encode_input(definition, payload, &options.context, &options.limits)).await {
        Ok(input) => input,
        Err(error) => {
            timing.mark("encode");
            return answer_error(reply, events, &error.with_provider(provider), &timing);
        }
    };
    match options.provider.ensure_ready().await {
        Ok(Some(started)) => timing.record_host_start(started.host_ms, started.connect_ms),
        Ok(None) => {}
        Err(error) => {
            timing.mark("host");
            return answer_error(reply, events, &error, &timing);
        }
    }
    let run_signal = match RunSignal::new(options.signal.clone()) {
        Ok(run_signal) => run_signal,
        Err(error) => return answer_error(reply, events, &error, &timing),
    };
    // A kept Box (`sandboxId`) keeps its own installs; every other Run with dependencies looks
    // for the prepared project of its install digest (see run::prepared).
    let mut prepared = match (&definition.install, &options.sandbox_id) {
        (Some(plan), None) => {
            Box::pin(Prepared::lookup(
                options.provider.as_ref(),
                plan,
                f64::from(definition.timeout_ms),
                options.signal.as_ref(),
                events,
            ))
            .await
        }
        _ => None,
    };
    if prepared.as_ref().is_some_and(|p| p.looked_up) {
        timing.mark("lookup");
    }
    if let Some(reason) = run_signal.caller_aborted() {
        events.status(RunStatus::Failed);
        return reply.reject(&reason);
    }
    let signal = run_signal.signal();
    let spec = BoxSpec {
        lifetime_ms: Some(u64::from(vite_hub_sandbox_core::definition::box_lifetime_ms(definition.timeout_ms))),
        name: definition.name.clone(),
        sandbox_id: options.sandbox_id.clone(),
        prepared: prepared.as_ref().and_then(|p| p.start_from.clone()),
        prepared_name: prepared.as_ref().and_then(Prepared::name_if_owner),
        staged_first: true,
        snapshot: None,
        ports: Vec::new(),
    };
    // The Definition timeout covers taking the Box too (a provider that never answers its create).
    run_signal.start_deadline(definition.timeout_ms);
    // A Run of its own Box (no `sandboxId`) that does not prepare the project takes a warm one.
    let pool = options.warm_pool.filter(|_| options.sandbox_id.is_none());
    let warm = pool
        .filter(|_| !prepared.as_ref().is_some_and(Prepared::owner))
        .and_then(|pool| crate::run::warm_pool::take(&options.provider, definition, pool, events));
    let leased = match warm {
        Some(session) => Ok(Lease::warm(session)),
        None => {
            Box::pin(acquire(
                options.provider.as_ref(),
                &spec,
                options.sandbox_id.as_deref(),
                definition.timeout_ms,
                Some(&signal),
            ))
            .await
        }
    };
    timing.mark("box");
    let mut lease = match leased {
        Ok(lease) => lease,
        Err(error) => {
            if let Some(reason) = run_signal.caller_aborted() {
                events.status(RunStatus::Failed);
                return reply.reject(&reason);
            }
            return answer_error(reply, events, &timed_out(error, &run_signal, definition, provider), &timing);
        }
    };
    if let Some(prepared) = prepared.as_mut() {
        prepared.opened(lease.session.prepared());
    }
    let restored = lease.session.prepared() == PreparedStart::Restored;
    // The Run that prepares the project installs and snapshots before its handler runs, then goes
    // on in a Box made from the snapshot (run::prepared::seal).
    let sealed = match prepared.as_mut().filter(|p| p.owner()) {
        Some(owner) => {
            let provider = options.provider.as_ref();
            Box::pin(seal(&mut lease, provider, owner, &spec, definition, &run_signal, &mut timing, events)).await
        }
        None => Ok(false),
    };
    let mut outcome = match sealed {
        Ok(sealed) => {
            Box::pin(attempt(&lease, definition, &input, options, &run_signal, reply, &mut timing, sealed)).await
        }
        Err(error) => Err(error),
    };
    // A kept Box an earlier Run opened may be gone (stopped by its provider): its first request
    // says so, and the Run starts again once on a new kept Box.
    if matches!(&outcome, Err(error) if error.operation() == Some(Operation::Stage) && lease.kept_box_vanished(error)) {
        outcome = match Box::pin(lease.renew(options.provider.as_ref(), &spec, Some(&signal))).await {
            Ok(()) => {
                Box::pin(attempt(&lease, definition, &input, options, &run_signal, reply, &mut timing, false)).await
            }
            Err(error) => Err(error),
        };
    }
    // A prepared project that would not unpack was dropped by its Box, which now counts as
    // started without it (Cloudflare's store): the Run installs in that Box, once, and prepares
    // the project again when it owns the digest now.
    if restored && lease.session.prepared() == PreparedStart::Missing {
        if let (Err(error), Some(prepared)) = (&outcome, prepared.as_mut()) {
            events.report(error.message(), error.code());
            prepared.opened(PreparedStart::Missing);
            let sealed = match Some(prepared).filter(|p| p.owner()) {
                Some(owner) => {
                    let provider = options.provider.as_ref();
                    Box::pin(seal(&mut lease, provider, owner, &spec, definition, &run_signal, &mut timing, events))
                        .await
                }
                None => Ok(false),
            };
            outcome = match sealed {
                Ok(sealed) => {
                    Box::pin(attempt(&lease, definition, &input, options, &run_signal, reply, &mut timing, sealed))
                        .await
                }
                Err(error) => Err(error),
            };
        }
    }
    // Cut by the deadline or the caller: a request of this Run may still reach its Box.
    let cut = run_signal.deadline_passed() || run_signal.caller_aborted().is_some();
    run_signal.stop_deadline();
    timing.end_current();
    let outcome = outcome.map_err(|error| timed_out(error, &run_signal, definition, provider));
    if let Some(reason) = run_signal.caller_aborted() {
        events.status(RunStatus::Failed);
        reply.reject(&reason);
    } else {
        match outcome.and_then(|attempted| match attempted {
            Attempted::Value(Recovered::Value(value)) => value_response(value, &timing).map(Some),
            Attempted::Value(Recovered::Json(json)) => json_response(&json, &timing).map(Some),
            Attempted::Streamed { ok } => {
                events.status(if ok { RunStatus::Stopped } else { RunStatus::Failed });
                Ok(None)
            }
        }) {
            Ok(Some(response)) => {
                reply.resolve(&response.into());
                events.status(RunStatus::Stopped);
            }
            Ok(None) => {}
            Err(error) => answer_error(reply, events, &error, &timing),
        }
    }
    // The Response is out. A prepared project held since the install is kept (Cloudflare's
    // store), the warm pool is topped up (in the background), and the Box is given back,
    // bounded, and a failure reported (never dropped).
    if let Some(prepared) = prepared.as_mut() {
        Box::pin(prepared.keep_held(lease.session.as_ref(), definition, events)).await;
    }
    drop(prepared);
    pool.into_iter().for_each(|pool: WarmPool| {
        let ready = definition
            .install
            .as_ref()
            .and_then(|plan| crate::run::prepared::ready_id(options.provider.as_ref(), &plan.digest));
        crate::run::warm_pool::refill(&options.provider, definition, pool, ready, drains);
    });
    if let Err(error) = stop_within(RELEASE_DEADLINE_MS, Box::pin(lease.release(cut))).await {
        // The message names what failed (the Box's stop, the removal of the Run's folder from a
        // kept Box, its destroy): a kept Box is not stopped at all.
        events.report(
            &format!("The clean-up after a Run of Sandbox \"{}\" failed: {}", definition.name, error.message()),
            error.code(),
        );
    }
}

/// The part of a Run bounded by the deadline: stage, install, exec (followed live), recover.
/// `sealed`: the Box holds the install this Run just sealed ([`seal`]: made from its snapshot, or
/// the same Box), whose install phase is already timed.
#[allow(clippy::too_many_arguments)]
async fn attempt(
    lease: &Lease,
    definition: &Definition,
    input: &Input,
    options: &RunOptions,
    run_signal: &RunSignal,
    reply: &Reply,
    timing: &mut ServerTiming,
    sealed: bool,
) -> Result<Attempted> {
    let (session, run_dir) = (lease.session.as_ref(), lease.run_dir.as_str());
    // A kept Box keeps its prepared projects itself, one directory per install digest.
    let kept = definition
        .install
        .as_ref()
        .zip(lease.kept_root())
        .map(|(plan, root)| (kept_dir(root, &plan.digest), lease.kept_id()));
    let limits: &TransferLimits = &options.limits;
    let signal = run_signal.signal();
    let signal = Some(&signal);
    // A Run that installs stages its harness and input (the nonce) after the install: the
    // Definition's own install scripts never see them (run::stage::harness_files).
    let installs = definition.install.is_some() && !sealed && session.prepared() != PreparedStart::Restored;
    timing.begin("stage");
    // A warm Box holds the Definition's files and the harness already: the Run writes its input.
    let staged = if lease.is_warm() {
        input_files(run_dir, input)
    } else if installs {
        project_files(run_dir, definition)
    } else {
        stage_files(run_dir, definition, input)
    };
    session.stage_files(&staged, signal).await.map_err(|e| e.with_operation(Operation::Stage))?;
    timing.mark("stage");
    if lease.is_warm() {
        // Only once the warm Box answered: a gone one is replaced, and that Box is not warm.
        timing.describe("box", "warm");
    }
    if let Some(plan) = &definition.install {
        if !installs {
            if !sealed {
                timing.describe("install", install_desc(PreparedStart::Restored));
                timing.record("install", 0.0);
            }
        } else {
            let mut install = install_command(plan, box_path(run_dir, paths::PROJECT_DIR), run_signal.remaining_ms());
            if let Some((dir, kept_id)) = &kept {
                install = kept_install(install, dir, kept_fingerprint(kept_id, dir));
            }
            timing.begin("install");
            let outcome = session.exec(&install, signal).await?;
            timing.mark("install");
            if outcome.exit_code != 0 {
                return Err(install_failure(plan, &outcome, session.provider()));
            }
            if let Some((dir, kept_id)) = &kept {
                let (word, not_kept) = kept_outcome(&outcome.stdout);
                timing.describe("install", kept_desc(word));
                // The tree just kept is trusted by its fingerprint, held here (no Run can write it).
                if word != Some("restored") {
                    record_kept_fingerprint(kept_id, dir, fingerprint_in(&outcome.stdout));
                }
                if let Some(reason) = not_kept {
                    options.events.report(
                        &format!(
                            "The installed project of Sandbox \"{}\" could not be kept in its Box: {reason}",
                            definition.name
                        ),
                        ErrorCode::RuntimeError,
                    );
                }
            } else {
                timing.describe("install", install_desc(session.prepared()));
            }
            timing.begin("input");
            session
                .stage_files(&harness_files(run_dir, input), signal)
                .await
                .map_err(|e| e.with_operation(Operation::Stage))?;
            timing.mark("input");
        }
    }
    let exec = Command {
        program: "node".to_owned(),
        args: match &definition.install {
            Some(plan) if plan.pnp => [
                paths::pnp_node_options(&definition.package_path).as_slice(),
                &paths::node_args(&definition.package_path),
            ]
            .concat(),
            _ => paths::node_args(&definition.package_path).to_vec(),
        },
        cwd: Some(box_path(run_dir, &paths::package_dir(&definition.package_path))),
        env: Default::default(),
        timeout_ms: run_signal.remaining_ms(),
        // The follower keeps what it needs as the output streams by.
        max_stdout_bytes: 0,
        max_stderr_bytes: 0,
    };
    timing.begin("exec");
    options.events.status(RunStatus::Running);
    let header = timing.header_value();
    let settle =
        AbortController::new().map_err(|_| Error::new(ErrorCode::RuntimeError, "AbortController is not available"))?;
    let mut follower = Follower::new(
        &input.nonce,
        limits.max_output_bytes,
        &options.events,
        reply,
        run_signal.controller(),
        options.signal.as_ref(),
        header,
        settle,
    );
    // The command's stream ends with the Run's signal, or once it is let go after the result.
    let exec_signal = AbortSignal::any(&js_sys::Array::of2(&run_signal.signal(), &follower.settle_signal()));
    let executed =
        session.exec_streaming(&exec, &mut |stream, text| follower.on_output(stream, text), Some(&exec_signal)).await;
    timing.mark("exec");
    let (exit_code, failed) = match executed {
        Ok(outcome) => (outcome.exit_code, None),
        // The result came and the stream stayed open: the Run has what it needs (the Box's close
        // ends the command). Its exit code was never told.
        Err(_) if follower.settled() && !run_signal.signal().aborted() => (-1, None),
        Err(error) => (-1, Some(timed_out(error, run_signal, definition, session.provider()))),
    };
    let followed = match follower.finish(failed) {
        Ok(followed) => followed,
        // A Run cut short keeps the output it received (the 504 says where the entry was).
        Err(error) => {
            let (stdout, stderr) = follower.tails();
            return Err(if error.details().stdout.is_none() && error.details().stderr.is_none() {
                error.with_output_tails(&stdout, &stderr)
            } else {
                error
            });
        }
    };
    match followed {
        Followed::Streamed => Ok(Attempted::Streamed { ok: follower.streamed_ok() }),
        Followed::Envelope(framed) => {
            let (stdout, stderr) = follower.tails();
            timing.begin("recover");
            let exited = Exited { exit_code, stdout, stderr };
            let recovered =
                Box::pin(recover_result(session, run_dir, definition, framed, &exited, limits, signal)).await;
            // The thrown stack stays only with `debug: true` (dev and the CLI set it; production does not).
            let recovered = recovered.map_err(|error| if options.debug { error } else { error.without_stack() })?;
            timing.mark("recover");
            Ok(Attempted::Value(recovered))
        }
    }
}
