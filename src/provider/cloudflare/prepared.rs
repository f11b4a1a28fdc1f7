//! Prepared projects on Cloudflare: the installed project of an install digest, packed as one
//! archive and kept in a store of its own, a `Sandbox` Durable Object named
//! [`prepared_name`](crate::run::install::prepared_name)`(digest)` whose container holds the
//! archive and runs no Command.
//!
//! Why a store and not the SDK's backup and restore: backups need an R2 bucket, its S3
//! credentials as Worker secrets and a container that reaches R2 (cloudflare-sandbox-protocol.md
//! §1.2, §5.1 item 8), more configuration than a Run should ask for. Why not Runs inside one
//! kept container per digest: Runs of unrelated requests would share its processes, `/tmp` and
//! tree. Here each Run still gets a container of its own; the archive reaches it appended to the
//! Run's staged archive (one write, unpacked by the Run's first Command, [`super::exec::unpack_then`]).
//!
//! The Run that installed packs its cleaned-up Box after its Response ([`pack_and_keep`]); the
//! Worker reads the archive (at most [`MAX_PREPARED_ARCHIVE_BYTES`]) and writes it to the store.
//! The store's container sleeps after the SDK's default 10 minutes without a request, and a
//! container that starts again starts empty: the next Run finds no archive and installs again.

use web_sys::AbortSignal;

use super::client::ContainerClient;
use super::container::{destroy, CloudflareBox, WORK_DIR};
use super::exec::{pack_prepared, MAX_PREPARED_ARCHIVE_BYTES, PREPARED_ARCHIVE};
use crate::error::{Error, ErrorCode, Operation, Result};
use crate::provider::box_session::{BoxSession, ProviderKind};
use crate::sys::DurableObjectStub;

/// The store of one prepared project: its Durable Object (or, in local development, its
/// container on the local Box host).
#[derive(Debug)]
pub struct PreparedStore {
    /// The store's name, the prepared project's id.
    pub name: String,
    pub(super) client: ContainerClient,
    pub(super) stub: Option<DurableObjectStub>,
}

/// Where a store keeps the archive.
pub(super) fn archive_path() -> String {
    format!("{WORK_DIR}/{PREPARED_ARCHIVE}")
}

fn failed(operation: Operation, message: String) -> Error {
    Error::new(ErrorCode::RuntimeError, message).with_provider(ProviderKind::Cloudflare).with_operation(operation)
}

impl PreparedStore {
    /// The archive the store keeps; `None` when it keeps none (never written, or its container
    /// slept and started again empty). One `/api/read`, which starts a sleeping container.
    ///
    /// # Errors
    /// Those of the read (`SANDBOX_TRANSPORT_ERROR`, `SANDBOX_PROVIDER_UNAVAILABLE`), with
    /// operation `create`: the Run cannot open its Box from the prepared project.
    pub async fn archive(&self, signal: Option<&AbortSignal>) -> Result<Option<Vec<u8>>> {
        self.client.read_file(&archive_path(), signal).await.map_err(|e| e.with_operation(Operation::Create))
    }

    /// Deletes the store (`dropPreparedProject`): RPC `destroy()` (`DELETE` on the local Box
    /// host); its container and the archive go with it.
    ///
    /// # Errors
    /// Those of the destroy, with operation `snapshot`.
    pub async fn delete(&self) -> Result<()> {
        match &self.stub {
            Some(stub) => destroy(stub).await,
            None => self.client.destroy_on_local_host(None).await,
        }
        .map_err(|e| e.with_operation(Operation::Snapshot))
    }
}

/// Packs the installed project the clean-up left in `session` ([`pack_prepared`]), carries the
/// archive to `store` and destroys the Box; the prepared project's id (the store's name).
///
/// # Errors
/// `SANDBOX_RUNTIME_ERROR` (operation `snapshot`) when packing failed or the archive is over
/// [`MAX_PREPARED_ARCHIVE_BYTES`]; those of the read and the write. The Box is left to the
/// caller's close then.
pub async fn pack_and_keep(session: &CloudflareBox, store: &PreparedStore) -> Result<String> {
    let packed = session.exec(&pack_prepared(session.cwd()), None).await.map_err(|e| e.with_operation(Operation::Snapshot))?;
    if packed.exit_code != 0 {
        return Err(failed(Operation::Snapshot, format!("packing the installed project exited with code {}: {}", packed.exit_code, packed.stderr.trim())));
    }
    let size = packed.stdout.trim();
    if size.parse::<u64>().map_or(true, |size| size > MAX_PREPARED_ARCHIVE_BYTES) {
        return Err(failed(Operation::Snapshot, format!("the packed project is {size} bytes, over the {MAX_PREPARED_ARCHIVE_BYTES} a Worker carries to its store")));
    }
    let path = format!("{}/{PREPARED_ARCHIVE}", session.cwd().trim_end_matches('/'));
    let archive = session.client.read_file(&path, None).await?.ok_or_else(|| failed(Operation::Snapshot, format!("{path} is missing")))?;
    store.client.write_file(&archive_path(), &archive, None).await.map_err(|e| e.with_operation(Operation::Snapshot))?;
    session.close().await?;
    Ok(store.name.clone())
}
