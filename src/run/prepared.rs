//! Prepared projects: an installed project kept by the provider per install digest
//! ([`vite_hub_sandbox_core::definition::InstallPlan::digest`]), so a Run whose dependencies were installed before
//! starts from them instead of installing again (DESIGN.md §7, §9: a prepared Run makes ≤ 3
//! requests before its Response: create-from-prepared, write, exec).
//!
//! Vercel and the local Box host keep them as snapshots (protocol note §7.5): the first Run of a
//! digest installs, answers, then (after its Response) empties its Box down to the installed
//! `node_modules` trees and snapshots it (which stops the Box). Later Runs create their Box from
//! that snapshot. The isolate remembers the snapshot id per digest; a Box created under the name
//! `vitehub-prepared-<digest>` lets a new isolate find the snapshot again with one list request.
//!
//! Rules:
//! - one Run per digest and isolate prepares (the *owner*); Runs of the same digest that start
//!   meanwhile wait for it (polling every [`WAIT_POLL_MS`] on their own timer, at most their
//!   Definition timeout) and then start from its snapshot; an owner that fails hands over to the
//!   next Run, which installs itself;
//! - a snapshot the provider no longer has (404/410) is no failure: the Box is created empty, the
//!   Run installs (`Server-Timing: install;desc="fresh-fallback"`) and prepares again;
//! - the Cloudflare provider keeps no snapshots (see below for its kept Boxes).
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

use crate::http::deadline::stop_within;
use crate::provider::{BoxSession, PreparedStart, Provider};
use crate::run::events::RunEvents;
use vite_hub_sandbox_core::command::Command;
use vite_hub_sandbox_core::definition::InstallPlan;
use vite_hub_sandbox_core::error::ErrorCode;
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::run::install::{fingerprint_in, FINGERPRINT_SCRIPT};

/// How often a Run waiting for another Run's prepared project looks again (ms).
pub const WAIT_POLL_MS: f64 = 50.0;
/// Time given to the clean-up command that empties a Box before its snapshot (ms).
const CLEANUP_TIMEOUT_MS: u64 = 60_000;

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

/// The fingerprint ([`FINGERPRINT_SCRIPT`]'s rule) of the tree the kept Box of `kept_id`
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

/// The sandbox name whose snapshots are the prepared project of `digest`:
/// `vitehub-prepared-<first 40 hex chars of the install digest>`.
pub fn prepared_name(digest: &str) -> String {
    format!("vitehub-prepared-{}", digest.get(..40).unwrap_or(digest))
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
    /// Whether finding it took time worth a `Server-Timing` phase (a list request or a wait).
    pub looked_up: bool,
}

impl Drop for Prepared {
    /// An owner that did not finish hands over: the next Run of the digest prepares.
    fn drop(&mut self) {
        if self.owner && entry(&self.key) == Some(Entry::Preparing) {
            set(&self.key, None);
        }
    }
}

