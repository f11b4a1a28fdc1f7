//! The Box seam (DESIGN.md §3, layer 2): [`Provider`] opens Boxes, [`BoxSession`] is one live
//! Box: write files (one batch), run a Command and wait for it (or stream its output), start one
//! and follow it ([`LogStream`]), read a file, test, create and remove paths; close.
//!
//! The Run, the public Session API and the Agent tool build on these two traits only; each
//! provider folder implements them, and [`super::build`] is the one place that picks one. An
//! operation a provider does not have keeps its default here, which fails with
//! `SANDBOX_NOT_SUPPORTED` (or answers "none" for a query), so a provider implements only what it
//! has.
//!
//! Futures are boxed and not `Send` ([`LocalBoxFuture`]): the wasm runtime is single-threaded.

use futures::future::LocalBoxFuture;
use web_sys::AbortSignal;

use super::output::{LogStream, OutputStream};
use vite_hub_sandbox_core::command::{Command, CommandOutcome};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider::local::options::InProcessHost;
use vite_hub_sandbox_core::provider::vercel::interactive::{InteractiveRequest, InteractiveSessionResponse};
use vite_hub_sandbox_core::session::ExecutionAuthority;
use vite_hub_sandbox_core::transfer::box_file::BoxFile;

/// Who supplies a Box: what [`Provider::kind`] and [`BoxSession::provider`] answer.
use vite_hub_sandbox_core::provider_kind::ProviderKind;

/// What a Run asks of a provider when it opens a Box.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BoxSpec {
    /// Box lifetime in ms (the provider stops the Box after that); `None` uses the provider's
    /// default.
    pub lifetime_ms: Option<u64>,
    /// The Definition's name (readable Box ids; empty when there is none).
    pub name: String,
    /// `runSandbox`'s `sandboxId`: the kept Box to use (Cloudflare; other providers ignore it).
    pub sandbox_id: Option<String>,
    /// The prepared project to start from (a Vercel or local-host snapshot id); a provider
    /// without prepared projects ignores it. See [`crate::run::prepared`].
    pub prepared: Option<String>,
    /// The name under which this Box's own snapshot can be found again
    /// (`vitehub-prepared-<install digest>`), when the Run means to prepare a project from it.
    pub prepared_name: Option<String>,
    /// The Box is a Run's, whose first request is its staging (Cloudflare: no `mkdir` of the
    /// cwd at open; `BoxSession::stage_files` writes it). `false` for a Session.
    pub staged_first: bool,
    /// The Box ports to expose (a Session's `ports`; checked, distinct); only a provider whose
    /// [`Provider::exposes_ports`] is `true` is given any.
    pub ports: Vec<u16>,
    /// A Session's snapshot to start from (`openSandboxSession({ snapshotId })`). Unlike
    /// `prepared`, a snapshot the provider does not have is an error (`SANDBOX_NOT_FOUND`), never
    /// an empty Box; on the local Box host only a Session's snapshot is taken, never a prepared
    /// project's.
    pub snapshot: Option<String>,
}

/// A Session's snapshot (vercel-sandbox-protocol.md §6.5): `snapshot()`, `listSandboxSnapshots()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The snapshot id (`snapshotId` in JS).
    pub id: String,
    /// The session (Box) it was taken of.
    pub source_session_id: String,
    /// Bytes of its files.
    pub size_bytes: u64,
    /// When it was taken, ms since the Unix epoch.
    pub created_at: u64,
    /// When the provider removes it, ms since the Unix epoch; `None`: never (or not said).
    pub expires_at: Option<u64>,
}

/// How a Box's files began, for the prepared-project cache ([`crate::run::prepared`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreparedStart {
    /// An empty Box (no prepared project asked for).
    Empty,
    /// From the prepared project asked for.
    Restored,
    /// A prepared project was asked for but the provider no longer has it: an empty Box.
    Missing,
}

