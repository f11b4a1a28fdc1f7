//! The `vercel` provider's [`Provider`](crate::provider::box_session::Provider) and its Box: what the layers above
//! call, in Boxes, Commands and files.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use web_sys::AbortSignal;

use super::client::VercelClient;
use super::options::VercelEndpoint;
use super::wire::CreateSandboxRequest;
use crate::http::fetch::Fetcher;
use crate::provider::box_session::{
    BoxListing, BoxSession, BoxSpec, FileRead, PreparedProject, PreparedStart, Provider, Seal,
};
use crate::provider::output::{LogStream, OutputStream};
use vite_hub_sandbox_core::command::{Command, CommandOutcome};
use vite_hub_sandbox_core::error::{Error, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::ExecutionAuthority;
use vite_hub_sandbox_core::transfer::box_file::BoxFile;
use vite_hub_sandbox_core::transfer::tar::write_tar;

/// Opens Vercel sessions (Boxes) with one client.
#[derive(Debug)]
pub struct VercelProvider {
    client: Rc<VercelClient>,
    project_id: Option<String>,
    network_policy: Option<serde_json::Value>,
}

impl VercelProvider {
    /// A provider for `endpoint`, reporting errors as `kind` (`vercel`, or `local` for the
    /// local Box host). Sends nothing.
    pub fn new(
        endpoint: VercelEndpoint,
        network_policy: Option<serde_json::Value>,
        fetcher: Fetcher,
        kind: ProviderKind,
    ) -> VercelProvider {
        let project_id = endpoint.project_id.clone();
        let network_policy = network_policy.as_ref().map(super::wire::network_policy_request);
        VercelProvider { client: Rc::new(VercelClient::new(endpoint, fetcher, kind)), project_id, network_policy }
    }

    /// The same provider writing plain tar archives ([`VercelClient::with_plain_archives`]): the
    /// local provider's, for a host called in process.
    pub fn with_plain_archives(self) -> VercelProvider {
        let client = Rc::try_unwrap(self.client).unwrap_or_else(|shared| (*shared).clone());
        VercelProvider { client: Rc::new(client.with_plain_archives()), ..self }
    }

    /// What the local Box host would apply to a Box of this provider (its
    /// `GET /_vite-hub/execution-authority`); the local provider only.
    pub fn local_host_execution_authority<'a>(
        &'a self,
        signal: Option<&'a AbortSignal>,
    ) -> impl std::future::Future<Output = Result<serde_json::Value>> + 'a {
        self.client.local_host_execution_authority(self.network_policy.as_ref(), signal)
    }
}

impl Provider for VercelProvider {
    /// `vercel`, or `local` for the local Box host.
    fn kind(&self) -> ProviderKind {
        self.client.kind()
    }

    /// `true`: snapshots.
    fn prepares(&self) -> bool {
        true
    }

    /// Snapshots of this project (`GET /v2/sandboxes/snapshots`, newest first, one page of
    /// up to 100), of the sandbox named `name` when given.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE`.
    fn list_prepared<'a>(&'a self, name: Option<&'a str>) -> LocalBoxFuture<'a, Result<Vec<PreparedProject>>> {
        Box::pin(self.client.list_snapshots(self.project_id.as_deref(), name))
    }

