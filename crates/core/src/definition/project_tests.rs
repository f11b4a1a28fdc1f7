//! Unit tests of project resolution in [`crate::definition`]: manager choice and install plan
//! (one per lockfile/manager case), `packagePath`, explicit `entry`, the `timeout` option and
//! the digest inputs.

use super::*;

fn file(path: &str, content: &str) -> DefinitionFile {
    DefinitionFile { path: path.into(), content: content.as_bytes().to_vec(), mode: None }
}

fn files(list: &[(&str, &str)]) -> Vec<DefinitionFile> {
    list.iter().map(|(p, c)| file(p, c)).collect()
}

const DEPS: &str = r#"{"type":"module","dependencies":{"a":"1"}}"#;
const NO_DEPS: &str = r#"{"type":"module"}"#;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// `(manager, install command + args)` of a package-root Definition.
fn plan_of(pkg: &str, extra: &[(&str, &str)]) -> (PackageManager, Option<Vec<String>>) {
    let mut list = vec![("package.json", pkg), ("index.mjs", "export default () => 1")];
    list.extend_from_slice(extra);
    let def = Definition::from_files("d", files(&list)).unwrap();
    (def.manager, def.install.map(|p| [vec![p.command], p.args].concat()))
}

fn source(package_path: &str, list: &[(&str, &str)]) -> DefinitionSource {
    DefinitionSource { files: files(list), package_path: package_path.into(), ..DefinitionSource::default() }
}

fn error(source: DefinitionSource) -> String {
    let error = Definition::from_source("d", source).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    error.message().to_owned()
}