/// What [`BoxSession::prepare`] made of a Box whose install was just sealed, before any handler
/// ran in it ([`crate::run::prepared::seal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seal {
    /// The prepared project is kept under this id (a snapshot) and the Box was stopped: the Run
    /// goes on in a Box opened from it (Vercel, the local Box host).
    Snapshot(String),
    /// The provider read the installed trees at once and holds them in the isolate; the Box goes
    /// on running (the Run's handler runs in it), and [`BoxSession::keep_held`] keeps what is
    /// held after the Response (Cloudflare: packed, then written to its store).
    Held,
}

/// What a bounded file read of a Box found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// No such file.
    Missing,
    /// The whole file.
    Bytes(Vec<u8>),
    /// The file is larger than the reader's cap: its size in bytes (or at least this many).
    TooLarge(u64),
}

/// What starting the isolate's in-process local Box host cost, for the Run that started it (ms;
/// the `host` and `connect` phases of `Server-Timing`, see [`crate::server_timing`]).
#[derive(Debug, Clone, Copy)]
pub struct HostStart {
    /// From asking for the host until it listened (`host`).
    pub host_ms: f64,
    /// The first request to it (`connect`), when the starter measured one.
    pub connect_ms: Option<f64>,
}

/// One Box a provider lists (`listSandboxSessions()`): the id `openSandboxSession({ id })`
/// reattaches with, its status in the provider's words (`running`, `stopped`, …), when it was
/// created and when its lifetime ends (ms since the Unix epoch, where the provider says).
#[derive(Debug, Clone, PartialEq)]
pub struct BoxListing {
    /// The reattach id (Vercel protocol: the sandbox name).
    pub id: String,
    /// The provider's status of the Box.
    pub status: String,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: Option<f64>,
    /// End of the lifetime, ms since the Unix epoch (running Boxes).
    pub expires_at_ms: Option<f64>,
}

/// A prepared project (snapshot) a provider keeps: its id, its size in bytes and when it was
/// created (ms since the Unix epoch).
pub type PreparedProject = (String, u64, u64);

/// `SANDBOX_NOT_SUPPORTED` for a provider without prepared projects (snapshots).
fn no_prepared_projects<'a, T: 'a>(provider: ProviderKind) -> LocalBoxFuture<'a, Result<T>> {
    let message = format!("The {provider} provider keeps no prepared projects.");
    Box::pin(std::future::ready(Err(Error::new(ErrorCode::NotSupported, message))))
}

/// `SANDBOX_NOT_SUPPORTED` naming `provider` and `operation`, with `message`.
fn not_supported<'a, T: 'a>(
    provider: ProviderKind,
    operation: Operation,
    message: String,
) -> LocalBoxFuture<'a, Result<T>> {
    Box::pin(std::future::ready(Err(Error::new(ErrorCode::NotSupported, message)
        .with_provider(provider)
        .with_operation(operation))))
}

/// `SANDBOX_NOT_SUPPORTED` for a Box operation `operation` that `provider`'s Boxes do not have.
fn unsupported<'a, T: 'a>(provider: ProviderKind, operation: Operation) -> LocalBoxFuture<'a, Result<T>> {
    let message = format!("the {provider} provider does not support {} on a Box", operation.as_str());
    not_supported(provider, operation, message)
}

/// `SANDBOX_NOT_SUPPORTED` for a Session snapshot or fork operation (`operation` `snapshot` or
/// `fork`) of a provider without them (Cloudflare: its SDK's backups need an R2 bucket and run in
/// its Durable Object, not through the container API this provider speaks).
fn no_session_snapshots<'a, T: 'a>(provider: ProviderKind, operation: Operation) -> LocalBoxFuture<'a, Result<T>> {
    let message = format!(
        "the {provider} provider does not support {} of a Session: its container API has no snapshots",
        operation.as_str()
    );
    not_supported(provider, operation, message)
}

