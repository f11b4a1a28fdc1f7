//! The Definitions a Worker runs, generated at build time, and the sandbox config of its isolate.
//!
//! The registry file is JSON: `{ "<name>": <definition> }`, each `<definition>` the object the
//! npm package's generated registry hands to its runtime (`registerSandbox`'s shape: `files`
//! with base64 `content` and `encoding: "base64"`, `packagePath?`, `entry?`, `timeout?`,
//! `digest`). `generateSandboxRegistryJson` of `@vite-hub/sandbox/vite` writes it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use base64::Engine;
use serde::Deserialize;
use vite_hub_sandbox::http::fetch::Fetcher;
use vite_hub_sandbox::runtime_config::RuntimeConfig;
use vite_hub_sandbox_core::config::SandboxConfig;
use vite_hub_sandbox_core::definition::{Definition, DefinitionFile, DefinitionSource};
use vite_hub_sandbox_core::error::{Error, ErrorCode};

/// A Worker's Definitions (by name) and its sandbox config, resolved against the Worker's env at
/// the first Run and kept for the isolate (as `configureSandbox` is in JS: kept Boxes and the
/// provider's state live as long as the registry). Build it once per isolate, e.g. in a
/// `thread_local!` (wasm is single-threaded).
#[derive(Debug)]
pub struct Registry {
    /// Sorted by name.
    definitions: Vec<(String, Rc<Definition>)>,
    config: SandboxConfig,
    resolved: RefCell<Option<Rc<RuntimeConfig>>>,
}

/// One generated Definition object (other keys, e.g. `name`, are not read).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeneratedDefinition {
    files: Vec<GeneratedFile>,
    #[serde(default)]
    package_path: String,
    entry: Option<String>,
    timeout: Option<serde_json::Value>,
}

/// One file of a generated Definition: `content` is UTF-8 text, or base64 bytes with
/// `encoding: "base64"`.
#[derive(Deserialize)]
struct GeneratedFile {
    path: String,
    content: String,
    encoding: Option<String>,
    mode: Option<u32>,
}

impl GeneratedFile {
    fn decode(self, name: &str) -> Result<DefinitionFile, Error> {
        let content = match self.encoding.as_deref() {
            None | Some("utf8") => self.content.into_bytes(),
            Some("base64") => base64::engine::general_purpose::STANDARD
                .decode(self.content.as_bytes())
                .map_err(|e| invalid(format!("the registry's Definition \"{name}\" has a file {path} whose content is not valid base64: {e}", path = self.path)))?,
            Some(other) => return Err(invalid(format!("the registry's Definition \"{name}\" has a file {path} with encoding \"{other}\"; expected \"base64\" or \"utf8\"", path = self.path))),
        };
        if let Some(mode) = self.mode.filter(|mode| *mode > 0o7777) {
            return Err(invalid(format!("the registry's Definition \"{name}\" has a file {path} with mode {mode:o}; a file mode is at most 7777 (octal)", path = self.path)));
        }
        Ok(DefinitionFile { path: self.path, content, mode: self.mode })
    }
}

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

impl Registry {
    /// Reads a generated registry file (`include_str!("…/.vite-hub/sandbox/build/registry.json")`)
    /// and checks every Definition with the npm runtime's rules (`registerSandbox`'s). The config
    /// is the default one (provider chosen from the Worker env, DESIGN.md §4) until
    /// [`Registry::with_config`].
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` when the text is not a registry (naming the JSON error) or a
    /// Definition in it is invalid (naming it and the rule).
    pub fn from_json(text: &str) -> Result<Registry, Error> {
        let generated: BTreeMap<String, GeneratedDefinition> = serde_json::from_str(text).map_err(|e| {
            invalid(format!(
                "the sandbox registry is not a generated registry.json ({{ \"<name>\": <definition> }}): {e}"
            ))
        })?;
        let mut definitions = Vec::with_capacity(generated.len());
        for (name, definition) in generated {
            let files = definition.files.into_iter().map(|file| file.decode(&name)).collect::<Result<Vec<_>, _>>()?;
            let source = DefinitionSource {
                files,
                package_path: definition.package_path,
                entry: definition.entry,
                timeout: definition.timeout,
            };
            let parsed = Definition::from_source(&name, source)?;
            definitions.push((name, Rc::new(parsed)));
        }
        Ok(Registry { definitions, config: SandboxConfig::default(), resolved: RefCell::new(None) })
    }

    /// This registry with `config` (`configureSandbox`'s config: provider, its options, transfer
    /// limits, `debug`; `SandboxConfig::from_value(&json)` reads it from JSON). Its `env`
    /// snapshot is completed from the Worker env at the first Run.
    ///
    /// # Errors
    /// `SANDBOX_INVALID_ARGUMENT` for what the config itself gets wrong: an unknown provider, a
    /// `baseUrl` that is no http(s) URL, a token under 8 characters, transfer limits out of range.
    pub fn with_config(self, config: SandboxConfig) -> Result<Registry, Error> {
        config.transfer.resolve()?;
        config.check_explicit()?;
        Ok(Registry { config, resolved: RefCell::new(None), ..self })
    }

    /// The Definitions' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.definitions.iter().map(|(name, _)| name.as_str())
    }

    /// The Definition named `name`.
    pub(crate) fn definition(&self, name: &str) -> Option<Rc<Definition>> {
        self.definitions
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|at| Rc::clone(&self.definitions[at].1))
    }

    /// The config resolved against `env` (its variables and its Durable Object binding), once.
    /// A provider that cannot be chosen is kept as its error inside, for each Run to answer.
    ///
    /// # Errors
    /// Those of [`Registry::with_config`], which already refused them.
    pub(crate) fn runtime(&self, env: &worker::Env) -> Result<Rc<RuntimeConfig>, Error> {
        if let Some(resolved) = self.resolved.borrow().as_ref() {
            return Ok(Rc::clone(resolved));
        }
        let config = crate::env::with_worker_env(&self.config, env);
        let namespace = crate::env::namespace(env, config.cloudflare.binding_name());
        let resolved = Rc::new(RuntimeConfig::resolve(&config, Fetcher::Global, namespace)?);
        *self.resolved.borrow_mut() = Some(Rc::clone(&resolved));
        Ok(resolved)
    }
}
