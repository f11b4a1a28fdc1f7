//! The Cloudflare Sandbox provider: from inside a Worker, the container control API of a
//! `Sandbox` Durable Object (`@cloudflare/sandbox` 0.12.10), reached through the stub's `fetch`
//! (cloudflare-sandbox-protocol.md §3, §4); in local development (`SANDBOX_LOCAL_URL` and
//! `SANDBOX_LOCAL_TOKEN` in the Worker env) the same API on the local Box host.
//!
//! A Box is one Durable Object (one container): a new one per Run, destroyed after it, unless
//! `sandboxId` names a kept one, whose Runs are serialized in the isolate and whose Run files are
//! deleted afterwards. Upstream vocabulary (`sessionId`, `exitCode`, the SSE events) stays in this
//! folder; message text is read only in [`classify`].

pub mod classify;
pub mod exec;
pub mod options;
pub mod wire;

#[cfg(target_arch = "wasm32")]
pub mod client;

pub use options::{CloudflareOptions, CloudflareSettings, LocalContainerHost, DEFAULT_BINDING};

#[cfg(target_arch = "wasm32")]
pub use provider::{namespace_in, CloudflareBox, CloudflareProvider};

#[cfg(target_arch = "wasm32")]
mod provider {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use futures::future::LocalBoxFuture;
    use js_sys::Reflect;

    use crate::http::deadline::{stop_within, Deadline};
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_futures::JsFuture;
    use web_sys::AbortSignal;

    use super::classify::{self, StartupRetry};
    use super::client::{ContainerClient, REQUEST_DEADLINE_MS};
    use super::exec::{execute_request, relative_to, unpack_then, STAGED_ARCHIVE, STAGED_ERRORS, STAGE_EXIT};
    use super::options::{box_id_from, unique_box_id, CloudflareSettings, LocalContainerHost};
    use super::wire::{ConfigureRequest, SandboxName};
    use crate::command::{Command, CommandOutcome};
    use crate::error::{Error, ErrorCode, Operation, Result};
    use crate::http::fetch::{abort_promise, js_message, sleep_unless_aborted, Fetcher};
    use crate::provider::output::{LogStream, OutputStream};
    use crate::provider::box_session::{BoxSession, BoxSpec, FileRead, Provider, ProviderKind};
    use crate::session::ExecutionAuthority;
    use crate::sys::{DurableObjectNamespace, DurableObjectStub, FetchTarget};
    // The tar writer is the Vercel write format's; it moves to the core crate's transfer module.
    use crate::provider::vercel::archive::write_tar;
    use crate::transfer::box_file::BoxFile;

    /// The container's work directory (sessions and sessionless commands start there, §4.2).
    const WORK_DIR: &str = "/workspace";
    /// Commands whose timeout is at most this go through `/api/execute` (the container kills
    /// them on time); longer ones stream (`/api/execute/stream`), because the container server
    /// cuts a request that sends no byte for 255 s (§6.1).
    const MAX_BUFFERED_EXEC_MS: u64 = 240_000;
    /// Bound of a close (destroy, or deleting a kept Box's Run directory), in ms.
    const CLOSE_DEADLINE_MS: u32 = 15_000;

    /// How often a Run waiting for a kept Box checks whether it is free, in ms.
    const TURN_POLL_MS: f64 = 50.0;

