//! Moving JS values in and out of a Box: JSON semantics plus binary sidecars (DESIGN.md §6,
//! docs/internals/transfer.md "Envelopes").
//!
//! `encode_value` walks a JS value the way `JSON.stringify` does (`toJSON(key)` once, boxed
//! primitives unwrapped, `undefined` dropped from objects and `null` in arrays) but refuses what
//! JSON would silently lose (functions, symbols, bigints, non-finite numbers, cycles) and turns
//! every `Blob`, `Uint8Array` and `Buffer` into a marker plus a sidecar file. A string with a lone
//! surrogate, which JSON keeps and a Rust `String` cannot, becomes a string marker
//! ([`vite_hub_sandbox_core::transfer::lone_surrogate`]). [`revive_value`] does the reverse for results.

use js_sys::{Array, JsString, Object, Reflect, Uint8Array};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use vite_hub_sandbox_core::error::{Direction, Error, ErrorCode, Result};
use vite_hub_sandbox_core::transfer::lone_surrogate::{string_marker, string_units, STRING_TAG};
use vite_hub_sandbox_core::transfer::{TransferLimits, VALUE_MARKER};

#[wasm_bindgen]
extern "C" {
    /// A JS string seen through `String.prototype` methods js-sys does not bind.
    type StringMethods;
    /// `String.prototype.isWellFormed` (ES2024; Node 20, workerd, current browsers): false when
    /// the string holds a lone surrogate.
    #[wasm_bindgen(method, js_name = isWellFormed)]
    fn is_well_formed(this: &StringMethods) -> bool;
}

/// A JS string as an envelope value: itself when well-formed, else its string marker (one call
/// into JS per code unit, paid only by such a string).
fn string_value(text: &JsString) -> Value {
    if text.unchecked_ref::<StringMethods>().is_well_formed() {
        Value::String(String::from(text))
    } else {
        string_marker(&text.iter().collect::<Vec<u16>>())
    }
}

/// The JS string of a string marker's body; `None` for an invalid one.
fn marker_string(marker: &Value) -> Option<JsValue> {
    Some(JsString::from_char_code(&string_units(marker)?).into())
}

/// The JS string of an object key in the entries form: a string, or a string marker.
fn revive_key(key: &Value) -> Option<JsValue> {
    match key {
        Value::String(text) => Some(JsValue::from_str(text)),
        _ => key
            .get(VALUE_MARKER)
            .filter(|marker| marker.get("tag").and_then(Value::as_str) == Some(STRING_TAG))
            .and_then(marker_string),
    }
}

/// A binary value pulled out of a payload, to be written as `<envelope>.files/<id>`.
#[derive(Debug)]
pub struct Sidecar {
    /// Index in walk order (0, 1, 2, ...).
    pub id: u32,
    /// The bytes.
    pub bytes: Vec<u8>,
}

#[derive(Debug)]
enum Pending {
    Bytes(Vec<u8>),
    Blob(web_sys::Blob),
}

/// Walk state shared by payload and context (one id sequence, one limit budget).
#[derive(Debug, Default)]
pub struct Encoder {
    pending: Vec<Pending>,
    ancestors: Vec<JsValue>,
    max_depth: u32,
}

fn serialization(message: String, direction: Direction) -> Error {
    let error = Error::new(ErrorCode::SerializationError, message);
    match direction {
        Direction::Input => error,
        Direction::Output => error.for_output(),
    }
}

fn unsupported(kind: &str, path: &str) -> Error {
    serialization(
        format!("Sandbox input must be JSON-serializable; unsupported {kind} at \"{path}\"."),
        Direction::Input,
    )
}

/// The class of an object JSON cannot carry (`Some("Map")`, `Some("Point instance")`), or `None`
/// for a plain object (prototype `null` or an `Object` constructor, of any realm) or an array.
fn non_plain_class(value: &JsValue) -> std::result::Result<Option<String>, JsValue> {
    if Array::is_array(value) {
        return Ok(None);
    }
    let prototype: JsValue = Reflect::get_prototype_of(value)?.into();
    if prototype.is_null() {
        return Ok(None);
    }
    let constructor = Reflect::get(&prototype, &JsValue::from_str("constructor"))?;
    if !constructor.is_function() {
        return Ok(None);
    }
    let name = Reflect::get(&constructor, &JsValue::from_str("name"))?.as_string().unwrap_or_default();
    Ok(match name.as_str() {
        "Object" => None,
        "Map" | "Set" | "WeakMap" | "WeakSet" | "Promise" | "RegExp" | "Error" | "ArrayBuffer" | "DataView" => {
            Some(name)
        }
        "" => Some("class instance".to_owned()),
        _ if name.ends_with("Array") => Some(name),
        _ => Some(format!("{name} instance")),
    })
}

