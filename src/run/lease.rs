//! Which Box a Run uses and how it gives it back: a Box of its own (closed after the Run), or
//! the kept Box of a `sandboxId` (reused by the next Run on that id).
//!
//! Kept Boxes live in the isolate (a map keyed by provider and id) for the providers whose Box
//! the Run layer keeps (the local Box host and Vercel; Cloudflare keeps its own Durable Object
//! per id, [`Provider::keeps_boxes`]). Runs on one id take turns: each waits for the previous
//! one to give the Box back (a queue of promises per id; the wait is abortable). Each Run works
//! in a directory of its own, `<cwd>/.vite-hub-runs/<32 hex>`, removed when it gives the Box
//! back. A kept Box is closed after [`KEPT_IDLE_MS`] without a Run, by `closeSandbox(id)`, or
//! replaced when its provider lifetime ([`KEPT_LIFETIME_MS`]) would end during the next Run. A
//! kept Box found gone by a Run's first request is replaced once ([`Lease::renew`]); one whose
//! Run was cut by its deadline or its caller is closed, not given to the next Run
//! ([`Lease::release`]): a request of the cut Run may still reach it.
//!
//! Run layer; no provider named here.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use crate::http::fetch::AbortWait;
use crate::http::timer::Timer;
use crate::provider::{BoxSession, BoxSpec, Provider};
use crate::sys;
use vite_hub_sandbox_core::command::Command;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::transfer::frame::new_nonce;

/// A kept Box is closed after this many ms without a Run (5 minutes).
pub const KEPT_IDLE_MS: u32 = 300_000;
/// The provider lifetime a kept Box is opened with (30 minutes); a Run that could outlast it
/// gets a fresh Box.
pub const KEPT_LIFETIME_MS: u64 = 1_800_000;
/// Bound of giving a Box back (closing it, or removing a kept Box's Run directory), in ms.
pub const RELEASE_DEADLINE_MS: u32 = 15_000;

struct Kept {
    session: Option<(Rc<dyn BoxSession>, f64)>,
    busy: bool,
    waiters: VecDeque<Function>,
    idle_timer: Option<Timer>,
}

/// The kept Boxes by key (an isolate keeps few).
struct KeptBoxes(Vec<(String, Kept)>);

impl KeptBoxes {
    fn get(&self, key: &str) -> Option<&Kept> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, kept)| kept)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Kept> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, kept)| kept)
    }

    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// The entry of `key`, added (free, no Box yet) when missing.
    fn get_or_insert(&mut self, key: &str) -> &mut Kept {
        let at = match self.0.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                self.0.push((
                    key.to_owned(),
                    Kept { session: None, busy: false, waiters: VecDeque::new(), idle_timer: None },
                ));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }
}

thread_local! {
    static KEPT: RefCell<KeptBoxes> = const { RefCell::new(KeptBoxes(Vec::new())) };
}

/// The Box of one Run.
#[allow(missing_debug_implementations)]
pub struct Lease {
    /// The Box.
    pub session: Rc<dyn BoxSession>,
    /// Where the Run writes its files (the Box cwd, or a kept Box's Run directory).
    pub run_dir: String,
    kept: Option<String>,
    /// A kept Box an earlier Run opened (not this one).
    reused: bool,
    /// A warm pool's Box ([`crate::run::warm_pool`]): the Definition's files and the harness
    /// are written, the Run writes only its input.
    warm: bool,
}

fn key(provider: &dyn Provider, id: &str) -> String {
    format!("{}\0{id}", provider.kind().as_str())
}

fn aborted() -> Error {
    Error::new(ErrorCode::TransportError, "waiting for the kept Box was aborted").with_operation(Operation::Create)
}

/// Waits for the turn on kept Box `key` (or for `signal`).
async fn take_turn(key: &str, signal: Option<&AbortSignal>) -> Result<()> {
    loop {
        let waiter = KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            let entry = kept.get_or_insert(key);
            if !entry.busy {
                entry.busy = true;
                drop(entry.idle_timer.take());
                return None;
            }
            let mut resolve_slot = None;
            let promise = Promise::new(&mut |resolve, _| resolve_slot = Some(resolve));
            if let Some(resolve) = resolve_slot {
                entry.waiters.push_back(resolve);
            }
            Some(promise)
        });
        let Some(waiter) = waiter else { return Ok(()) };
        let wait = signal.map(AbortWait::new);
        let race = match &wait {
            Some(wait) => Promise::race(&js_sys::Array::of2(&waiter, wait.promise())),
            None => waiter,
        };
        let _ = JsFuture::from(race).await;
        drop(wait);
        if signal.is_some_and(AbortSignal::aborted) {
            return Err(aborted());
        }
    }
}