    /// Deletes snapshot `id` (`DELETE /v2/sandboxes/snapshots/{id}`); `false` when it was
    /// already gone (404).
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE`.
    fn drop_prepared<'a>(&'a self, id: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(self.client.delete_snapshot(id))
    }

    /// From the `networkPolicy` sent at create (no request).
    fn execution_authority<'a>(
        &'a self,
        _signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        Box::pin(std::future::ready(Ok(ExecutionAuthority::vercel(self.network_policy.as_ref()))))
    }

    /// Creates a sandbox and its session: `POST /v3/sandboxes` with `persistent: false`; with
    /// `spec.prepared`, from that snapshot (`source: {type: "snapshot"}`, §7.5). A snapshot
    /// the provider no longer has (404, 410 `snapshot_not_found`) is not an error: the Box is
    /// created empty instead (one more request) and [`VercelBox::prepared`] says so.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE` (with the upstream status).
    fn open<'a>(
        &'a self,
        spec: &'a BoxSpec,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        Box::pin(async move {
            let mut body = CreateSandboxRequest {
                project_id: self.project_id.clone(),
                ports: Vec::new(),
                timeout: spec.lifetime_ms,
                runtime: None,
                network_policy: self.network_policy.clone(),
                env: None,
                persistent: Some(false),
                source: spec.prepared.as_ref().map(|id| serde_json::json!({"type": "snapshot", "snapshotId": id})),
                name: spec.prepared_name.clone(),
            };
            let mut prepared = if spec.prepared.is_some() { PreparedStart::Restored } else { PreparedStart::Empty };
            // At most three creates: a gone snapshot drops `source`, a taken name drops `name`.
            let mut attempts = 0;
            let created = loop {
                attempts += 1;
                match self.client.create_sandbox(&body, signal).await {
                    Err(error)
                        if attempts < 3
                            && body.source.is_some()
                            && matches!(error.upstream_status(), Some(404 | 410)) =>
                    {
                        body.source = None;
                        prepared = PreparedStart::Missing;
                    }
                    Err(error) if attempts < 3 && body.name.is_some() && error.upstream_status() == Some(409) => {
                        body.name = None
                    }
                    other => break other?,
                }
            };
            Ok(Box::new(VercelBox {
                client: self.client.clone(),
                name: sandbox_name(&created),
                session_id: created.session.id,
                cwd: created.session.cwd,
                execution_authority: created.session.execution_authority,
                prepared,
                expires_at_ms: None,
            }) as Box<dyn BoxSession>)
        })
    }

    /// Reattaches to the running sandbox named `id` (`GET /v2/sandboxes/{name}`, the SDK's
    /// `Sandbox.get`, no resume); a Box no longer running is `SANDBOX_INVALID_STATE`.
    fn attach<'a>(
        &'a self,
        id: &'a str,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        Box::pin(async move {
            let (created, session) = self.client.get_sandbox(id, self.project_id.as_deref(), signal).await?;
            super::attach::check_running(self.kind(), id, &created.session.status)?;
            Ok(Box::new(VercelBox {
                client: self.client.clone(),
                name: sandbox_name(&created),
                session_id: created.session.id,
                cwd: created.session.cwd,
                execution_authority: created.session.execution_authority,
                prepared: PreparedStart::Empty,
                expires_at_ms: super::sessions::session_expires_at_ms(&session),
            }) as Box<dyn BoxSession>)
        })
    }

    /// The project's sandboxes (`GET /v2/sandboxes`, the SDK's `Sandbox.list`).
    fn list_boxes<'a>(&'a self, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Vec<BoxListing>>> {
        Box::pin(self.client.list_sandboxes(self.project_id.as_deref(), signal))
    }
}

/// The sandbox name of a create or get answer (§6.9: the key of `Sandbox.get`), or the session
/// id when the answer has none.
fn sandbox_name(answer: &super::wire::SandboxAndSessionResponse) -> String {
    answer.sandbox.get("name").and_then(serde_json::Value::as_str).unwrap_or(&answer.session.id).to_owned()
}

/// One Vercel session (a Box).
#[derive(Debug)]
pub struct VercelBox {
    client: Rc<VercelClient>,
    /// The sandbox name: the Box id a Session reports and reattaches with.
    name: String,
    session_id: String,
    cwd: String,
    execution_authority: Option<serde_json::Value>,
    prepared: PreparedStart,
    /// When the session's lifetime ends (ms since the epoch), as a reattach read it.
    expires_at_ms: Option<f64>,
}

impl BoxSession for VercelBox {
    /// `vercel`, or `local` for a session of the local Box host.
    fn provider(&self) -> ProviderKind {
        self.client.kind()
    }

    /// The sandbox name (what `Sandbox.get` takes; on the local Box host the session id of a
    /// Box created without a name). Requests go to the session id.
    fn id(&self) -> &str {
        &self.name
    }

    /// The session cwd, e.g. `/vercel/sandbox`.
    fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The session cwd for a session of the local Box host; `None` on Vercel.
    fn local_box_host_work_dir(&self) -> Option<&str> {
        (self.provider() == ProviderKind::Local).then_some(self.cwd.as_str())
    }

    /// 404 or 410, or a 400 saying the session is stopped (`sandbox_stopped`, protocol
    /// note): the session is gone.
    fn vanished(&self, error: &Error) -> bool {
        match error.upstream_status() {
            Some(404 | 410) => true,
            Some(400) => error.message().contains("stopped"),
            _ => false,
        }
    }

