//! The global fetch binding and the structural `fetch(Request)` target (Durable Object stub shape).
use vite_hub_sandbox::http::fetch::{body_bytes, Fetcher, HttpRequest};
use vite_hub_sandbox::sys::FetchTarget;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn request(url: &str) -> HttpRequest {
    HttpRequest {
        method: "POST",
        url: url.to_owned(),
        headers: vec![("x-probe", "1".to_owned())],
        body: Some(b"ping".to_vec()),
    }
}

#[wasm_bindgen_test]
async fn a_structural_target_receives_a_real_request() {
    let target = js_sys::Function::new_no_args(
        "return { async fetch(request) { return new Response(request.method + ' ' + request.headers.get('x-probe') + ' ' + await request.text()); } };",
    )
    .call0(&JsValue::UNDEFINED)
    .unwrap();
    let fetcher = Fetcher::Target(target.unchecked_into::<FetchTarget>());
    let response = fetcher.send_once(&request("https://box.invalid/api/execute"), None).await.unwrap();
    assert_eq!(body_bytes(&response).await.unwrap(), b"POST 1 ping".to_vec());
}

#[wasm_bindgen_test]
async fn an_injected_fetch_function_is_called_with_the_request() {
    let function = js_sys::Function::new_with_args(
        "request",
        "return Promise.resolve(new Response(request.url, { status: 201 }));",
    );
    let response =
        Fetcher::Function(function).send_once(&request("https://example.invalid/v3/sandboxes"), None).await.unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(body_bytes(&response).await.unwrap(), b"https://example.invalid/v3/sandboxes".to_vec());
}

#[wasm_bindgen_test]
async fn the_global_fetch_binding_works_in_this_runtime() {
    let get = HttpRequest { method: "GET", url: "data:text/plain,hello".to_owned(), headers: vec![], body: None };
    let response = Fetcher::Global.send_once(&get, None).await.unwrap();
    assert_eq!(body_bytes(&response).await.unwrap(), b"hello".to_vec());
}
