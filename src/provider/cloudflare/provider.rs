//! The Cloudflare [`Provider`]: where container requests go (the Worker's Durable Object
//! namespace, or the local Box host), opening a Box (a new Durable Object, or the kept one of a
//! `sandboxId`) and closing a kept one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortSignal;

use super::classify::{self, StartupRetry};
use super::client::{ContainerClient, REQUEST_DEADLINE_MS};
use super::container::{destroy, CloudflareBox, CLOSE_DEADLINE_MS, WORK_DIR};
use super::kept::wait_for_turn;
use super::options::{box_id_from, unique_box_id, CloudflareSettings, LocalContainerHost};
use super::store::PreparedStore;
use super::wire::{ConfigureRequest, SandboxName};
use crate::http::deadline::{stop_within, Deadline};
use crate::http::fetch::{js_message, sleep_unless_aborted, AbortWait, Fetcher};
use crate::provider::box_session::{BoxSession, BoxSpec, PreparedProject, PreparedStart, Provider};
use crate::sys::{DurableObjectNamespace, DurableObjectStub, FetchTarget};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Operation, Result};
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::session::ExecutionAuthority;

/// The Durable Object namespace `env[binding]`, when `env` holds one (an object with
/// `idFromName` and `get` functions).
pub fn namespace_in(env: &JsValue, binding: &str) -> Option<DurableObjectNamespace> {
    if !env.is_object() {
        return None;
    }
    let value = Reflect::get(env, &JsValue::from_str(binding)).ok()?;
    let has = |name: &str| Reflect::get(&value, &JsValue::from_str(name)).is_ok_and(|f| f.is_function());
    (value.is_object() && has("idFromName") && has("get")).then(|| value.unchecked_into())
}

/// Where container requests go.
#[derive(Debug, Clone)]
enum Route {
    /// The Worker's Durable Object namespace.
    Namespace(DurableObjectNamespace),
    /// The local Box host (local development); `host` is the local provider on it, which
    /// answers what a Box there can reach.
    LocalHost { base_url: String, token: String, fetcher: Fetcher, host: Rc<dyn Provider> },
}

/// Opens Cloudflare Boxes.
#[derive(Debug)]
pub struct CloudflareProvider {
    settings: CloudflareSettings,
    route: Route,
    retry: StartupRetry,
}

