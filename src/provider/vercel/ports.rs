//! The ports of a Vercel (or local Box host) session: `ports` sent on create as the SDK sends
//! them, and the routes of the create answer that `session.domain(port)` reads
//! ([`vite_hub_sandbox_core::session::ports`]).
//!
//! Source: vercel-sandbox-protocol.md §6.3 (Route `{url, subdomain, port}`) and §7.1 (create:
//! `ports: number[]`, always sent, `[]` by default; the answer's `routes`).

use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::ports::{parse_routes, Route};

/// Refuses `ports` the provider could not reach before any request: on the local Box host a
/// `deny-all` Box has no network its commands share (each command has a network namespace of its
/// own with only its loopback; pkg-template/box-host/engine/box-reach.mjs), so no port URL of it
/// could work. Vercel takes `ports` under any policy (routes are inbound).
///
/// # Errors
/// `SANDBOX_NOT_SUPPORTED` (`details.operation` `ports`) for `ports` on a `deny-all` local Box.
pub fn check_ports_policy(kind: ProviderKind, ports: &[u16], network_policy: Option<&serde_json::Value>) -> Result<()> {
    let denied =
        network_policy.and_then(|policy| policy.get("mode")).and_then(serde_json::Value::as_str) == Some("deny-all");
    if kind == ProviderKind::Local && denied && !ports.is_empty() {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "openSandboxSession({ ports }) is not supported by the local provider under networkPolicy 'deny-all': each command of such a Box has a network namespace of its own with only its loopback, so no port of it can be reached; use 'allow-all' for a Box with ports",
        )
        .with_provider(kind)
        .with_operation(Operation::Ports));
    }
    Ok(())
}

/// The routes of a create answer (`routes`, `[]` when absent).
///
/// # Errors
/// `SANDBOX_TRANSPORT_ERROR` (`details.operation` `create`) for a route of another shape.
pub fn routes_of(kind: ProviderKind, routes: &[serde_json::Value]) -> Result<Vec<Route>> {
    parse_routes(routes).map_err(|why| {
        Error::new(ErrorCode::TransportError, format!("The {kind} provider answered the create with {why}"))
            .with_provider(kind)
            .with_operation(Operation::Create)
    })
}
