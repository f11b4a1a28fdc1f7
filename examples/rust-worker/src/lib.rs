//! `POST /sandboxes/<name>` with a JSON payload answers the Run of the Definition `<name>`;
//! `POST /session` opens a Session, runs `node -e` in its Box, writes and reads a file, closes it.
//! (wasm only, as the crate it calls: on other targets, e.g. a workspace's `cargo test`, it is empty.)
#![cfg(target_arch = "wasm32")]

use std::cell::OnceCell;
use std::rc::Rc;

use vite_hub_sandbox_worker::{open_session, run_sandbox, Exec, Registry, RunOptions, SessionOptions};
use worker::{event, Context, Env, Method, Request, Response, Result};

thread_local! {
    static REGISTRY: OnceCell<Rc<Registry>> = const { OnceCell::new() };
}

fn registry() -> Rc<Registry> {
    REGISTRY.with(|cell| {
        cell.get_or_init(|| {
            let text = include_str!("../.vite-hub/sandbox/build/registry.json");
            // build.mjs checked every Definition with the same rules: this only fails on a broken build.
            Rc::new(Registry::from_json(text).expect("a generated registry.json"))
        })
        .clone()
    })
}

#[event(fetch)]
async fn fetch(mut request: Request, env: Env, ctx: Context) -> Result<Response> {
    let path = request.path();
    if path == "/session" && request.method() == Method::Post {
        return session(&env).await;
    }
    let Some(name) = path.strip_prefix("/sandboxes/") else { return Response::error("not found", 404) };
    if request.method() != Method::Post {
        return Response::error("use POST", 405);
    }
    let Ok(payload) = request.json::<serde_json::Value>().await else {
        return Response::error("the body must be JSON", 400);
    };
    run_sandbox(&env, &registry(), name, Some(&payload), RunOptions::new(&ctx)).await
}

/// One Session: a Command and a file in one Box, closed before the answer (`{ exitCode, stdout,
/// file, status, network }`); a failure is the error's JSON with its HTTP status.
async fn session(env: &Env) -> Result<Response> {
    let session = match open_session(env, &registry(), SessionOptions::new().with_lifetime_ms(60_000)).await {
        Ok(session) => session,
        Err(error) => return Response::from_json(&error.to_json_body()).map(|r| r.with_status(error.http_status())),
    };
    let script = "require('fs').writeFileSync('made-by-node.txt', String(6 * 7)); console.log(process.version)";
    let worked = async {
        let outcome = session.exec(&Exec::new("node").arg("-e").arg(script).timeout_ms(30_000)).await?;
        let file = session.read("made-by-node.txt").await?.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        Ok::<_, vite_hub_sandbox_worker::Error>((outcome, file))
    }
    .await;
    // Closed whatever happened: every Box opened is stopped.
    let closed = session.close().await;
    match worked.and_then(|worked| closed.map(|()| worked)) {
        Ok((outcome, file)) => Response::from_json(&serde_json::json!({
            "exitCode": outcome.exit_code,
            "stdout": outcome.stdout,
            "file": file,
            "status": session.status().as_str(),
            "network": session.execution_authority().network,
        })),
        Err(error) => Response::from_json(&error.to_json_body()).map(|r| r.with_status(error.http_status())),
    }
}