    thread_local! {
        /// The kept Boxes (by binding or host, and id) a Run of this isolate holds now: Runs on the
        /// same `sandboxId` wait in turn.
        /// A Vec, not a BTreeSet: one map type fewer in the runtime wasm (docs/internals.md).
        static KEPT_BOXES_IN_USE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    /// A Run's turn on a kept Box; dropping it frees the Box for the next Run.
    #[derive(Debug)]
    struct Turn(String);

    impl Drop for Turn {
        fn drop(&mut self) {
            KEPT_BOXES_IN_USE.with(|boxes| boxes.borrow_mut().retain(|key| *key != self.0));
        }
    }

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

        fn lock_key(&self, id: &str) -> String {
            match &self.route {
                Route::Namespace(_) => format!("{}\0{id}", self.settings.binding),
                Route::LocalHost { base_url, .. } => format!("{base_url}\0{id}"),
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
                    (ErrorCode::ProviderUnavailable, format!("the Sandbox Durable Object did not answer configure within {REQUEST_DEADLINE_MS}ms"))
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
                        let raced = match signal {
                            Some(signal) => js_sys::Promise::race(&js_sys::Array::of2(&promise, &abort_promise(signal))),
                            None => promise,
                        };
                        let answer = JsFuture::from(raced).await.map(|_| ());
                        if signal.is_some_and(AbortSignal::aborted) {
                            return Err(given_up(&deadline));
                        }
                        answer
                    }
                    Err(error) => Err(error),
                };
                let Err(error) = outcome else { return Ok(()) };
                let message = js_message(&error);
                let verdict = classify::classify_rejection(&message);
                let delay = if verdict.is_retryable() { self.retry.delay_ms(attempts, waited, None) } else { None };
                let Some(delay) = delay else {
                    return Err(Error::new(verdict.code(), format!("the Sandbox Durable Object refused configure: {message}"))
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
        fn execution_authority<'a>(&'a self, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
            match &self.route {
                Route::LocalHost { host, .. } => {
                    Box::pin(async move { host.execution_authority(signal).await.map_err(|e| e.with_provider(ProviderKind::Cloudflare)) })
                }
                Route::Namespace(_) => Box::pin(std::future::ready(Ok(ExecutionAuthority::cloudflare()))),
            }
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
                    Error::new(ErrorCode::InvalidArgument, format!("closeSandbox sandboxId {m}")).with_provider(ProviderKind::Cloudflare)
                })?;
                let _turn = wait_for_turn(&self.lock_key(&id), None).await?;
                let destroyed = match &self.route {
                    Route::Namespace(namespace) => {
                        let stub = stub_for(namespace, &id)?;
                        stop_within(CLOSE_DEADLINE_MS, Box::pin(destroy(&stub))).await.map_err(|e| e.with_provider(ProviderKind::Cloudflare))
                    }
                    Route::LocalHost { base_url, token, fetcher, .. } => {
                        let url = format!("{}/cloudflare/{}", base_url.trim_end_matches('/'), local_container_id(&id));
                        let client = ContainerClient::new(fetcher.clone(), url, Some(token.clone()), self.retry);
                        stop_within(CLOSE_DEADLINE_MS, Box::pin(client.destroy_on_local_host(None))).await.map_err(|e| e.with_provider(ProviderKind::Cloudflare))
                    }
                };
                destroyed.map(|()| true)
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
        fn open<'a>(&'a self, spec: &'a BoxSpec, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
            Box::pin(async move {
                let random = crate::sys::random_bytes::<16>()
                    .map_err(|_| Error::new(ErrorCode::RuntimeError, "crypto.getRandomValues is not available in this runtime"))?;
                let kept_id = match &spec.sandbox_id {
                    Some(id) => Some(box_id_from(id, self.settings.normalize_id).map_err(|m| {
                        Error::new(ErrorCode::InvalidArgument, format!("runSandbox option sandboxId {m}")).with_provider(ProviderKind::Cloudflare)
                    })?),
                    None => self.settings.sandbox_id.clone(),
                };
                let (id, kept, cwd) = match kept_id {
                    Some(id) => (id, true, format!("{WORK_DIR}/.vite-hub-runs/{}", unique_box_id("", random).trim_start_matches("vitehub-"))),
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
                        (ContainerClient::new(fetcher, "http://container".to_owned(), None, self.retry), Some(stub))
                    }
                    Route::LocalHost { base_url, token, fetcher, .. } => {
                        let url = format!("{}/cloudflare/{}", base_url.trim_end_matches('/'), local_container_id(&id));
                        (ContainerClient::new(fetcher.clone(), url, Some(token.clone()), self.retry), None)
                    }
                };
                let destroy_after = !kept || self.settings.keep_alive;
                let opened = CloudflareBox { client, stub, id, cwd, destroy_after, lock: RefCell::new(lock), staged: Cell::new(None) };
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

    /// Waits for the turn of this Run on the kept Box `key` (the Runs before it in this isolate
    /// closed), or for `signal`. It polls on a timer of its own instead of being woken by the
    /// Run that frees the Box: workerd ties a promise to the request that created it, cancels a
    /// request that waits with no I/O of its own as hung, and would charge the waiter's requests
    /// to the other request if that one's close resumed it.
    async fn wait_for_turn(key: &str, signal: Option<&AbortSignal>) -> Result<Turn> {
        loop {
            let taken = KEPT_BOXES_IN_USE.with(|boxes| {
                let mut boxes = boxes.borrow_mut();
                let free = !boxes.iter().any(|held| held == key);
                if free {
                    boxes.push(key.to_owned());
                }
                free
            });
            if taken {
                return Ok(Turn(key.to_owned()));
            }
            sleep_unless_aborted(TURN_POLL_MS, signal).await.map_err(|_| {
                Error::new(ErrorCode::TransportError, "waiting for the kept Box was aborted")
                    .with_provider(ProviderKind::Cloudflare)
                    .with_operation(Operation::Create)
            })?;
        }
    }

    /// `namespace.get(namespace.idFromName(id))`, as the SDK's `getContainer` does.
    fn stub_for(namespace: &DurableObjectNamespace, id: &str) -> Result<DurableObjectStub> {
        let failed = |e: JsValue| {
            Error::new(ErrorCode::TransportError, format!("the Durable Object of Box {id} could not be reached: {}", js_message(&e), id = crate::error::quoted(id)))
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Create)
        };
        let object_id = namespace.id_from_name(id).map_err(failed)?;
        namespace.get_stub(&object_id).map_err(failed)
    }

    /// The id in the local Box host's path (`[A-Za-z0-9][A-Za-z0-9._-]*`): other characters
    /// (a generated id's `%`) become `_`.
    fn local_container_id(id: &str) -> String {
        let mapped: String = id.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
        if mapped.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            mapped
        } else {
            format!("x{mapped}")
        }
    }

