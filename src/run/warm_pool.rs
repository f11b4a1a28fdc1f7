//! The warm pool (`configureSandbox({ warmPool: { size, idleMs } })`, off by default): per
//! Definition, up to `size` Boxes opened as its next Run would open them (from its prepared
//! project when it has dependencies), with its files and the harness written. A Run that takes
//! one writes only its input and execs: two requests before its Response.
//!
//! Rules:
//! - a pool is of one Definition on one provider: a Run takes only a Box its own config's
//!   provider opened (a Run in flight across `configureSandbox` fills a pool of the old one);
//! - a pool is filled after a Run's Response (never before it), by as many Boxes as it lacks; a
//!   Definition with dependencies only once its prepared project is ready
//!   ([`crate::run::prepared::ready_id`]);
//! - each Box serves one Run and is closed after it like a Box of the Run's own; a Box found gone
//!   by the Run's first request is replaced by a Box of its own, without an error
//!   ([`crate::run::lease::Lease::renew`]), and `Server-Timing` says `box;desc="warm"` only when
//!   the Run ran on the warm Box;
//! - an unused Box is closed after `idleMs`; it is opened with a provider lifetime of `idleMs` +
//!   the Definition timeout + 90 s ([`WarmPool::box_lifetime_ms`]), so a Run that takes it just
//!   before its idle close still has its whole timeout;
//! - a refill that fails is kept with its pool and told to the next Run of the Definition (its
//!   `onLog`, else `console.warn`: [`RunEvents::notice`]), never through the handle of the Run
//!   whose Response started it; the refill's work goes to the isolate's keep-alive hook only;
//! - a Run that began before a drain refills nothing ([`drains`]); a pool made for a Definition
//!   closes the pools of other versions of its name (an edited Definition);
//! - [`detach`] and [`close_detached`] drain pools (`closeWarmPools()`, `configureSandbox`,
//!   `dropPreparedProject`): their Boxes are closed, and a refill still opening one closes it
//!   when it lands; every Box opened is closed.
//!
//! Run layer; no provider named here.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::http::deadline::{stop_within, Deadline};
use crate::http::timer::Timer;
use crate::provider::{BoxSession, BoxSpec, PreparedStart, Provider};
use crate::run::events::{keep_alive, RunEvents};
use crate::run::lease::RELEASE_DEADLINE_MS;
use crate::run::stage::{harness_file, project_files};
use vite_hub_sandbox_core::definition::Definition;
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};
use vite_hub_sandbox_core::run::warm_pool::WarmPool;

/// A Box waiting for a Run.
struct Idle {
    session: Rc<dyn BoxSession>,
    opened_ms: f64,
    /// Closes the Box after `idleMs` (dropped, and so cleared, when a Run takes it).
    _timer: Timer,
}

/// The pool of one Definition (by name and digest: an edited Definition gets a new pool) on one
/// provider (a Run under another config never takes its Boxes).
struct Pool {
    key: String,
    /// The provider of the config whose Runs filled it (held, so its address is not reused).
    provider: Rc<dyn Provider>,
    /// Unique per pool, so a refill that lands after a drain knows its pool is gone.
    id: u64,
    /// The install digest of the Definition, if it installs (`dropPreparedProject` drains by it).
    digest: Option<String>,
    idle: Vec<Idle>,
    /// Refills under way: their count, and their work (a drain waits for it).
    opening: u32,
    refills: Vec<(u64, Promise)>,
    /// What the last failed refill said, until the next Run of the Definition is told.
    failure: Option<String>,
}

thread_local! {
    static POOLS: RefCell<Vec<Pool>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
    /// How many drains ([`detach`]) there were: a Run that began before one refills nothing.
    static DRAINS: Cell<u64> = const { Cell::new(0) };
}

/// The drain count now, taken by a Run when it begins and given to [`refill`] after its Response.
pub fn drains() -> u64 {
    DRAINS.with(Cell::get)
}

fn next_id() -> u64 {
    NEXT_ID.with(|n| {
        n.set(n.get() + 1);
        n.get()
    })
}

fn pool_key(definition: &Definition) -> String {
    format!("{}\0{}", definition.name, definition.digest)
}

/// Runs `f` on the pool `id`, if it is still there.
fn with_pool<T>(id: u64, f: impl FnOnce(&mut Pool) -> T) -> Option<T> {
    POOLS.with(|pools| pools.borrow_mut().iter_mut().find(|p| p.id == id).map(f))
}

/// Runs `f` on the pool of `key` on `provider`, if there is one.
fn with_pool_of<T>(key: &str, provider: &Rc<dyn Provider>, f: impl FnOnce(&mut Pool) -> T) -> Option<T> {
    POOLS.with(|pools| pools.borrow_mut().iter_mut().find(|p| p.key == key && Rc::ptr_eq(&p.provider, provider)).map(f))
}

