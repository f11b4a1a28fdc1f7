//! Reading a Definition object handed over from JS (`registerSandbox`, the Vite loader) into a
//! [`DefinitionSource`], and the summary object `listSandboxes` gives back.
//!
//! Glue only: every rule is in [`vite_hub_sandbox_core::definition`]. Each property is read with `Reflect.get`,
//! so a getter or Proxy trap that throws is a clear `SANDBOX_INVALID_ARGUMENT`, never an exception
//! unwinding through wasm.

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::error::js::js_message;
use vite_hub_sandbox_core::definition::{Definition, DefinitionFile, DefinitionSource};
use vite_hub_sandbox_core::error::{Error, ErrorCode, Result};

/// At most this many files in one Definition object (the 64 MiB rule bounds their bytes).
const MAX_FILES: u32 = 100_000;

pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// `object[key]`; a getter or Proxy trap that throws is an invalid argument naming `what`.
pub(crate) fn get(object: &JsValue, key: &str, what: &str) -> Result<JsValue> {
    if !object.is_object() && !object.is_function() {
        return Ok(JsValue::UNDEFINED);
    }
    Reflect::get(object, &JsValue::from_str(key))
        .map_err(|e| invalid(format!("{what}.{key} could not be read: {}", js_message(&e))))
}

fn definition_files(definition: &JsValue) -> Result<Vec<DefinitionFile>> {
    let files = get(definition, "files", "definition")?;
    if !js_sys::Array::is_array(&files) {
        return Err(invalid("definition.files must be an array of { path, content, mode? }"));
    }
    let length = get(&files, "length", "definition.files")?.as_f64().unwrap_or(0.0);
    if !(0.0..=MAX_FILES as f64).contains(&length) {
        // An array length is an integer below 2^32: printed as one.
        return Err(invalid(format!(
            "definition.files has {} entries; at most {MAX_FILES} are accepted",
            length as u64
        )));
    }
    let mut out = Vec::with_capacity(length as usize);
    for index in 0..length as u32 {
        let file = Reflect::get_u32(&files, index)
            .map_err(|e| invalid(format!("definition.files[{index}] could not be read: {}", js_message(&e))))?;
        let what = format!("definition.files[{index}]");
        let path = get(&file, "path", &what)?
            .as_string()
            .ok_or_else(|| invalid(format!("definition.files[{index}].path must be a string")))?;
        let content = get(&file, "content", &what)?;
        let encoding = get(&file, "encoding", &what)?;
        let base64 = match encoding.as_string().as_deref() {
            None if encoding.is_undefined() => false,
            Some("base64") => true,
            Some("utf8") => false,
            _ => {
                return Err(invalid(format!(
                    "definition.files[{index}].encoding must be \"base64\" or \"utf8\" ({path})"
                )))
            }
        };
        let content = if let (true, Some(text)) = (base64, content.as_string()) {
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, text.as_bytes())
                .map_err(|e| invalid(format!("definition.files[{index}].content is not valid base64 ({path}): {e}")))?
        } else if let Some(text) = content.as_string() {
            text.into_bytes()
        } else if let Some(bytes) = content.dyn_ref::<Uint8Array>() {
            bytes.to_vec()
        } else {
            return Err(invalid(format!(
                "definition.files[{index}].content must be a string or a Uint8Array ({path})"
            )));
        };
        let mode = get(&file, "mode", &what)?;
        let mode = if mode.is_undefined() {
            None
        } else {
            Some(mode.as_f64().filter(|m| m.fract() == 0.0 && (0.0..=0o7777 as f64).contains(m)).ok_or_else(|| {
                invalid(format!("definition.files[{index}].mode must be an integer file mode ({path})"))
            })? as u32)
        };
        out.push(DefinitionFile { path, content, mode });
    }
    Ok(out)
}

/// The optional keys of a Definition object: `packagePath` (string, default `""`), `entry`
/// (string) and `timeout` (any value; the rule is in [`Definition::from_source`]).
pub(crate) fn definition_source(definition: &JsValue) -> Result<DefinitionSource> {
    let files = definition_files(definition)?;
    let package_path = get(definition, "packagePath", "definition")?;
    let package_path = if package_path.is_undefined() {
        String::new()
    } else {
        package_path.as_string().ok_or_else(|| {
            invalid("definition.packagePath must be a string (the package directory relative to the install root)")
        })?
    };
    let entry = get(definition, "entry", "definition")?;
    let entry = if entry.is_undefined() {
        None
    } else {
        Some(entry.as_string().ok_or_else(|| {
            invalid("definition.entry must be a string (a module path relative to the package directory)")
        })?)
    };
    let timeout = get(definition, "timeout", "definition")?;
    let timeout = if timeout.is_undefined() {
        None
    } else if let Some(number) = timeout.as_f64() {
        // Integral JS numbers become JSON integers, so messages show `0`, not `0.0`.
        Some(if number.fract() == 0.0 && number.abs() <= 9_007_199_254_740_991.0 {
            serde_json::Value::from(number as i64)
        } else {
            serde_json::Number::from_f64(number).map_or(serde_json::Value::Null, serde_json::Value::Number)
        })
    } else if let Some(text) = timeout.as_string() {
        Some(serde_json::Value::String(text))
    } else {
        Some(timeout.as_bool().map_or(serde_json::Value::Null, serde_json::Value::Bool))
    };
    Ok(DefinitionSource { files, package_path, entry, timeout })
}

/// `{ name, entry, timeoutMs, packageManager: 'npm' | 'pnpm' | 'yarn' | 'bun', packagePath, install:
/// { command, args, cwd, digest } | null, digest }` of a Definition (listSandboxes, validateSandboxDefinition):
/// `packageManager` is the one chosen even when nothing is installed (`install: null`).
pub(crate) fn summary(d: &Definition) -> JsValue {
    let item = Object::new();
    let _ = Reflect::set(&item, &"name".into(), &d.name.as_str().into());
    let _ = Reflect::set(&item, &"entry".into(), &d.entry.as_str().into());
    let _ = Reflect::set(&item, &"timeoutMs".into(), &JsValue::from(d.timeout_ms));
    let _ = Reflect::set(&item, &"packageManager".into(), &d.manager.as_str().into());
    let _ = Reflect::set(&item, &"packagePath".into(), &d.package_path.as_str().into());
    let install = d.install.as_ref().map_or(JsValue::NULL, |plan| {
        let object = Object::new();
        let args: js_sys::Array = plan.args.iter().map(|a| JsValue::from_str(a)).collect();
        let _ = Reflect::set(&object, &"command".into(), &plan.command.as_str().into());
        let _ = Reflect::set(&object, &"args".into(), &args);
        let _ = Reflect::set(&object, &"cwd".into(), &".".into());
        let _ = Reflect::set(&object, &"digest".into(), &plan.digest.as_str().into());
        object.into()
    });
    let _ = Reflect::set(&item, &"install".into(), &install);
    let _ = Reflect::set(&item, &"digest".into(), &d.digest.as_str().into());
    JsValue::from(item)
}
