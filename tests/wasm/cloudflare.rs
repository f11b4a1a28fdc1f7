//! The Cloudflare provider through a Durable Object stub's `fetch`, against an in-process fake
//! namespace and stub, **for fault injection only** (DESIGN.md §8): container start 503s then
//! success, 503s that never end, a command stream cut mid-event, the container's own timeout,
//! and the kept-Box (sandboxId) lock. Each case asserts the exact outcome and the exact requests.
//! Success paths run against the real `Sandbox` class in workerd (tests/node/cloudflare-*.test.mjs).

use vite_hub_sandbox::http::fetch::Fetcher;
use vite_hub_sandbox::provider::cloudflare::classify::StartupRetry;
use vite_hub_sandbox::provider::cloudflare::{CloudflareProvider, CloudflareSettings};
use vite_hub_sandbox::provider::{BoxSpec, FileRead, Provider};
use vite_hub_sandbox::sys::DurableObjectNamespace;
use vite_hub_sandbox_core::command::Command;
use vite_hub_sandbox_core::error::ErrorCode;
use vite_hub_sandbox_core::transfer::box_file::BoxFile;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

/// A fake namespace whose stubs log every call as `"<what> <id> <detail>"` and answer container
/// requests with `answer(path, body, n)` (`n`: how many requests reached that path so far).
fn fake(answer: &str) -> (DurableObjectNamespace, js_sys::Array) {
    let make = js_sys::Function::new_with_args(
        "answer",
        r#"
        const log = [];
        const counts = {};
        const ns = {
          idFromName(name) { return { name }; },
          get(id) {
            return {
              configure(cfg) { log.push(`configure ${id.name} ${JSON.stringify(cfg)}`); return Promise.resolve(); },
              destroy() { log.push(`destroy ${id.name}`); return Promise.resolve(); },
              async fetch(request) {
                const path = new URL(request.url).pathname;
                const body = await request.text();
                counts[path] = (counts[path] ?? 0) + 1;
                log.push(`${path} ${id.name} ${body}`);
                return answer(path, body ? JSON.parse(body) : null, counts[path]);
              },
            };
          },
        };
        return [ns, log];
        "#,
    );
    let answer = js_sys::Function::new_with_args("path, body, n", answer);
    let pair: js_sys::Array = make.call1(&JsValue::UNDEFINED, &answer).unwrap().unchecked_into();
    (pair.get(0).unchecked_into(), pair.get(1).unchecked_into())
}

fn settings(sandbox_id: Option<&str>) -> CloudflareSettings {
    CloudflareSettings {
        binding: "SANDBOX".into(),
        sandbox_id: sandbox_id.map(str::to_owned),
        sleep_after: serde_json::json!("5m"),
        keep_alive: false,
        normalize_id: false,
        local_host: None,
    }
}

/// Four attempts, 1 ms apart: the bound is what is tested, not the delays.
const QUICK: StartupRetry = StartupRetry { max_attempts: 4, base_delay_ms: 1, max_delay_ms: 1, budget_ms: 1_000 };

fn provider(namespace: DurableObjectNamespace, sandbox_id: Option<&str>) -> CloudflareProvider {
    CloudflareProvider::new(settings(sandbox_id), Some(namespace), Fetcher::Global, |_, _| {
        unreachable!("no local Box host here")
    })
    .unwrap()
    .with_startup_retry(QUICK)
}

fn lines(log: &js_sys::Array) -> Vec<String> {
    log.iter().map(|v| v.as_string().unwrap()).collect()
}

fn count(log: &js_sys::Array, prefix: &str) -> usize {
    lines(log).iter().filter(|l| l.starts_with(prefix)).count()
}

const OK: &str = "return Response.json({ success: true, timestamp: 't' });";
const STARTING: &str = "Response.json({ code: 'INTERNAL_ERROR', message: 'Container is starting. Please retry in a moment.', httpStatus: 503 }, { status: 503, headers: { 'retry-after': '0' } })";

fn node(args: &[&str], timeout_ms: Option<u64>) -> Command {
    Command {
        program: "node".into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        timeout_ms,
        max_stdout_bytes: 1 << 20,
        max_stderr_bytes: 1 << 20,
        ..Command::default()
    }
}

