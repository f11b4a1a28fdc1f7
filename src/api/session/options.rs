//! Reading a Session call's JS arguments into checked values: option objects, a Command from
//! `exec`/`spawn` arguments, a signal from `kill`. Nothing here sends a request.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::invalid;
use crate::api::definition_object::get;
use crate::error::js::js_message;
use vite_hub_sandbox_core::command::Command;
use vite_hub_sandbox_core::env_map::EnvMap;
use vite_hub_sandbox_core::error::Result;
use vite_hub_sandbox_core::session::{self, MAX_EXEC_OUTPUT_BYTES};

/// Most arguments of one Command.
const MAX_ARGS: usize = 65_536;
/// The keys of an options object, refusing any outside `allowed` (`what` names it).
pub(super) fn check_keys(options: &JsValue, allowed: &[&str], what: &str) -> Result<()> {
    if options.is_undefined() || options.is_null() {
        return Ok(());
    }
    if !options.is_object() || js_sys::Array::is_array(options) {
        return Err(invalid(format!("{what} must be an object {{ {} }}", allowed.join(", "))));
    }
    let keys =
        Reflect::own_keys(options).map_err(|e| invalid(format!("{what} could not be read: {}", js_message(&e))))?;
    for key in keys.iter() {
        let key = key.as_string().unwrap_or_else(|| "a symbol".to_owned());
        if !allowed.contains(&key.as_str()) {
            return Err(invalid(format!(
                "unknown {what} key {key}; expected {}",
                allowed.join(", "),
                key = vite_hub_sandbox_core::error::quoted(&key)
            )));
        }
    }
    Ok(())
}

pub(super) fn option(options: &JsValue, key: &str, what: &str) -> Result<JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(JsValue::UNDEFINED);
    }
    get(options, key, what)
}

pub(super) fn signal_option(options: &JsValue, what: &str) -> Result<Option<AbortSignal>> {
    crate::api::optional_signal(option(options, "signal", what)?, &format!("{what} signal"))
}

pub(super) fn timeout_option(options: &JsValue, what: &str) -> Result<Option<u64>> {
    let value = option(options, "timeout", what)?;
    if value.is_undefined() {
        return Ok(None);
    }
    let ms = value.as_f64().ok_or_else(|| invalid(format!("{what} timeout must be a number of ms")))?;
    session::check_timeout_ms(ms, &format!("{what} timeout")).map(Some)
}

pub(super) fn bool_option(options: &JsValue, key: &str, what: &str) -> Result<bool> {
    let value = option(options, key, what)?;
    if value.is_undefined() {
        return Ok(false);
    }
    value.as_bool().ok_or_else(|| invalid(format!("{what} {key} must be a boolean")))
}

