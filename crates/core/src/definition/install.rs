//! Package manager choice and install plan of a Definition's project.
//!
//! Rules (vitehub-sandbox-contract.md §4.3, DESIGN.md §7):
//! 1. the `packageManager` field (`npm|pnpm|yarn|bun@<version>`, major parsed) of the package's
//!    manifest, else of the install root's manifest;
//! 2. else the first lockfile *at the install root* in the order `pnpm-lock.yaml`,
//!    `package-lock.json`, `yarn.lock`, `bun.lock` (`bun.lockb` is never shipped nor read);
//! 3. else `pnpm` when the install root is a pnpm workspace (`pnpm-workspace.yaml` at the root);
//! 4. else `npm`.
//!
//! A lockfile of another manager than the chosen one is ignored (plain `install`). Installs are
//! frozen when the chosen manager's lockfile is there: `npm ci`, `pnpm install --frozen-lockfile`,
//! `bun install --frozen-lockfile`, `yarn install --frozen-lockfile` (Yarn 1: declared major 1, or
//! undeclared and a `yarn.lock` without `__metadata:`) or `yarn install --immutable` (Berry).

use serde_json::{Map, Value};

/// The package manager that installs a Definition's dependencies inside the Box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PackageManager {
    /// npm (the default).
    Npm,
    /// pnpm.
    Pnpm,
    /// Yarn (1 or Berry).
    Yarn,
    /// Bun.
    Bun,
}

impl PackageManager {
    /// The executable name: `"npm"`, `"pnpm"`, `"yarn"` or `"bun"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PackageManager::Npm => "npm",
            PackageManager::Pnpm => "pnpm",
            PackageManager::Yarn => "yarn",
            PackageManager::Bun => "bun",
        }
    }

    fn parse(s: &str) -> Option<PackageManager> {
        match s {
            "npm" => Some(PackageManager::Npm),
            "pnpm" => Some(PackageManager::Pnpm),
            "yarn" => Some(PackageManager::Yarn),
            "bun" => Some(PackageManager::Bun),
            _ => None,
        }
    }

    /// The lockfile this manager reads at the install root.
    pub fn lockfile(self) -> &'static str {
        match self {
            PackageManager::Npm => "package-lock.json",
            PackageManager::Pnpm => "pnpm-lock.yaml",
            PackageManager::Yarn => "yarn.lock",
            PackageManager::Bun => "bun.lock",
        }
    }
}

/// Lockfiles in the order they choose a manager when `packageManager` is absent.
const LOCKFILE_ORDER: [PackageManager; 4] =
    [PackageManager::Pnpm, PackageManager::Npm, PackageManager::Yarn, PackageManager::Bun];

/// How to install a Definition's dependencies: run `command args…` at the install root
/// (Box dir `project/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallPlan {
    /// The chosen package manager.
    pub manager: PackageManager,
    /// The executable (`manager.as_str()`).
    pub command: String,
    /// Its arguments, e.g. `["ci", "--no-audit", "--no-fund"]`.
    pub args: Vec<String>,
    /// Whether the install is Yarn Plug'n'Play (no `node_modules`; the entry runs with its
    /// loader, [`crate::harness::paths::pnp_node_options`]): Yarn Berry (declared major 2 or
    /// more, a `yarn.lock` with `__metadata:`, or a root `.yarnrc.yml`, which Yarn 1 never reads)
    /// whose `.yarnrc.yml` says no other `nodeLinker` (Berry's default is `pnp`).
    pub pnp: bool,
    /// The install digest ([`install_digest`]): what a prepared project (an installed
    /// `node_modules` kept by the provider) is keyed by. Editing a handler keeps it; a manifest,
    /// lockfile or patch change makes a new one. Lowercase hex SHA-256.
    pub digest: String,
}