/// A warm Box for a Run of `definition` on `provider`, if its pool holds one (the newest). A
/// failed refill of the pool is told to this Run (`events.notice`) first, whether a Box is taken
/// or not.
pub fn take(
    provider: &Rc<dyn Provider>,
    definition: &Definition,
    pool: WarmPool,
    events: &RunEvents,
) -> Option<Rc<dyn BoxSession>> {
    let now = crate::sys::performance_now();
    let (failure, taken, stale) = with_pool_of(&pool_key(definition), provider, |p| {
        // A Box past its idle time (its timer is late) is closed, never used: its lifetime is
        // counted from its opening.
        let (fresh, stale): (Vec<Idle>, Vec<Idle>) =
            std::mem::take(&mut p.idle).into_iter().partition(|idle| now - idle.opened_ms < f64::from(pool.idle_ms));
        p.idle = fresh;
        (p.failure.take(), p.idle.pop(), stale)
    })?;
    if let Some(failure) = failure {
        events.notice(&failure);
    }
    for idle in stale {
        wasm_bindgen_futures::spawn_local(async move {
            let _ = stop_within(RELEASE_DEADLINE_MS, idle.session.close()).await;
        });
    }
    taken.map(|idle| idle.session)
}

/// Tops the pool of `definition` up to `pool.size` after a Run's Response: opens the Boxes it
/// lacks, each from `start_from` (the prepared project's id; `None` without dependencies). Does
/// nothing for a Definition with dependencies whose prepared project is not ready yet, nor for a
/// Run that began before a drain (`since`, its [`drains`] then: `closeWarmPools()`,
/// `configureSandbox`, `closeLocalBoxHost()`, `dropPreparedProject`), whose config or host may be
/// gone.
pub fn refill(
    provider: &Rc<dyn Provider>,
    definition: &Rc<Definition>,
    pool: WarmPool,
    start_from: Option<String>,
    since: u64,
) {
    if (definition.install.is_some() && start_from.is_none()) || since != drains() {
        return;
    }
    let key = pool_key(definition);
    let mut replaced = Vec::new();
    let (id, missing) = POOLS.with(|pools| {
        let mut pools = pools.borrow_mut();
        let at = match pools.iter().position(|p| p.key == key && Rc::ptr_eq(&p.provider, provider)) {
            Some(at) => at,
            None => {
                // An edited Definition (same name, new digest): the pool of its old version is
                // closed (its refills under way close their Box when they land).
                let prefix = format!("{}\0", definition.name);
                let (old, kept): (Vec<Pool>, Vec<Pool>) =
                    std::mem::take(&mut *pools).into_iter().partition(|p| p.key.starts_with(&prefix));
                *pools = kept;
                replaced.extend(old.into_iter().flat_map(|p| p.idle).map(|idle| idle.session));
                pools.push(Pool {
                    key: key.clone(),
                    provider: provider.clone(),
                    id: next_id(),
                    digest: definition.install.as_ref().map(|plan| plan.digest.clone()),
                    idle: Vec::new(),
                    opening: 0,
                    refills: Vec::new(),
                    failure: None,
                });
                pools.len() - 1
            }
        };
        let p = &mut pools[at];
        let missing = pool.size.saturating_sub(p.idle.len() as u32 + p.opening);
        p.opening += missing;
        (p.id, missing)
    });
    for session in replaced {
        wasm_bindgen_futures::spawn_local(async move {
            let _ = stop_within(RELEASE_DEADLINE_MS, session.close()).await;
        });
    }
    for _ in 0..missing {
        let ticket = next_id();
        let (provider, definition, start_from) = (provider.clone(), definition.clone(), start_from.clone());
        let work = crate::sys::js_promise(Box::pin(async move {
            let opened = open_one(provider.as_ref(), &definition, pool, start_from).await;
            land(id, ticket, pool, &definition.name, opened).await;
            Ok(JsValue::UNDEFINED)
        }));
        with_pool(id, |p| p.refills.push((ticket, work.clone())));
        keep_alive(&work);
    }
}

/// Opens one Box as the next Run of `definition` would, and writes its files and the harness.
async fn open_one(
    provider: &dyn Provider,
    definition: &Definition,
    pool: WarmPool,
    start_from: Option<String>,
) -> Result<Rc<dyn BoxSession>> {
    let spec = BoxSpec {
        lifetime_ms: Some(u64::from(pool.box_lifetime_ms(definition.timeout_ms))),
        name: definition.name.clone(),
        sandbox_id: None,
        prepared: start_from.clone(),
        prepared_name: None,
        staged_first: true,
        snapshot: None,
        ports: Vec::new(),
    };
    // Bounded as a Run is: by the Definition timeout.
    let deadline = Deadline::new(None, definition.timeout_ms);
    let signal = deadline.signal();
    let session: Rc<dyn BoxSession> = Rc::from(provider.open(&spec, signal.as_ref()).await?);
    let written = if start_from.is_some() && session.prepared() != PreparedStart::Restored {
        Err(Error::new(ErrorCode::ProviderUnavailable, "its prepared project is gone at the provider"))
    } else {
        let mut files = project_files(session.cwd(), definition);
        files.push(harness_file(session.cwd()));
        session.write_files(&files, signal.as_ref()).await
    };
    match written {
        Ok(()) => Ok(session),
        Err(error) => {
            let _ = stop_within(RELEASE_DEADLINE_MS, session.close()).await;
            Err(error)
        }
    }
}