    /// `true`: the provider stops the session at its `timeout`.
    fn stops_at_lifetime(&self) -> bool {
        true
    }

    /// The `executionAuthority` the local Box host adds to its create answer (Vercel sends none).
    fn reported_execution_authority(&self) -> Option<&serde_json::Value> {
        self.execution_authority.as_ref()
    }

    /// The end of the lifetime a reattach read (`None` for a Box this process created).
    fn reported_expires_at_ms(&self) -> Option<f64> {
        self.expires_at_ms
    }

    /// `POST …/network-policy` (the SDK's `updateNetworkPolicy`): see
    /// `attach.rs` (which policies each provider takes, the executionAuthority after it).
    fn update_network_policy<'a>(
        &'a self,
        policy: &'a serde_json::Value,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        Box::pin(super::attach::update_network_policy(&self.client, &self.session_id, policy, signal))
    }

    /// Whether the Box began from the snapshot asked for (or why not).
    fn prepared(&self) -> PreparedStart {
        self.prepared
    }

    /// Snapshots the Box, which stops it (`POST …/snapshot` with no body, §7.5):
    /// [`Seal::Snapshot`] with the snapshot id.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` / `SANDBOX_PROVIDER_UNAVAILABLE`, or a 2xx without a
    /// snapshot id.
    fn prepare<'a>(&'a self, _signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Seal>> {
        Box::pin(async move { self.client.snapshot_session(&self.session_id).await.map(Seal::Snapshot) })
    }

    /// Writes `files` as one gzip'd tar (plain for a host called in process) extracted at `/`
    /// (`fs/write`).
    fn write_files<'a>(
        &'a self,
        files: &'a [BoxFile],
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let tar = write_tar(files)?;
            let archive = if self.client.plain_archives() { tar } else { crate::transfer::gzip::gzip(&tar).await? };
            self.client.write_files(&self.session_id, archive, signal).await
        })
    }

    /// Runs `command` and waits for it (`cmd` with `wait: true`, NDJSON logs).
    fn exec<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        Box::pin(self.client.run_command(&self.session_id, command, signal))
    }

    /// Runs `command`, handing its output to `on_output` live (`cmd` with `wait: true`: the
    /// NDJSON stream is read as it arrives).
    fn exec_streaming<'a>(
        &'a self,
        command: &'a Command,
        on_output: &'a mut dyn FnMut(OutputStream, &str),
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        Box::pin(self.client.run_command_streaming(&self.session_id, command, on_output, signal))
    }

    /// Reads a file (`fs/read`) of at most `max_bytes`.
    fn read_file<'a>(
        &'a self,
        path: &'a str,
        max_bytes: u64,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<FileRead>> {
        Box::pin(self.client.read_file(&self.session_id, path, max_bytes, signal))
    }

    /// Starts `command` detached; answers its id (`cmdId`).
    fn spawn<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<String>> {
        Box::pin(self.client.start_command(&self.session_id, command, signal))
    }

    /// Starts a command with a stdin pipe (`attachStdin: true` on a detached `cmd`).
    fn spawn_with_stdin<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<String>> {
        Box::pin(self.client.start_command_with_stdin(&self.session_id, command, signal))
    }

    /// Writes to (and with `close` closes) command `id`'s stdin (`cmd/{id}/stdin`).
    fn write_stdin<'a>(
        &'a self,
        id: &'a str,
        data: &'a [u8],
        close: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(self.client.write_stdin(&self.session_id, id, data, close, signal))
    }

    /// Looks command `id` up (`GET cmd/{id}`).
    fn command<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move { self.client.get_command(&self.session_id, id, signal).await.map(|_| ()) })
    }

    /// Extends the session's deadline by `ms` (`extend-timeout`).
    fn extend_timeout<'a>(&'a self, ms: u64, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(self.client.extend_timeout(&self.session_id, ms, signal))
    }

    /// Follows the output of command `id` from its start (`cmd/{id}/logs`).
    fn logs<'a>(
        &'a self,
        id: &'a str,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn LogStream>>> {
        Box::pin(async move {
            Ok(Box::new(self.client.command_logs(&self.session_id, id, signal).await?) as Box<dyn LogStream>)
        })
    }

    /// Waits for command `id` to exit; its exit code (`cmd/{id}?wait=true`).
    fn wait<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<i32>> {
        Box::pin(self.client.wait_command(&self.session_id, id, signal))
    }

    /// Sends signal number `signal_number` to command `id` (`cmd/{id}/kill`).
    fn kill<'a>(
        &'a self,
        id: &'a str,
        signal_number: u8,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(self.client.kill_command(&self.session_id, id, signal_number, signal))
    }

    /// Whether `path` exists: `test -e` through a Command, as the SDK's `fs.exists` does (§7.4).
    fn exists<'a>(&'a self, path: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let outcome = self.exec(&file_command("test", &["-e", path]), signal).await?;
            match outcome.exit_code {
                0 => Ok(true),
                1 => Ok(false),
                _ => Err(file_failure(vite_hub_sandbox_core::error::Operation::Read, &outcome.stderr, self.provider())),
            }
        })
    }

    /// Creates a directory: `fs/mkdir` (one level), or `mkdir -p` through a Command when
    /// `recursive`, as the SDK does (§7.4).
    fn mkdir<'a>(
        &'a self,
        path: &'a str,
        recursive: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if !recursive {
                // The provider refuses a missing parent or an existing path (400): the caller's
                // path, not a failure of the Box.
                return self.client.mkdir(&self.session_id, path, signal).await.map_err(|error| match error.upstream_status() {
                    Some(400 | 404 | 409) => Error::new(
                        vite_hub_sandbox_core::error::ErrorCode::InvalidArgument,
                        format!("{}; mkdir(path) without {{ recursive: true }} creates one directory whose parent exists", error.message()),
                    )
                    .with_provider(self.provider())
                    .with_operation(vite_hub_sandbox_core::error::Operation::Mkdir)
                    .with_status(error.upstream_status().unwrap_or(400)),
                    _ => error,
                });
            }
            let outcome = self.exec(&file_command("mkdir", &["-p", "--", path]), signal).await?;
            if outcome.exit_code != 0 {
                return Err(file_failure(
                    vite_hub_sandbox_core::error::Operation::Mkdir,
                    &outcome.stderr,
                    self.provider(),
                ));
            }
            Ok(())
        })
    }

    /// Removes a file (or, with `recursive`, a directory tree): `rm -f` / `rm -rf` through a
    /// Command, as the SDK's `fs.rm` does (§7.4). A missing path is no error.
    fn remove<'a>(
        &'a self,
        path: &'a str,
        recursive: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let flags = if recursive { "-rf" } else { "-f" };
            let outcome = self.exec(&file_command("rm", &[flags, "--", path]), signal).await?;
            if outcome.exit_code != 0 {
                // A directory without `recursive` is the caller's argument, not a Box failure.
                if !recursive && self.exec(&file_command("test", &["-d", path]), signal).await?.exit_code == 0 {
                    return Err(Error::new(
                        vite_hub_sandbox_core::error::ErrorCode::InvalidArgument,
                        format!("remove({path}): it is a directory; pass {{ recursive: true }} to remove it and its contents", path = vite_hub_sandbox_core::error::quoted(path)),
                    )
                    .with_provider(self.provider())
                    .with_operation(vite_hub_sandbox_core::error::Operation::Remove));
                }
                return Err(file_failure(
                    vite_hub_sandbox_core::error::Operation::Remove,
                    &outcome.stderr,
                    self.provider(),
                ));
            }
            Ok(())
        })
    }

    /// Stops the session (`stop`).
    fn close(&self) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(self.client.stop_session(&self.session_id, None))
    }
}

/// A short file Command (`test`, `mkdir`, `rm`): 60 s at most, 4 KiB of stderr kept.
fn file_command(program: &str, args: &[&str]) -> Command {
    Command {
        program: program.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        timeout_ms: Some(60_000),
        max_stderr_bytes: 4096,
        ..Command::default()
    }
}

/// `SANDBOX_EXECUTION_ERROR`: a file Command failed in the Box (`operation` names the call).
fn file_failure(operation: vite_hub_sandbox_core::error::Operation, stderr: &str, provider: ProviderKind) -> Error {
    let verb = if operation == vite_hub_sandbox_core::error::Operation::Read { "exists" } else { operation.as_str() };
    Error::new(
        vite_hub_sandbox_core::error::ErrorCode::ExecutionError,
        format!("{verb} failed in the Box: {}", stderr.trim()),
    )
    .with_provider(provider)
    .with_operation(operation)
}