/// Frees the turn on `key`, arms the idle close and wakes the waiters: the first of them (in
/// the order they came) takes the turn, the others queue again. Waking them all means a waiter
/// that gave up (its signal fired) never holds the others back.
fn give_turn(key: &str) {
    let waiting = KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let entry = kept.get_mut(key)?;
        entry.busy = false;
        if entry.session.is_some() {
            let owned = key.to_owned();
            // Owned by the entry: a Run that takes the turn first drops it, closure and all.
            let timer = Timer::once(
                move || {
                    wasm_bindgen_futures::spawn_local(async move {
                        let _ = close_kept_key(&owned, true).await;
                    });
                },
                KEPT_IDLE_MS,
            );
            timer.unref();
            entry.idle_timer = Some(timer);
        }
        Some(std::mem::take(&mut entry.waiters))
    });
    for resolve in waiting.into_iter().flatten() {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    }
}

/// Opens the Box of a Run: its own, or the kept Box of `sandbox_id` (waiting for its turn).
///
/// # Errors
/// Those of [`Provider::open`]; `SANDBOX_TRANSPORT_ERROR` when `signal` fired while waiting.
pub async fn acquire(
    provider: &dyn Provider,
    spec: &BoxSpec,
    sandbox_id: Option<&str>,
    timeout_ms: u32,
    signal: Option<&AbortSignal>,
) -> Result<Lease> {
    let Some(id) = sandbox_id.filter(|_| !provider.keeps_boxes()) else {
        let session: Rc<dyn BoxSession> = Rc::from(provider.open(spec, signal).await?);
        let run_dir = session.cwd().to_owned();
        return Ok(Lease { session, run_dir, kept: None, reused: false, warm: false });
    };
    let key = key(provider, id);
    take_turn(&key, signal).await.map_err(|e| e.with_provider(provider.kind()))?;
    let now = sys::performance_now();
    let fits = |opened: f64| now - opened + f64::from(timeout_ms) + 60_000.0 < KEPT_LIFETIME_MS as f64;
    let current = KEPT.with(|kept| kept.borrow().get(&key).and_then(|e| e.session.clone()));
    let (session, reused) = match current {
        Some((session, opened)) if fits(opened) => (session, true),
        stale => match replace_kept(provider, spec, &key, stale.map(|(old, _)| old), signal).await {
            Ok(session) => (session, false),
            Err(error) => {
                give_turn(&key);
                return Err(error);
            }
        },
    };
    Ok(Lease { run_dir: kept_run_dir(session.as_ref())?, session, kept: Some(key), reused, warm: false })
}

/// A new Run directory in kept Box `session`: `<cwd>/.vite-hub-runs/<32 hex>`.
fn kept_run_dir(session: &dyn BoxSession) -> Result<String> {
    let random = sys::random_bytes::<16>()
        .map_err(|_| Error::new(ErrorCode::RuntimeError, "crypto.getRandomValues is not available in this runtime"))?;
    Ok(format!("{}/.vite-hub-runs/{}", session.cwd().trim_end_matches('/'), new_nonce(&random)))
}

/// Closes `old` (if any) and opens the kept Box of `key` in its place (the caller holds the turn).
async fn replace_kept(
    provider: &dyn Provider,
    spec: &BoxSpec,
    key: &str,
    old: Option<Rc<dyn BoxSession>>,
    signal: Option<&AbortSignal>,
) -> Result<Rc<dyn BoxSession>> {
    if let Some(old) = old {
        KEPT.with(|kept| kept.borrow_mut().get_mut(key).map(|e| e.session = None));
        let _ = old.close().await;
    }
    let kept_spec = BoxSpec { lifetime_ms: Some(KEPT_LIFETIME_MS), ..spec.clone() };
    let session: Rc<dyn BoxSession> = Rc::from(provider.open(&kept_spec, signal).await?);
    let now = sys::performance_now();
    KEPT.with(|kept| kept.borrow_mut().get_mut(key).map(|e| e.session = Some((session.clone(), now))));
    Ok(session)
}

impl Lease {
    /// The Run's own Box, taken from a warm pool (closed after the Run like any Box of its own).
    pub fn warm(session: Rc<dyn BoxSession>) -> Lease {
        Lease { run_dir: session.cwd().to_owned(), session, kept: None, reused: false, warm: true }
    }

    /// Whether the Box came from a warm pool with the Definition's files and harness written.
    pub fn is_warm(&self) -> bool {
        self.warm
    }

    /// Whether this is a kept Box (`sandboxId`), not the Run's own.
    pub fn is_kept(&self) -> bool {
        self.kept.is_some()
    }

    /// Whether `error` of this Run's first request says its kept Box, opened by an earlier Run,
    /// or its warm pool's Box is gone (the provider stopped it: its host restarted, its lifetime
    /// ended): the Run may [`Self::renew`] it once and start again.
    pub fn kept_box_vanished(&self, error: &Error) -> bool {
        (self.reused || self.warm) && self.session.vanished(error)
    }

    /// Replaces a vanished kept Box with a new one (and a new Run directory in it), or a vanished
    /// warm Box with a Box of the Run's own (`spec`, empty: the Run stages everything).
    ///
    /// # Errors
    /// Those of [`Provider::open`]; the Lease still holds its turn and is released as usual.
    pub async fn renew(&mut self, provider: &dyn Provider, spec: &BoxSpec, signal: Option<&AbortSignal>) -> Result<()> {
        if self.warm {
            let gone = std::mem::replace(&mut self.session, Rc::from(provider.open(spec, signal).await?));
            let _ = gone.close().await;
            self.run_dir = self.session.cwd().to_owned();
            self.warm = false;
            return Ok(());
        }
        let Some(key) = self.kept.clone() else { return Ok(()) };
        self.session = replace_kept(provider, spec, &key, Some(self.session.clone()), signal).await?;
        self.run_dir = kept_run_dir(self.session.as_ref())?;
        self.reused = false;
        Ok(())
    }