/// Puts an opened Box into its pool (with its idle close), or closes it when the pool was drained
/// meanwhile; keeps a failure for the next Run.
async fn land(id: u64, ticket: u64, pool: WarmPool, name: &str, opened: Result<Rc<dyn BoxSession>>) {
    let present = with_pool(id, |p| {
        p.opening = p.opening.saturating_sub(1);
        p.refills.retain(|(t, _)| *t != ticket);
    })
    .is_some();
    match (present, opened) {
        (true, Ok(session)) => {
            let timer = idle_close(id, &session, pool.idle_ms);
            let opened_ms = crate::sys::performance_now();
            with_pool(id, |p| p.idle.push(Idle { session, opened_ms, _timer: timer }));
        }
        (true, Err(error)) => {
            let failure = format!(
                "The warm pool of Sandbox \"{name}\" could not open a Box ({}): {}; Runs open their own Box until a refill works",
                error.code().as_str(),
                error.message()
            );
            with_pool(id, |p| p.failure = Some(failure));
        }
        // The pool was drained meanwhile: the Box it would have held is closed here.
        (false, Ok(session)) => {
            let _ = stop_within(RELEASE_DEADLINE_MS, session.close()).await;
        }
        (false, Err(_)) => {}
    }
}

/// The timer that closes `session` after `idle_ms` unless a Run took it.
fn idle_close(id: u64, session: &Rc<dyn BoxSession>, idle_ms: u32) -> Timer {
    let weak = Rc::downgrade(session);
    let timer = Timer::once(
        move || {
            // Not in the timer's own call: closing drops the timer (and this closure).
            wasm_bindgen_futures::spawn_local(async move {
                let Some(session) = weak.upgrade() else { return };
                let idle = with_pool(id, |p| {
                    let at = p.idle.iter().position(|idle| Rc::ptr_eq(&idle.session, &session))?;
                    Some(p.idle.remove(at))
                })
                .flatten();
                drop(session);
                if let Some(idle) = idle {
                    if let Err(error) = stop_within(RELEASE_DEADLINE_MS, idle.session.close()).await {
                        with_pool(id, |p| {
                            p.failure = Some(format!("The warm pool could not close an idle Box: {}", error.message()));
                        });
                    }
                }
            });
        },
        idle_ms,
    );
    timer.unref();
    timer
}

/// The pools of the isolate: `(Definition name, waiting Boxes, Boxes being opened)`, in the order
/// they were made (`listWarmPools()`).
pub fn list() -> Vec<(String, u32, u32)> {
    POOLS.with(|pools| {
        pools
            .borrow()
            .iter()
            .map(|p| {
                let name = p.key.split('\0').next().unwrap_or_default().to_owned();
                (name, p.idle.len() as u32, p.opening)
            })
            .collect()
    })
}

/// A drained pool's Boxes and its refills under way.
#[allow(missing_debug_implementations)]
pub struct Detached {
    boxes: Vec<Rc<dyn BoxSession>>,
    refills: Vec<Promise>,
}

/// Takes the pools `which` selects out of the isolate at once (no Run takes their Boxes after
/// this), for [`close_detached`]. `which` gets the pool's install digest (`None`: no dependencies).
pub fn detach(which: impl Fn(Option<&str>) -> bool) -> Detached {
    DRAINS.with(|d| d.set(d.get() + 1));
    let taken: Vec<Pool> = POOLS.with(|pools| {
        let mut pools = pools.borrow_mut();
        let (taken, kept) = std::mem::take(&mut *pools).into_iter().partition(|p| which(p.digest.as_deref()));
        *pools = kept;
        taken
    });
    let mut detached = Detached { boxes: Vec::new(), refills: Vec::new() };
    for pool in taken {
        detached.boxes.extend(pool.idle.into_iter().map(|idle| idle.session));
        detached.refills.extend(pool.refills.into_iter().map(|(_, work)| work));
    }
    detached
}

/// Closes what [`detach`] took: waits for its refills (each closes the Box it opened, its pool
/// being gone), then closes the idle Boxes. How many idle Boxes were closed.
///
/// # Errors
/// The first close that failed (`SANDBOX_TRANSPORT_ERROR`, `SANDBOX_RUNTIME_ERROR` past 15 s);
/// every other Box is closed anyway.
pub async fn close_detached(detached: Detached) -> Result<u32> {
    for work in detached.refills {
        let _ = JsFuture::from(work).await;
    }
    let closes = detached.boxes.iter().map(|session| stop_within(RELEASE_DEADLINE_MS, session.close()));
    let mut closed = 0u32;
    let mut failure = None;
    for outcome in futures::future::join_all(closes).await {
        match outcome {
            Ok(()) => closed += 1,
            Err(error) => failure = failure.or(Some(error)),
        }
    }
    failure.map_or(Ok(closed), Err)
}
