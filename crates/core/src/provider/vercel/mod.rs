//! Vercel Sandbox, as data: its options (credentials, base URL) and the shapes of its REST
//! protocol (`/v2`, `/v3` endpoints, the NDJSON command stream).

pub mod interactive;
pub mod options;
pub mod wire;

pub use options::{VercelEndpoint, VercelOptions, DEFAULT_BASE_URL};

use crate::provider_kind::ProviderKind;

/// Bound of a create (all attempts and the answer), in ms. A Run's own deadline usually ends it
/// first. On the local Box host a create may wait in the host's queue for room: there the bound is
/// its own `timeout` (see [`create_deadline_ms`]).
pub const CREATE_DEADLINE_MS: u32 = 60_000;

/// The bound of a create with `timeout` (the Box's lifetime, ms) on a `kind` provider, in ms:
/// [`CREATE_DEADLINE_MS`], or on the local Box host that `timeout` when longer. The host holds a
/// create in its queue until a Box slot is free, its client leaves or that `timeout` passes
/// (pkg-template/box-host/engine/box-queue.mjs), so a busy host makes a Run wait as long as the
/// Run's own deadline and signal allow (the Box outlives the Run's timeout by
/// [`crate::definition::BOX_GRACE_MS`]), not 60 s.
pub fn create_deadline_ms(kind: ProviderKind, timeout: Option<u64>) -> u32 {
    match (kind, timeout) {
        (ProviderKind::Local, Some(ms)) => u32::try_from(ms).unwrap_or(u32::MAX).max(CREATE_DEADLINE_MS),
        _ => CREATE_DEADLINE_MS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_on_the_local_host_is_bounded_by_its_own_timeout_not_60_s() {
        // A Run of the default timeout asks for a Box of 300 000 + 60 000 ms: its create may wait
        // in the host's queue that long (the Run's own deadline ends it at 300 000 ms).
        assert_eq!(create_deadline_ms(ProviderKind::Local, Some(360_000)), 360_000);
        assert_eq!(create_deadline_ms(ProviderKind::Local, Some(5_000_000_000)), u32::MAX);
        assert_eq!(create_deadline_ms(ProviderKind::Local, Some(1_000)), CREATE_DEADLINE_MS);
        assert_eq!(create_deadline_ms(ProviderKind::Local, None), CREATE_DEADLINE_MS);
        assert_eq!(create_deadline_ms(ProviderKind::Vercel, Some(360_000)), CREATE_DEADLINE_MS);
    }
}