/// A Command read from `exec`/`spawn` arguments: `(command, args?, { cwd?, env?, timeout?, signal?,
/// …extra })`, `extra` naming the keys this call takes beyond those (read by the caller).
pub(super) fn read_command(
    command: &JsValue,
    args: &JsValue,
    options: &JsValue,
    what: &str,
    extra: &[&str],
) -> Result<(Command, Option<AbortSignal>)> {
    let program = command
        .as_string()
        .ok_or_else(|| invalid(format!("{what}(command) needs a string command (the executable)")))?;
    session::check_command(&program)?;
    let mut argv = Vec::new();
    if !args.is_undefined() && !args.is_null() {
        if !js_sys::Array::is_array(args) {
            return Err(invalid(format!("{what}(command, args): args must be an array of strings")));
        }
        // Read with Reflect (a Proxy's throwing trap is an error here, not an exception through
        // the module), bounded by MAX_ARGS whatever `length` claims.
        let read = |key: &JsValue| {
            Reflect::get(args, key)
                .map_err(|e| invalid(format!("{what}(command, args): args could not be read: {}", js_message(&e))))
        };
        let length = read(&JsValue::from_str("length"))?.as_f64().unwrap_or(0.0);
        if length > MAX_ARGS as f64 {
            return Err(invalid(format!("{what}(command, args): at most {MAX_ARGS} args")));
        }
        for index in 0..length as usize {
            let arg = read(&JsValue::from(index as u32))?;
            let arg = arg
                .as_string()
                .ok_or_else(|| invalid(format!("{what}(command, args): args[{index}] must be a string")))?;
            session::check_arg(&arg, index)?;
            argv.push(arg);
        }
    }
    let opts = format!("{what} options");
    let keys: Vec<&str> = ["cwd", "env", "timeout", "signal"].iter().chain(extra).copied().collect();
    check_keys(options, &keys, &opts)?;
    let cwd = option(options, "cwd", &opts)?;
    let cwd = if cwd.is_undefined() {
        None
    } else {
        let cwd = cwd.as_string().ok_or_else(|| invalid(format!("{opts} cwd must be a string")))?;
        if cwd.is_empty() || cwd.contains('\0') {
            return Err(invalid(format!("{opts} cwd must be a non-empty path without NUL")));
        }
        Some(cwd)
    };
    let env_value = option(options, "env", &opts)?;
    let mut env = EnvMap::new();
    if !env_value.is_undefined() {
        if !env_value.is_object() || js_sys::Array::is_array(&env_value) {
            return Err(invalid(format!("{opts} env must be an object of strings")));
        }
        let keys = Reflect::own_keys(&env_value)
            .map_err(|e| invalid(format!("{opts} env could not be read: {}", js_message(&e))))?;
        for key in keys.iter() {
            let name = key.as_string().ok_or_else(|| invalid(format!("{opts} env has a symbol key")))?;
            session::check_env_name(&name)?;
            let value = Reflect::get(&env_value, &key)
                .map_err(|e| invalid(format!("{opts} env could not be read: {}", js_message(&e))))?;
            let value = value.as_string().ok_or_else(|| {
                invalid(format!(
                    "{opts} env {name} must be a string",
                    name = vite_hub_sandbox_core::error::quoted(&name)
                ))
            })?;
            if value.contains('\0') {
                return Err(invalid(format!(
                    "{opts} env {name} must not contain a NUL character",
                    name = vite_hub_sandbox_core::error::quoted(&name)
                )));
            }
            env.insert(name, value);
        }
    }
    let timeout_ms = timeout_option(options, &opts)?;
    let signal = signal_option(options, &opts)?;
    let command = Command {
        program,
        args: argv,
        cwd,
        env,
        timeout_ms,
        max_stdout_bytes: MAX_EXEC_OUTPUT_BYTES,
        max_stderr_bytes: MAX_EXEC_OUTPUT_BYTES,
    };
    Ok((command, signal))
}

/// A signal as a number: `undefined` → 15 (SIGTERM), a name of the Vercel protocol's table
/// (§7.3: SIGHUP 1, SIGINT 2, SIGQUIT 3, SIGKILL 9, SIGTERM 15, SIGCONT 18, SIGSTOP 19), or an
/// integer 1–64.
pub(super) fn signal_number(value: &JsValue) -> Result<u8> {
    if value.is_undefined() {
        return Ok(15);
    }
    if let Some(name) = value.as_string() {
        return match name.as_str() {
            "SIGHUP" => Ok(1),
            "SIGINT" => Ok(2),
            "SIGQUIT" => Ok(3),
            "SIGKILL" => Ok(9),
            "SIGTERM" => Ok(15),
            "SIGCONT" => Ok(18),
            "SIGSTOP" => Ok(19),
            _ => Err(invalid(format!("kill(signal): unknown signal {name}; use SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGQUIT, SIGCONT, SIGSTOP or a number", name = vite_hub_sandbox_core::error::quoted(&name)))),
        };
    }
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && (1.0..=64.0).contains(&n) => Ok(n as u8),
        _ => Err(invalid("kill(signal) needs a signal name (e.g. \"SIGTERM\") or a number from 1 to 64")),
    }
}
