//! Prepared projects: an installed project kept by the provider per install digest
//! ([`vite_hub_sandbox_core::definition::InstallPlan::digest`]), so a Run whose dependencies were installed before
//! starts from them instead of installing again (DESIGN.md §7, §9: a prepared Run makes ≤ 3
//! requests before its Response: create-from-prepared, write, exec).
//!
//! Vercel and the local Box host keep them as snapshots (protocol note §7.5): the first Run of a
//! digest installs, empties its Box down to the installed `node_modules` trees and snapshots it
//! (which stops the Box) before its handler runs, then goes on in a Box created from that
//! snapshot ([`seal`]): what a handler does, and a process it leaves behind, never reaches the
//! snapshot. Later Runs create their Box from that snapshot. The isolate remembers the snapshot id per digest; a Box created under the name
//! `vitehub-prepared-<digest>` lets a new isolate find the snapshot again with one list request.
//!
//! Rules:
//! - one Run per digest and isolate prepares (the *owner*); Runs of the same digest that start
//!   meanwhile wait for it (polling every [`WAIT_POLL_MS`] on their own timer, at most their
//!   Definition timeout) and then start from its snapshot; an owner that fails hands over to the
//!   next Run, which installs itself;
//! - a snapshot the provider no longer has (404/410) is no failure: the Box is created empty, the
//!   Run installs (`Server-Timing: install;desc="fresh-fallback"`) and prepares again;
//! - Cloudflare keeps no snapshots: its owner's Box packs its sealed install and the isolate reads
//!   the archive at once, before the handler runs ([`Seal::Held`]); the Run's handler then runs in
//!   that same Box, and after the Response the archive is written to the store of the digest
//!   ([`Prepared::keep_held`], not when `dropPreparedProject` forgot the digest meanwhile). Its
//!   later Runs start from the store. Same rule as a snapshot: what the handler does never
//!   reaches what is kept, so no fingerprint is taken after the Response.
//!
//! A kept Box (`sandboxId`, every provider) keeps its prepared projects itself, as directories
//! `<kept root>/.vite-hub-prepared/<install digest>/` ([`vite_hub_sandbox_core::run::install::kept_dir`]): the install step of a Run
//! there is one Command ([`vite_hub_sandbox_core::run::install::kept_install`]) that copies the directory's tree into
//! the Run's project (each Run gets its own copy: a reflink where the file system has them, else
//! a full copy, so one Run's writes into its `node_modules` never reach another Run), or, when
//! there is none, the isolate has no fingerprint of it, or the copy's fingerprint differs from the
//! one the isolate recorded when it was kept ([`kept_fingerprint`]: held in memory, where no Run
//! can write, unlike the kept directory), installs and keeps the installed trees there (copied
//! and fingerprinted before the handler runs; a later handler that rewrites them only makes the
//! next Run install). A Box keeps at most [`vite_hub_sandbox_core::run::install::KEPT_PER_BOX`] digests, the least
//! recently used removed first.
//! Runs on one id take turns, so the first Run of a digest installs and the next ones copy.

use std::cell::RefCell;
use std::rc::Rc;

use crate::http::deadline::stop_within;
use crate::provider::{BoxSession, BoxSpec, PreparedStart, Provider, Seal};
use crate::run::events::RunEvents;
use crate::run::lease::{Lease, RELEASE_DEADLINE_MS};
use crate::run::signal::RunSignal;
use crate::run::stage::{box_path, project_files};
use crate::server_timing::ServerTiming;
use vite_hub_sandbox_core::definition::{Definition, InstallPlan};
use vite_hub_sandbox_core::error::{ErrorCode, Operation, Result};
use vite_hub_sandbox_core::harness::paths;
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::run::install::{install_command, install_failure, sealed, sealed_install};

/// How often a Run waiting for another Run's prepared project looks again (ms).
pub const WAIT_POLL_MS: f64 = 50.0;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    /// A Run of this isolate is preparing it.
    Preparing,
    /// The provider's id of the prepared project; under a kept tree's key ([`kept_key`]), its
    /// fingerprint.
    Ready(String),
}

thread_local! {
    /// `(<provider>:<install digest>, entry)`, and `(kept\0<kept id>\0<dir>,
    /// Ready(fingerprint))`: a few per app, so a plain list.
    static ENTRIES: RefCell<Vec<(String, Entry)>> = const { RefCell::new(Vec::new()) };
}

fn entry(key: &str) -> Option<Entry> {
    ENTRIES.with(|entries| entries.borrow().iter().find(|(k, _)| k == key).map(|(_, e)| e.clone()))
}