#[test]
fn declared_package_manager_wins_and_a_mismatched_lockfile_is_ignored() {
    let with = |pm: &str| format!(r#"{{"type":"module","dependencies":{{"a":"1"}},"packageManager":"{pm}"}}"#);
    assert_eq!(
        plan_of(&with("pnpm@10.2.0"), &[("pnpm-lock.yaml", "")]),
        (PackageManager::Pnpm, Some(args(&["pnpm", "install", "--frozen-lockfile"])))
    );
    assert_eq!(
        plan_of(&with("pnpm@10.2.0"), &[("package-lock.json", "{}")]),
        (PackageManager::Pnpm, Some(args(&["pnpm", "install"])))
    );
    assert_eq!(
        plan_of(&with("npm@10.0.0"), &[("yarn.lock", "")]),
        (PackageManager::Npm, Some(args(&["npm", "install", "--no-audit", "--no-fund"])))
    );
    assert_eq!(
        plan_of(&with("bun@1.2.0"), &[("bun.lock", "{}")]),
        (PackageManager::Bun, Some(args(&["bun", "install", "--frozen-lockfile"])))
    );
    assert_eq!(
        plan_of(&with("bun@1.2.0"), &[("pnpm-lock.yaml", "")]),
        (PackageManager::Bun, Some(args(&["bun", "install"])))
    );
}

#[test]
fn each_lockfile_chooses_its_manager_in_order() {
    let frozen = |m: &str| Some(args(&[m, "install", "--frozen-lockfile"]));
    assert_eq!(
        plan_of(DEPS, &[("pnpm-lock.yaml", ""), ("package-lock.json", "{}"), ("yarn.lock", ""), ("bun.lock", "")]),
        (PackageManager::Pnpm, frozen("pnpm"))
    );
    assert_eq!(
        plan_of(DEPS, &[("package-lock.json", "{}"), ("yarn.lock", ""), ("bun.lock", "")]),
        (PackageManager::Npm, Some(args(&["npm", "ci", "--no-audit", "--no-fund"])))
    );
    assert_eq!(
        plan_of(DEPS, &[("yarn.lock", "# yarn lockfile v1\n"), ("bun.lock", "")]),
        (PackageManager::Yarn, frozen("yarn"))
    );
    assert_eq!(plan_of(DEPS, &[("bun.lock", "{}")]), (PackageManager::Bun, frozen("bun")));
    assert_eq!(
        plan_of(DEPS, &[("bun.lockb", "binary")]),
        (PackageManager::Npm, Some(args(&["npm", "install", "--no-audit", "--no-fund"]))),
        "bun.lockb is ignored"
    );
    assert_eq!(
        plan_of(DEPS, &[]),
        (PackageManager::Npm, Some(args(&["npm", "install", "--no-audit", "--no-fund"]))),
        "npm is the default"
    );
}

#[test]
fn yarn_one_or_berry_by_declared_major_or_by_metadata() {
    let yarn = |pm: &str| format!(r#"{{"type":"module","dependencies":{{"a":"1"}},"packageManager":"yarn@{pm}"}}"#);
    let immutable = Some(args(&["yarn", "install", "--immutable"]));
    let frozen = Some(args(&["yarn", "install", "--frozen-lockfile"]));
    assert_eq!(plan_of(&yarn("1.22.22"), &[("yarn.lock", "__metadata:\n  version: 8\n")]).1, frozen);
    assert_eq!(plan_of(&yarn("4.5.0"), &[("yarn.lock", "# yarn lockfile v1\n")]).1, immutable);
    assert_eq!(plan_of(DEPS, &[("yarn.lock", "__metadata:\n  version: 8\n")]).1, immutable);
    assert_eq!(plan_of(DEPS, &[("yarn.lock", "# yarn lockfile v1\n")]).1, frozen);
    assert_eq!(plan_of(&yarn("4.5.0"), &[]).1, Some(args(&["yarn", "install"])));
}

#[test]
fn yarn_berry_is_plug_n_play_unless_its_yarnrc_names_another_node_linker() {
    let pnp = |pkg: &str, extra: &[(&str, &str)]| {
        let mut list = vec![("package.json", pkg), ("index.mjs", "export default () => 1")];
        list.extend_from_slice(extra);
        Definition::from_files("d", files(&list)).unwrap().install.map(|plan| plan.pnp)
    };
    let berry_lock = ("yarn.lock", "__metadata:\n  version: 8\n");
    assert_eq!(pnp(DEPS, &[berry_lock]), Some(true), "Berry's default linker");
    assert_eq!(
        pnp(DEPS, &[berry_lock, (".yarnrc.yml", "yarnPath: .yarn/releases/yarn-4.cjs\nnodeLinker: pnp # default\n")]),
        Some(true)
    );
    assert_eq!(pnp(DEPS, &[berry_lock, (".yarnrc.yml", "nodeLinker: node-modules\n")]), Some(false));
    assert_eq!(pnp(DEPS, &[berry_lock, (".yarnrc.yml", "nodeLinker: \"pnpm\"\n")]), Some(false));
    assert_eq!(
        pnp(DEPS, &[(".yarnrc.yml", "yarnPath: .yarn/releases/yarn-4.cjs\n"), ("yarn.lock", "")]),
        Some(true),
        "a .yarnrc.yml is Berry's"
    );
    assert_eq!(pnp(DEPS, &[("yarn.lock", "# yarn lockfile v1\n")]), Some(false), "Yarn 1 links node_modules");
    assert_eq!(pnp(r#"{"type":"module","dependencies":{"a":"1"},"packageManager":"yarn@4.5.0"}"#, &[]), Some(true));
    assert_eq!(pnp(DEPS, &[("package-lock.json", "{}"), (".yarnrc.yml", "")]), Some(false), "not Yarn");
}

#[test]
fn a_pnpm_workspace_without_lockfile_means_pnpm_and_a_nested_lockfile_is_not_inherited() {
    let root = r#"{"name":"root","private":true,"dependencies":{"a":"1"}}"#;
    let list = [
        ("package.json", root),
        ("pnpm-workspace.yaml", "packages: ['packages/*']"),
        ("packages/x/package.json", NO_DEPS),
        ("packages/x/index.mjs", ""),
        ("packages/x/package-lock.json", "{}"),
    ];
    let def = Definition::from_source("d", source("packages/x", &list)).unwrap();
    assert_eq!(def.manager, PackageManager::Pnpm);
    assert_eq!(
        def.install.unwrap().args,
        args(&["install"]),
        "root dependencies install though the package declares none"
    );
    let mut with_lock = list.to_vec();
    with_lock.push(("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"));
    let def = Definition::from_source("d", source("packages/x", &with_lock)).unwrap();
    assert_eq!(def.install.unwrap().args, args(&["install", "--frozen-lockfile"]));
}

#[test]
fn any_shipped_workspace_manifest_with_dependencies_installs() {
    let list = [
        ("package.json", r#"{"name":"root","private":true}"#),
        ("pnpm-workspace.yaml", "packages: ['packages/*']"),
        ("pnpm-lock.yaml", ""),
        ("index.mjs", ""),
        ("s/package.json", NO_DEPS),
        ("s/index.mjs", ""),
        ("packages/u/package.json", r#"{"name":"u","dependencies":{"left-pad":"1"}}"#),
    ];
    let def = Definition::from_source("d", source("s", &list)).unwrap();
    assert_eq!(def.install.map(|p| p.command), Some("pnpm".into()));
    let without: Vec<_> = list.iter().filter(|(p, _)| !p.starts_with("packages/")).copied().collect();
    let def = Definition::from_source("d", source("s", &without)).unwrap();
    assert_eq!((def.manager, def.install), (PackageManager::Pnpm, None));
}

#[test]
fn package_path_locates_manifest_entry_and_timeout() {
    let list = [
        ("package.json", r#"{"name":"root","private":true,"packageManager":"pnpm@9.15.0"}"#),
        ("pnpm-workspace.yaml", ""),
        ("sandboxes/report/package.json", r#"{"type":"module","vitehub":{"sandbox":{"timeout":4000}}}"#),
        ("sandboxes/report/index.ts", ""),
        ("sandboxes/report/index.ts.mjs", ""),
        ("index.mjs", "the root entry is not the package's"),
    ];
    let def = Definition::from_source("d", source("sandboxes/report/", &list)).unwrap();
    assert_eq!(def.package_path, "sandboxes/report");
    assert_eq!((def.entry.as_str(), def.entry_module.as_str()), ("index.ts", "index.ts.mjs"));
    assert_eq!(def.timeout_ms, 4000);
    assert_eq!(def.manager, PackageManager::Pnpm, "the root packageManager counts");
    assert_eq!(error(source("sandboxes/other", &list)), "Sandbox \"d\" requires a package.json at sandboxes/other/.");
    assert_eq!(
        error(source("../up", &list)),
        "Sandbox \"d\" has an invalid packagePath \"../up\": it has a '.' or '..' segment."
    );
    let commonjs = [("package.json", NO_DEPS), ("p/package.json", "{}"), ("p/index.mjs", "")];
    assert_eq!(
        error(source("p", &commonjs)),
        "Sandbox \"d\" must be an ES module package: add \"type\": \"module\" to its p/package.json."
    );
    let bad_root = [("package.json", "{"), ("p/package.json", NO_DEPS), ("p/index.mjs", "")];
    assert_eq!(error(source("p", &bad_root)), "Sandbox \"d\" has an invalid package.json: it is not valid JSON.");
    let no_entry = [("package.json", NO_DEPS), ("p/package.json", NO_DEPS), ("index.mjs", "")];
    assert_eq!(
        error(source("p", &no_entry)),
        "Sandbox \"d\" requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs)."
    );
}

#[test]
fn an_explicit_entry_skips_the_index_lookup() {
    let list = [
        ("package.json", NO_DEPS),
        (".vite-hub-sandbox/definition.mjs", "export default () => 1"),
        ("index.mjs", ""),
        ("index.js", ""),
        ("tool.ts", ""),
        ("tool.ts.mjs", ""),
        ("raw.ts", ""),
    ];
    let with_entry = |entry: &str| DefinitionSource { entry: Some(entry.into()), ..source("", &list) };
    let def = Definition::from_source("d", with_entry(".vite-hub-sandbox/definition.mjs")).unwrap();
    assert_eq!(
        (def.entry.as_str(), def.entry_module.as_str()),
        (".vite-hub-sandbox/definition.mjs", ".vite-hub-sandbox/definition.mjs")
    );
    assert_eq!(Definition::from_source("d", with_entry("./tool.ts")).unwrap().entry_module, "tool.ts.mjs");
    assert_eq!(
        error(with_entry("raw.ts")),
        "Sandbox \"d\" TypeScript entry raw.ts was not compiled: raw.ts.mjs is missing."
    );
    assert_eq!(
        error(with_entry("missing.mjs")),
        "Sandbox \"d\" entry \"missing.mjs\" is not one of its files; ship it or fix the path."
    );
    assert_eq!(
        error(with_entry("package.json")),
        "Sandbox \"d\" entry \"package.json\" must be a .js, .mjs, .ts or .mts module."
    );
    assert_eq!(
        error(with_entry("../x.mjs")),
        "Sandbox \"d\" has an invalid entry \"../x.mjs\": it has a '.' or '..' segment."
    );
    let nested = [("package.json", NO_DEPS), ("p/package.json", NO_DEPS), ("p/main.mjs", ""), ("main.mjs", "")];
    let def = Definition::from_source("d", DefinitionSource { entry: Some("main.mjs".into()), ..source("p", &nested) })
        .unwrap();
    assert_eq!((def.package_path.as_str(), def.entry.as_str()), ("p", "main.mjs"));
}

#[test]
fn the_timeout_option_overrides_the_manifest_with_the_same_rule() {
    let pkg = r#"{"type":"module","vitehub":{"sandbox":{"timeout":9000}}}"#;
    let with_timeout = |value: Value| DefinitionSource {
        timeout: Some(value),
        ..source("", &[("package.json", pkg), ("index.mjs", "")])
    };
    assert_eq!(Definition::from_source("d", with_timeout(Value::from(1500))).unwrap().timeout_ms, 1500);
    assert_eq!(
        Definition::from_source("d", with_timeout(Value::from(2_147_483_647.0))).unwrap().timeout_ms,
        MAX_TIMEOUT_MS
    );
    assert_eq!(
        Definition::from_source("d", source("", &[("package.json", pkg), ("index.mjs", "")])).unwrap().timeout_ms,
        9000
    );
    for (value, shown) in [
        (Value::from(0), "0"),
        (Value::from(-5), "-5"),
        (Value::from(1.5), "1.5"),
        (Value::from(2_147_483_648u64), "2147483648"),
        (Value::from("1000"), "\"1000\""),
        (Value::Null, "null"),
    ] {
        assert_eq!(
            error(with_timeout(value)),
            format!("Sandbox \"d\" timeout must be a positive integer <= 2147483647 (milliseconds), got {shown}.")
        );
    }
}

#[test]
fn the_digest_covers_files_manager_and_package_path() {
    assert_eq!(
        project_digest(&[], PackageManager::Pnpm, "packages/x"),
        "dc992489fd17d93fc21f8428b5b5c8ef66a9bd2f77993f7307eeeb9b3142ed49"
    );
    let list = [("package.json", NO_DEPS), ("p/package.json", NO_DEPS), ("p/index.mjs", ""), ("index.mjs", "")];
    let at_root = Definition::from_source("d", source("", &list)).unwrap();
    let at_p = Definition::from_source("d", source("p", &list)).unwrap();
    assert_ne!(at_root.digest, at_p.digest, "packagePath changes the digest");
    let npm = r#"{"type":"module","packageManager":"npm@10.0.0"}"#;
    let pnpm = r#"{"type":"module","packageManager":"pnpm@10.0.0"}"#;
    let digest = |pkg: &str| Definition::from_files("d", files(&[("package.json", pkg), ("index.mjs", "")])).unwrap();
    let (a, b) = (digest(npm), digest(pnpm));
    assert_eq!((a.manager, b.manager, a.install.is_none()), (PackageManager::Npm, PackageManager::Pnpm, true));
    assert_ne!(a.digest, b.digest, "the manager changes the digest");
    assert_eq!(a.digest, project_digest(&a.files, PackageManager::Npm, ""));
}
