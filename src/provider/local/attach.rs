//! Reattaching to a Box of the local Box host from another process: the in-process host lives
//! in the process that started it (its URL and token never leave that process), so only a
//! standalone host (`npx vite-hub-sandbox host`, `local: { baseUrl, token }` in every process)
//! is shared. An id the host does not know is answered with that explanation.

use crate::provider::box_session::BoxSession;
use vite_hub_sandbox_core::error::{Error, Result};

/// `attached`, or for a 404 of the host its error with a message saying where the Box may be:
/// on an in-process host (`in_process`), only in the process that opened it; on a standalone
/// host, stopped long ago (it remembers 256 stopped Boxes) or never there.
///
/// # Errors
/// The attach's error, its message explained for a 404 (`SANDBOX_TRANSPORT_ERROR`,
/// `details.status` 404).
pub fn explained(attached: Result<Box<dyn BoxSession>>, id: &str, in_process: bool) -> Result<Box<dyn BoxSession>> {
    let error = match attached {
        Err(error) if error.upstream_status() == Some(404) => error,
        other => return other,
    };
    let id = vite_hub_sandbox_core::error::quoted(id);
    let why = if in_process {
        format!(
            "openSandboxSession({{ id: {id} }}): this process's in-process local Box host has no Box {id}. A Box of the in-process host belongs to the process that opened it (its host, URL and token never leave that process); to reattach from another process, run one standalone host (`npx vite-hub-sandbox host`) and configure every process with local: {{ baseUrl, token }}"
        )
    } else {
        format!(
            "openSandboxSession({{ id: {id} }}): the local Box host at local.baseUrl has no Box {id} (never opened there, or stopped and forgotten)"
        )
    };
    Err(Error::new(error.code(), why)
        .with_provider(vite_hub_sandbox_core::provider_kind::ProviderKind::Local)
        .with_operation(vite_hub_sandbox_core::error::Operation::Attach)
        .with_status(404))
}