#[wasm_bindgen_test]
async fn a_start_503_is_retried_then_the_box_opens() {
    let (ns, log) = fake(&format!("if (path === '/api/mkdir' && n <= 2) return {STARTING}; {OK}"));
    let opened = provider(ns, None).open(&BoxSpec::default(), None).await.unwrap();
    assert_eq!(count(&log, "/api/mkdir"), 3, "{:?}", lines(&log));
    assert_eq!(count(&log, "configure"), 1);
    let first = lines(&log)[0].clone();
    assert!(first.starts_with(&format!("configure {} ", opened.id())), "{first}");
    assert!(first.contains(r#""sleepAfter":"5m""#) && first.contains(r#""keepAlive":false"#), "{first}");
    opened.close().await.unwrap();
    assert_eq!(lines(&log).last().unwrap(), &format!("destroy {}", opened.id()));
}

#[wasm_bindgen_test]
async fn start_503s_that_never_end_are_bounded_and_unavailable() {
    let (ns, log) = fake(&format!("return {STARTING};"));
    let error = provider(ns, None).open(&BoxSpec::default(), None).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::ProviderUnavailable);
    assert_eq!(error.http_status(), 503);
    assert!(error.message().contains("after 4 attempts"), "{}", error.message());
    assert_eq!(count(&log, "/api/mkdir"), QUICK.max_attempts as usize);
    assert_eq!(count(&log, "destroy"), 1, "the Box that did not start is destroyed");
}

#[wasm_bindgen_test]
async fn a_command_is_never_sent_twice_even_after_a_503() {
    let (ns, log) = fake(&format!("if (path === '/api/execute') return {STARTING}; {OK}"));
    let opened = provider(ns, None).open(&BoxSpec::default(), None).await.unwrap();
    let error = opened.exec(&node(&["x.mjs"], Some(5_000)), None).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::ProviderUnavailable);
    assert_eq!(count(&log, "/api/execute"), 1);
}

#[wasm_bindgen_test]
async fn a_stream_cut_mid_event_is_a_transport_error_and_not_replayed() {
    // No timeout: the command streams (`/api/execute/stream`); the body stops inside an event.
    let (ns, log) = fake(&format!(
        "if (path === '/api/execute/stream') {{
           const bytes = new TextEncoder().encode('data: {{\"type\":\"start\",\"command\":\"node x.mjs\"}}\\n\\ndata: {{\"type\":\"stdout\",\"data\":\"hal');
           return new Response(new ReadableStream({{ start(c) {{ c.enqueue(bytes); c.close(); }} }}), {{ headers: {{ 'content-type': 'text/event-stream' }} }});
         }}
         {OK}"
    ));
    let opened = provider(ns, None).open(&BoxSpec::default(), None).await.unwrap();
    let error = opened.exec(&node(&["x.mjs"], None), None).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::TransportError);
    assert!(error.message().contains("cut inside an event"), "{}", error.message());
    assert_eq!(count(&log, "/api/execute/stream"), 1);
    let sent = lines(&log).into_iter().find(|l| l.starts_with("/api/execute/stream")).unwrap();
    assert!(sent.contains(r#""sessionId":"__DISABLE_SESSION__""#) && sent.contains(r#""cwd":"/workspace""#), "{sent}");
}

#[wasm_bindgen_test]
async fn a_complete_stream_gives_the_exit_code_and_output_split_anywhere() {
    // Each byte its own chunk: CR/LF pairs and the multi-byte characters are cut everywhere.
    let (ns, _log) = fake(&format!(
        "if (path === '/api/execute/stream') {{
           const text = 'data: {{\"type\":\"start\"}}\\r\\n\\r\\ndata: {{\"type\":\"stdout\",\"data\":\"日本 😀\\\\n\"}}\\r\\n\\r\\ndata: {{\"type\":\"stderr\",\"data\":\"é\"}}\\n\\ndata: {{\"type\":\"complete\",\"exitCode\":3}}\\n\\n';
           const bytes = new TextEncoder().encode(text);
           return new Response(new ReadableStream({{ start(c) {{ for (const b of bytes) c.enqueue(new Uint8Array([b])); c.close(); }} }}));
         }}
         {OK}"
    ));
    let opened = provider(ns, None).open(&BoxSpec::default(), None).await.unwrap();
    let outcome = opened.exec(&node(&["x.mjs"], None), None).await.unwrap();
    assert_eq!((outcome.exit_code, outcome.stdout.as_str(), outcome.stderr.as_str()), (3, "日本 😀\n", "é"));
}

