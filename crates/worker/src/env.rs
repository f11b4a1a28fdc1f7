//! What the sandbox config takes from a [`worker::Env`]: the variables the core reads (its one
//! list, `config::env_names`) and the Cloudflare provider's Durable Object binding.

use vite_hub_sandbox::sys::DurableObjectNamespace;
use vite_hub_sandbox_core::config::{env_names, SandboxConfig};
use wasm_bindgen::JsCast;

/// `config` with the Worker env's values of the core's variables (`NODE_ENV`, `SANDBOX_PROVIDER`,
/// `SANDBOX_LOCAL_URL`, the Vercel credentials, …) set in its env snapshot. Only string values
/// (vars and secrets) count, as in the npm package's `pickSandboxEnv`; they replace the config's
/// own `env` entries of the same name.
pub(crate) fn with_worker_env(config: &SandboxConfig, env: &worker::Env) -> SandboxConfig {
    let mut config = config.clone();
    for name in env_names() {
        if let Ok(value) = env.var(name) {
            config.env.insert(name.to_owned(), value.to_string());
        }
    }
    config
}

/// The Durable Object namespace bound as `binding` in `env`, as the runtime's binding type;
/// `None` when there is no such Durable Object binding (the config then answers
/// `SANDBOX_PROVIDER_REQUIRED` naming the wrangler lines, unless a local Box host is configured).
pub(crate) fn namespace(env: &worker::Env, binding: &str) -> Option<DurableObjectNamespace> {
    let namespace = env.durable_object(binding).ok()?;
    Some(wasm_bindgen::JsValue::from(namespace).unchecked_into())
}