    /// One Cloudflare Box: a `Sandbox` Durable Object and its container.
    #[derive(Debug)]
    pub struct CloudflareBox {
        client: ContainerClient,
        stub: Option<DurableObjectStub>,
        id: String,
        cwd: String,
        /// Destroyed at close (a Box of its own, or a kept one with `keepAlive`), else only the
        /// Run's directory is deleted.
        destroy_after: bool,
        /// This Run's turn on a kept Box; released at close (or drop).
        lock: RefCell<Option<Turn>>,
        /// A staged archive waits in the cwd for the next Command to unpack it: the path
        /// segments its entries drop (those of the cwd).
        staged: Cell<Option<usize>>,
    }

    impl BoxSession for CloudflareBox {
        /// Always `cloudflare`.
        fn provider(&self) -> ProviderKind {
            ProviderKind::Cloudflare
        }

        /// The Box cwd: `/workspace` for a Box of its own, a directory of this Run's for a kept one.
        fn cwd(&self) -> &str {
            &self.cwd
        }

        /// The Box id (the Durable Object name).
        fn id(&self) -> &str {
            &self.id
        }

        /// The Box's work directory when the Box lives on the local Box host (local development,
        /// no Durable Object stub), whose file routes and commands see different roots outside it.
        fn local_box_host_work_dir(&self) -> Option<&str> {
            self.stub.is_none().then_some(WORK_DIR)
        }

        /// `/workspace` for a kept Box that outlives the Run (`sandboxId` without `keepAlive`),
        /// whose Runs work in directories below it; `None` for a Box destroyed after the Run.
        fn kept_root(&self) -> Option<&str> {
            (self.cwd != WORK_DIR && !self.destroy_after).then_some(WORK_DIR)
        }