/// A provider able to open Boxes, built once per `configureSandbox` by [`super::build`] from
/// resolved [`super::ProviderSettings`] and the isolate's fetch. Building it sends nothing.
pub trait Provider: std::fmt::Debug {
    /// The provider reported in errors and Responses.
    fn kind(&self) -> ProviderKind;

    /// Makes sure the provider can take requests (the local provider starts the isolate's
    /// in-process Box host on first use). Returns what starting it cost, for the one call that
    /// started it (`None` for every other call and provider).
    ///
    /// # Errors
    /// `SANDBOX_PROVIDER_REQUIRED` when no local host is configured and none can be started
    /// here; `SANDBOX_PROVIDER_UNAVAILABLE` when starting it failed.
    fn ensure_ready(&self) -> LocalBoxFuture<'_, Result<Option<HostStart>>> {
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Whether this provider's Boxes are on the isolate's in-process local Box host (provider
    /// `local` without `local.baseUrl`), which [`Provider::ensure_ready`] starts. Default `false`.
    fn uses_in_process_host(&self) -> bool {
        false
    }

    /// The options (`local.isolation`, `local.parked`) an in-process local Box host started for
    /// this provider applies; `None` for a provider other than `local`.
    fn in_process_host(&self) -> Option<InProcessHost> {
        None
    }

    /// Whether this provider keeps prepared projects (snapshots; see [`crate::run::prepared`]).
    /// Default `false`.
    fn prepares(&self) -> bool {
        false
    }

    /// The prepared projects the provider keeps for this project, of the Box named `name` when
    /// given, newest first, at most 100 (one list request).
    ///
    /// # Errors
    /// Those of the list request; `SANDBOX_NOT_SUPPORTED` (the default) for a provider that keeps
    /// none.
    fn list_prepared<'a>(&'a self, name: Option<&'a str>) -> LocalBoxFuture<'a, Result<Vec<PreparedProject>>> {
        let _ = name;
        no_prepared_projects(self.kind())
    }

    /// Deletes prepared project `id`; `false` when it was already gone.
    ///
    /// # Errors
    /// Those of the delete request; `SANDBOX_NOT_SUPPORTED` (the default) for a provider that keeps
    /// none.
    fn drop_prepared<'a>(&'a self, id: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        let _ = id;
        no_prepared_projects(self.kind())
    }

    /// What a Box of this provider can reach (contract §2), before any Box exists.
    ///
    /// # Errors
    /// For providers that ask a host: those of [`Provider::ensure_ready`],
    /// `SANDBOX_TRANSPORT_ERROR` for a failed request or a report that is not of the contract's
    /// shape.
    fn execution_authority<'a>(
        &'a self,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>>;

