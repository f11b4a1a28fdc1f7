//! One Run from a Worker: the Definition and the provider from the [`Registry`], the runtime's
//! Run, its Response as a [`worker::Response`].

use std::rc::Rc;

use vite_hub_sandbox::response::error_response;
use vite_hub_sandbox::run::events::RunEvents;
use vite_hub_sandbox::run::{run_definition, RunOptions as RuntimeRunOptions};
use vite_hub_sandbox::server_timing::ServerTiming;
use vite_hub_sandbox_core::definition::suggest::{not_found_message, Miss};
use vite_hub_sandbox_core::definition::{validate_name, Definition};
use vite_hub_sandbox_core::error::{Error, ErrorCode};
use wasm_bindgen::JsValue;

use crate::background::BackgroundWork;
use crate::registry::Registry;

/// Options of one [`run_sandbox`] (`runSandbox`'s `{ context?, signal?, sandboxId? }`), plus the
/// Worker's [`worker::Context`]: the work after the Response (giving the Box back) runs under its
/// `waitUntil`.
#[derive(Debug)]
pub struct RunOptions<'a> {
    ctx: &'a worker::Context,
    context: Option<serde_json::Value>,
    signal: Option<web_sys::AbortSignal>,
    sandbox_id: Option<String>,
}

impl<'a> RunOptions<'a> {
    /// The options of a Run in the request `ctx` belongs to: no context, no signal, a new Box.
    pub fn new(ctx: &'a worker::Context) -> RunOptions<'a> {
        RunOptions { ctx, context: None, signal: None, sandbox_id: None }
    }

    /// The entry's second argument (JSON).
    pub fn with_context(self, context: serde_json::Value) -> RunOptions<'a> {
        RunOptions { context: Some(context), ..self }
    }

    /// When `signal` fires, [`run_sandbox`] fails at once with its reason and the Box is given back.
    pub fn with_signal(self, signal: &worker::AbortSignal) -> RunOptions<'a> {
        RunOptions { signal: Some((**signal).clone()), ..self }
    }

    /// Runs on the Box kept under `sandbox_id` (made by the first Run that names it; Runs
    /// sharing it are serialized in the isolate). Cloudflare: the Durable Object named so.
    pub fn with_sandbox_id(self, sandbox_id: impl Into<String>) -> RunOptions<'a> {
        RunOptions { sandbox_id: Some(sandbox_id.into()), ..self }
    }
}

/// Runs the Definition `name` of `registry` with `payload` (`None`: the entry gets `undefined`)
/// on the provider the registry's config chooses for `env` (DESIGN.md §4; Cloudflare through
/// `env`'s Durable Object binding), and resolves to its Response.
///
/// The Response follows the npm package's contract: `200` JSON of the entry's result, `204` for
/// `undefined`, the entry's own Response, a binary body for bytes; a failure is a non-2xx JSON
/// `{"error":{"code","message","details"?}}` with the `SANDBOX_*` codes of DESIGN.md §5 (e.g.
/// `SANDBOX_NOT_FOUND` 500 for an unknown name, `SANDBOX_INVALID_ARGUMENT` 400 for a bad one,
/// `SANDBOX_PROVIDER_REQUIRED` 500 without a provider, `SANDBOX_TIMEOUT` 504 when one attempt
/// exceeds the Definition's timeout, in ms). Every Response carries `Server-Timing` (phases in
/// ms). The Response comes before the Box is given back; that work runs under `ctx.waitUntil`.
///
/// # Errors
/// Only the reason of the options' signal when it fires (as a [`worker::Error`] holding the JS
/// reason), and a JS failure building the Response; a failed Run is an error Response, not an
/// `Err`.
pub async fn run_sandbox(
    env: &worker::Env,
    registry: &Registry,
    name: &str,
    payload: Option<&serde_json::Value>,
    options: RunOptions<'_>,
) -> worker::Result<worker::Response> {
    let mut timing = ServerTiming::start();
    let background = BackgroundWork::default();
    let (definition, payload, run_options) = match prepare(env, registry, name, payload, &options, &background) {
        Ok(prepared) => prepared,
        Err(error) => {
            timing.mark("resolve");
            return Ok(error_response(&error, &timing)?.into());
        }
    };
    let answer = run_definition(definition, payload, run_options).await;
    background.keep_alive(options.ctx);
    Ok(answer?.into())
}

/// The Definition, the payload and the runtime's options of a Run of `name`.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for a bad name; `SANDBOX_NOT_FOUND` naming it (and, outside
/// production, the closest names the registry holds); the provider's error when none could be
/// chosen (`SANDBOX_PROVIDER_REQUIRED`, …).
fn prepare(
    env: &worker::Env,
    registry: &Registry,
    name: &str,
    payload: Option<&serde_json::Value>,
    options: &RunOptions<'_>,
    background: &BackgroundWork,
) -> Result<(Rc<Definition>, JsValue, RuntimeRunOptions), Error> {
    validate_name(name)?;
    let runtime = registry.runtime(env)?;
    let Some(definition) = registry.definition(name) else {
        // In production the names stay in the server (as in the npm runtime's `runSandbox`).
        let names: Vec<String> = registry.names().map(str::to_owned).collect();
        let miss = if runtime.production { Miss::Unlisted } else { Miss::Unknown { names: &names } };
        return Err(Error::new(ErrorCode::NotFound, not_found_message(name, &miss)));
    };
    let provider = runtime.provider.as_ref().map(Rc::clone).map_err(Error::to_public)?;
    let payload = payload.map(|value| json_to_js(value, "payload")).transpose()?.unwrap_or(JsValue::UNDEFINED);
    let context =
        options.context.as_ref().map(|value| json_to_js(value, "context")).transpose()?.unwrap_or(JsValue::UNDEFINED);
    let run_options = RuntimeRunOptions {
        context,
        signal: options.signal.clone(),
        provider,
        limits: runtime.limits,
        sandbox_id: options.sandbox_id.clone(),
        events: RunEvents::new(background.events_handle()),
        debug: runtime.debug,
        warm_pool: runtime.warm_pool,
    };
    Ok((definition, payload, run_options))
}

/// A JSON value as the JS value the Run encodes (`JSON.parse` of its text).
///
/// # Errors
/// `SANDBOX_SERIALIZATION_ERROR` naming `what` when the text cannot be parsed back (not expected
/// for a `serde_json::Value`).
fn json_to_js(value: &serde_json::Value, what: &str) -> Result<JsValue, Error> {
    js_sys::JSON::parse(&value.to_string()).map_err(|e| {
        Error::new(
            ErrorCode::SerializationError,
            format!("the {what} could not be handed to the Run: {}", vite_hub_sandbox::error::js::js_message(&e)),
        )
    })
}