/// Whether a file of a project (path relative to the install root) can change what the install
/// produces: every `package.json`, the root lockfiles (`pnpm-lock.yaml`, `package-lock.json`,
/// `npm-shrinkwrap.json`, `yarn.lock`, `bun.lock`), the manager's root config
/// (`pnpm-workspace.yaml`, `.pnpmfile.cjs`, `.yarnrc.yml`, `.yarnrc`, `bunfig.toml`),
/// and everything under the root `patches/` and `.yarn/` folders (patch files, Yarn plugins and
/// releases). Sources (the handler, local modules) are not install inputs, unless a manifest
/// has install scripts ([`install_digest`] then takes every file).
pub fn is_install_input(path: &str) -> bool {
    const ROOT_FILES: [&str; 10] = [
        "pnpm-lock.yaml",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "bun.lock",
        "pnpm-workspace.yaml",
        ".pnpmfile.cjs",
        ".yarnrc.yml",
        ".yarnrc",
        "bunfig.toml",
    ];
    path == "package.json"
        || path.ends_with("/package.json")
        || ROOT_FILES.contains(&path)
        || path.starts_with("patches/")
        || path.starts_with(".yarn/")
}

fn is_manifest(path: &str) -> bool {
    path == "package.json" || path.ends_with("/package.json")
}

/// Whether a `package.json` declares a script the install runs (npm, pnpm, Yarn and Bun run the
/// project's own `preinstall`, `install`, `postinstall`, `prepare`). An unreadable manifest counts
/// as one that does: the install would fail on it anyway.
fn runs_install_scripts(manifest: &[u8]) -> bool {
    const INSTALL_SCRIPTS: [&str; 4] = ["preinstall", "install", "postinstall", "prepare"];
    match serde_json::from_slice::<Value>(manifest) {
        Ok(value) => value
            .get("scripts")
            .and_then(Value::as_object)
            .is_some_and(|scripts| INSTALL_SCRIPTS.iter().any(|name| scripts.contains_key(*name))),
        Err(_) => true,
    }
}

/// The install digest of a project: lowercase hex SHA-256, after the tag
/// `vite-hub-sandbox/install/v1\0`, over the manager, the command and each argument, the package
/// path, then for each install input ([`is_install_input`], in path order) its path, mode and
/// content, every part as `len as u64 LE ‖ bytes` (a mode as `u32 LE`, `0` when absent). When a
/// manifest has install scripts (`preinstall`, `install`, `postinstall`, `prepare`), every file
/// of the project is an input: the scripts can read any of them.
///
/// The platform the install runs on is not part of it: each provider keeps its prepared projects
/// for its own platform (the local Box host refuses a snapshot taken on another platform).
pub fn install_digest(
    plan_command: &str,
    args: &[String],
    manager: PackageManager,
    package_path: &str,
    files: &[(&str, Option<u32>, &[u8])],
) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(b"vite-hub-sandbox/install/v1\0");
    let mut part = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    part(manager.as_str().as_bytes());
    part(plan_command.as_bytes());
    for arg in args {
        part(arg.as_bytes());
    }
    part(package_path.as_bytes());
    // A manifest's own install scripts run the project's files (`"postinstall": "node setup.cjs"`):
    // then every file is an install input, or two projects that share manifests and lockfile
    // would share one prepared tree that either one's scripts made.
    let scripted = files.iter().any(|(path, _, content)| is_manifest(path) && runs_install_scripts(content));
    let inputs: Vec<&(&str, Option<u32>, &[u8])> =
        files.iter().filter(|(path, _, _)| scripted || is_install_input(path)).collect();
    for &(path, mode, content) in super::in_path_order(inputs, |(path, _, _)| path) {
        part(path.as_bytes());
        part(&mode.unwrap_or(0).to_le_bytes());
        part(content);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What the manager choice reads about a project; every path is relative to the install root.
pub(crate) struct ProjectFacts<'a> {
    /// The `packageManager` value of the package manifest, else of the root manifest.
    pub declared: Option<&'a Value>,
    /// Whether a file exists at this path of the install root.
    pub has: &'a dyn Fn(&str) -> bool,
    /// The root `yarn.lock` bytes, when shipped.
    pub yarn_lock: Option<&'a [u8]>,
    /// The root `.yarnrc.yml` bytes, when shipped.
    pub yarnrc_yml: Option<&'a [u8]>,
}