fn set(key: &str, value: Option<Entry>) {
    ENTRIES.with(|entries| {
        let mut entries = entries.borrow_mut();
        entries.retain(|(k, _)| k != key);
        if let Some(value) = value {
            entries.push((key.to_owned(), value));
        }
    });
}

/// The key of a kept tree's fingerprint in the isolate's list: who keeps it and its directory.
fn kept_key(kept_id: &str, dir: &str) -> String {
    ["kept\0", kept_id, "\0", dir].concat()
}

/// The fingerprint (`crates/core/src/harness/fingerprint.cjs`'s rule) of the tree the kept Box of `kept_id`
/// ([`crate::run::lease::Lease::kept_id`]) keeps in `dir` ([`vite_hub_sandbox_core::run::install::kept_dir`]), as
/// recorded when it was kept: in the isolate's memory, where no Run can write (a Run can write the
/// kept directory itself). `None` when this isolate kept none there (e.g. after a restart): the
/// Run installs and keeps it anew. One entry per id and digest (a reopened Box of the id replaces
/// it when it installs; a tree equal to the recorded fingerprint is the genuine install).
pub fn kept_fingerprint(kept_id: &str, dir: &str) -> Option<String> {
    match entry(&kept_key(kept_id, dir)) {
        Some(Entry::Ready(fingerprint)) => Some(fingerprint),
        _ => None,
    }
}

/// Records (`Some`) or forgets (`None`: nothing trusted is kept there) the fingerprint of the tree
/// in `dir` of the kept Box of `kept_id`.
pub fn record_kept_fingerprint(kept_id: &str, dir: &str, fingerprint: Option<String>) {
    set(&kept_key(kept_id, dir), fingerprint.map(Entry::Ready));
}

/// The sandbox name whose snapshots are the prepared project of `digest` (Cloudflare: the name
/// of its store): `vitehub-prepared-<first 40 hex chars of the install digest>`.
pub fn prepared_name(digest: &str) -> String {
    vite_hub_sandbox_core::run::install::prepared_name(digest)
}

/// Forgets what the isolate remembers of `digest` (every provider); the ids it knew.
pub fn forget(digest: &str) -> Vec<String> {
    let suffix = format!(":{digest}");
    ENTRIES.with(|entries| {
        let mut entries = entries.borrow_mut();
        let mut ids = Vec::new();
        entries.retain(|(k, e)| {
            if !k.ends_with(&suffix) {
                return true;
            }
            if let Entry::Ready(id) = e {
                ids.push(id.clone());
            }
            false
        });
        ids
    })
}

/// The id of the prepared project of `digest` on `provider` when this isolate knows it ready
/// (what a warm pool opens its Boxes from, [`crate::run::warm_pool`]); `None` otherwise.
pub fn ready_id(provider: &dyn Provider, digest: &str) -> Option<String> {
    match entry(&format!("{}:{digest}", provider.kind().as_str())) {
        Some(Entry::Ready(id)) => Some(id),
        _ => None,
    }
}

/// One Run's use of the prepared project of its install digest.
#[derive(Debug)]
pub struct Prepared {
    key: String,
    name: String,
    /// The prepared project to create the Box from.
    pub start_from: Option<String>,
    owner: bool,
    /// The owner's Box holds its installed trees ([`Seal::Held`]), kept after the Response
    /// ([`Prepared::keep_held`]).
    held: bool,
    /// Whether finding it took time worth a `Server-Timing` phase (a list request or a wait).
    pub looked_up: bool,
}

impl Drop for Prepared {
    /// An owner that did not finish hands over: the next Run of the digest prepares.
    fn drop(&mut self) {
        self.hand_over();
    }
}