    /// The executionAuthority of `session`, a Box this provider opened. Default: the provider's
    /// ([`Provider::execution_authority`], no signal).
    ///
    /// # Errors
    /// Those of [`Provider::execution_authority`]; `SANDBOX_TRANSPORT_ERROR` when a provider that
    /// reports it per Box reported none or a malformed one.
    fn box_execution_authority<'a>(
        &'a self,
        session: &'a dyn BoxSession,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        let _ = session;
        self.execution_authority(None)
    }

    /// Whether a Box of this provider can be opened with [`BoxSpec::ports`] and answer
    /// [`BoxSession::port_url`] (Vercel and the local Box host: routes; the default `false`:
    /// `openSandboxSession({ ports })` answers `SANDBOX_NOT_SUPPORTED`).
    fn exposes_ports(&self) -> bool {
        false
    }

    /// Whether the provider keeps the Box of a `sandboxId` itself (Cloudflare: one Durable Object
    /// per id, its Runs serialized by the provider). For the others (the default, `false`) the
    /// Run layer keeps it ([`crate::run::lease`]).
    fn keeps_boxes(&self) -> bool {
        false
    }

    /// Closes the kept Box of `sandbox_id` when the provider keeps it itself
    /// ([`Provider::keeps_boxes`]); `Ok(false)` (the default) for a provider that does not.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for an id the provider refuses; those of the close.
    fn close_kept_box<'a>(&'a self, sandbox_id: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        let _ = sandbox_id;
        Box::pin(std::future::ready(Ok(false)))
    }

    /// Reattaches to the running Box `id` (the id a Session of this provider reports, from any
    /// process with the same provider config). Vercel protocol: `GET /v2/sandboxes/{name}`.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_STATE` (409) for a Box that is no longer running;
    /// `SANDBOX_TRANSPORT_ERROR` with `details.status` 404 for an id the provider does not
    /// know; `SANDBOX_NOT_SUPPORTED` (the default).
    fn attach<'a>(
        &'a self,
        id: &'a str,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        let _ = (id, signal);
        unsupported(self.kind(), Operation::Attach)
    }

    /// The provider's Boxes, newest first (one page of at most 100). Vercel protocol:
    /// `GET /v2/sandboxes`.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn list_boxes<'a>(&'a self, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Vec<BoxListing>>> {
        let _ = signal;
        unsupported(self.kind(), Operation::ListSessions)
    }

    /// The Session snapshots this provider keeps for the project, newest first, at most 100 (one
    /// list request: Vercel protocol `GET /v2/sandboxes/snapshots`; the local Box host holds it to
    /// Session snapshots, `?kind=session`).
    ///
    /// # Errors
    /// Those of the list request; `SANDBOX_NOT_SUPPORTED` (the default; `operation` `snapshot`).
    fn list_snapshots<'a>(&'a self, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Vec<SnapshotInfo>>> {
        let _ = signal;
        no_session_snapshots(self.kind(), Operation::Snapshot)
    }

    /// Deletes Session snapshot `id`; `false` when the provider has none of that id (404).
    ///
    /// # Errors
    /// Those of the delete request; `SANDBOX_NOT_SUPPORTED` (the default; `operation` `snapshot`).
    fn delete_snapshot<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<bool>> {
        let _ = (id, signal);
        no_session_snapshots(self.kind(), Operation::Snapshot)
    }

    /// Opens a new Box forked from the running Box (sandbox) named `source`, as `spec` asks of
    /// its lifetime (Vercel protocol `POST /v2/sandboxes/{name}/fork`, §7.1).
    ///
    /// # Errors
    /// Those of the fork request (`SANDBOX_NOT_FOUND` for an unknown source); `SANDBOX_NOT_SUPPORTED`
    /// (the default; `operation` `fork`).
    fn fork<'a>(
        &'a self,
        source: &'a str,
        spec: &'a BoxSpec,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        let _ = (source, spec, signal);
        no_session_snapshots(self.kind(), Operation::Fork)
    }

    /// Opens a new Box as `spec` asks (`signal` aborts the opening).
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` or `SANDBOX_PROVIDER_UNAVAILABLE` when the provider refuses or
    /// cannot be reached; `SANDBOX_INVALID_ARGUMENT` for a `sandboxId` the provider refuses; those
    /// of [`Provider::ensure_ready`].
    fn open<'a>(
        &'a self,
        spec: &'a BoxSpec,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>>;
}

/// One live Box, whatever the provider. Paths are absolute Box paths unless a method says
/// otherwise; `signal` aborts the request (the operation fails with the provider's transport
/// error).
pub trait BoxSession: std::fmt::Debug {
    /// The provider that supplied this Box (for errors and Responses).
    fn provider(&self) -> ProviderKind;

    /// The provider's id of this Box (Vercel: the sandbox name; Cloudflare: the Durable Object name).
    fn id(&self) -> &str;

    /// The Box working directory (absolute Box path), e.g. `/vercel/sandbox`.
    fn cwd(&self) -> &str;

    /// The work directory of a Box on the local Box host (the local provider, or Cloudflare in
    /// local development), to which Session file helpers are held
    /// ([`vite_hub_sandbox_core::session::check_local_box_path`]); `None` (the default) on a real provider.
    fn local_box_host_work_dir(&self) -> Option<&str> {
        None
    }

    /// The root of a Box the provider keeps across Runs (Cloudflare with `sandboxId`: the Runs
    /// work in directories below it); `None` (the default) otherwise.
    fn kept_root(&self) -> Option<&str> {
        None
    }

    /// Whether the provider stops this Box once its lifetime ([`BoxSpec::lifetime_ms`]) ends
    /// (Vercel and the local Box host do). Default `false`: the Box has no lifetime.
    fn stops_at_lifetime(&self) -> bool {
        false
    }

    /// Whether `error`, from a request to this Box, says the Box itself is gone (stopped, or
    /// unknown to the provider), so a kept Box can be replaced. Default `false`.
    fn vanished(&self, _error: &Error) -> bool {
        false
    }

    /// The provider's own report of the Box's executionAuthority, when it gives one (the local
    /// Box host does); `None` (the default) otherwise.
    fn reported_execution_authority(&self) -> Option<&serde_json::Value> {
        None
    }

    /// How the Box's files began: empty (the default), from the prepared project asked for, or
    /// empty because that prepared project was gone.
    fn prepared(&self) -> PreparedStart {
        PreparedStart::Empty
    }

    /// Makes the prepared project of a Box whose install was just sealed (only the installed
    /// trees left, [`vite_hub_sandbox_core::run::install::sealed_install`]), before any handler
    /// runs in it: a snapshot that stops the Box ([`Seal::Snapshot`]), or the trees read and held
    /// in the isolate with the Box left running ([`Seal::Held`]). Either way nothing the
    /// handler does reaches what is kept.
    ///
    /// # Errors
    /// The provider's snapshot or read errors (the Box may be stopped then); `SANDBOX_NOT_SUPPORTED`
    /// (the default) for a provider without prepared projects (the Box is not stopped then).
    fn prepare<'a>(&'a self, _signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Seal>> {
        no_prepared_projects(self.provider())
    }

    /// The name a fork of this Box gives as its source ([`Provider::fork`]): the Vercel sandbox
    /// name; `None` (the default) for a provider without forks.
    fn sandbox_name(&self) -> Option<&str> {
        None
    }

    /// Snapshots the Box's files, which stops it (Vercel protocol `POST …/snapshot`, body
    /// `{ expiration }` when `expiration_ms` is given, 0 = never; §7.5).
    ///
    /// # Errors
    /// Those of the snapshot request (the Box may be stopped then); `SANDBOX_NOT_SUPPORTED` (the
    /// default; `operation` `snapshot`).
    fn snapshot<'a>(
        &'a self,
        expiration_ms: Option<u64>,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<SnapshotInfo>> {
        let _ = (expiration_ms, signal);
        no_session_snapshots(self.provider(), Operation::Snapshot)
    }

    /// After the Response of a Run whose [`BoxSession::prepare`] answered [`Seal::Held`]: keeps
    /// what is held as the prepared project (one write; the caller checked that
    /// `dropPreparedProject` did not forget the digest meanwhile); its id. The Box is not
    /// stopped here.
    ///
    /// # Errors
    /// `SANDBOX_NOT_SUPPORTED` (the default, or nothing held); the provider's write errors.
    fn keep_held(&self) -> LocalBoxFuture<'_, Result<String>> {
        no_prepared_projects(self.provider())
    }

    /// Writes `files` (paths relative to the Box root `/`) in one batch.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a path that fails
    /// [`vite_hub_sandbox_core::transfer::box_file::validate_relative_path`]; transport errors of the provider.
    fn write_files<'a>(
        &'a self,
        files: &'a [BoxFile],
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>>;

    /// Writes a Run's `files` (paths relative to `/`, below the Box cwd) before its first
    /// Command. Default: [`BoxSession::write_files`]. A provider may stage them for the next
    /// [`BoxSession::exec`] or [`BoxSession::exec_streaming`] to unpack instead (Cloudflare: one
    /// archive, one request).
    ///
    /// # Errors
    /// Those of [`BoxSession::write_files`]; where the next Command unpacks, a failed unpacking is
    /// that Command's `SANDBOX_EXECUTION_ERROR`.
    fn stage_files<'a>(
        &'a self,
        files: &'a [BoxFile],
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        self.write_files(files, signal)
    }

    /// Runs a Command and waits for its exit, keeping the tail of its output per the Command's
    /// caps.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_TIMEOUT` when the Command's own timeout killed
    /// it (where the provider applies it).
    fn exec<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>>;

    /// Runs a Command and waits for its exit like [`BoxSession::exec`], handing each piece of its
    /// stdout/stderr to `on_output` as the provider delivers it, in order within each stream.
    ///
    /// # Errors
    /// Those of [`BoxSession::exec`]; a provider that does not apply the Command's own timeout
    /// here (Cloudflare) needs `signal` to carry the deadline.
    fn exec_streaming<'a>(
        &'a self,
        command: &'a Command,
        on_output: &'a mut dyn FnMut(OutputStream, &str),
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>>;

    /// Reads a file, at most `max_bytes` of it ([`FileRead::TooLarge`] beyond, checked by size
    /// before the content is buffered where the provider says the size).
    ///
    /// # Errors
    /// Transport errors of the provider.
    fn read_file<'a>(
        &'a self,
        path: &'a str,
        max_bytes: u64,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<FileRead>>;

    /// Starts a Command without waiting for it; answers its id (for [`BoxSession::logs`],
    /// [`BoxSession::wait`], [`BoxSession::kill`]).
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn spawn<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<String>> {
        let _ = (command, signal);
        unsupported(self.provider(), Operation::Exec)
    }

    /// Starts a Command without waiting, with a stdin pipe written by
    /// [`BoxSession::write_stdin`]; its id. Vercel protocol: `attachStdin: true` on `POST …/cmd`.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default; Cloudflare's
    /// container API has no stdin for processes).
    fn spawn_with_stdin<'a>(
        &'a self,
        command: &'a Command,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<String>> {
        let _ = (command, signal);
        unsupported(self.provider(), Operation::Stdin)
    }

    /// Writes `data` to the stdin of Command `id` (started by [`BoxSession::spawn_with_stdin`]),
    /// in order, then closes it when `close`. Resolves once the Command's pipe took the bytes.
    ///
    /// # Errors
    /// Transport errors of the provider (400 for a Command without an open stdin, 404 once it
    /// exited, 504 when it did not read within 30 s); `SANDBOX_NOT_SUPPORTED` (the default).
    fn write_stdin<'a>(
        &'a self,
        id: &'a str,
        data: &'a [u8],
        close: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        let _ = (id, data, close, signal);
        unsupported(self.provider(), Operation::Stdin)
    }

    /// Looks Command `id` of this Box up: `Ok` when the provider knows it, running or finished.
    /// Vercel protocol: `GET …/cmd/{cmdId}`.
    ///
    /// # Errors
    /// Transport errors of the provider (404 for an unknown id); `SANDBOX_NOT_SUPPORTED` (the
    /// default).
    fn command<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        let _ = (id, signal);
        unsupported(self.provider(), Operation::Exec)
    }

    /// The URL that reaches Box port `port` (declared in [`BoxSpec::ports`]): the `url` of its
    /// route in the create answer (Vercel protocol §6.3). Sends nothing.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a port not declared at open; `SANDBOX_NOT_SUPPORTED` (the
    /// default, `details.operation` `ports`).
    fn port_url(&self, port: u16) -> Result<String> {
        let _ = port;
        Err(Error::new(
            ErrorCode::NotSupported,
            format!("the {} provider does not support ports on a Box", self.provider()),
        )
        .with_provider(self.provider())
        .with_operation(Operation::Ports))
    }

    /// Moves the end of the Box's lifetime `ms` (ms) later. Vercel protocol: `POST
    /// …/extend-timeout` `{ duration }`.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default; a Cloudflare Box
    /// has no lifetime, it sleeps after `sleepAfter` of inactivity).
    fn extend_timeout<'a>(&'a self, ms: u64, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        let _ = (ms, signal);
        unsupported(self.provider(), Operation::ExtendTimeout)
    }

    /// Changes the network of the Commands started from now on to `policy` (the shapes of the
    /// config's `networkPolicy`); Commands already running keep theirs. Answers the Box's
    /// executionAuthority under the new policy. Vercel protocol: `POST …/network-policy`.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a policy the provider cannot enforce; transport errors of
    /// the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn update_network_policy<'a>(
        &'a self,
        policy: &'a serde_json::Value,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        let _ = (policy, signal);
        unsupported(self.provider(), Operation::UpdateNetworkPolicy)
    }

    /// When the Box lifetime ends, in ms since the Unix epoch, as the provider reported it when
    /// the Box was reattached ([`Provider::attach`]); `None` (the default) when it did not say.
    fn reported_expires_at_ms(&self) -> Option<f64> {
        None
    }

    /// Opens an interactive terminal of the Box: `{ url, token }` of a WebSocket PTY
    /// (`src/api/session/interactive.rs`). Vercel protocol: `POST …/interactive`.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default; Cloudflare's
    /// terminal is a Worker route, `sandbox.terminal(request)`, not a URL).
    fn open_interactive<'a>(
        &'a self,
        request: &'a InteractiveRequest,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<InteractiveSessionResponse>> {
        let _ = (request, signal);
        unsupported(self.provider(), Operation::OpenInteractive)
    }

    /// Follows the output of Command `id` from its start.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn logs<'a>(
        &'a self,
        id: &'a str,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn LogStream>>> {
        let _ = (id, signal);
        unsupported(self.provider(), Operation::Exec)
    }

    /// Waits for Command `id` to exit; its exit code.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn wait<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<i32>> {
        let _ = (id, signal);
        unsupported(self.provider(), Operation::Exec)
    }

    /// Sends signal number `signal_number` (15 SIGTERM, 9 SIGKILL, …) to Command `id`.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` for a signal the provider cannot
    /// send, and (the default) for a provider without it.
    fn kill<'a>(
        &'a self,
        id: &'a str,
        signal_number: u8,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        let _ = (id, signal_number, signal);
        unsupported(self.provider(), Operation::Exec)
    }

    /// Whether a path exists.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn exists<'a>(&'a self, path: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<bool>> {
        let _ = (path, signal);
        unsupported(self.provider(), Operation::Read)
    }

    /// Creates a directory; with `recursive`, its parents too and no error when it exists.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn mkdir<'a>(
        &'a self,
        path: &'a str,
        recursive: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        let _ = (path, recursive, signal);
        unsupported(self.provider(), Operation::Mkdir)
    }

    /// Removes a file, or with `recursive` a directory tree. A missing path is no error.
    ///
    /// # Errors
    /// Transport errors of the provider; `SANDBOX_NOT_SUPPORTED` (the default).
    fn remove<'a>(
        &'a self,
        path: &'a str,
        recursive: bool,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<()>> {
        let _ = (path, recursive, signal);
        unsupported(self.provider(), Operation::Remove)
    }

    /// Stops the Box and everything running in it.
    ///
    /// # Errors
    /// Transport errors of the provider (the Box may still be running then).
    fn close(&self) -> LocalBoxFuture<'_, Result<()>>;
}

#[cfg(test)]
mod tests;
