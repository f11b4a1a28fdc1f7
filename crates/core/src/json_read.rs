//! Reading the fields of a parsed JSON object by hand, with serde's rules for them.
//!
//! Each `#[derive(Deserialize)]` read from JSON instantiates serde_json's deserializer for its
//! type (and `Option<T>` for each optional field): 2 to 4 KB of wasm apiece. The runtime reads
//! the shapes it receives (provider answers, the result envelope) from one parsed
//! [`serde_json::Value`] through these few functions instead (docs/internals.md "Runtime size").
//! They follow serde's rules for a field: a missing required key and a value of the wrong type
//! are errors; an absent or `null` optional key is `None`; unknown keys are ignored. An error is
//! the text that names the key, e.g. ``missing field `id` `` or ``invalid type for `args` ``.
//!
//! Pure.

use serde_json::{Map, Value};

/// An object's fields, or why the value is not an object.
///
/// # Errors
/// `expected a JSON object, got <kind>`.
pub fn object(value: &Value) -> Result<&Map<String, Value>, String> {
    value.as_object().ok_or_else(|| format!("expected a JSON object, got {}", kind_of(value)))
}

/// What a JSON value is, for messages: `null`, `a boolean`, `a number`, `a string`, `an array`,
/// `an object`.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn missing(key: &str) -> String {
    format!("missing field `{key}`")
}

fn invalid(key: &str, expected: &str) -> String {
    format!("invalid type for `{key}`, expected {expected}")
}

/// A required key's value (any JSON, `null` included).
///
/// # Errors
/// ``missing field `<key>` ``.
pub fn required<'a>(map: &'a Map<String, Value>, key: &str) -> Result<&'a Value, String> {
    map.get(key).ok_or_else(|| missing(key))
}

/// An optional key's value: `None` when absent or `null`.
pub fn optional<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|value| !value.is_null())
}

/// A required string.
///
/// # Errors
/// Missing, or not a string.
pub fn string(map: &Map<String, Value>, key: &str) -> Result<String, String> {
    required(map, key)?.as_str().map(str::to_owned).ok_or_else(|| invalid(key, "a string"))
}

/// An optional string: `None` when absent or `null`.
///
/// # Errors
/// Present and neither `null` nor a string.
pub fn optional_string(map: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    optional(map, key).map(|value| value.as_str().map(str::to_owned).ok_or_else(|| invalid(key, "a string"))).transpose()
}

/// A required array of strings.
///
/// # Errors
/// Missing, not an array, or an item that is not a string.
pub fn strings(map: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    let items = required(map, key)?.as_array().ok_or_else(|| invalid(key, "an array of strings"))?;
    items.iter().map(|item| item.as_str().map(str::to_owned).ok_or_else(|| invalid(key, "an array of strings"))).collect()
}

/// A JSON integer that fits `i32` (`1.0` is not one: serde refuses a float for an integer).
pub fn as_i32(value: &Value) -> Option<i32> {
    value.as_i64().and_then(|n| i32::try_from(n).ok())
}

/// A required bool.
///
/// # Errors
/// Missing, or not a bool.
pub fn boolean(map: &Map<String, Value>, key: &str) -> Result<bool, String> {
    required(map, key)?.as_bool().ok_or_else(|| invalid(key, "a boolean"))
}

/// A required number, integer or not.
///
/// # Errors
/// Missing, or not a number.
pub fn number(map: &Map<String, Value>, key: &str) -> Result<f64, String> {
    required(map, key)?.as_f64().ok_or_else(|| invalid(key, "a number"))
}

/// A key whose value must have a shape `read` checks: `Err` names the key.
///
/// # Errors
/// `read`'s error, prefixed with the key.
pub fn nested<T>(key: &str, value: &Value, read: fn(&Value) -> Result<T, String>) -> Result<T, String> {
    read(value).map_err(|why| format!("`{key}`: {why}"))
}

/// `n` as text without the float formatter of `{}` (about 14 KB of wasm): integral values as
/// integers, others as serde_json writes them (shortest round-trip digits, exponent for very
/// large or small ones), `NaN`, `inf` and `-inf` as Rust's `{}` writes them.
pub fn number_text(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        (if n > 0.0 { "inf" } else { "-inf" }).to_owned()
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        (n as i64).to_string()
    } else {
        serde_json::Number::from_f64(n).map_or_else(String::new, |number| number.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_follow_serde_rules() {
        let value = json!({"s": "x", "n": null, "i": 7, "f": 1.5, "b": true, "a": ["p", "q"], "bad": [1]});
        let map = object(&value).unwrap();
        assert_eq!(string(map, "s").unwrap(), "x");
        assert_eq!(string(map, "zz").unwrap_err(), "missing field `zz`");
        assert_eq!(string(map, "i").unwrap_err(), "invalid type for `i`, expected a string");
        assert_eq!(optional_string(map, "n").unwrap(), None);
        assert_eq!(optional_string(map, "zz").unwrap(), None);
        assert!(optional_string(map, "i").is_err());
        assert_eq!(strings(map, "a").unwrap(), vec!["p", "q"]);
        assert!(strings(map, "bad").is_err());
        assert_eq!(as_i32(&map["i"]), Some(7));
        assert_eq!(as_i32(&map["f"]), None);
        assert_eq!(as_i32(&json!(2_147_483_648u64)), None);
        assert_eq!(number(map, "f").unwrap(), 1.5);
        assert!(boolean(map, "b").unwrap());
        assert!(required(map, "n").unwrap().is_null());
        assert_eq!(object(&json!([1])).unwrap_err(), "expected a JSON object, got an array");
    }

    #[test]
    fn number_text_matches_the_float_formatter_where_it_matters() {
        for n in [0.0, -1.0, 1.5, -5.0, 2_147_483_648.0, 0.1, 123.456, -0.25, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(number_text(n), format!("{n}"), "{n}");
        }
        assert_eq!(number_text(-0.0), "0");
    }
}
