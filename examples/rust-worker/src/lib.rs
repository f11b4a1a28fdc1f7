//! `POST /sandboxes/<name>` with a JSON payload answers the Run of the Definition `<name>`.
//! (wasm only, as the crate it calls: on other targets, e.g. a workspace's `cargo test`, it is empty.)
#![cfg(target_arch = "wasm32")]

use std::cell::OnceCell;
use std::rc::Rc;

use vite_hub_sandbox_worker::{run_sandbox, Registry, RunOptions};
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
    let Some(name) = path.strip_prefix("/sandboxes/") else { return Response::error("not found", 404) };
    if request.method() != Method::Post {
        return Response::error("use POST", 405);
    }
    let Ok(payload) = request.json::<serde_json::Value>().await else {
        return Response::error("the body must be JSON", 400);
    };
    run_sandbox(&env, &registry(), name, Some(&payload), RunOptions::new(&ctx)).await
}