impl Prepared {
    /// What a Run of `plan` on `provider` starts from; `None` when the provider keeps no prepared
    /// projects. Waits (at most `wait_limit_ms`) while another Run of this isolate prepares the
    /// same digest; the first Run of a digest looks for a snapshot left by an earlier isolate
    /// (one list request; a failed list counts as none).
    /// A fired `signal` (the caller's) ends a wait at once. A provider that learns from that
    /// list request that it keeps none after all (Cloudflare: the Worker exports the SDK's own
    /// `Sandbox` class, without a store) says so once through `events` (a notice, not a failure);
    /// its later Runs do not look.
    pub async fn lookup(
        provider: &dyn Provider,
        plan: &InstallPlan,
        wait_limit_ms: f64,
        signal: Option<&web_sys::AbortSignal>,
        events: &RunEvents,
    ) -> Option<Prepared> {
        if !provider.prepares() {
            return None;
        }
        let kind: ProviderKind = provider.kind();
        let key = format!("{}:{}", kind.as_str(), plan.digest);
        let name = prepared_name(&plan.digest);
        let started = crate::sys::performance_now();
        let mut prepared = Prepared { key, name, start_from: None, owner: false, held: false, looked_up: false };
        loop {
            match entry(&prepared.key) {
                Some(Entry::Ready(id)) => {
                    prepared.start_from = Some(id);
                    return Some(prepared);
                }
                Some(Entry::Preparing) => {
                    prepared.looked_up = true;
                    if crate::sys::performance_now() - started >= wait_limit_ms
                        || signal.is_some_and(web_sys::AbortSignal::aborted)
                    {
                        return Some(prepared);
                    }
                    crate::http::timer::sleep(WAIT_POLL_MS).await;
                }
                None => {
                    set(&prepared.key, Some(Entry::Preparing));
                    prepared.owner = true;
                    prepared.looked_up = true;
                    let listed = provider.list_prepared(Some(&prepared.name)).await;
                    if !provider.prepares() {
                        if let Err(error) = listed {
                            events
                                .notice(&format!("Prepared projects are off, every Run installs: {}", error.message()));
                        }
                        return None;
                    }
                    prepared.start_from = listed.ok().and_then(|ids| ids.into_iter().next()).map(|(id, _, _)| id);
                    return Some(prepared);
                }
            }
        }
    }

    /// The name to create the Box under, for an owner (so its snapshot can be found again).
    pub fn name_if_owner(&self) -> Option<String> {
        (self.owner && self.start_from.is_none()).then(|| self.name.clone())
    }

    /// Records how the Box began: a restored owner publishes the id (waiters go on at once); a
    /// Run whose prepared project was gone takes over preparing it.
    pub fn opened(&mut self, start: PreparedStart) {
        match (start, self.start_from.clone()) {
            (PreparedStart::Restored, Some(id)) if self.owner => {
                set(&self.key, Some(Entry::Ready(id)));
                self.owner = false;
            }
            // An owner stays one: its fresh install prepares the project again.
            (PreparedStart::Missing, Some(id))
                if !self.owner && entry(&self.key).as_ref() == Some(&Entry::Ready(id.clone())) =>
            {
                set(&self.key, Some(Entry::Preparing));
                self.owner = true;
            }
            _ => {}
        }
    }

    /// Whether this Run prepares the project once its install succeeded.
    pub fn owner(&self) -> bool {
        self.owner
    }

    /// Makes `id` the prepared project of the digest, unless `dropPreparedProject` forgot the
    /// digest while this Run was preparing it (then the next Run looks it up afresh).
    fn publish(&mut self, id: String) {
        if entry(&self.key) == Some(Entry::Preparing) {
            set(&self.key, Some(Entry::Ready(id)));
        }
        self.owner = false;
    }

    /// After the Response of an owner whose Box held its installed trees ([`Seal::Held`]):
    /// keeps them ([`crate::provider::BoxSession::keep_held`], one write the provider bounds) and makes them the digest's prepared project, unless
    /// `dropPreparedProject` forgot the digest meanwhile (then nothing is written: the drop
    /// stands). A failed write is reported through `events` as the project not kept; the next
    /// Run of the digest prepares. Does nothing for any other Run.
    pub async fn keep_held(&mut self, session: &dyn BoxSession, definition: &Definition, events: &RunEvents) {
        if !(self.owner && self.held) {
            return;
        }
        self.held = false;
        if entry(&self.key) != Some(Entry::Preparing) {
            self.owner = false;
            return;
        }
        match session.keep_held().await {
            Ok(id) => self.publish(id),
            Err(error) => {
                events.report(
                    &format!(
                        "The installed project of Sandbox \"{}\" was not kept: {}",
                        definition.name,
                        error.message()
                    ),
                    error.code(),
                );
                self.hand_over();
            }
        }
    }

    /// Stops preparing: the next Run of the digest prepares (waiters go on at once).
    fn hand_over(&mut self) {
        if self.owner && entry(&self.key) == Some(Entry::Preparing) {
            set(&self.key, None);
        }
        self.owner = false;
    }
}

/// The `Server-Timing` description of the install phase for a Box that began as `start`.
pub fn install_desc(start: PreparedStart) -> &'static str {
    match start {
        PreparedStart::Restored => "prepared",
        PreparedStart::Empty => "fresh",
        PreparedStart::Missing => "fresh-fallback",
    }
}

