//! Writing JSON in the runtime: [`text`] (a `Value` as compact JSON text) and [`object`] (a
//! `Value` object from key/value pairs), the two ways the runtime builds JSON besides serde.
//!
//! Both exist for the size of the runtime wasm (docs/internals.md "Runtime size"): `Value`'s
//! `Display` links two more copies of the `Value` writer (compact and pretty), and `json!` with
//! interpolated values calls `to_value(..).unwrap()`, whose panic path links `serde_json::Error`'s
//! `Debug` and with it `str`'s `Debug` escaping and its Unicode tables.

use serde_json::{Map, Value};

/// `value` as compact JSON text, the text its `Display` writes, through `serde_json::to_string`
/// (the `Vec<u8>` writer every JSON body already uses).
pub fn text(value: &Value) -> String {
    // Cannot fail: a `Value`'s keys are strings and a `Vec` takes every byte.
    serde_json::to_string(value).unwrap_or_default()
}

/// A JSON object of `pairs`, keys in the given order (a later pair of the same key replaces the
/// value in its first place, as `json!` and `Map::insert` do).
pub fn object(pairs: Vec<(&str, Value)>) -> Value {
    let mut map = Map::new();
    for (key, value) in pairs {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::{object, text};
    use serde_json::{json, Value};

    #[test]
    fn text_is_what_display_writes() {
        for value in [json!(null), json!(1.5), json!(-0.0), json!(1e300), json!(u64::MAX), json!("a\"b\\\n\u{1}é😀"), json!({"z": [1, {"a": true}], "a": "x"})] {
            assert_eq!(text(&value), value.to_string());
        }
    }

    #[test]
    fn object_is_what_json_writes() {
        let built = object(vec![("z", Value::from(1)), ("a", object(vec![("b", Value::from("c"))])), ("m", Value::from(f64::NAN))]);
        assert_eq!(built, json!({"z": 1, "a": {"b": "c"}, "m": null}));
        assert_eq!(text(&built), r#"{"z":1,"a":{"b":"c"},"m":null}"#);
    }
}