    /// Where a kept Box keeps what outlives its Runs (prepared projects, [`crate::run::prepared`]):
    /// its cwd, or the provider's own kept Box's root (Cloudflare); `None` for a Box of its own.
    pub fn kept_root(&self) -> Option<&str> {
        if self.kept.is_some() {
            Some(self.session.cwd())
        } else {
            self.session.kept_root()
        }
    }

    /// Who keeps the prepared trees of [`Self::kept_root`], stable across the Boxes one
    /// `sandboxId` is given over time: the kept Box's key (provider and id), else the Box's id
    /// (Cloudflare: the id's Durable Object name).
    pub fn kept_id(&self) -> &str {
        self.kept.as_deref().unwrap_or_else(|| self.session.id())
    }

    /// Gives the Box back: closes a Box of its own; removes a kept Box's Run directory (a kept
    /// Box whose directory cannot be removed is closed and forgotten) and frees it for the next
    /// Run on its id. `cut`: the Run was ended by its deadline or its caller, so a request of it
    /// may still be on its way (a Command that would start after the Run's Response): a kept
    /// Box is then closed and forgotten, never given to the next Run.
    ///
    /// # Errors
    /// The close's or the removal's failure (the caller reports it; the Box is given back anyway).
    pub async fn release(self, cut: bool) -> Result<()> {
        let Some(key) = self.kept else {
            return self.session.close().await;
        };
        if cut {
            let closed = close_kept_key(&key, false).await.map(|_| ());
            give_turn(&key);
            forget_if_unused(&key);
            return closed.map_err(|e| e.with_operation(Operation::Stop));
        }
        let rm = Command {
            program: "rm".into(),
            args: vec!["-rf".into(), "--".into(), self.run_dir.clone()],
            timeout_ms: Some(u64::from(RELEASE_DEADLINE_MS)),
            max_stderr_bytes: 4096,
            ..Command::default()
        };
        // `(keep, failure)`: whether the Box goes to the next Run, and what to report.
        let (keep, failure) = match self.session.exec(&rm, None).await {
            Ok(outcome) if outcome.exit_code == 0 => (true, None),
            // Killed by a signal (128 + n) or found gone: its provider stopped the Box meanwhile
            // (a stop kills every process). Nothing is left to give back, nor to report.
            Ok(outcome) if outcome.exit_code > 128 => (false, None),
            Err(error) if self.session.vanished(&error) => (false, None),
            Ok(outcome) => {
                let why = outcome.stderr.trim();
                let why =
                    if why.is_empty() { format!("rm exited with code {}", outcome.exit_code) } else { why.to_owned() };
                (
                    false,
                    Some(Error::new(
                        ErrorCode::RuntimeError,
                        format!("the Run's folder {} could not be removed from the kept Box: {why}", self.run_dir),
                    )),
                )
            }
            Err(error) => (false, Some(error)),
        };
        if !keep {
            let _ = close_kept_key(&key, false).await;
        }
        give_turn(&key);
        forget_if_unused(&key);
        failure.map_or(Ok(()), |error| Err(error.with_operation(Operation::Stop)))
    }
}

/// Closes the kept Box of `key` and forgets it. `when_idle`: only if no Run holds it.
async fn close_kept_key(key: &str, when_idle: bool) -> Result<bool> {
    let taken = KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let entry = kept.get_mut(key)?;
        if when_idle && entry.busy {
            return None;
        }
        drop(entry.idle_timer.take());
        let session = entry.session.take();
        if !entry.busy && entry.waiters.is_empty() {
            kept.remove(key);
        }
        session
    });
    match taken {
        Some((session, _)) => session.close().await.map(|()| true),
        None => Ok(false),
    }
}

/// `closeSandbox(sandboxId)` for the kept Boxes of the Run layer: waits for the Run holding the
/// Box (if any), then closes it. `Ok(false)` when no Box is kept under that id.
///
/// # Errors
/// The close's failure; `SANDBOX_TRANSPORT_ERROR` when `signal` fired while waiting.
pub async fn close_kept(provider: &dyn Provider, id: &str, signal: Option<&AbortSignal>) -> Result<bool> {
    let key = key(provider, id);
    if KEPT.with(|kept| !kept.borrow().contains_key(&key)) {
        return Ok(false);
    }
    take_turn(&key, signal).await?;
    let closed = close_kept_key(&key, false).await;
    give_turn(&key);
    forget_if_unused(&key);
    closed
}

/// Forgets the entry of `key` when it holds no Box, no Run and no waiter.
fn forget_if_unused(key: &str) {
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.get(key).is_some_and(|e| e.session.is_none() && !e.busy && e.waiters.is_empty()) {
            kept.remove(key);
        }
    });
}