thread_local! {
    /// The bindings whose `Sandbox` class keeps no prepared projects (a store answered
    /// `SANDBOX_NOT_SUPPORTED`): a few per isolate, so a plain list.
    static NO_STORE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

impl CloudflareProvider {
    /// A provider for `settings`: through `namespace`, or the local Box host of
    /// `settings.local_host` (which wins, through `fetcher`). `None` when neither is there
    /// (config resolution refuses that case first, with the wrangler lines to add). Sends
    /// nothing.
    ///
    /// `local_provider` builds the `local` provider on that host (the registry,
    /// [`crate::provider::build`], passes it; this folder names no other provider): a Box on
    /// the local Box host is a local Box, so its executionAuthority is the host's own report.
    pub fn new(
        settings: CloudflareSettings,
        namespace: Option<DurableObjectNamespace>,
        fetcher: Fetcher,
        local_provider: impl FnOnce(&LocalContainerHost, Fetcher) -> Rc<dyn Provider>,
    ) -> Option<CloudflareProvider> {
        let route = match (&settings.local_host, namespace) {
            (Some(local), _) => Route::LocalHost {
                base_url: local.base_url.clone(),
                token: local.token.clone(),
                host: local_provider(local, fetcher.clone()),
                fetcher,
            },
            (None, Some(namespace)) => Route::Namespace(namespace),
            (None, None) => return None,
        };
        Some(CloudflareProvider { settings, route, retry: StartupRetry::default() })
    }

    /// The same provider with another start retry bound (tests of bounded retries).
    pub fn with_startup_retry(mut self, retry: StartupRetry) -> CloudflareProvider {
        self.retry = retry;
        self
    }

    /// Remembers a store's `SANDBOX_NOT_SUPPORTED` (the SDK's own class) for the binding, in
    /// the isolate (a Worker configures a new provider per request; its class does not change):
    /// later Runs install without looking.
    fn note_no_store(&self, error: &Error) {
        if error.code() == ErrorCode::NotSupported && !self.no_store() {
            NO_STORE.with(|bindings| bindings.borrow_mut().push(self.settings.binding.clone()));
        }
    }

    /// Whether a store of this binding answered that the Worker's class keeps none.
    fn no_store(&self) -> bool {
        NO_STORE.with(|bindings| bindings.borrow().contains(&self.settings.binding))
    }

    fn lock_key(&self, id: &str) -> String {
        match &self.route {
            Route::Namespace(_) => format!("{}\0{id}", self.settings.binding),
            Route::LocalHost { base_url, .. } => format!("{base_url}\0{id}"),
        }
    }

    /// The store of prepared project `name` ([`super::store`]) in the Worker's namespace; `None`
    /// on the local Box host (no Durable Objects: there every Run installs). Sends nothing.
    fn store(&self, name: &str) -> Result<Option<PreparedStore>> {
        match &self.route {
            Route::Namespace(namespace) => Ok(Some(PreparedStore::new(name.to_owned(), stub_for(namespace, name)?))),
            Route::LocalHost { .. } => Ok(None),
        }
    }

    /// RPC `configure` as `getSandbox` sends it; retried like a start problem when the
    /// rejection says so (its text is classified).
    async fn configure(&self, stub: &DurableObjectStub, id: &str, signal: Option<&AbortSignal>) -> Result<()> {
        let config = ConfigureRequest {
            sandbox_name: SandboxName { name: id.to_owned(), normalize_id: self.settings.normalize_id },
            sleep_after: self.settings.sleep_after.clone(),
            keep_alive: self.settings.keep_alive,
        };
        let json = serde_json::to_string(&config).unwrap_or_default();
        let value = js_sys::JSON::parse(&json).unwrap_or(JsValue::UNDEFINED);
        // The RPC has no signal of its own: it races the deadline (the caller's signal, or
        // the bound of a request), so a Durable Object that never answers cannot hold the Run.
        let deadline = Deadline::new(signal, REQUEST_DEADLINE_MS);
        let bounded = deadline.signal();
        let signal = bounded.as_ref();
        let given_up = |deadline: &Deadline| {
            let (code, message) = if deadline.expired() {
                (
                    ErrorCode::ProviderUnavailable,
                    format!("the Sandbox Durable Object did not answer configure within {REQUEST_DEADLINE_MS}ms"),
                )
            } else {
                (ErrorCode::TransportError, "configure was aborted".to_owned())
            };
            Error::new(code, message).with_provider(ProviderKind::Cloudflare).with_operation(Operation::Create)
        };
        let mut attempts = 0;
        let mut waited = 0;
        loop {
            attempts += 1;
            let called = stub.configure(&value).map(|p| js_sys::Promise::resolve(&p));
            let outcome = match called {
                Ok(promise) => {
                    let wait = signal.map(AbortWait::new);
                    let raced = match &wait {
                        Some(wait) => js_sys::Promise::race(&js_sys::Array::of2(&promise, wait.promise())),
                        None => promise,
                    };
                    let answer = JsFuture::from(raced).await.map(|_| ());
                    drop(wait);
                    if signal.is_some_and(AbortSignal::aborted) {
                        return Err(given_up(&deadline));
                    }
                    answer
                }
                Err(error) => Err(error),
            };
            let Err(error) = outcome else { return Ok(()) };
            let message = js_message(&error);
            let verdict = classify::classify_configure_rejection(&message, super::client::rejection_flags(&error));
            let delay = if verdict.is_retryable() { self.retry.delay_ms(attempts, waited, None) } else { None };
            let Some(delay) = delay else {
                let fix = verdict.fix().map(|fix| format!(" ({fix})")).unwrap_or_default();
                let what = if verdict == classify::Verdict::Thrown {
                    "threw from its constructor or configure (retrying runs the same code again)"
                } else {
                    "refused configure"
                };
                return Err(Error::new(verdict.code(), format!("the Sandbox Durable Object {what}: {message}{fix}"))
                    .with_provider(ProviderKind::Cloudflare)
                    .with_operation(Operation::Create));
            };
            sleep_unless_aborted(delay as f64, signal).await.map_err(|_| given_up(&deadline))?;
            waited += delay;
        }
    }
}

impl Provider for CloudflareProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cloudflare
    }

    /// A real container's fixed report, or, on a local Box host (`wrangler dev`), that host's
    /// own report (its isolation and network), asked through the local provider on it.
    fn execution_authority<'a>(
        &'a self,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        match &self.route {
            Route::LocalHost { host, .. } => Box::pin(async move {
                host.execution_authority(signal).await.map_err(|e| e.with_provider(ProviderKind::Cloudflare))
            }),
            Route::Namespace(_) => Box::pin(std::future::ready(Ok(ExecutionAuthority::cloudflare()))),
        }
    }

    /// `true` in a Worker's namespace unless the config names a `sandboxId` (every Run's Box is
    /// then a kept one, which keeps its prepared projects itself) and unless a store said the
    /// Worker's `Sandbox` class has none: Boxes of their own start from the prepared project of
    /// their install digest, kept by a store Durable Object (`store.rs`).
    fn prepares(&self) -> bool {
        matches!(self.route, Route::Namespace(_)) && self.settings.sandbox_id.is_none() && !self.no_store()
    }

    /// The store named `name` when it keeps an archive: one RPC reading its storage (size in
    /// bytes; creation time unknown, 0). Without a name: `SANDBOX_NOT_SUPPORTED`, since Durable
    /// Objects cannot be listed.
    fn list_prepared<'a>(&'a self, name: Option<&'a str>) -> LocalBoxFuture<'a, Result<Vec<PreparedProject>>> {
        Box::pin(async move {
            let store = match name {
                Some(name) => self.store(name)?,
                None => None,
            };
            let Some(store) = store else {
                return Err(Error::new(
                    ErrorCode::NotSupported,
                    "The cloudflare provider cannot list prepared projects: Durable Objects cannot be listed.",
                )
                .with_provider(ProviderKind::Cloudflare));
            };
            let size = store.size().await.inspect_err(|e| self.note_no_store(e))?;
            Ok(if size > 0 { vec![(store.name, size, 0)] } else { Vec::new() })
        })
    }

    /// Deletes the archive of store `id`; whether it kept one.
    ///
    /// # Errors
    /// Those of the RPC.
    fn drop_prepared<'a>(&'a self, id: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            match self.store(id)? {
                Some(store) => store.drop_archive().await,
                None => Ok(false),
            }
        })
    }

    /// `true`: one Durable Object per `sandboxId`, its Runs serialized here.
    fn keeps_boxes(&self) -> bool {
        true
    }

    /// Destroys the kept Box of `sandbox_id` (`closeSandbox`): waits for the Run of this
    /// isolate that holds it, then RPC `destroy()` (or `DELETE` on the local Box host),
    /// bounded like a close; `true`. The next Run on the id starts a fresh container.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for an id the SDK would refuse; those of the destroy.
    fn close_kept_box<'a>(&'a self, sandbox_id: &'a str) -> LocalBoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let id = box_id_from(sandbox_id, self.settings.normalize_id).map_err(|m| {
                Error::new(ErrorCode::InvalidArgument, format!("closeSandbox sandboxId {m}"))
                    .with_provider(ProviderKind::Cloudflare)
            })?;
            let _turn = wait_for_turn(&self.lock_key(&id), None).await?;
            let destroyed = match &self.route {
                Route::Namespace(namespace) => {
                    let stub = stub_for(namespace, &id)?;
                    stop_within(CLOSE_DEADLINE_MS, Box::pin(destroy(&stub)))
                        .await
                        .map_err(|e| e.with_provider(ProviderKind::Cloudflare))
                }
                Route::LocalHost { base_url, token, fetcher, .. } => {
                    let url = format!("{}/cloudflare/{}", base_url.trim_end_matches('/'), local_container_id(&id));
                    let client = ContainerClient::new(fetcher.clone(), url, Some(token.clone()), self.retry);
                    stop_within(CLOSE_DEADLINE_MS, Box::pin(client.destroy_on_local_host(None)))
                        .await
                        .map_err(|e| e.with_provider(ProviderKind::Cloudflare))
                }
            };
            destroyed.map(|()| true)
        })
    }

    /// `openSandboxSession({ id })` is `openSandboxSession({ sandboxId: id })`: the Durable
    /// Object named `id` (a Session's id, or any sandboxId), its container started again when
    /// it slept. Cloudflare keeps no stopped state a reattach could refuse.
    fn attach<'a>(
        &'a self,
        id: &'a str,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        Box::pin(async move {
            let spec = BoxSpec { name: "session".to_owned(), sandbox_id: Some(id.to_owned()), ..BoxSpec::default() };
            self.open(&spec, signal).await
        })
    }

    /// Opens a Box: a new Durable Object per Run (id `vitehub-<name>-<hash>-<uuid>`), or the
    /// kept one of `sandboxId` (the Run's, else the config's; waiting for earlier Runs on it in
    /// this isolate). Sends `configure` (name, `sleepAfter`, `keepAlive`) and a `mkdir` of the
    /// Box cwd, which waits for the container to start; for a Run (`spec.staged_first`) no
    /// `mkdir`: its staged archive's write creates the cwd and waits for the start.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for a Run's `sandboxId` the SDK would refuse (before any
    /// request); `SANDBOX_PROVIDER_UNAVAILABLE` when the container does not start within the
    /// bounded retries; `SANDBOX_TRANSPORT_ERROR` for a failed request or an abort.
    fn open<'a>(
        &'a self,
        spec: &'a BoxSpec,
        signal: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        Box::pin(async move {
            let random = crate::sys::random_bytes::<16>().map_err(|_| {
                Error::new(ErrorCode::RuntimeError, "crypto.getRandomValues is not available in this runtime")
            })?;
            let kept_id = match &spec.sandbox_id {
                Some(id) => Some(box_id_from(id, self.settings.normalize_id).map_err(|m| {
                    Error::new(ErrorCode::InvalidArgument, format!("runSandbox option sandboxId {m}"))
                        .with_provider(ProviderKind::Cloudflare)
                })?),
                None => self.settings.sandbox_id.clone(),
            };
            let (id, kept, cwd) = match kept_id {
                Some(id) => (
                    id,
                    true,
                    format!("{WORK_DIR}/.vite-hub-runs/{}", unique_box_id("", random).trim_start_matches("vitehub-")),
                ),
                None => (unique_box_id(&spec.name, random), false, WORK_DIR.to_owned()),
            };
            let lock_key = kept.then(|| self.lock_key(&id));
            let lock = match &lock_key {
                Some(key) => Some(wait_for_turn(key, signal).await?),
                None => None,
            };
            let (client, stub) = match &self.route {
                Route::Namespace(namespace) => {
                    let stub = stub_for(namespace, &id)?;
                    let fetcher = Fetcher::Target(stub.clone().unchecked_into::<FetchTarget>());
                    let client = ContainerClient::new(fetcher, "http://container".to_owned(), None, self.retry)
                        .with_container_state_of(stub.clone());
                    (client, Some(stub))
                }
                Route::LocalHost { base_url, token, fetcher, .. } => {
                    let url = format!("{}/cloudflare/{}", base_url.trim_end_matches('/'), local_container_id(&id));
                    (ContainerClient::new(fetcher.clone(), url, Some(token.clone()), self.retry), None)
                }
            };
            // A Box of its own with a digest to prepare, or to start from: its store. Starting
            // from it reads the archive (one RPC, storage only), which the staging carries in.
            let store = match spec.prepared.as_ref().or(spec.prepared_name.as_ref()) {
                Some(name) if !kept && self.prepares() => self.store(name)?,
                _ => None,
            };
            let (start, restore) = match (&store, &spec.prepared) {
                (Some(store), Some(_)) => match store.archive(signal).await.inspect_err(|e| self.note_no_store(e))? {
                    Some(archive) => (PreparedStart::Restored, Some(archive)),
                    None => (PreparedStart::Missing, None),
                },
                _ => (PreparedStart::Empty, None),
            };
            let destroy_after = !kept || self.settings.keep_alive;
            let opened = CloudflareBox {
                client,
                stub,
                id,
                cwd,
                destroy_after,
                lock: RefCell::new(lock),
                staged: Cell::new(None),
                staging_unanswered: Cell::new(false),
                store,
                start: Cell::new(start),
                restore: RefCell::new(restore),
                staged_prepared: Cell::new(None),
                packed: RefCell::new(None),
            };
            if let Some(stub) = &opened.stub {
                self.configure(stub, &opened.id, signal).await?;
            }
            if spec.staged_first {
                return Ok(Box::new(opened) as Box<dyn BoxSession>);
            }
            if let Err(error) = opened.client.mkdir(&opened.cwd, signal).await {
                // A container that started but failed here would otherwise run until it
                // sleeps: a Box of its own is destroyed (bounded, its failure not reported).
                if opened.destroy_after {
                    let _ = opened.close().await;
                }
                return Err(error.with_operation(Operation::Create));
            }
            Ok(Box::new(opened) as Box<dyn BoxSession>)
        })
    }
}

/// `namespace.get(namespace.idFromName(id))`, as the SDK's `getContainer` does.
fn stub_for(namespace: &DurableObjectNamespace, id: &str) -> Result<DurableObjectStub> {
    let failed = |e: JsValue| {
        Error::new(
            ErrorCode::TransportError,
            format!(
                "the Durable Object of Box {id} could not be reached: {}",
                js_message(&e),
                id = vite_hub_sandbox_core::error::quoted(id)
            ),
        )
        .with_provider(ProviderKind::Cloudflare)
        .with_operation(Operation::Create)
    };
    let object_id = namespace.id_from_name(id).map_err(failed)?;
    namespace.get_stub(&object_id).map_err(failed)
}

/// The id in the local Box host's path (`[A-Za-z0-9][A-Za-z0-9._-]*`): other characters
/// (a generated id's `%`) become `_`.
fn local_container_id(id: &str) -> String {
    let mapped: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    if mapped.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        mapped
    } else {
        format!("x{mapped}")
    }
}
