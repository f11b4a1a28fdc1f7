//! The exports behind `@vite-hub/sandbox/agent`: reading a JS value into the
//! [`crate::agent`] types and a checked call back into JS.
//!
//! Glue only: every rule is in [`crate::agent`]. Properties are read with `Reflect` (own
//! enumerable string keys, as `Object.entries` sees them), so a getter or Proxy trap that throws
//! is a `SANDBOX_INVALID_ARGUMENT`, never an exception unwinding through wasm. Containers are read
//! one level deep and at most [`MAX_ARGS`] + 1 items, so a huge input costs nothing and still
//! fails its length rule.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::agent::{check_commands, check_exec_input, input_schema_json, tool_description, ExecInput, InputValue, MAX_ARGS};
use crate::error::js::js_message;
use crate::error::{Error, Result};

use super::definition_object::invalid;

fn unreadable(what: &str, error: &JsValue) -> Error {
    invalid(format!("{what} could not be read: {}", js_message(error)))
}

/// The own enumerable string keys of `object`, at most `limit`.
fn own_keys(object: &JsValue, what: &str, limit: usize) -> Result<Vec<String>> {
    let keys = Reflect::own_keys(object).map_err(|e| unreadable(what, &e))?;
    let mut out = Vec::new();
    for key in keys.iter() {
        let Some(name) = key.as_string() else { continue };
        let descriptor = Reflect::get_own_property_descriptor(object.unchecked_ref::<Object>(), &key).map_err(|e| unreadable(what, &e))?;
        let enumerable = descriptor.is_object() && Reflect::get(&descriptor, &JsValue::from_str("enumerable")).map_err(|e| unreadable(what, &e))?.is_truthy();
        if enumerable {
            out.push(name);
            if out.len() >= limit {
                break;
            }
        }
    }
    Ok(out)
}

fn get(object: &JsValue, key: &JsValue, what: &str) -> Result<JsValue> {
    Reflect::get(object, key).map_err(|e| unreadable(what, &e))
}

/// `value` as an [`InputValue`]; containers only while `depth > 0`.
fn read(value: &JsValue, depth: u8, what: &str) -> Result<InputValue> {
    if let Some(text) = value.as_string() {
        return Ok(InputValue::Text(text));
    }
    if let Some(number) = value.as_f64() {
        return Ok(InputValue::Number(number));
    }
    if value.is_undefined() {
        return Ok(InputValue::Undefined);
    }
    if !value.is_object() || depth == 0 {
        return Ok(InputValue::Other);
    }
    let limit = MAX_ARGS + 1;
    if Array::is_array(value) {
        let length = get(value, &JsValue::from_str("length"), what)?.as_f64().unwrap_or(0.0);
        let count = length.clamp(0.0, limit as f64) as u32;
        let mut items = Vec::with_capacity(count as usize);
        for index in 0..count {
            let item = Reflect::get_u32(value, index).map_err(|e| unreadable(what, &e))?;
            items.push(read(&item, depth - 1, what)?);
        }
        return Ok(InputValue::List(items));
    }
    let mut entries = Vec::new();
    for key in own_keys(value, what, limit)? {
        let item = get(value, &JsValue::from_str(&key), what)?;
        let item = read(&item, depth - 1, what)?;
        entries.push((key, item));
    }
    Ok(InputValue::Record(entries))
}

fn read_exec_input(input: &JsValue) -> Result<ExecInput> {
    let mut out = ExecInput::default();
    if !input.is_object() || Array::is_array(input) {
        return Ok(out);
    }
    for key in own_keys(input, "sandbox_exec input", MAX_ARGS + 1)? {
        let slot = match key.as_str() {
            "command" => &mut out.command,
            "args" => &mut out.args,
            "cwd" => &mut out.cwd,
            "env" => &mut out.env,
            "timeout" => &mut out.timeout,
            _ => {
                out.unknown_key.get_or_insert(key);
                continue;
            }
        };
        let what = format!("sandbox_exec {key}");
        *slot = read(&get(input, &JsValue::from_str(&key), &what)?, 1, &what)?;
    }
    Ok(out)
}

fn checked_commands(commands: &JsValue) -> Result<Vec<String>> {
    check_commands(&read(commands, 1, "sandbox({ commands })")?)
}

fn set(object: &Object, key: &str, value: &JsValue) {
    // Defining a key on a fresh ordinary object cannot fail.
    let _ = Reflect::set(object, &JsValue::from_str(key), value);
}

/// `sandboxExecTool(commands) → { commands: string[], description: string, inputSchema: object }`:
/// checks the allowlist of `sandbox({ commands })` and describes the `sandbox_exec` tool (see
/// [`crate::agent::input_schema_json`] for the schema).
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` from [`crate::agent::check_commands`].
#[wasm_bindgen(js_name = sandboxExecTool)]
pub fn sandbox_exec_tool(commands: JsValue) -> Result<JsValue> {
    let names = checked_commands(&commands)?;
    let out = Object::new();
    set(&out, "commands", &names.iter().map(|n| JsValue::from_str(n)).collect::<Array>());
    set(&out, "description", &JsValue::from_str(&tool_description(&names)));
    let schema = js_sys::JSON::parse(&input_schema_json(&names)).map_err(|e| unreadable("the sandbox_exec schema", &e))?;
    set(&out, "inputSchema", &schema);
    Ok(out.into())
}

/// `checkSandboxExecInput(commands, input) → { command, args, options: { cwd?, env?, timeout? } }`:
/// one `sandbox_exec` input checked against `commands` (see [`crate::agent::check_exec_input`]);
/// `env` is a copy with a null prototype, absent options are omitted, `timeout` is in ms.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT`: the first rule the input breaks, in the contract's order.
#[wasm_bindgen(js_name = checkSandboxExecInput)]
pub fn check_sandbox_exec_input(commands: JsValue, input: JsValue) -> Result<JsValue> {
    let names = checked_commands(&commands)?;
    let call = check_exec_input(&names, &read_exec_input(&input)?)?;
    let out = Object::new();
    set(&out, "command", &JsValue::from_str(&call.command));
    set(&out, "args", &call.args.iter().map(|a| JsValue::from_str(a)).collect::<Array>());
    let options = Object::new();
    if let Some(cwd) = &call.cwd {
        set(&options, "cwd", &JsValue::from_str(cwd));
    }
    if let Some(env) = &call.env {
        let copy = Object::new();
        let _ = Reflect::set_prototype_of(&copy, &JsValue::NULL);
        for (name, value) in env {
            set(&copy, name, &JsValue::from_str(value));
        }
        set(&options, "env", &copy);
    }
    if let Some(timeout_ms) = call.timeout_ms {
        set(&options, "timeout", &JsValue::from_f64(timeout_ms as f64));
    }
    set(&out, "options", &options);
    Ok(out.into())
}