        /// Writes `files` (paths relative to `/`): `mkdir -p` of their directories, then one
        /// `/api/write` per file (base64), a few at a time; then a `chmod` for executable modes.
        fn write_files<'a>(&'a self, files: &'a [BoxFile], signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
            Box::pin(async move {
                for file in files {
                    crate::transfer::box_file::validate_relative_path(&file.path)?;
                }
                let mut dirs: Vec<String> = Vec::new();
                for file in files {
                    let Some((dir, _)) = file.path.rsplit_once('/') else {
                        continue;
                    };
                    let dir = format!("/{dir}");
                    // `mkdir -p` of the deepest directories only.
                    if dirs.iter().any(|d| d == &dir || d.starts_with(&format!("{dir}/"))) {
                        continue;
                    }
                    dirs.retain(|d| !dir.starts_with(&format!("{d}/")));
                    dirs.push(dir);
                }
                for dir in &dirs {
                    self.client.mkdir(dir, signal).await?;
                }
                // One at a time: each write is one round trip to the Durable Object, and a join of
                // futures costs more wasm than it saves here.
                for file in files {
                    self.client.write_file(&format!("/{}", file.path), &file.bytes, signal).await?;
                }
                let executable: Vec<&BoxFile> = files.iter().filter(|f| f.mode & 0o111 != 0).collect();
                if !executable.is_empty() {
                    let mut args = vec!["+x".to_owned(), "--".to_owned()];
                    args.extend(executable.iter().map(|f| format!("/{}", f.path)));
                    let chmod =
                        Command { program: "chmod".into(), args, timeout_ms: Some(30_000), max_stderr_bytes: 4096, ..Command::default() };
                    let outcome = self.exec(&chmod, signal).await?;
                    if outcome.exit_code != 0 {
                        return Err(Error::new(ErrorCode::ExecutionError, format!("chmod failed: {}", outcome.stderr.trim()))
                            .with_provider(ProviderKind::Cloudflare)
                            .with_operation(Operation::Write));
                    }
                }
                Ok(())
            })
        }

