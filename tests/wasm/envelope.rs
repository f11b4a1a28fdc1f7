//! JSON-semantics walking of JS values, binary sidecars and reviving.
use js_sys::{Array, Reflect, Uint8Array};
use vite_hub_sandbox::transfer::envelope::{revive_value, Encoder};
use vite_hub_sandbox_core::error::ErrorCode;
use vite_hub_sandbox_core::transfer::TransferLimits;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn eval(source: &str) -> JsValue {
    js_sys::Function::new_no_args(&format!("return {source};")).call0(&JsValue::UNDEFINED).unwrap()
}

#[wasm_bindgen_test]
async fn json_semantics_and_sidecars() {
    let limits = TransferLimits::default();
    let value = eval(
        r#"{ a: 1, skip: undefined, list: [undefined, 2], when: { toJSON: (k) => 'key:' + k }, boxed: new String('s'),
            bytes: new Uint8Array([1, 2]), blob: new Blob(['hi'], { type: 'text/plain' }), 'vitehub:sandbox:value': 'mine' }"#,
    );
    let mut encoder = Encoder::new(&limits);
    let encoded = encoder.encode(&value, "", "payload").unwrap().unwrap();
    let sidecars = encoder.finish(&limits).await.unwrap();
    let entries = &encoded["vitehub:sandbox:value"]["entries"];
    let find = |key: &str| entries.as_array().unwrap().iter().find(|e| e[0] == key).map(|e| e[1].clone()).unwrap();
    assert_eq!(find("a"), serde_json::json!(1));
    assert_eq!(find("list"), serde_json::json!([null, 2]));
    assert_eq!(find("when"), serde_json::json!("key:when"));
    assert_eq!(find("boxed"), serde_json::json!("s"));
    assert_eq!(find("bytes")["vitehub:sandbox:value"]["kind"], "uint8array");
    assert_eq!(find("blob")["vitehub:sandbox:value"]["type"], "text/plain");
    assert_eq!(find("vitehub:sandbox:value"), serde_json::json!("mine"));
    assert!(entries.as_array().unwrap().iter().all(|e| e[0] != "skip"));
    assert_eq!(sidecars.len(), 2);
    assert_eq!(sidecars[0].bytes, vec![1, 2]);
    assert_eq!(sidecars[1].bytes, b"hi".to_vec());
}

#[wasm_bindgen_test]
fn cycles_bigints_functions_and_non_finite_numbers_are_refused() {
    let limits = TransferLimits::default();
    for (source, kind) in [
        ("(() => { const a = {}; a.self = a; return a; })()", "cycle"),
        ("({ n: 1n })", "bigint"),
        ("({ f() {} })", "function"),
        ("({ x: [NaN] })", "non-finite number"),
    ] {
        let error = Encoder::new(&limits).encode(&eval(source), "", "payload").unwrap_err();
        assert_eq!(error.code(), ErrorCode::SerializationError, "{source}");
        assert_eq!(error.http_status(), 400);
        assert!(error.message().contains(kind), "{source}: {}", error.message());
    }
}

#[wasm_bindgen_test]
fn depth_over_the_limit_is_a_transfer_limit() {
    let limits = TransferLimits { max_depth: 2, ..TransferLimits::default() };
    let error = Encoder::new(&limits).encode(&eval("[[[1]]]"), "", "payload").unwrap_err();
    assert_eq!(error.code(), ErrorCode::TransferLimit);
    assert_eq!(error.http_status(), 413);
}

#[wasm_bindgen_test]
fn revive_turns_markers_into_blobs_and_bytes() {
    let result = serde_json::json!({
        "file": { "vitehub:sandbox:value": { "tag": "binary", "id": 0, "kind": "blob", "type": "image/png" } },
        "raw": [{ "vitehub:sandbox:value": { "tag": "binary", "id": 1, "kind": "uint8array" } }],
        "escaped": { "vitehub:sandbox:value": { "tag": "object", "entries": [["vitehub:sandbox:value", 3]] } }
    });
    let revived = revive_value(&result, &|id| Some(vec![id as u8; 3])).unwrap();
    let file = Reflect::get(&revived, &"file".into()).unwrap();
    let blob = file.dyn_ref::<web_sys::Blob>().expect("a Blob");
    assert_eq!(blob.type_(), "image/png");
    assert_eq!(blob.size(), 3.0);
    let raw = Reflect::get(&revived, &"raw".into()).unwrap().unchecked_into::<Array>().get(0);
    assert_eq!(raw.unchecked_into::<Uint8Array>().to_vec(), vec![1, 1, 1]);
    let escaped = Reflect::get(&revived, &"escaped".into()).unwrap();
    assert_eq!(Reflect::get(&escaped, &"vitehub:sandbox:value".into()).unwrap().as_f64(), Some(3.0));
    let missing = revive_value(&result, &|_| None).unwrap_err();
    assert_eq!(missing.code(), ErrorCode::SerializationError);
    assert_eq!(missing.http_status(), 500);
}
