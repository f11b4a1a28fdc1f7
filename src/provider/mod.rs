//! Providers: who supplies Boxes. Each one turns its protocol into the one Box seam of
//! [`box_session`]: a [`Provider`] that opens a [`BoxSession`]; nothing above this module knows
//! which protocol is in use.
//!
//! This module is the registry: [`ProviderSettings`] (what a provider is built from, resolved by
//! [`vite_hub_sandbox_core::config`]) and [`build`], whose one arm per provider is the only code outside a
//! provider's folder that names its types. Adding a provider is a new `provider/<name>/` folder
//! that implements [`Provider`] and [`BoxSession`], one variant of [`ProviderSettings`] and one
//! arm of [`build`]. Provider vocabulary (Vercel's `sessionId`, `cmdId`, its tar write format,
//! its NDJSON output stream) stays inside that provider's folder; what every provider's output
//! looks like is [`output`]. The exports reach a provider's own parts (the in-process local Box
//! host, the Worker's Durable Object binding) only through the functions at the end of this file.

pub mod box_session;
pub mod cloudflare;
pub mod local;
pub mod output;
pub mod vercel;

pub use box_session::{
    BoxListing, BoxSession, BoxSpec, FileRead, HostStart, PreparedProject, PreparedStart, Provider, Seal,
};
pub use vite_hub_sandbox_core::provider::ProviderSettings;

/// Builds the provider `settings` name; requests go through `fetcher` (Cloudflare: through the
/// stubs of `namespace`, the Worker env's binding). Sends nothing. This is the one place that
/// names each provider's types: a provider is its folder plus one arm here.
///
/// # Errors
/// `SANDBOX_PROVIDER_REQUIRED` for Cloudflare without `namespace` and without a local Box host
/// (config resolution reports that first, see [`vite_hub_sandbox_core::config`]).
#[cfg(target_arch = "wasm32")]
pub fn build(
    settings: ProviderSettings,
    fetcher: crate::http::fetch::Fetcher,
    namespace: Option<crate::sys::DurableObjectNamespace>,
) -> vite_hub_sandbox_core::error::Result<std::rc::Rc<dyn Provider>> {
    use std::rc::Rc;
    Ok(match settings {
        ProviderSettings::Vercel { endpoint, network_policy } => Rc::new(vercel::VercelProvider::new(
            endpoint,
            network_policy,
            fetcher,
            vite_hub_sandbox_core::provider_kind::ProviderKind::Vercel,
        )),
        ProviderSettings::Local(options) => Rc::new(local::LocalProvider::new(options, fetcher)),
        ProviderSettings::Cloudflare(settings) => {
            // A Box on the local Box host (local development) gets the host's own report of what
            // it can reach, asked as the local provider asks it (Cloudflare's Boxes there use the
            // default network policy).
            let local_host =
                |host: &cloudflare::LocalContainerHost, fetcher: crate::http::fetch::Fetcher| -> Rc<dyn Provider> {
                    let options = local::LocalOptions {
                        base_url: Some(host.base_url.clone()),
                        token: Some(host.token.clone()),
                        ..Default::default()
                    };
                    Rc::new(local::LocalProvider::new(options, fetcher))
                };
            let binding = settings.binding.clone();
            let provider = cloudflare::CloudflareProvider::new(settings, namespace, fetcher, local_host)
                .ok_or_else(|| vite_hub_sandbox_core::provider::cloudflare::options::missing_binding_error(&binding))?;
            Rc::new(provider)
        }
    })
}

/// The Durable Object namespace the Worker env `env` holds under `binding` (an object with
/// `idFromName` and `get`), for the `cloudflare` provider; `None` when it holds none.
#[cfg(target_arch = "wasm32")]
pub fn durable_object_namespace(
    env: &wasm_bindgen::JsValue,
    binding: &str,
) -> Option<crate::sys::DurableObjectNamespace> {
    cloudflare::namespace_in(env, binding)
}

/// Registers the function that starts the isolate's in-process local Box host (the Node entry's;
/// `None` removes it). See `local/host.rs` for its shape.
#[cfg(target_arch = "wasm32")]
pub fn set_local_host_starter(starter: Option<js_sys::Function>) {
    local::host::set_starter(starter);
}

/// Starts the isolate's in-process local Box host with `options` unless it runs already.
///
/// # Errors
/// `SANDBOX_PROVIDER_REQUIRED` without a starter; `SANDBOX_PROVIDER_UNAVAILABLE` when the start
/// failed.
#[cfg(target_arch = "wasm32")]
pub async fn start_local_host(options: local::options::InProcessHost) -> vite_hub_sandbox_core::error::Result<()> {
    local::host::in_process_host(options).await.map(|_| ())
}

/// Forgets the in-process local Box host (the glue closed it): the next Run starts a new one.
#[cfg(target_arch = "wasm32")]
pub fn forget_local_host() {
    local::host::forget_started();
}
