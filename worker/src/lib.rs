//! The repository's own Worker (top-level `wrangler.toml`): `POST /sandboxes/<name>` with a JSON
//! payload answers the Run of the example Definition `<name>` of `examples/app`, whose registry
//! `node worker/build.mjs` generates before building this crate with worker-build. The main
//! module, `worker/index.mjs`, re-exports this Worker beside the `Sandbox` Durable Object class of
//! `@cloudflare/sandbox`, which the `cloudflare` provider's binding `SANDBOX` names.
//!
//! Provider: `LOCAL_BOX_HOST_URL` and `LOCAL_BOX_HOST_TOKEN` in the Worker env (development and
//! tests only, e.g. in `.dev.vars`) run Definitions on a local Box host (`vite-hub-sandbox host`)
//! through the `local` provider; otherwise the `cloudflare` provider uses the binding `SANDBOX`.
//!
//! wasm only, like the Run it calls: on other targets (`cargo test --workspace`) the crate is empty.
#![cfg(target_arch = "wasm32")]

use std::cell::OnceCell;
use std::rc::Rc;

use vite_hub_sandbox_worker::{run_sandbox, Error, Registry, RunOptions, SandboxConfig};
use worker::{event, Context, Env, Method, Request, Response, Result};

const PREFIX: &str = "/sandboxes/";

thread_local! {
    /// The registry and its config, made by the isolate's first request.
    static REGISTRY: OnceCell<Rc<Registry>> = const { OnceCell::new() };
}

#[event(fetch)]
async fn fetch(mut request: Request, env: Env, ctx: Context) -> Result<Response> {
    let path = request.path();
    let Some(encoded) = path.strip_prefix(PREFIX).filter(|name| !name.is_empty()) else {
        return error(
            404,
            "SANDBOX_NOT_FOUND",
            "POST /sandboxes/<name> with a JSON payload runs the Definition <name>",
        );
    };
    if request.method() != Method::Post {
        return error(405, "SANDBOX_INVALID_ARGUMENT", &format!("use POST {path}"));
    }
    let Some(name) = js_sys::decode_uri_component(encoded).ok().and_then(|name| name.as_string()) else {
        return error(400, "SANDBOX_INVALID_ARGUMENT", "the Definition name in the path is not valid percent-encoding");
    };
    let text = request.text().await?;
    let payload: Option<serde_json::Value> = match text.as_str() {
        "" => None,
        text => match serde_json::from_str(text) {
            Ok(payload) => Some(payload),
            Err(_) => return error(400, "SANDBOX_INVALID_ARGUMENT", "the request body must be JSON"),
        },
    };
    let registry = match registry(&env) {
        Ok(registry) => registry,
        Err(problem) => return Ok(Response::from_json(&problem.to_json_body())?.with_status(problem.http_status())),
    };
    run_sandbox(&env, &registry, &name, payload.as_ref(), RunOptions::new(&ctx)).await
}

/// The isolate's registry: the generated one of examples/app, with the provider `env` asks for.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` when the generated registry is broken or `LOCAL_BOX_HOST_URL` /
/// `LOCAL_BOX_HOST_TOKEN` are no URL / token.
fn registry(env: &Env) -> std::result::Result<Rc<Registry>, Error> {
    if let Some(registry) = REGISTRY.with(|cell| cell.get().cloned()) {
        return Ok(registry);
    }
    let config = match env.var("LOCAL_BOX_HOST_URL") {
        Ok(url) => {
            let token = env.var("LOCAL_BOX_HOST_TOKEN").map(|token| token.to_string()).ok();
            serde_json::json!({ "provider": "local", "local": { "baseUrl": url.to_string(), "token": token } })
        }
        Err(_) => serde_json::json!({ "provider": "cloudflare" }),
    };
    let config = SandboxConfig::from_value(&config)
        .map_err(|message| Error::new(vite_hub_sandbox_worker::ErrorCode::InvalidArgument, message))?;
    let registry = Registry::from_json(include_str!("../../examples/app/.vite-hub/sandbox/build/registry.json"))?
        .with_config(config)?;
    // Nothing ran since the check above (no await): this is the isolate's one registry.
    Ok(REGISTRY.with(|cell| Rc::clone(cell.get_or_init(|| Rc::new(registry)))))
}

/// The route's own JSON error, in the Response contract's shape.
fn error(status: u16, code: &str, message: &str) -> Result<Response> {
    Ok(Response::from_json(&serde_json::json!({ "error": { "code": code, "message": message } }))?.with_status(status))
}
