//! Unit tests of [`crate::definition::module_graph`]: one per rule, with the exact messages.

use super::*;

const MANIFEST: &str = r#"{"name":"my-tool","type":"module","dependencies":{"slugify":"^1.6.6","my-tool-extra":"1.0.0"},"peerDependencies":{"@scope/pkg":"2"}}"#;

/// An import edge on `line` (column 20, offsets derived from the line so edits are checkable).
fn import(specifier: &str, line: u32) -> ImportEdge {
    ImportEdge {
        specifier: Some(specifier.into()),
        start: line * 100,
        end: line * 100 + 10,
        line: Some(line),
        column: Some(20),
        dynamic: false,
    }
}

fn dynamic(specifier: Option<&str>, line: u32) -> ImportEdge {
    ImportEdge { specifier: specifier.map(Into::into), dynamic: true, ..import("", line) }
}

fn module(path: &str, imports: Vec<ImportEdge>) -> ModuleFacts {
    ModuleFacts { path: path.into(), imports, ..ModuleFacts::default() }
}

fn cjs(usage: CommonJsUsage, name: &str, property: Option<&str>, line: u32, column: u32) -> CommonJsUse {
    CommonJsUse { name: name.into(), usage, property: property.map(Into::into), line: Some(line), column: Some(column) }
}

/// A root package `d` with `files` (package.json added) and the facts of `modules`.
fn input(files: &[&str], modules: Vec<ModuleFacts>) -> ModuleGraphInput {
    let mut all: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
    all.push("package.json".into());
    ModuleGraphInput {
        name: Some("d".into()),
        manifest: Some(MANIFEST.into()),
        files: all,
        modules,
        ..ModuleGraphInput::default()
    }
}

fn message(input: &ModuleGraphInput) -> String {
    let error = check_module_graph(input).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    error.message().to_owned()
}

/// The message of an index.ts that imports `specifier` on line 3, next to `files`.
fn import_message(specifier: &str, files: &[&str]) -> String {
    let mut all = vec!["index.ts"];
    all.extend_from_slice(files);
    message(&input(&all, vec![module("index.ts", vec![import(specifier, 3)])]))
}

