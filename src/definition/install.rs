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
const LOCKFILE_ORDER: [PackageManager; 4] = [
    PackageManager::Pnpm,
    PackageManager::Npm,
    PackageManager::Yarn,
    PackageManager::Bun,
];

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
}

/// What the manager choice reads about a project; every path is relative to the install root.
pub(crate) struct ProjectFacts<'a> {
    /// The `packageManager` value of the package manifest, else of the root manifest.
    pub declared: Option<&'a Value>,
    /// Whether a file exists at this path of the install root.
    pub has: &'a dyn Fn(&str) -> bool,
    /// The root `yarn.lock` bytes, when shipped.
    pub yarn_lock: Option<&'a [u8]>,
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
pub(crate) fn install_plan(manager: PackageManager, declared_major: Option<u64>, facts: &ProjectFacts<'_>) -> InstallPlan {
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
    InstallPlan {
        manager,
        command: manager.as_str().to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
    }
}

/// Whether a manifest declares a non-empty `dependencies`, `devDependencies` or
/// `optionalDependencies` object.
pub(crate) fn declares_dependencies(manifest: &Map<String, Value>) -> bool {
    ["dependencies", "devDependencies", "optionalDependencies"].iter().any(|key| {
        manifest.get(*key).and_then(Value::as_object).is_some_and(|m| !m.is_empty())
    })
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