/// The `nodeLinker` a `.yarnrc.yml` sets at its top level (`pnp`, `node-modules`, `pnpm`), if any.
fn yarn_node_linker(yarnrc: &[u8]) -> Option<String> {
    String::from_utf8_lossy(yarnrc).lines().find_map(|line| {
        let value = line.strip_prefix("nodeLinker:")?.split('#').next()?.trim();
        Some(value.trim_matches(|c| c == '"' || c == '\'').to_owned())
    })
}

/// The manager for a project (rules 1–4 of the module docs).
///
/// # Errors
/// The detail of an `InvalidArgument` message when `packageManager` is not
/// `"<npm|pnpm|yarn|bun>@<version>"`.
pub(crate) fn choose_manager(facts: &ProjectFacts<'_>) -> Result<(PackageManager, Option<u64>), String> {
    if let Some(value) = facts.declared {
        return parse_package_manager(value).ok_or_else(|| {
            format!("package.json \"packageManager\" must be \"<npm|pnpm|yarn|bun>@<version>\" (got {value}).")
        });
    }
    let by_lockfile = LOCKFILE_ORDER.into_iter().find(|m| (facts.has)(m.lockfile()));
    let manager = by_lockfile.unwrap_or(if (facts.has)("pnpm-workspace.yaml") {
        PackageManager::Pnpm
    } else {
        PackageManager::Npm
    });
    Ok((manager, None))
}

/// The install command for `manager` (frozen when its own lockfile is at the install root).
/// `files` are the shipped files as `(path, mode, content)`, for the [`install_digest`].
pub(crate) fn install_plan(
    manager: PackageManager,
    declared_major: Option<u64>,
    facts: &ProjectFacts<'_>,
    package_path: &str,
    files: &[(&str, Option<u32>, &[u8])],
) -> InstallPlan {
    let locked = (facts.has)(manager.lockfile());
    let args: &[&str] = match manager {
        PackageManager::Npm if locked => &["ci", "--no-audit", "--no-fund"],
        PackageManager::Npm => &["install", "--no-audit", "--no-fund"],
        PackageManager::Pnpm | PackageManager::Bun if locked => &["install", "--frozen-lockfile"],
        PackageManager::Pnpm | PackageManager::Bun => &["install"],
        PackageManager::Yarn => match facts.yarn_lock {
            None => &["install"],
            Some(lock) => {
                let yarn1 = match declared_major {
                    Some(major) => major == 1,
                    None => !contains(lock, b"__metadata:"),
                };
                if yarn1 {
                    &["install", "--frozen-lockfile"]
                } else {
                    &["install", "--immutable"]
                }
            }
        },
    };
    let berry = manager == PackageManager::Yarn
        && (declared_major.is_some_and(|major| major >= 2)
            || facts.yarn_lock.is_some_and(|lock| contains(lock, b"__metadata:"))
            || facts.yarnrc_yml.is_some());
    let pnp = berry && facts.yarnrc_yml.and_then(yarn_node_linker).is_none_or(|linker| linker == "pnp");
    let command = manager.as_str().to_owned();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let digest = install_digest(&command, &args, manager, package_path, files);
    InstallPlan { manager, command, args, pnp, digest }
}

/// Whether a manifest declares a non-empty `dependencies`, `devDependencies` or
/// `optionalDependencies` object.
pub(crate) fn declares_dependencies(manifest: &Map<String, Value>) -> bool {
    ["dependencies", "devDependencies", "optionalDependencies"]
        .iter()
        .any(|key| manifest.get(*key).and_then(Value::as_object).is_some_and(|m| !m.is_empty()))
}