#[test]
fn a_valid_graph_passes_and_plans_the_rewrites_of_compiled_modules() {
    let files = ["index.ts", "greet.ts", "lib/label.mts", "lib/math.ts", "plain.js", "data.json", "types.d.ts"];
    let plan = check_module_graph(&input(
        &files,
        vec![
            module(
                "index.ts",
                vec![
                    import("./lib/math.ts", 1),
                    import("./greet.js", 2),
                    import("./plain.js", 3),
                    import("slugify", 4),
                    import("@scope/pkg/sub", 5),
                    import("node:fs", 6),
                    import("fs", 7),
                    import("./data.json", 8),
                    dynamic(Some("./lib/label.mts?v=1"), 9),
                ],
            ),
            module("lib/math.ts", vec![import("../lib/label.mjs", 1)]),
            module("lib/label.mts", vec![]),
            module("greet.ts", vec![]),
            module("plain.js", vec![import("./greet.js", 1)]),
        ],
    ))
    .unwrap();
    assert!(plan.checked);
    let edit = |line: u32, text: &str| Edit { start: line * 100, end: line * 100 + 10, text: text.into() };
    let expected = BTreeMap::from([
        (
            "index.ts".to_owned(),
            vec![
                edit(1, r#""./lib/math.ts.mjs""#),
                edit(2, r#""./greet.ts.mjs""#),
                edit(9, r#""./lib/label.mts.mjs?v=1""#),
            ],
        ),
        ("lib/math.ts".to_owned(), vec![edit(1, r#""../lib/label.mts.mjs""#)]),
    ]);
    assert_eq!(plan.rewrites, expected);
}

#[test]
fn typescript_twins_conventional_first_then_the_other() {
    let plan = |files: &[&str], specifier: &str| {
        let mut modules: Vec<ModuleFacts> = files.iter().map(|f| module(f, vec![])).collect();
        modules.push(module("index.ts", vec![import(specifier, 1)]));
        let mut all = files.to_vec();
        all.push("index.ts");
        check_module_graph(&input(&all, modules)).unwrap().rewrites["index.ts"][0].text.clone()
    };
    assert_eq!(plan(&["a.ts", "a.mts"], "./a.js"), r#""./a.ts.mjs""#);
    assert_eq!(plan(&["a.ts", "a.mts"], "./a.mjs"), r#""./a.mts.mjs""#);
    assert_eq!(plan(&["a.mts"], "./a.js"), r#""./a.mts.mjs""#);
    assert_eq!(plan(&["a.ts"], "./a.mjs"), r#""./a.ts.mjs""#);
}

#[test]
fn an_existing_js_file_wins_over_its_typescript_twin() {
    let plan = check_module_graph(&input(
        &["index.ts", "a.js", "a.ts"],
        vec![module("index.ts", vec![import("./a.js", 1)]), module("a.js", vec![]), module("a.ts", vec![])],
    ))
    .unwrap();
    assert!(plan.rewrites.is_empty());
}

#[test]
fn r0023_a_non_literal_dynamic_import() {
    let got = message(&input(&["index.ts"], vec![module("index.ts", vec![dynamic(None, 4)])]));
    assert_eq!(
        got,
        r#"Sandbox "d": index.ts:4:20 has a dynamic import() whose specifier is not a string literal (R0023). Use a literal path such as import("./plugins/a.ts") so every module of the package can be checked."#
    );
}

#[test]
fn r0024_a_package_imports_alias() {
    assert_eq!(
        import_message("#utils", &[]),
        r##"Sandbox "d": index.ts:3:20 imports "#utils", a package.json "imports" alias, which Sandbox packages do not support (R0024). Import files of the package by a relative path such as "./lib/util.ts"."##
    );
}

#[test]
fn r0025_a_self_import_by_name_or_subpath() {
    let expected = |spec: &str| {
        format!(
            r#"Sandbox "d": index.ts:3:20 imports "{spec}", the package's own name "my-tool" (R0025). Import files of the package by a relative path such as "./lib/util.ts"."#
        )
    };
    assert_eq!(import_message("my-tool", &[]), expected("my-tool"));
    assert_eq!(import_message("my-tool/lib/a.js", &[]), expected("my-tool/lib/a.js"));
    // A package whose name merely starts with it is a dependency.
    check_module_graph(&input(&["index.ts"], vec![module("index.ts", vec![import("my-tool-extra", 1)])])).unwrap();
}

#[test]
fn r0026_absolute_paths_and_urls_but_not_node_builtins() {
    assert_eq!(
        import_message("/srv/app/x.js", &[]),
        r#"Sandbox "d": index.ts:3:20 imports "/srv/app/x.js", an absolute path (R0026). Import files of the package by a relative path such as "./lib/util.ts"."#
    );
    assert_eq!(
        import_message("https://esm.sh/x", &[]),
        r#"Sandbox "d": index.ts:3:20 imports "https://esm.sh/x", a https: URL (R0026). Import files of the package by a relative path and other code as a dependency in package.json."#
    );
    assert!(import_message("file:///etc/x.js", &[]).contains("a file: URL (R0026)"));
    assert!(import_message("data:text/javascript,1", &[]).contains("a data: URL (R0026)"));
}

#[test]
fn r0027_a_relative_import_leaving_the_package() {
    assert_eq!(
        import_message("../shared/x.ts", &[]),
        r#"Sandbox "d": index.ts:3:20 imports "../shared/x.ts", which leaves the package directory (R0027). Move the file into the package, or publish it as a dependency and import it by its package name."#
    );
    // Inside a workspace: the package directory is named, and sibling files do not count.
    let mut workspace =
        input(&["pkgs/a/index.ts", "pkgs/b/x.ts"], vec![module("pkgs/a/index.ts", vec![import("../b/x.ts", 2)])]);
    workspace.package_path = "pkgs/a".into();
    workspace.files.push("pkgs/a/package.json".into());
    assert_eq!(
        message(&workspace),
        r#"Sandbox "d": pkgs/a/index.ts:2:20 imports "../b/x.ts", which leaves the package directory "pkgs/a" (R0027). Move the file into the package, or publish it as a dependency and import it by its package name."#
    );
}

#[test]
fn r0028_extensionless_and_missing_targets() {
    assert_eq!(
        import_message("./util", &["util.ts"]),
        r#"Sandbox "d": index.ts:3:20 imports "./util" without a file extension (R0028). Write the file name with its extension: "./util.ts"."#
    );
    assert_eq!(
        import_message("./lib", &["lib/index.mjs"]),
        r#"Sandbox "d": index.ts:3:20 imports "./lib" without a file extension (R0028). Write the file name with its extension: "./lib/index.mjs"."#
    );
    assert_eq!(
        import_message("./nothing", &[]),
        r#"Sandbox "d": index.ts:3:20 imports "./nothing" without a file extension (R0028). Write the file name with its extension, e.g. "./lib/util.ts" (ES modules do not resolve extensions or directory index files)."#
    );
    assert_eq!(
        import_message("./lib/missing.js", &["lib/other.ts"]),
        r#"Sandbox "d": index.ts:3:20 imports "./lib/missing.js", but "lib/missing.js" is not a file of the package (R0028). Check the path: relative imports are resolved from the importing file's directory."#
    );
    // Only TypeScript twins stand in for a missing `.js`/`.mjs` file.
    assert!(
        import_message("./a.mjs", &["a.cts", "a.d.ts"]).contains(r#"but "a.mjs" is not a file of the package (R0028)"#)
    );
}

#[test]
fn r0029_commonjs_targets() {
    assert_eq!(
        import_message("./legacy.cjs", &["legacy.cjs"]),
        r#"Sandbox "d": index.ts:3:20 imports "./legacy.cjs", a CommonJS file (R0029). Convert it to an ES module (.js, .mjs, .ts or .mts in this "type": "module" package) and import that."#
    );
    assert!(import_message("./legacy.cts", &["legacy.cts"]).contains("a CommonJS file (R0029)"));
}

#[test]
fn r0030_jsx_targets() {
    assert_eq!(
        import_message("./view.tsx", &["view.tsx"]),
        r#"Sandbox "d": index.ts:3:20 imports "./view.tsx", a JSX file, which Sandbox packages do not compile (R0030). Move the code to a .ts or .js file without JSX."#
    );
    assert!(import_message("./view.jsx", &["view.jsx"]).contains("(R0030)"));
}

#[test]
fn r0031_declaration_targets() {
    assert_eq!(
        import_message("./types.d.ts", &["types.d.ts"]),
        r#"Sandbox "d": index.ts:3:20 imports "./types.d.ts", a declaration file with no runtime code (R0031). Use "import type" for types, or import the module that implements them."#
    );
    assert!(import_message("./types.d.mts", &[]).contains("(R0031)"));
}

#[test]
fn r0022_each_commonjs_usage_is_named() {
    use CommonJsUsage::*;
    let cases = [
        (cjs(RequireCall, "require", None, 2, 11), "index.ts:2:11 uses CommonJS require(), which does not exist in an ES module (R0022). Use import (or await import() to load conditionally); for a CommonJS-only API use createRequire(import.meta.url) from \"node:module\"."),
        (cjs(ImportRequire, "require", None, 1, 13), "index.ts:1:13 uses CommonJS import x = require(), which does not exist in an ES module (R0022). Use import x from \"…\" (or import * as x from \"…\") instead."),
        (cjs(RequireMember, "require", Some("resolve"), 1, 1), "index.ts:1:1 uses CommonJS require.resolve, which does not exist in an ES module (R0022). Use import.meta.resolve() instead."),
        (cjs(RequireMember, "require", Some("cache"), 1, 1), "index.ts:1:1 uses CommonJS require.cache, which does not exist in an ES module (R0022). Use createRequire(import.meta.url) from \"node:module\" to get a require function."),
        (cjs(RequireReference, "require", None, 1, 1), "index.ts:1:1 uses CommonJS require, which does not exist in an ES module (R0022). Use import, or createRequire(import.meta.url) from \"node:module\" to get a require function."),
        (cjs(ModuleExportsAssignment, "module", None, 5, 1), "index.ts:5:1 uses CommonJS module.exports assignment, which does not exist in an ES module (R0022). Use export default or named export declarations instead."),
        (cjs(ModuleExportsReference, "module", None, 5, 1), "index.ts:5:1 uses CommonJS module.exports, which does not exist in an ES module (R0022). Use export declarations instead."),
        (cjs(ModuleReference, "module", None, 5, 1), "index.ts:5:1 uses CommonJS module, which does not exist in an ES module (R0022). ES modules have no module object; use export declarations and import.meta instead."),
        (cjs(ExportsAssignment, "exports", None, 6, 1), "index.ts:6:1 uses CommonJS exports assignment, which does not exist in an ES module (R0022). Use export declarations instead."),
        (cjs(ExportsReference, "exports", None, 6, 1), "index.ts:6:1 uses CommonJS exports, which does not exist in an ES module (R0022). Use export declarations instead."),
    ];
    for (usage, expected) in cases {
        let facts = ModuleFacts { commonjs: vec![usage], ..module("index.ts", vec![]) };
        assert_eq!(message(&input(&["index.ts"], vec![facts])), format!("Sandbox \"d\": {expected}"));
    }
}

#[test]
fn a_js_syntax_error_in_reachable_code() {
    let broken = ModuleFacts {
        parse_error: Some(ParseError { message: "Unexpected token (2:5)".into(), line: Some(2), column: Some(6) }),
        ..module("lib/a.js", vec![])
    };
    let got =
        message(&input(&["index.ts", "lib/a.js"], vec![module("index.ts", vec![import("./lib/a.js", 1)]), broken]));
    assert_eq!(
        got,
        r#"Sandbox "d": lib/a.js:2:6 is not a valid ES module: Unexpected token (2:5). Fix the syntax; Sandbox packages run as ES modules."#
    );
}

#[test]
fn unreachable_modules_are_not_checked_but_still_rewritten() {
    let loose = ModuleFacts {
        commonjs: vec![cjs(CommonJsUsage::RequireCall, "require", None, 1, 1)],
        ..module("scripts/build.ts", vec![import("#x", 1), import("../lib.ts", 2)])
    };
    let plan = check_module_graph(&input(
        &["index.js", "scripts/build.ts", "lib.ts"],
        vec![module("index.js", vec![]), loose, module("lib.ts", vec![])],
    ))
    .unwrap();
    assert!(plan.checked);
    assert_eq!(
        plan.rewrites["scripts/build.ts"],
        vec![Edit { start: 200, end: 210, text: r#""../lib.ts.mjs""#.into() }]
    );
}

#[test]
fn dynamic_literal_imports_are_walked_and_cycles_end() {
    let a = ModuleFacts {
        commonjs: vec![cjs(CommonJsUsage::ExportsAssignment, "exports", None, 3, 1)],
        ..module("a.mjs", vec![import("./index.mjs", 1)])
    };
    let got = message(&input(&["index.mjs", "a.mjs"], vec![module("index.mjs", vec![dynamic(Some("./a.mjs"), 2)]), a]));
    assert!(got.starts_with(r#"Sandbox "d": a.mjs:3:1 uses CommonJS exports assignment"#), "{got}");
}

#[test]
fn the_first_finding_by_path_then_position_is_reported() {
    let index = ModuleFacts {
        commonjs: vec![cjs(CommonJsUsage::RequireCall, "require", None, 9, 1)],
        ..module("index.ts", vec![import("./z.ts", 1), import("./b.ts", 2), import("#late", 7)])
    };
    let b = module(
        "b.ts",
        vec![ImportEdge { line: None, column: None, ..import("#unknown-position", 1) }, import("#second", 5)],
    );
    let all = input(&["index.ts", "z.ts", "b.ts"], vec![index, b, module("z.ts", vec![import("#z", 1)])]);
    assert!(message(&all).starts_with(r##"Sandbox "d": b.ts:5:20 imports "#second""##));
    // Without a position the file alone is named.
    let unknown = input(
        &["index.ts"],
        vec![module("index.ts", vec![ImportEdge { line: None, column: None, ..import("#a", 1) }])],
    );
    assert!(message(&unknown).starts_with(r##"Sandbox "d": index.ts imports "#a""##));
}

#[test]
fn packages_that_are_not_definition_shaped_are_left_to_definition_checks() {
    let bad = vec![module("index.ts", vec![import("#a", 1), import("./b.ts", 2)]), module("b.ts", vec![])];
    for manifest in [None, Some("{}"), Some(r#"{"type":"commonjs"}"#), Some("not json"), Some("[]")] {
        let mut case = input(&["index.ts", "b.ts"], bad.clone());
        case.manifest = manifest.map(Into::into);
        let plan = check_module_graph(&case).unwrap();
        assert!(!plan.checked, "{manifest:?}");
        assert_eq!(plan.rewrites["index.ts"].len(), 1, "rewrites still planned");
    }
    let several =
        input(&["index.ts", "index.mjs"], vec![module("index.ts", vec![import("#a", 1)]), module("index.mjs", vec![])]);
    assert!(!check_module_graph(&several).unwrap().checked);
    let none = input(&["main.ts"], vec![module("main.ts", vec![import("#a", 1)])]);
    assert!(!check_module_graph(&none).unwrap().checked);
}

#[test]
fn an_explicit_entry_and_an_unnamed_package() {
    let mut case = input(&["main.ts"], vec![module("main.ts", vec![import("#a", 1)])]);
    case.entry = Some("main.ts".into());
    case.name = None;
    assert!(message(&case).starts_with(r##"Sandbox package: main.ts:1:20 imports "#a""##));
}

#[test]
fn missing_facts_of_a_reachable_module_is_an_error() {
    let got = message(&input(&["index.ts", "a.ts"], vec![module("index.ts", vec![import("./a.ts", 1)])]));
    assert_eq!(got, r#"Sandbox "d": "a.ts" is a module of the package but no facts were given for it."#);
}

/// A package `d` with `manifest` whose index.ts imports `specifiers` on lines 1, 2, …
fn with_manifest(manifest: &str, files: &[&str], specifiers: &[&str]) -> Result<ModuleGraphPlan> {
    let imports = specifiers.iter().zip(1..).map(|(specifier, line)| import(specifier, line)).collect();
    let mut all: Vec<String> = files.iter().map(|f| (*f).to_owned()).collect();
    all.extend(["index.ts".to_owned(), "package.json".to_owned()]);
    check_module_graph(&ModuleGraphInput {
        name: Some("d".into()),
        manifest: Some(manifest.into()),
        files: all,
        modules: vec![module("index.ts", imports)],
        ..ModuleGraphInput::default()
    })
}

#[test]
fn r0032_a_bare_import_must_be_declared_in_dependencies_peer_or_optional() {
    let manifest = r#"{"name":"d","type":"module","dependencies":{"a":"1"},"peerDependencies":{"@p/b":"1"},"optionalDependencies":{"c":"1"},"devDependencies":{"dev-only":"1"}}"#;
    // Declared (any of the three), subpaths of declared ones, built-ins with and without node:.
    let ok = [
        "a",
        "a/sub/x.js",
        "@p/b",
        "@p/b/deep",
        "c",
        "node:fs",
        "fs",
        "fs/promises",
        "node:test",
        "stream/web",
        "worker_threads",
    ];
    assert!(with_manifest(manifest, &[], &ok).unwrap().checked);
    let error = with_manifest(manifest, &[], &["a", "lodash/fp"]).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        error.message(),
        r#"Sandbox "d": index.ts:2:20 imports "lodash/fp", but package.json does not list "lodash" in "dependencies" (R0032). Run `npm i lodash` in the Definition's folder, so it is installed in the Box."#
    );
    let scoped = with_manifest(manifest, &[], &["@scope/x/y"]).unwrap_err();
    assert!(
        scoped.message().contains(r#"does not list "@scope/x" in "dependencies" (R0032). Run `npm i @scope/x`"#),
        "{}",
        scoped.message()
    );
    let dev = with_manifest(manifest, &[], &["dev-only"]).unwrap_err();
    assert_eq!(
        dev.message(),
        r#"Sandbox "d": index.ts:1:20 imports "dev-only", but package.json lists "dev-only" only in "devDependencies", which are not for the Run (R0032). Move it to "dependencies": run `npm i dev-only` in the Definition's folder."#
    );
    // `fs/nope` is not a built-in: it names the package "fs".
    assert!(with_manifest(manifest, &[], &["fs/nope"]).unwrap_err().message().contains(r#"does not list "fs""#));
}

#[test]
fn r0032_the_fix_uses_the_folder_s_package_manager() {
    let manifest = r#"{"name":"d","type":"module"}"#;
    let fix =
        |files: &[&str], manifest: &str| with_manifest(manifest, files, &["zod"]).unwrap_err().message().to_owned();
    assert!(fix(&["pnpm-lock.yaml"], manifest).contains("Run `pnpm add zod`"));
    assert!(fix(&["yarn.lock"], manifest).contains("Run `yarn add zod`"));
    assert!(fix(&["bun.lock"], manifest).contains("Run `bun add zod`"));
    assert!(fix(&[], r#"{"name":"d","type":"module","packageManager":"pnpm@9.1.0"}"#).contains("Run `pnpm add zod`"));
    assert!(fix(&["package-lock.json"], manifest).contains("Run `npm i zod`"));
}

#[test]
fn r0032_only_reachable_modules_count() {
    // lib/unused.ts imports an undeclared package but nothing imports lib/unused.ts.
    let plan = check_module_graph(&input(
        &["index.ts", "lib/unused.ts"],
        vec![module("index.ts", vec![import("slugify", 1)]), module("lib/unused.ts", vec![import("left-pad", 1)])],
    ));
    assert!(plan.unwrap().checked);
}
