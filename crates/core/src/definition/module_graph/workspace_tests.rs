//! Unit tests of [`super`] (and [`super::super::package_target`]): workspace packages that the
//! Definition imports must resolve to shipped JavaScript, with the exact messages.

use super::super::{check_module_graph, ImportEdge, ManifestText, ModuleFacts, ModuleGraphInput, ModuleGraphPlan};
use super::package_specifier;
use crate::error::{ErrorCode, Result};

const APP: &str = r#"{"name":"app","type":"module","dependencies":{"@w/lib":"workspace:*","@w/other":"^1.0.0","slugify":"^1.0.0"},"devDependencies":{"@w/tool":"workspace:^"}}"#;

fn import(specifier: &str, line: u32) -> ImportEdge {
    ImportEdge {
        specifier: Some(specifier.into()),
        start: line * 100,
        end: line * 100 + 10,
        line: Some(line),
        column: Some(8),
        dynamic: false,
    }
}

fn module(path: &str, imports: &[(&str, u32)]) -> ModuleFacts {
    ModuleFacts {
        path: path.into(),
        imports: imports.iter().map(|(s, l)| import(s, *l)).collect(),
        ..ModuleFacts::default()
    }
}

/// A workspace: the Definition `app/` (manifest [`APP`], entry `app/index.ts` importing
/// `entry_imports`), workspace packages `packages/<dir>` with their manifests, more `files`, and
/// the facts of more `modules`.
fn check(
    entry_imports: &[(&str, u32)],
    packages: &[(&str, &str)],
    files: &[&str],
    modules: Vec<ModuleFacts>,
) -> Result<ModuleGraphPlan> {
    let mut all: Vec<String> =
        vec!["package.json".into(), "pnpm-workspace.yaml".into(), "app/package.json".into(), "app/index.ts".into()];
    let mut manifests = vec![
        ManifestText { path: "package.json".into(), text: r#"{"name":"root","private":true}"#.into() },
        ManifestText { path: "app/package.json".into(), text: APP.into() },
    ];
    for (dir, text) in packages {
        all.push(format!("packages/{dir}/package.json"));
        manifests.push(ManifestText { path: format!("packages/{dir}/package.json"), text: (*text).into() });
    }
    all.extend(files.iter().map(|f| (*f).to_owned()));
    let mut facts = vec![module("app/index.ts", entry_imports)];
    facts.extend(modules);
    check_module_graph(&ModuleGraphInput {
        name: Some("app".into()),
        manifest: Some(APP.into()),
        package_path: "app".into(),
        files: all,
        modules: facts,
        manifests,
        ..ModuleGraphInput::default()
    })
}

fn message(result: Result<ModuleGraphPlan>) -> String {
    let error = result.unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    error.message().to_owned()
}

const FIX: &str =
    "Build the workspace package to JavaScript before Sandbox execution (point its exports/main at the built .js).";

fn lib(manifest_rest: &str) -> String {
    format!(r#"{{"name":"@w/lib","type":"module"{manifest_rest}}}"#)
}

#[test]
fn an_exports_string_to_shipped_javascript_passes_and_its_modules_are_walked() {
    let lib = lib(r#","exports":"./index.js""#);
    let ok = check(
        &[("@w/lib", 1)],
        &[("lib", &lib)],
        &["packages/lib/index.js", "packages/lib/util.js"],
        vec![
            module("packages/lib/index.js", &[("./util.js", 2), ("node:fs", 3), ("slugify", 4)]),
            module("packages/lib/util.js", &[]),
        ],
    );
    assert!(ok.unwrap().checked);
    // The walk reaches util.js: without its facts the glue bug is reported.
    let error = message(check(
        &[("@w/lib", 1)],
        &[("lib", &lib)],
        &["packages/lib/index.js", "packages/lib/util.js"],
        vec![module("packages/lib/index.js", &[("./util.js", 2)])],
    ));
    assert_eq!(
        error,
        "Sandbox \"app\": \"packages/lib/util.js\" is a module of the package but no facts were given for it."
    );
}

#[test]
fn an_exports_string_to_typescript_is_r0018() {
    let lib = lib(r#","exports":"./src/index.ts""#);
    let error = message(check(
        &[("@w/lib", 3)],
        &[("lib", &lib)],
        &["packages/lib/src/index.ts"],
        vec![module("packages/lib/src/index.ts", &[])],
    ));
    assert_eq!(
        error,
        format!("Sandbox \"app\": app/index.ts:3:8 imports \"@w/lib\", which workspace package \"@w/lib\" resolves through its \"exports\" to \"packages/lib/src/index.ts\", a TypeScript file (R0018). {FIX}")
    );
}

#[test]
fn conditions_are_taken_in_key_order() {
    let files = ["packages/lib/src/index.ts", "packages/lib/dist/index.js"];
    let facts = || vec![module("packages/lib/dist/index.js", &[]), module("packages/lib/src/index.ts", &[])];
    let good = lib(
        r#","exports":{"types":"./src/index.ts","require":"./src/index.ts","import":"./dist/index.js","default":"./src/index.ts"}"#,
    );
    assert!(check(&[("@w/lib", 1)], &[("lib", &good)], &files, facts()).is_ok());
    let nested = lib(r#","exports":{".":{"node":{"import":"./dist/index.js"},"default":"./src/index.ts"}}"#);
    assert!(check(&[("@w/lib", 1)], &[("lib", &nested)], &files, facts()).is_ok());
    let bad = lib(r#","exports":{"default":"./src/index.ts","import":"./dist/index.js"}"#);
    let error = message(check(&[("@w/lib", 1)], &[("lib", &bad)], &files, facts()));
    assert!(
        error.contains("resolves through its \"exports\" to \"packages/lib/src/index.ts\", a TypeScript file (R0018)"),
        "{error}"
    );
}

#[test]
fn subpath_patterns_pick_the_most_specific_key_and_null_excludes() {
    let lib = lib(
        r#","exports":{".":"./dist/index.js","./features/*":"./dist/features/*.js","./features/internal/*":null,"./raw/*.ts":"./src/*.ts"}"#,
    );
    let files = ["packages/lib/dist/index.js", "packages/lib/dist/features/a.js", "packages/lib/src/x.ts"];
    let facts = || vec![module("packages/lib/dist/index.js", &[]), module("packages/lib/dist/features/a.js", &[])];
    assert!(check(&[("@w/lib", 1), ("@w/lib/features/a", 2)], &[("lib", &lib)], &files, facts()).is_ok());
    let error = message(check(&[("@w/lib/features/internal/b", 4)], &[("lib", &lib)], &files, facts()));
    assert_eq!(
        error,
        "Sandbox \"app\": app/index.ts:4:8 imports \"@w/lib/features/internal/b\", but workspace package \"@w/lib\" (\"packages/lib/package.json\") does not export \"./features/internal/b\" (R0018). Add the subpath to its \"exports\" or import one it exports."
    );
    let error = message(check(&[("@w/lib/raw/x.ts", 5)], &[("lib", &lib)], &files, facts()));
    assert!(
        error.contains("resolves through its \"exports\" to \"packages/lib/src/x.ts\", a TypeScript file (R0018)"),
        "{error}"
    );
    let error = message(check(&[("@w/lib/features/missing", 6)], &[("lib", &lib)], &files, facts()));
    assert!(
        error.contains("to \"packages/lib/dist/features/missing.js\", which is not a shipped file (R0018)"),
        "{error}"
    );
}

#[test]
fn a_missing_exports_target_is_r0018() {
    let lib = lib(r#","exports":{"import":"./dist/index.js"}"#);
    let error = message(check(
        &[("@w/lib", 2)],
        &[("lib", &lib)],
        &["packages/lib/src/index.ts"],
        vec![module("packages/lib/src/index.ts", &[])],
    ));
    assert_eq!(
        error,
        format!("Sandbox \"app\": app/index.ts:2:8 imports \"@w/lib\", which workspace package \"@w/lib\" resolves through its \"exports\" to \"packages/lib/dist/index.js\", which is not a shipped file (R0018). {FIX}")
    );
}

#[test]
fn malformed_exports_are_r0018() {
    let mixed = lib(r#","exports":{".":"./index.js","import":"./index.js"}"#);
    let error = message(check(
        &[("@w/lib", 1)],
        &[("lib", &mixed)],
        &["packages/lib/index.js"],
        vec![module("packages/lib/index.js", &[])],
    ));
    assert!(error.contains("the \"exports\" of workspace package \"@w/lib\" (\"packages/lib/package.json\") are invalid: they mix subpath keys"), "{error}");
    let escaping = lib(r#","exports":"../other/index.js""#);
    let error = message(check(&[("@w/lib", 1)], &[("lib", &escaping)], &[], vec![]));
    assert!(error.contains("are invalid: target \"../other/index.js\" does not start with \"./\" (R0018)"), "{error}");
}

#[test]
fn main_is_probed_like_node_and_a_typescript_main_is_r0019() {
    let probed = lib(r#","main":"dist/index""#);
    assert!(check(
        &[("@w/lib", 1)],
        &[("lib", &probed)],
        &["packages/lib/dist/index.js"],
        vec![module("packages/lib/dist/index.js", &[])]
    )
    .is_ok());
    let ts = lib(r#","main":"index.ts""#);
    let error = message(check(
        &[("@w/lib", 7)],
        &[("lib", &ts)],
        &["packages/lib/index.ts"],
        vec![module("packages/lib/index.ts", &[])],
    ));
    assert_eq!(
        error,
        format!("Sandbox \"app\": app/index.ts:7:8 imports \"@w/lib\", which workspace package \"@w/lib\" resolves through its \"main\" to \"packages/lib/index.ts\", a TypeScript file (R0019). {FIX}")
    );
    let missing = lib(r#","main":"./dist/index.js""#);
    let error = message(check(&[("@w/lib", 7)], &[("lib", &missing)], &[], vec![]));
    assert!(
        error.contains("through its \"main\" to \"packages/lib/dist/index.js\", which is not a shipped file (R0019)"),
        "{error}"
    );
}

#[test]
fn the_default_index_js_is_used_without_exports_or_main() {
    let plain = lib("");
    assert!(check(
        &[("@w/lib", 1)],
        &[("lib", &plain)],
        &["packages/lib/index.js"],
        vec![module("packages/lib/index.js", &[])]
    )
    .is_ok());
    let error = message(check(
        &[("@w/lib", 1)],
        &[("lib", &plain)],
        &["packages/lib/index.ts"],
        vec![module("packages/lib/index.ts", &[])],
    ));
    assert_eq!(
        error,
        format!("Sandbox \"app\": app/index.ts:1:8 imports \"@w/lib\", which workspace package \"@w/lib\" resolves through the default entry ./index.js (its package.json has neither \"exports\" nor \"main\") to \"packages/lib/index.js\", which is not a shipped file (R0020). {FIX}")
    );
    let error = message(check(&[("@w/lib/src/util.ts", 2)], &[("lib", &plain)], &["packages/lib/src/util.ts"], vec![]));
    assert!(error.contains("resolves as a file path (its package.json has no \"exports\") to \"packages/lib/src/util.ts\", a TypeScript file (R0020)"), "{error}");
}

#[test]
fn typescript_behind_a_second_workspace_package_is_reported_where_it_is_imported() {
    let lib = r#"{"name":"@w/lib","type":"module","exports":"./index.js","dependencies":{"@w/money":"workspace:*"}}"#;
    let money = r#"{"name":"@w/money","type":"module","exports":{"import":"./src/index.ts"}}"#;
    let files = ["packages/lib/index.js", "packages/money/src/index.ts"];
    let error = message(check(
        &[("@w/lib", 1)],
        &[("lib", lib), ("money", money)],
        &files,
        vec![module("packages/lib/index.js", &[("@w/money", 4)])],
    ));
    assert_eq!(
        error,
        format!("Sandbox \"app\": packages/lib/index.js:4:8 imports \"@w/money\", which workspace package \"@w/money\" resolves through its \"exports\" to \"packages/money/src/index.ts\", a TypeScript file (R0018). {FIX}")
    );
}

#[test]
fn a_relative_typescript_or_missing_import_inside_a_workspace_package_is_r0020() {
    let lib = lib(r#","exports":"./index.js""#);
    let files = ["packages/lib/index.js", "packages/lib/util.ts"];
    let error = message(check(
        &[("@w/lib", 1)],
        &[("lib", &lib)],
        &files,
        vec![module("packages/lib/index.js", &[("./util.ts", 2)])],
    ));
    assert_eq!(
        error,
        format!("Sandbox \"app\": packages/lib/index.js:2:8 imports \"./util.ts\" of workspace package \"@w/lib\", the TypeScript file \"packages/lib/util.ts\" (R0020). {FIX}")
    );
    let error = message(check(
        &[("@w/lib", 1)],
        &[("lib", &lib)],
        &files,
        vec![module("packages/lib/index.js", &[("./util.js", 2)])],
    ));
    assert!(error.ends_with(&format!("imports \"./util.js\" of workspace package \"@w/lib\", \"packages/lib/util.js\", which is not a shipped file (R0020). {FIX}")), "{error}");
}

#[test]
fn unused_workspace_packages_and_non_workspace_imports_are_not_checked() {
    // @w/tool (a devDependency with a TypeScript entry) is never imported; @w/other is shipped
    // but a registry (not a workspace:) dependency; slugify is an npm package installed in the Box.
    let tool = r#"{"name":"@w/tool","type":"module","exports":"./src/index.ts"}"#;
    let other = r#"{"name":"@w/other","type":"module","main":"index.ts"}"#;
    let lib = lib(r#","exports":"./index.js""#);
    let plan = check(
        &[("@w/lib", 1), ("@w/other", 2), ("slugify", 3), ("node:path", 4)],
        &[("lib", &lib), ("tool", tool), ("other", other)],
        &["packages/lib/index.js", "packages/tool/src/index.ts", "packages/other/index.ts"],
        vec![module("packages/lib/index.js", &[])],
    );
    assert!(plan.unwrap().checked);
}

#[test]
fn bare_specifiers_split_into_name_and_subpath() {
    assert_eq!(package_specifier("@w/lib"), Some(("@w/lib", ".".to_owned())));
    assert_eq!(package_specifier("@w/lib/a/b.js"), Some(("@w/lib", "./a/b.js".to_owned())));
    assert_eq!(package_specifier("lib/x"), Some(("lib", "./x".to_owned())));
    assert_eq!(package_specifier("@w"), None);
    assert_eq!(package_specifier("node:fs"), None);
    assert_eq!(package_specifier("./lib"), None);
    assert_eq!(package_specifier("#alias"), None);
}