/// Parses `packageManager` (`name@version[+hash]`) into the manager and the version's major.
fn parse_package_manager(value: &Value) -> Option<(PackageManager, Option<u64>)> {
    let (name, version) = value.as_str()?.split_once('@')?;
    let manager = PackageManager::parse(name)?;
    let major_text: String = version.chars().take_while(char::is_ascii_digit).collect();
    if major_text.is_empty() {
        return None;
    }
    Some((manager, major_text.parse().ok()))
}

/// The manager named by a `packageManager` value, when it is well-formed.
pub fn declared_manager(value: &Value) -> Option<PackageManager> {
    parse_package_manager(value).map(|(manager, _)| manager)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod digest_tests {
    use crate::definition::{Definition, DefinitionFile};

    fn file(path: &str, content: &str) -> DefinitionFile {
        DefinitionFile { path: path.to_owned(), content: content.as_bytes().to_vec(), mode: None }
    }

    fn digest_of(files: Vec<DefinitionFile>) -> Option<String> {
        Definition::from_files("d", files)
            .map(|d| d.install.map(|plan| plan.digest))
            .unwrap_or_else(|e| panic!("{e:?}"))
    }

    const MANIFEST: &str = r#"{"type":"module","dependencies":{"slugify":"1.6.9"}}"#;

    #[test]
    fn with_install_scripts_every_file_is_an_install_input() {
        const SCRIPTED: &str =
            r#"{"type":"module","dependencies":{"slugify":"1.6.9"},"scripts":{"postinstall":"node setup.cjs"}}"#;
        let with = |setup: &str| {
            vec![
                file("package.json", SCRIPTED),
                file("package-lock.json", "{}"),
                file("setup.cjs", setup),
                file("index.mjs", "export default () => 1"),
            ]
        };
        assert_ne!(
            digest_of(with("// nothing")),
            digest_of(with("require('fs').writeFileSync('x', '')")),
            "the script's own file counts"
        );
        assert_eq!(digest_of(with("// nothing")), digest_of(with("// nothing")));
    }

    #[test]
    fn a_handler_edit_keeps_the_install_digest_and_changes_the_project_digest() {
        let before = vec![
            file("package.json", MANIFEST),
            file("package-lock.json", "{}"),
            file("index.mjs", "export default () => 1"),
        ];
        let after = vec![
            file("package.json", MANIFEST),
            file("package-lock.json", "{}"),
            file("index.mjs", "export default () => 2"),
        ];
        assert_eq!(digest_of(before.clone()), digest_of(after.clone()));
        let project = |files| Definition::from_files("d", files).map(|d| d.digest).unwrap_or_default();
        assert_ne!(project(before), project(after));
    }

    #[test]
    fn a_lockfile_manifest_or_patch_change_makes_a_new_install_digest() {
        let base = || {
            vec![
                file("package.json", MANIFEST),
                file("package-lock.json", "{}"),
                file("index.mjs", "export default () => 1"),
            ]
        };
        let reference = digest_of(base());
        assert!(reference.as_deref().is_some_and(|d| d.len() == 64));
        let mut lock = base();
        lock[1] = file("package-lock.json", "{\"lockfileVersion\":3}");
        let mut manifest = base();
        manifest[0] = file("package.json", r#"{"type":"module","dependencies":{"slugify":"1.6.8"}}"#);
        let mut patch = base();
        patch.push(file("patches/slugify.patch", "--- a\n"));
        for changed in [lock, manifest, patch] {
            assert_ne!(digest_of(changed), reference);
        }
    }

    #[test]
    fn no_dependencies_means_no_install_digest() {
        assert_eq!(
            digest_of(vec![file("package.json", r#"{"type":"module"}"#), file("index.mjs", "export default () => 1")]),
            None
        );
    }
}
