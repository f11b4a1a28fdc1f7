//! A Session's network policy and reattaching, for the Vercel protocol (Vercel itself, and the
//! local Box host): which policies each accepts, the executionAuthority that follows, and when a
//! reattached sandbox is refused.
//!
//! Source: `shared/reference/vercel-sandbox-protocol.md` §6.7, §6.9, §7.1, §7.2.

use serde_json::Value;
use web_sys::AbortSignal;

use super::client::VercelClient;
use super::wire::network_policy_request;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider::local::LocalNetworkPolicy;
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::ExecutionAuthority;

/// `Ok` for a session `status` of `running`; a stopped (or stopping, failed, …) sandbox is
/// `SANDBOX_INVALID_STATE` (409): its Box is gone and a Session cannot reattach to it (the SDK's
/// `resume` would start a new session from a persistent sandbox's snapshot; Sessions' Boxes are
/// not persistent).
///
/// # Errors
/// `SANDBOX_INVALID_STATE` naming the id and the status.
pub fn check_running(kind: ProviderKind, id: &str, status: &str) -> Result<()> {
    if status == "running" {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidState,
        format!(
            "openSandboxSession({{ id: {} }}): that Box is {status}, not running; open a new Session",
            vite_hub_sandbox_core::error::quoted(id)
        ),
    )
    .with_provider(kind)
    .with_operation(Operation::Attach))
}

/// Sends `policy` (the config's shapes) to the session: on the local Box host only what it
/// enforces (`"allow-all"`, `"deny-all"`, `{ mode }`: [`LocalNetworkPolicy::parse`], the rule of
/// `local.networkPolicy`), on Vercel any policy (as `vercel.networkPolicy`, checked by Vercel).
/// The executionAuthority under the new policy: the local host's own report in its answer, or
/// for Vercel the contract's table ([`ExecutionAuthority::vercel`]) of the policy sent.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` for a policy the local Box host cannot enforce (before any
/// request); those of [`VercelClient::update_network_policy`]; `SANDBOX_TRANSPORT_ERROR` when the
/// local host's answer has no well-formed executionAuthority.
pub async fn update_network_policy(
    client: &VercelClient,
    session_id: &str,
    policy: &Value,
    signal: Option<&AbortSignal>,
) -> Result<ExecutionAuthority> {
    let kind = client.kind();
    let request = match kind {
        ProviderKind::Local => network_policy_request(
            &LocalNetworkPolicy::parse(policy, "updateNetworkPolicy(policy)")
                .map_err(|message| {
                    Error::new(ErrorCode::InvalidArgument, message)
                        .with_provider(kind)
                        .with_operation(Operation::UpdateNetworkPolicy)
                })?
                .to_value(),
        ),
        _ => network_policy_request(policy),
    };
    let session = client.update_network_policy(session_id, &request, signal).await?;
    match kind {
        ProviderKind::Local => {
            let report = session.get("executionAuthority").ok_or_else(|| {
                Error::new(ErrorCode::TransportError, "the local Box host reported no executionAuthority for the Box")
                    .with_provider(kind)
                    .with_operation(Operation::UpdateNetworkPolicy)
            })?;
            ExecutionAuthority::from_report(report).map_err(|e| e.with_provider(kind))
        }
        _ => Ok(ExecutionAuthority::vercel(Some(&request))),
    }
}