/// The first part of the Run that prepares its digest (the owner, [`Prepared::owner`]), before
/// any handler runs: stages the Definition's files, installs with the clean-up that leaves only
/// the installed trees ([`sealed_install`], one Command), snapshots the Box (which stops it) and
/// publishes the snapshot for the digest, then opens the Box the Run goes on in from that
/// snapshot (into `lease`). So the prepared project is the Box as the install left it: nothing
/// the handler does, nor a process it leaves behind, reaches later Runs (the Run's own Box is a
/// copy, stopped after its Response like any other).
///
/// Requests: `fs/write`, `cmd` (install and clean-up), `snapshot`, `create` (from the snapshot);
/// the Run then stages its files and execs in the new Box (`fs/write`, `cmd`) and stops it after
/// its Response. Phases: `stage`, `install` (`fresh` or `fresh-fallback`), `prepare` (snapshot and
/// create).
///
/// A provider that holds the installed trees instead ([`Seal::Held`], Cloudflare: `prepare` packs
/// and reads them, two requests) leaves the Box running: the Run goes on in it (its Definition's
/// files staged again over the installed trees), and [`Prepared::keep_held`] keeps the trees after
/// the Response.
///
/// Answers whether the Run's Box now holds the installed project (`true`: the install phase is
/// timed, the Run only stages and execs). `false` when the snapshot could not be taken (a failed
/// clean-up, a refused snapshot, reported through `events` as the project not kept; the owner
/// hands over and the Run goes on in a new empty Box, installing as a Run without a prepared
/// project does), or when the new snapshot was already gone at the create (the Box is empty; the
/// Run installs).
///
/// # Errors
/// A failed install (`SANDBOX_INSTALL_FAILED` with its output, [`install_failure`]); those of
/// [`crate::provider::BoxSession::stage_files`] (with `Operation::Stage`), [`crate::provider::BoxSession::exec`] and
/// [`Provider::open`] (the Run answers with them; the caller gives the lease back).
#[allow(clippy::too_many_arguments)]
pub async fn seal(
    lease: &mut Lease,
    provider: &dyn Provider,
    prepared: &mut Prepared,
    spec: &BoxSpec,
    definition: &Definition,
    run_signal: &RunSignal,
    timing: &mut ServerTiming,
    events: &RunEvents,
) -> Result<bool> {
    let Some(plan) = &definition.install else { return Ok(false) };
    let signal = run_signal.signal();
    let signal = Some(&signal);
    let session = lease.session.clone();
    timing.begin("stage");
    session
        .stage_files(&project_files(&lease.run_dir, definition), signal)
        .await
        .map_err(|e| e.with_operation(Operation::Stage))?;
    timing.mark("stage");
    let install =
        sealed_install(install_command(plan, box_path(&lease.run_dir, paths::PROJECT_DIR), run_signal.remaining_ms()));
    timing.begin("install");
    let outcome = session.exec(&install, signal).await?;
    timing.mark("install");
    if outcome.exit_code != 0 {
        return Err(install_failure(plan, &outcome, session.provider()));
    }
    timing.describe("install", install_desc(session.prepared()));
    timing.begin("prepare");
    let snapshot = if sealed(&outcome.stdout) {
        session
            .prepare(signal)
            .await
            .map_err(|error| (format!("its snapshot failed: {}", error.message()), error.code()))
    } else {
        Err((format!("the clean-up before its snapshot failed: {}", outcome.stderr.trim()), ErrorCode::RuntimeError))
    };
    match snapshot {
        // The installed trees are read and held; the Run goes on in this Box, which holds them.
        Ok(Seal::Held) => {
            timing.mark("prepare");
            prepared.held = true;
            Ok(true)
        }
        Ok(Seal::Snapshot(id)) => {
            prepared.publish(id.clone());
            let from = BoxSpec { prepared: Some(id), prepared_name: None, ..spec.clone() };
            let opened = provider.open(&from, signal).await?;
            timing.mark("prepare");
            lease.session = Rc::from(opened);
            lease.run_dir = lease.session.cwd().to_owned();
            Ok(lease.session.prepared() == PreparedStart::Restored)
        }
        Err((why, code)) => {
            events
                .report(&format!("The installed project of Sandbox \"{}\" was not kept: {why}", definition.name), code);
            prepared.hand_over();
            // The Box holds the install without the Run's files, or was stopped by the failed
            // snapshot (then its stop finds it gone: no failure): the Run goes on in a new one.
            match stop_within(RELEASE_DEADLINE_MS, session.close()).await {
                Err(error) if !session.vanished(&error) => events.report(
                    &format!("The clean-up after a Run of Sandbox \"{}\" failed: {}", definition.name, error.message()),
                    error.code(),
                ),
                _ => {}
            }
            let fresh = BoxSpec { prepared: None, prepared_name: None, ..spec.clone() };
            let opened = provider.open(&fresh, signal).await?;
            timing.mark("prepare");
            lease.session = Rc::from(opened);
            lease.run_dir = lease.session.cwd().to_owned();
            Ok(false)
        }
    }
}