        /// Stages a Run's `files` (paths relative to `/`, all below the Box cwd) in one request:
        /// one gzip'd tar ([`write_tar`]), base64 in one `/api/write` to
        /// `<cwd>/.vite-hub-stage.tgz` (its parents created there). The next [`CloudflareBox::exec`]
        /// or [`CloudflareBox::exec_streaming`] unpacks it in its own `bash -c` line first
        /// ([`unpack_then`]): a Run's staging costs one request, its Commands none more.
        ///
        /// # Errors
        /// `SANDBOX_INVALID_ARGUMENT` for a bad path; `SANDBOX_RUNTIME_ERROR` for a file outside
        /// the cwd or a failed gzip; those of the write. A failed unpacking is the next Command's
        /// `SANDBOX_EXECUTION_ERROR`.
        fn stage_files<'a>(&'a self, files: &'a [BoxFile], signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
            Box::pin(async move {
                let root = self.cwd.trim_matches('/');
                if let Some(outside) = files.iter().find(|f| !root.is_empty() && f.path.strip_prefix(root).is_none_or(|rest| !rest.starts_with('/'))) {
                    return Err(Error::new(ErrorCode::RuntimeError, format!("the staged file /{} is outside the Box cwd {}", outside.path, self.cwd))
                        .with_provider(ProviderKind::Cloudflare)
                        .with_operation(Operation::Write));
                }
                let archive = crate::transfer::gzip::gzip(&write_tar(files)?).await.map_err(|e| e.with_provider(ProviderKind::Cloudflare))?;
                self.client.write_file(&format!("{}/{STAGED_ARCHIVE}", self.cwd.trim_end_matches('/')), &archive, signal).await?;
                self.staged.set(Some(root.split('/').filter(|s| !s.is_empty()).count()));
                Ok(())
            })
        }

        /// Runs `command` in a fresh `bash -c` (sessionless) and waits for it: `/api/execute`,
        /// or `/api/execute/stream` when it may run longer than the container server's idle cut.
        /// The first Command after [`CloudflareBox::stage_files`] unpacks the staged files first.
        ///
        /// # Errors
        /// Those of the request; `SANDBOX_EXECUTION_ERROR` (operation `stage`) when the staged
        /// files could not be unpacked (the Command did not run).
        fn exec<'a>(&'a self, command: &'a Command, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
            Box::pin(async move {
                let (request, staged) = self.request_for(command);
                let outcome = if command.timeout_ms.is_some_and(|ms| ms <= MAX_BUFFERED_EXEC_MS) {
                    self.client.execute(&request, command, Operation::Exec, signal).await
                } else {
                    self.client.execute_stream(&request, command, Operation::Exec, &mut |_, _| {}, signal).await
                };
                self.unpacked(staged, outcome, signal).await
            })
        }

        /// Runs `command` and hands its output to `on_output` live: always `/api/execute/stream`
        /// (SSE events as the pipes deliver them). The container does not apply the Command's
        /// timeout there: `signal` (the Run's deadline) ends the wait, and the Box's close (or,
        /// on the local Box host, the hang-up) kills the command.
        fn exec_streaming<'a>(
            &'a self,
            command: &'a Command,
            on_output: &'a mut dyn FnMut(OutputStream, &str),
            signal: Option<&'a AbortSignal>,
        ) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
            Box::pin(async move {
                let (request, staged) = self.request_for(command);
                let outcome = self.client.execute_stream(&request, command, Operation::Exec, on_output, signal).await;
                self.unpacked(staged, outcome, signal).await
            })
        }

        /// Reads a file by absolute Box path; `None` when it does not exist.
        ///
        /// The container API answers a file whole (base64 in JSON), so the cap is checked once the
        /// answer is decoded.
        fn read_file<'a>(&'a self, path: &'a str, max_bytes: u64, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<FileRead>> {
            Box::pin(async move {
                Ok(match self.client.read_file(path, signal).await? {
                    None => FileRead::Missing,
                    Some(bytes) if bytes.len() as u64 > max_bytes => FileRead::TooLarge(bytes.len() as u64),
                    Some(bytes) => FileRead::Bytes(bytes),
                })
            })
        }

        /// Starts `command` as a background process (`/api/process/start`, a fresh `bash -c` like
        /// [`CloudflareBox::exec`]); its process id.
        fn spawn<'a>(&'a self, command: &'a Command, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<String>> {
            Box::pin(async move { self.client.start_process(&execute_request(command, &self.cwd), signal).await })
        }

        /// Follows process `id` (`/api/process/{id}/stream`).
        fn logs<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<Box<dyn LogStream>>> {
            Box::pin(async move { Ok(Box::new(self.client.process_stream(id, signal).await?) as Box<dyn LogStream>) })
        }

        /// Waits for process `id` to exit (reads its stream to the `exit` event, as the SDK's
        /// `waitForExit` does); its exit code.
        fn wait<'a>(&'a self, id: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<i32>> {
            Box::pin(async move { self.client.process_stream(id, signal).await?.exit_code().await })
        }

        /// Kills process `id` (`DELETE /api/process/{id}`: the container API takes no signal, so
        /// only SIGTERM, 15, is accepted here).
        ///
        /// # Errors
        /// `SANDBOX_NOT_SUPPORTED` for another signal.
        fn kill<'a>(&'a self, id: &'a str, signal_number: u8, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
            Box::pin(async move {
                if signal_number != 15 {
                    return Err(Error::new(
                        ErrorCode::NotSupported,
                        format!("the Cloudflare container API kills a process with SIGTERM only, not signal {signal_number}"),
                    )
                    .with_provider(ProviderKind::Cloudflare)
                    .with_operation(Operation::Exec));
                }
                self.client.kill_process(id, signal).await
            })
        }

        /// Whether `path` exists (`/api/exists`).
        fn exists<'a>(&'a self, path: &'a str, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<bool>> {
            Box::pin(self.client.exists(path, signal))
        }

        /// Creates a directory (`/api/mkdir`, `mkdir [-p]`).
        fn mkdir<'a>(&'a self, path: &'a str, recursive: bool, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
            Box::pin(self.client.mkdir_with(path, recursive, signal))
        }

        /// Removes a file (`/api/delete`; a directory is refused there) or, with `recursive`, a
        /// tree (`rm -rf` in the container, which has no route for it). A missing path is no error.
        fn remove<'a>(&'a self, path: &'a str, recursive: bool, signal: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
            Box::pin(async move {
                if !recursive {
                    return self.client.delete_file(path, signal).await.map_err(|e| e.with_operation(Operation::Remove));
                }
                let rm = Command {
                    program: "rm".into(),
                    args: vec!["-rf".into(), "--".into(), path.to_owned()],
                    timeout_ms: Some(60_000),
                    max_stderr_bytes: 4096,
                    ..Command::default()
                };
                let outcome = self.exec(&rm, signal).await?;
                if outcome.exit_code != 0 {
                    return Err(Error::new(ErrorCode::ExecutionError, format!("remove failed in the Box: {}", outcome.stderr.trim()))
                        .with_provider(ProviderKind::Cloudflare)
                        .with_operation(Operation::Remove));
                }
                Ok(())
            })
        }

        /// Ends the Run on this Box: destroys it (RPC `destroy()`, or `DELETE` on the local Box
        /// host), or for a kept Box deletes the Run's directory; then releases the Box to the next
        /// Run on its id.
        fn close(&self) -> LocalBoxFuture<'_, Result<()>> {
            Box::pin(async move {
                let result = stop_within(CLOSE_DEADLINE_MS, Box::pin(self.end_run())).await.map_err(|e| e.with_provider(ProviderKind::Cloudflare));
                self.lock.borrow_mut().take();
                result
            })
        }
    }

    impl CloudflareBox {
        /// The request of `command`; with a staged archive waiting, the line unpacks it first (in
        /// the Box cwd, which its write created) and then changes to the Command's cwd.
        fn request_for(&self, command: &Command) -> (crate::provider::cloudflare::wire::ExecuteRequest, bool) {
            let mut request = execute_request(command, &self.cwd);
            let Some(strip) = self.staged.take() else { return (request, false) };
            let cwd = request.cwd.replace(self.cwd.clone()).unwrap_or_default();
            request.command = unpack_then(strip, relative_to(&cwd, &self.cwd), &request.command);
            (request, true)
        }

        /// `outcome`, or the unpacking's failure when the line exited [`STAGE_EXIT`] and left
        /// its errors behind (one more request, only then).
        async fn unpacked(&self, staged: bool, outcome: Result<CommandOutcome>, signal: Option<&AbortSignal>) -> Result<CommandOutcome> {
            let outcome = outcome?;
            if !staged || outcome.exit_code != STAGE_EXIT {
                return Ok(outcome);
            }
            let Some(errors) = self.client.read_file(&format!("{}/{STAGED_ERRORS}", self.cwd.trim_end_matches('/')), signal).await? else {
                return Ok(outcome);
            };
            let errors = String::from_utf8_lossy(&errors);
            Err(Error::new(ErrorCode::ExecutionError, format!("the Run's files could not be unpacked in the Box: {}", errors.trim()))
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Stage))
        }

        async fn end_run(&self) -> Result<()> {
            // A Run that ended before its first Command: its archive goes with the Box (or the
            // Run directory), never unpacked by the clean-up below.
            self.staged.set(None);
            if self.destroy_after {
                match &self.stub {
                    Some(stub) => destroy(stub).await,
                    None => self.client.destroy_on_local_host(None).await,
                }
            } else {
                let rm = Command {
                    program: "rm".into(),
                    args: vec!["-rf".into(), "--".into(), self.cwd.clone()],
                    timeout_ms: Some(60_000),
                    max_stderr_bytes: 4096,
                    ..Command::default()
                };
                match self.exec(&rm, None).await {
                    Ok(outcome) if outcome.exit_code == 0 => Ok(()),
                    Ok(outcome) => {
                        Err(Error::new(ErrorCode::RuntimeError, format!("the Run's files could not be deleted: {}", outcome.stderr.trim()))
                            .with_provider(ProviderKind::Cloudflare)
                            .with_operation(Operation::Stop))
                    }
                    Err(error) => Err(error.with_operation(Operation::Stop)),
                }
            }
        }
    }

    /// RPC `stub.destroy()` (§6.6: a "no container instance" answer counts as done there).
    async fn destroy(stub: &DurableObjectStub) -> Result<()> {
        let outcome = match stub.destroy() {
            Ok(promise) => JsFuture::from(js_sys::Promise::resolve(&promise)).await.map(|_| ()),
            Err(error) => Err(error),
        };
        outcome.map_err(|e| {
            Error::new(ErrorCode::TransportError, format!("the Box could not be destroyed: {}", js_message(&e)))
                .with_provider(ProviderKind::Cloudflare)
                .with_operation(Operation::Stop)
        })
    }

    impl Drop for CloudflareBox {
        fn drop(&mut self) {
            // A Run that never reached close (a panic-free early return) still frees its turn.
            self.lock.get_mut().take();
        }
    }
}