/// `{ VALUE_MARKER: { ..pairs } }`: an encoded value the harness revives (binary, or an object
/// holding the marker key itself).
fn marked(pairs: Vec<(&str, Value)>) -> Value {
    let fields: Map<String, Value> = pairs.into_iter().map(|(key, value)| (key.to_owned(), value)).collect();
    Value::Object(Map::from_iter([(VALUE_MARKER.to_owned(), Value::Object(fields))]))
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn is_buffer(value: &JsValue) -> bool {
    let global = js_sys::global();
    let Ok(buffer) = Reflect::get(&global, &JsValue::from_str("Buffer")) else { return false };
    let Ok(is_buffer) = Reflect::get(&buffer, &JsValue::from_str("isBuffer")) else { return false };
    is_buffer
        .dyn_ref::<js_sys::Function>()
        .and_then(|f| f.call1(&buffer, value).ok())
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

impl Encoder {
    /// A walker bounded by `limits.max_depth`.
    pub fn new(limits: &TransferLimits) -> Encoder {
        Encoder { max_depth: limits.max_depth, ..Encoder::default() }
    }

    /// Encodes `value` (`None` for `undefined`, i.e. an absent key).
    ///
    /// # Errors
    /// `SANDBOX_SERIALIZATION_ERROR` (400) for functions, symbols, bigints, non-finite numbers,
    /// cycles and throwing getters/`toJSON`; `SANDBOX_TRANSFER_LIMIT` (413) past `maxDepth`.
    pub fn encode(&mut self, value: &JsValue, key: &str, path: &str) -> Result<Option<Value>> {
        self.walk(value, key, path, 0, true)
    }

    fn walk(
        &mut self,
        value: &JsValue,
        key: &str,
        path: &str,
        depth: u32,
        apply_to_json: bool,
    ) -> Result<Option<Value>> {
        if value.is_undefined() {
            return Ok(None);
        }
        if value.is_null() {
            return Ok(Some(Value::Null));
        }
        if let Some(b) = value.as_bool() {
            return Ok(Some(Value::Bool(b)));
        }
        if let Some(n) = value.as_f64() {
            return number(n).map(Some).ok_or_else(|| unsupported("non-finite number", path));
        }
        if let Some(text) = value.dyn_ref::<JsString>() {
            return Ok(Some(string_value(text)));
        }
        if value.is_bigint() {
            return Err(unsupported("bigint", path));
        }
        if value.is_symbol() {
            return Err(unsupported("symbol", path));
        }
        if value.is_function() {
            return Err(unsupported("function", path));
        }
        if depth >= self.max_depth {
            return Err(Error::new(
                ErrorCode::TransferLimit,
                format!("Sandbox input is nested deeper than maxDepth ({}) at \"{path}\".", self.max_depth),
            )
            .with_limit("maxDepth", u64::from(depth) + 1, u64::from(self.max_depth)));
        }
        if let Some(blob) = value.dyn_ref::<web_sys::Blob>() {
            let id = self.pending.len() as u32;
            self.pending.push(Pending::Blob(blob.clone()));
            if let Some(file) = value.dyn_ref::<web_sys::File>() {
                // A File keeps its name and lastModified (ms since the epoch) inside the Box.
                return Ok(Some(marked(vec![
                    ("tag", "binary".into()),
                    ("id", id.into()),
                    ("kind", "file".into()),
                    ("type", blob.type_().into()),
                    ("name", file.name().into()),
                    ("lastModified", file.last_modified().into()),
                ])));
            }
            return Ok(Some(marked(vec![
                ("tag", "binary".into()),
                ("id", id.into()),
                ("kind", "blob".into()),
                ("type", blob.type_().into()),
            ])));
        }
        if let Some(bytes) = value.dyn_ref::<Uint8Array>() {
            let kind = if is_buffer(value) { "buffer" } else { "uint8array" };
            let id = self.pending.len() as u32;
            self.pending.push(Pending::Bytes(bytes.to_vec()));
            return Ok(Some(marked(vec![("tag", "binary".into()), ("id", id.into()), ("kind", kind.into())])));
        }
        if apply_to_json {
            let to_json = Reflect::get(value, &JsValue::from_str("toJSON"))
                .map_err(|_| unsupported("throwing toJSON getter", path))?;
            if let Some(to_json) = to_json.dyn_ref::<js_sys::Function>() {
                let replaced = to_json.call1(value, &JsValue::from_str(key)).map_err(|e| {
                    serialization(
                        format!("toJSON threw at \"{path}\": {}", crate::error::js::js_message(&e)),
                        Direction::Input,
                    )
                })?;
                return self.walk(&replaced, key, path, depth, false);
            }
        }
        if value.is_instance_of::<js_sys::Number>()
            || value.is_instance_of::<JsString>()
            || value.is_instance_of::<js_sys::Boolean>()
        {
            let primitive = value.unchecked_ref::<Object>().value_of();
            return self.walk(&primitive, key, path, depth, false);
        }
        if value.is_instance_of::<js_sys::BigInt>() {
            return Err(unsupported("bigint", path));
        }
        if self.ancestors.iter().any(|a| a == value) {
            return Err(unsupported("cycle", path));
        }
        if let Some(class) = non_plain_class(value).map_err(|_| unsupported("throwing prototype", path))? {
            // JSON.stringify would give `{}` for a Map, a Set or a class instance: refuse instead
            // of losing the data silently (a class with toJSON was handled above).
            return Err(unsupported(&class, path));
        }
        self.ancestors.push(value.clone());
        let result = if Array::is_array(value) {
            self.walk_array(value, path, depth)
        } else {
            self.walk_object(value, path, depth)
        };
        self.ancestors.pop();
        result.map(Some)
    }

    fn walk_array(&mut self, value: &JsValue, path: &str, depth: u32) -> Result<Value> {
        let array = value.unchecked_ref::<Array>();
        let mut items = Vec::with_capacity(array.length() as usize);
        for index in 0..array.length() {
            let key = index.to_string();
            if !Reflect::has(array, &JsValue::from(index)).unwrap_or(true) {
                return Err(unsupported("sparse array (a hole)", &child_path(path, &key)));
            }
            let item =
                Reflect::get_u32(array, index).map_err(|_| unsupported("throwing getter", &child_path(path, &key)))?;
            items.push(self.walk(&item, &key, &child_path(path, &key), depth + 1, true)?.unwrap_or(Value::Null));
        }
        Ok(Value::Array(items))
    }

    fn walk_object(&mut self, value: &JsValue, path: &str, depth: u32) -> Result<Value> {
        let object = value.unchecked_ref::<Object>();
        let symbols = Object::get_own_property_symbols(object);
        if symbols.iter().any(|symbol| object.property_is_enumerable(&symbol)) {
            return Err(unsupported("symbol key", path));
        }
        let mut entries: Vec<(Value, Value)> = Vec::new();
        for key in Object::keys(object).iter() {
            // The key's text for paths and toJSON (a lone surrogate shows as U+FFFD there); the
            // property is read and encoded by the key itself.
            let name = key.as_string().unwrap_or_default();
            let item_path = child_path(path, &name);
            let item = Reflect::get(object, &key).map_err(|_| unsupported("throwing getter", &item_path))?;
            if let Some(encoded) = self.walk(&item, &name, &item_path, depth + 1, true)? {
                entries.push((string_value(key.unchecked_ref()), encoded));
            }
        }
        // A key that is the marker key itself, or a string marker, needs the entries form.
        if entries.iter().any(|(key, _)| key.as_str().is_none_or(|key| key == VALUE_MARKER)) {
            let entries: Vec<Value> = entries.into_iter().map(|(key, value)| Value::Array(vec![key, value])).collect();
            return Ok(marked(vec![("tag", "object".into()), ("entries", Value::Array(entries))]));
        }
        Ok(Value::Object(
            entries.into_iter().map(|(key, value)| (key.as_str().unwrap_or_default().to_owned(), value)).collect(),
        ))
    }

    /// Reads the bytes of every binary value met so far (Blobs are read asynchronously) and checks
    /// the sidecar limits.
    ///
    /// # Errors
    /// `SANDBOX_TRANSFER_LIMIT` (413) past `maxSidecars` / `maxSidecarBytes`;
    /// `SANDBOX_SERIALIZATION_ERROR` when a Blob cannot be read.
    pub async fn finish(self, limits: &TransferLimits) -> Result<Vec<Sidecar>> {
        let declared: u64 = self
            .pending
            .iter()
            .map(|p| match p {
                Pending::Bytes(bytes) => bytes.len() as u64,
                Pending::Blob(blob) => blob.size() as u64,
            })
            .sum();
        limits.check_sidecars(self.pending.len() as u32, declared, Direction::Input)?;
        let mut sidecars = Vec::with_capacity(self.pending.len());
        for (id, pending) in self.pending.into_iter().enumerate() {
            let bytes = match pending {
                Pending::Bytes(bytes) => bytes,
                Pending::Blob(blob) => {
                    let buffer = JsFuture::from(blob.array_buffer()).await.map_err(|e| {
                        serialization(
                            format!("a Blob could not be read: {}", crate::error::js::js_message(&e)),
                            Direction::Input,
                        )
                    })?;
                    Uint8Array::new(&buffer).to_vec()
                }
            };
            sidecars.push(Sidecar { id: id as u32, bytes });
        }
        Ok(sidecars)
    }
}

fn number(n: f64) -> Option<Value> {
    if !n.is_finite() {
        return None;
    }
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        return Some(Value::from(n as i64));
    }
    serde_json::Number::from_f64(n).map(Value::Number)
}

/// Turns a decoded result (with markers) back into a JS value; `sidecar(id)` gives the bytes of
/// output sidecar `id`.
///
/// # Errors
/// `SANDBOX_SERIALIZATION_ERROR` (500) for an invalid marker or a missing sidecar.
pub fn revive_value(value: &Value, sidecar: &dyn Fn(u32) -> Option<Vec<u8>>) -> Result<JsValue> {
    let invalid = |what: &str| serialization(format!("Sandbox result contains an invalid {what}."), Direction::Output);
    Ok(match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => JsValue::from_f64(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(text) => JsValue::from_str(text),
        Value::Array(items) => {
            let array = Array::new();
            for item in items {
                array.push(&revive_value(item, sidecar)?);
            }
            array.into()
        }
        Value::Object(map) => {
            if let Some(marker) = map.get(VALUE_MARKER).filter(|_| map.len() == 1) {
                return revive_marker(marker, sidecar).ok_or_else(|| invalid("value marker"))?;
            }
            let object = Object::new();
            for (key, item) in map {
                define_own(&object, &JsValue::from_str(key), &revive_value(item, sidecar)?)
                    .ok_or_else(|| invalid("object"))?;
            }
            object.into()
        }
    })
}

fn revive_marker(marker: &Value, sidecar: &dyn Fn(u32) -> Option<Vec<u8>>) -> Option<Result<JsValue>> {
    match marker.get("tag")?.as_str()? {
        "object" => {
            let object = Object::new();
            for entry in marker.get("entries")?.as_array()? {
                let key = revive_key(entry.get(0)?)?;
                let item = match revive_value(entry.get(1)?, sidecar) {
                    Ok(item) => item,
                    Err(error) => return Some(Err(error)),
                };
                define_own(&object, &key, &item)?;
            }
            Some(Ok(object.into()))
        }
        STRING_TAG => marker_string(marker).map(Ok),
        "binary" => {
            let id = u32::try_from(marker.get("id")?.as_u64()?).ok()?;
            let bytes = sidecar(id)?;
            Some(Ok(binary_value(&bytes, marker.get("kind")?.as_str()?, marker.get("type").and_then(Value::as_str))?))
        }
        _ => None,
    }
}

/// Defines `key` as an own, enumerable data property (as `JSON.parse` does), so a key such as
/// `__proto__` stays data and never replaces the object's prototype.
fn define_own(object: &Object, key: &JsValue, value: &JsValue) -> Option<()> {
    let descriptor = Object::new();
    for flag in ["writable", "enumerable", "configurable"] {
        Reflect::set(&descriptor, &JsValue::from_str(flag), &JsValue::TRUE).ok()?;
    }
    Reflect::set(&descriptor, &JsValue::from_str("value"), value).ok()?;
    Reflect::define_property(object, key, &descriptor).ok().filter(|defined| *defined).map(|_| ())
}

/// A `Blob` (with `type`), a `Buffer` (where `globalThis.Buffer` exists) or a `Uint8Array`.
pub fn binary_value(bytes: &[u8], kind: &str, content_type: Option<&str>) -> Option<JsValue> {
    let array = Uint8Array::from(bytes);
    match kind {
        "uint8array" => Some(array.into()),
        "buffer" => {
            let buffer = Reflect::get(&js_sys::global(), &JsValue::from_str("Buffer")).ok();
            let from = buffer.as_ref().and_then(|b| Reflect::get(b, &JsValue::from_str("from")).ok());
            match (buffer, from.and_then(|f| f.dyn_into::<js_sys::Function>().ok())) {
                (Some(buffer), Some(from)) => from.call1(&buffer, &array).ok(),
                _ => Some(array.into()),
            }
        }
        "blob" => {
            let options = web_sys::BlobPropertyBag::new();
            options.set_type(content_type.unwrap_or(""));
            web_sys::Blob::new_with_u8_array_sequence_and_options(&Array::of1(&array), &options).ok().map(Into::into)
        }
        _ => None,
    }
}