#[wasm_bindgen_test]
async fn the_containers_own_timeout_is_a_504_timeout() {
    let (ns, log) = fake(&format!(
        "if (path === '/api/execute') return Response.json({{ success: false, exitCode: 124, stdout: 'partial', stderr: 'Command timed out after 50ms\\n', command: body.command, duration: 0 }});
         {OK}"
    ));
    let opened = provider(ns, None).open(&BoxSpec::default(), None).await.unwrap();
    let error = opened.exec(&node(&["x.mjs"], Some(50)), None).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::Timeout);
    assert_eq!(error.http_status(), 504);
    assert_eq!(count(&log, "/api/execute"), 1);
    let sent = lines(&log).into_iter().find(|l| l.starts_with("/api/execute")).unwrap();
    assert!(sent.contains(r#""timeoutMs":50"#) && sent.contains(r#""command":"node x.mjs""#), "{sent}");
}

#[wasm_bindgen_test]
async fn files_travel_as_base64_and_a_missing_file_reads_as_none() {
    let (ns, log) = fake(&format!(
        "if (path === '/api/read') return body.path === '/workspace/out.bin'
           ? Response.json({{ success: true, path: body.path, content: 'AAH/', encoding: 'base64', isBinary: true, size: 3 }})
           : Response.json({{ code: 'FILE_NOT_FOUND', message: 'File not found: ' + body.path, httpStatus: 404 }}, {{ status: 404 }});
         {OK}"
    ));
    let opened = provider(ns, None).open(&BoxSpec::default(), None).await.unwrap();
    let files = vec![
        BoxFile { path: "workspace/project/a.mjs".into(), bytes: b"export default 1".to_vec(), mode: 0o644 },
        BoxFile { path: "workspace/project/lib/b.bin".into(), bytes: vec![0, 1, 255], mode: 0o600 },
    ];
    opened.write_files(&files, None).await.unwrap();
    let sent = lines(&log);
    assert!(
        sent.iter().any(|l| l.contains(r#"/api/write "#)
            && l.contains(r#""path":"/workspace/project/lib/b.bin","content":"AAH/","encoding":"base64""#)),
        "{sent:?}"
    );
    assert_eq!(count(&log, "/api/write"), 2);
    assert!(
        sent.iter()
            .any(|l| l.starts_with("/api/mkdir") && l.contains(r#""path":"/workspace/project/lib","recursive":true"#)),
        "{sent:?}"
    );
    assert_eq!(opened.read_file("/workspace/out.bin", 1024, None).await.unwrap(), FileRead::Bytes(vec![0, 1, 255]));
    assert_eq!(opened.read_file("/workspace/out.bin", 2, None).await.unwrap(), FileRead::TooLarge(3));
    assert_eq!(opened.read_file("/workspace/none", 1024, None).await.unwrap(), FileRead::Missing);
}

#[wasm_bindgen_test]
async fn runs_on_a_kept_box_wait_their_turn_and_only_delete_their_files() {
    let (ns, log) = fake(&format!("if (path === '/api/execute') return Response.json({{ success: true, exitCode: 0, stdout: '', stderr: '' }}); {OK}"));
    let provider = provider(ns, Some("shared-box"));
    let spec = BoxSpec::default();
    let first = provider.open(&spec, None).await.unwrap();
    assert_eq!(first.id(), "shared-box");
    assert!(first.cwd().starts_with("/workspace/.vite-hub-runs/"), "{}", first.cwd());
    let second = provider.open(&spec, None);
    let waited = futures::future::select(second, Box::pin(sleep(50))).await;
    let second = match waited {
        futures::future::Either::Left(_) => {
            panic!("the second Run on the kept Box opened while the first was still open")
        }
        futures::future::Either::Right((_, second)) => second,
    };
    first.close().await.unwrap();
    let second = second.await.unwrap();
    assert_ne!(second.cwd(), first.cwd());
    second.close().await.unwrap();
    assert_eq!(count(&log, "destroy"), 0, "a kept Box is not destroyed");
    let removed: Vec<String> = lines(&log).into_iter().filter(|l| l.starts_with("/api/execute")).collect();
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(removed[0].contains(&format!(r#""command":"rm -rf -- {}""#, first.cwd())), "{removed:?}");
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let global = js_sys::global();
        let set_timeout: js_sys::Function =
            js_sys::Reflect::get(&global, &"setTimeout".into()).unwrap().unchecked_into();
        set_timeout.call2(&JsValue::UNDEFINED, &resolve, &JsValue::from(ms)).unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

#[wasm_bindgen_test]
async fn box_ids_name_the_definition_and_a_runs_sandbox_id_is_checked_before_any_request() {
    let (ns, log) = fake(&format!("if (path === '/api/execute') return Response.json({{ success: true, exitCode: 0, stdout: '', stderr: '' }}); {OK}"));
    let provider = provider(ns, None);
    let spec = BoxSpec { name: "tools/release-notes".into(), ..BoxSpec::default() };
    let opened = provider.open(&spec, None).await.unwrap();
    assert!(opened.id().starts_with("vitehub-tools%2Fre") && opened.id().len() <= 63, "{}", opened.id());
    opened.close().await.unwrap();
    let requests = lines(&log).len();
    let bad = BoxSpec { sandbox_id: Some("x".repeat(64)), ..BoxSpec::default() };
    let error = provider.open(&bad, None).await.unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert_eq!(lines(&log).len(), requests, "nothing was sent");
    let kept = BoxSpec { sandbox_id: Some("per-run".into()), ..BoxSpec::default() };
    let opened = provider.open(&kept, None).await.unwrap();
    assert_eq!(opened.id(), "per-run");
    opened.close().await.unwrap();
}