impl Prepared {
    /// What a Run of `plan` on `provider` starts from; `None` when the provider keeps no prepared
    /// projects. Waits (at most `wait_limit_ms`) while another Run of this isolate prepares the
    /// same digest; the first Run of a digest looks for a snapshot left by an earlier isolate
    /// (one list request; a failed list counts as none).
    /// A fired `signal` (the caller's) ends a wait at once.
    pub async fn lookup(
        provider: &dyn Provider,
        plan: &InstallPlan,
        wait_limit_ms: f64,
        signal: Option<&web_sys::AbortSignal>,
    ) -> Option<Prepared> {
        if !provider.prepares() {
            return None;
        }
        let kind: ProviderKind = provider.kind();
        let key = format!("{}:{}", kind.as_str(), plan.digest);
        let name = prepared_name(&plan.digest);
        let started = crate::sys::performance_now();
        let mut prepared = Prepared { key, name, start_from: None, owner: false, looked_up: false };
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
                    prepared.start_from = provider
                        .list_prepared(Some(&prepared.name))
                        .await
                        .ok()
                        .and_then(|ids| ids.into_iter().next())
                        .map(|(id, _, _)| id);
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
    /// digest while this Run was keeping its Box (then the next Run looks it up afresh).
    fn publish(&mut self, id: String) {
        if entry(&self.key) == Some(Entry::Preparing) {
            set(&self.key, Some(Entry::Ready(id)));
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

/// The clean-up Command run before a snapshot: in the Box cwd, removes everything but
/// `project/`, and in `project/` every non-directory outside `node_modules` trees (the staged
/// sources, input and result of the Run), keeping Yarn PnP's `.pnp.*` files and `.yarn/`; then
/// prints the fingerprint of the `node_modules` trees ([`FINGERPRINT_SCRIPT`]). Every path in
/// the script is relative to the Command's cwd: a Box of plain processes (the local Box host
/// without isolation) has no `/vercel/sandbox`, only its cwd is mapped to where it sees it.
fn cleanup_command(cwd: &str) -> Command {
    // What the snapshot keeps is what the install made: the installed trees (every node_modules,
    // Yarn's .yarn/ and .pnp.* at the project root) and the directories on their way. Every other
    // file, and every directory left empty (one a handler made where its own files were, an
    // index.mjs/ say), goes; the fingerprint then proves the trees are as the install left them.
    let script = "find . -mindepth 1 -maxdepth 1 ! -name project -exec rm -rf {} + \
        && find project -mindepth 1 ! -type d ! -path '*/node_modules/*' ! -path 'project/.yarn/*' ! -path 'project/.pnp.*' -exec rm -f {} + \
        && find project -mindepth 1 -depth -type d -empty ! -path '*/node_modules/*' ! -path 'project/.yarn/*' -delete \
        && cd project && exec node -e \"$VITEHUB_FINGERPRINT\"";
    Command {
        program: "sh".to_owned(),
        args: vec!["-c".to_owned(), script.to_owned()],
        cwd: Some(cwd.to_owned()),
        env: vite_hub_sandbox_core::env_map::EnvMap::from([(
            "VITEHUB_FINGERPRINT".to_owned(),
            FINGERPRINT_SCRIPT.to_owned(),
        )]),
        timeout_ms: Some(CLEANUP_TIMEOUT_MS),
        max_stdout_bytes: 1024,
        max_stderr_bytes: 4096,
    }
}

/// After the Response of the Run that installed: empties the Box down to its installed trees,
/// checks that they are as the install left them (`fingerprint`, taken right after it: a handler
/// that wrote into `node_modules` makes the Box unfit), snapshots it (which stops it) and
/// publishes the snapshot for the digest. Otherwise the Box is stopped and the next Run of the
/// digest prepares (installs as if nothing was kept). A clean-up or snapshot that failed, and a
/// failed stop after it, are reported through `events` (the handle's `onLog`, else
/// `console.warn`); the Run has already answered, so they never change its Response.
pub async fn keep(
    session: &dyn BoxSession,
    mut prepared: Prepared,
    fingerprint: String,
    events: &RunEvents,
    name: &str,
) {
    let not_kept = |why: String, code: ErrorCode| {
        events.report(&format!("The installed project of Sandbox \"{name}\" was not kept: {why}"), code)
    };
    match session.exec(&cleanup_command(session.cwd()), None).await {
        Ok(outcome)
            if outcome.exit_code == 0 && fingerprint_in(&outcome.stdout).as_deref() == Some(fingerprint.as_str()) =>
        {
            match session.prepare().await {
                Ok(id) => return prepared.publish(id),
                Err(error) => not_kept(format!("its snapshot failed: {}", error.message()), error.code()),
            }
        }
        // The handler changed its node_modules: not a failure, the tree is just not reusable.
        Ok(outcome) if outcome.exit_code == 0 => {}
        Ok(outcome) => not_kept(
            format!(
                "the clean-up before its snapshot exited with code {}: {}",
                outcome.exit_code,
                outcome.stderr.trim()
            ),
            ErrorCode::RuntimeError,
        ),
        Err(error) => not_kept(format!("the clean-up before its snapshot failed: {}", error.message()), error.code()),
    }
    if let Err(error) = stop_within(crate::run::lease::RELEASE_DEADLINE_MS, session.close()).await {
        events.report(
            &format!("The clean-up after a Run of Sandbox \"{name}\" failed: {}", error.message()),
            error.code(),
        );
    }
}
