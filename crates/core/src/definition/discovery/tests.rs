//! Unit tests of [`crate::definition::discovery`]: one per rule, with the exact names and messages.

use super::*;

/// The input the JS glue would build for these files: `package.json` and `pnpm-workspace.yaml`
/// files mark their directories.
fn input(files: &[&str]) -> DiscoveryInput {
    let dirs_with = |base: &str| {
        files
            .iter()
            .filter_map(|f| match f.rsplit_once('/') {
                Some((dir, name)) if name == base => Some(dir.to_owned()),
                None if *f == base => Some(String::new()),
                _ => None,
            })
            .collect()
    };
    DiscoveryInput {
        files: files.iter().map(|f| (*f).to_owned()).collect(),
        package_dirs: dirs_with("package.json"),
        workspace_dirs: dirs_with("pnpm-workspace.yaml"),
    }
}

fn found(files: &[&str]) -> Vec<(String, &'static str, String, String)> {
    discover(&input(files)).unwrap().into_iter().map(|d| (d.name, d.kind.as_str(), d.dir, d.entry)).collect()
}

fn names(files: &[&str]) -> Vec<String> {
    found(files).into_iter().map(|d| d.0).collect()
}

fn error(files: &[&str]) -> String {
    let err = discover(&input(files)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    err.message().to_owned()
}

fn row(name: &str, kind: &'static str, dir: &str, entry: &str) -> (String, &'static str, String, String) {
    (name.into(), kind, dir.into(), entry.into())
}

#[test]
fn package_project_with_each_entry_name() {
    for entry in ENTRY_NAMES {
        let files = [
            "server/sandboxes/release-notes/package.json".to_owned(),
            format!("server/sandboxes/release-notes/{entry}"),
        ];
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        assert_eq!(
            found(&files),
            vec![row(
                "release-notes",
                "package",
                "server/sandboxes/release-notes",
                &format!("server/sandboxes/release-notes/{entry}")
            )]
        );
    }
}

#[test]
fn nested_package_folder_is_named_by_its_path() {
    assert_eq!(
        found(&[
            "package.json",
            "server/sandboxes/tools/image-optimizer/package.json",
            "server/sandboxes/tools/image-optimizer/index.ts"
        ]),
        vec![row(
            "tools/image-optimizer",
            "package",
            "server/sandboxes/tools/image-optimizer",
            "server/sandboxes/tools/image-optimizer/index.ts"
        )]
    );
}

#[test]
fn helpers_and_nested_packages_inside_a_definition_are_not_definitions() {
    assert_eq!(
        names(&[
            "server/sandboxes/image/package.json",
            "server/sandboxes/image/index.ts",
            "server/sandboxes/image/lib/helper.ts",
            "server/sandboxes/image/vendor/dep/package.json",
            "server/sandboxes/image/vendor/dep/index.js",
            "server/sandboxes/image/vendor/empty/package.json",
            "server/sandboxes/image/helper.sandbox.ts",
        ]),
        ["image"]
    );
}

#[test]
fn pnpm_workspace_internals_are_not_definitions() {
    // A Definition that is itself a pnpm workspace root.
    assert_eq!(
        names(&[
            "server/sandboxes/image/package.json",
            "server/sandboxes/image/pnpm-workspace.yaml",
            "server/sandboxes/image/index.ts",
            "server/sandboxes/image/packages/helper/package.json",
            "server/sandboxes/image/packages/helper/index.ts",
        ]),
        ["image"]
    );
    // A workspace root without an entry: its members with an entry are Definitions, the others
    // are workspace internals.
    assert_eq!(
        names(&[
            "server/sandboxes/mono/package.json",
            "server/sandboxes/mono/pnpm-workspace.yaml",
            "server/sandboxes/mono/apps/tool/package.json",
            "server/sandboxes/mono/apps/tool/index.mjs",
            "server/sandboxes/mono/packages/shared/package.json",
            "server/sandboxes/mono/packages/shared/lib.mjs",
        ]),
        ["mono/apps/tool"]
    );
    // A workspace rooted at server/sandboxes itself: its members with an entry are Definitions,
    // the others (packages/helper) are workspace internals.
    assert_eq!(
        names(&[
            "server/sandboxes/package.json",
            "server/sandboxes/pnpm-workspace.yaml",
            "server/sandboxes/report/package.json",
            "server/sandboxes/report/index.ts",
            "server/sandboxes/packages/helper/package.json",
            "server/sandboxes/packages/helper/lib.js",
        ]),
        ["report"]
    );
}

#[test]
fn a_folder_package_without_entry_that_contains_definitions_is_not_an_error() {
    assert_eq!(
        names(&[
            "server/sandboxes/tools/package.json",
            "server/sandboxes/tools/a/package.json",
            "server/sandboxes/tools/a/index.js",
        ]),
        ["tools/a"]
    );
}

#[test]
fn loose_files_in_the_sandboxes_folder_are_ignored() {
    assert_eq!(
        names(&[
            "server/sandboxes/readme.md",
            "server/sandboxes/index.ts",
            "server/sandboxes/package.json",
            "server/sandboxes/loose.sandbox.ts",
            "server/sandboxes/a/package.json",
            "server/sandboxes/a/index.ts",
        ]),
        ["a"]
    );
}

#[test]
fn a_manifest_without_entry_is_an_error() {
    assert_eq!(
        error(&["server/sandboxes/content/package.json", "server/sandboxes/content/main.ts"]),
        "Sandbox package \"server/sandboxes/content\" requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs)."
    );
    // A workspace root above server/sandboxes does not excuse it.
    assert_eq!(
        error(&["pnpm-workspace.yaml", "package.json", "server/sandboxes/content/package.json"]),
        "Sandbox package \"server/sandboxes/content\" requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs)."
    );
}

#[test]
fn several_entries_are_an_error() {
    assert_eq!(
        error(&[
            "server/sandboxes/content/package.json",
            "server/sandboxes/content/index.mjs",
            "server/sandboxes/content/index.ts",
        ]),
        "Sandbox package \"server/sandboxes/content\" has multiple entrypoints: index.ts, index.mjs."
    );
}

#[test]
fn free_form_names_strip_src_and_the_suffix() {
    assert_eq!(
        found(&[
            "package.json",
            "src/release-notes.sandbox.ts",
            "src/content/summary.sandbox.ts",
            "src/tools/release-notes.sandbox.mts",
            "lib/a.sandbox.cts",
            "lib/b.sandbox.js",
            "lib/c.sandbox.mjs",
            "lib/d.sandbox.cjs",
            "lib/e.sandbox.tsx",
            "lib/f.sandbox.d.ts",
            "lib/.sandbox.ts",
            "lib/g.ts",
        ]),
        vec![
            row("content/summary", "free-form", "", "src/content/summary.sandbox.ts"),
            row("lib/a", "free-form", "", "lib/a.sandbox.cts"),
            row("lib/b", "free-form", "", "lib/b.sandbox.js"),
            row("lib/c", "free-form", "", "lib/c.sandbox.mjs"),
            row("lib/d", "free-form", "", "lib/d.sandbox.cjs"),
            row("release-notes", "free-form", "", "src/release-notes.sandbox.ts"),
            row("tools/release-notes", "free-form", "", "src/tools/release-notes.sandbox.mts"),
        ]
    );
}

#[test]
fn free_form_files_use_the_nearest_package_json() {
    assert_eq!(
        found(&["package.json", "packages/web/package.json", "packages/web/src/jobs/x.sandbox.ts"]),
        vec![row("packages/web/src/jobs/x", "free-form", "packages/web", "packages/web/src/jobs/x.sandbox.ts")]
    );
}

#[test]
fn free_form_files_under_sandboxes_folders_are_ignored() {
    assert_eq!(
        names(&[
            "package.json",
            "src/server/sandboxes/a.sandbox.ts",
            "server/sandboxes/b/c.sandbox.ts",
            "src/ok.sandbox.ts"
        ]),
        ["ok"]
    );
}

#[test]
fn a_free_form_file_without_package_json_is_an_error() {
    assert_eq!(
        error(&["lib/nested/package.json", "lib/x.sandbox.ts"]),
        "Sandbox file \"lib/x.sandbox.ts\" requires a package.json between its directory and the app root."
    );
}

#[test]
fn duplicate_names_are_an_error_naming_both() {
    assert_eq!(
        error(&[
            "package.json",
            "src/release-notes.sandbox.ts",
            "server/sandboxes/release-notes/package.json",
            "server/sandboxes/release-notes/index.ts",
        ]),
        "Duplicate sandbox name \"release-notes\": server/sandboxes/release-notes and src/release-notes.sandbox.ts."
    );
    assert_eq!(
        error(&["package.json", "src/a.sandbox.ts", "a.sandbox.mjs"]),
        "Duplicate sandbox name \"a\": a.sandbox.mjs and src/a.sandbox.ts."
    );
}

#[test]
fn results_are_sorted_by_name() {
    assert_eq!(
        names(&[
            "package.json",
            "src/release-notes.sandbox.ts",
            "src/content/summary.sandbox.ts",
            "server/sandboxes/billing/package.json",
            "server/sandboxes/billing/index.ts",
        ]),
        ["billing", "content/summary", "release-notes"]
    );
}

#[test]
fn invalid_derived_names_name_the_folder_or_file() {
    assert_eq!(
        error(&["server/sandboxes/a b/package.json", "server/sandboxes/a b/index.ts"]),
        "Sandbox package \"server/sandboxes/a b\": Invalid sandbox name \"a b\": it contains the character \" \". \
         A name is 1-200 bytes of '/'-separated segments of letters, digits, '.', '_' and '-', without empty, '.' or '..' segments."
    );
    assert!(error(&["package.json", "src/x+y.sandbox.ts"])
        .starts_with("Sandbox file \"src/x+y.sandbox.ts\": Invalid sandbox name \"x+y\""));
}

#[test]
fn unsafe_input_paths_are_rejected() {
    let mut bad = input(&["package.json"]);
    bad.files.push("../x.sandbox.ts".into());
    let err = discover(&bad).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        err.message(),
        "Invalid discovery input: files entry \"../x.sandbox.ts\" is not a relative POSIX path: it has a '.' or '..' segment."
    );
    let mut bad = input(&[]);
    bad.package_dirs.push("/abs".into());
    assert_eq!(
        discover(&bad).unwrap_err().message(),
        "Invalid discovery input: packageDirs entry \"/abs\" is not a relative POSIX path: it must be relative (no leading '/')."
    );
}

#[test]
fn an_empty_app_has_no_definitions() {
    assert!(found(&[]).is_empty());
    assert!(found(&["package.json", "src/main.ts"]).is_empty());
}

#[test]
fn is_inside_and_ancestors() {
    assert!(is_inside("", "a"));
    assert!(!is_inside("", ""));
    assert!(is_inside("a", "a/b"));
    assert!(!is_inside("a", "ab"));
    assert!(!is_inside("a", "a"));
    assert_eq!(ancestors("a/b/c.ts").collect::<Vec<_>>(), ["a/b", "a", ""]);
    assert_eq!(ancestors("c.ts").collect::<Vec<_>>(), [""]);
}

#[test]
fn discover_all_keeps_going_past_problems() {
    let discovery = discover_all(&input(&[
        "package.json",
        "server/sandboxes/good/package.json",
        "server/sandboxes/good/index.mjs",
        "server/sandboxes/new/package.json",
        "server/sandboxes/two/package.json",
        "server/sandboxes/two/index.ts",
        "server/sandboxes/two/index.mjs",
        "server/sandboxes/two/inner/package.json",
        "server/sandboxes/two/inner/index.mjs",
        "server/sandboxes/dup/package.json",
        "server/sandboxes/dup/index.mjs",
        "dup.sandbox.ts",
        "src/bad name.sandbox.ts",
    ]))
    .unwrap();
    let names: Vec<&str> = discovery.definitions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let problems: Vec<(Option<&str>, &str)> =
        discovery.problems.iter().map(|p| (p.name.as_deref(), p.error.message())).collect();
    assert_eq!(
        problems,
        [
            (Some("two"), "Sandbox package \"server/sandboxes/two\" has multiple entrypoints: index.ts, index.mjs."),
            (Some("new"), "Sandbox package \"server/sandboxes/new\" requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs)."),
            (None, "Sandbox file \"src/bad name.sandbox.ts\": Invalid sandbox name \"bad name\": it contains the character \" \". A name is 1-200 bytes of '/'-separated segments of letters, digits, '.', '_' and '-', without empty, '.' or '..' segments."),
            (Some("dup"), "Duplicate sandbox name \"dup\": dup.sandbox.ts and server/sandboxes/dup."),
        ]
    );
    // discover() reports the first of them.
    assert_eq!(
        error(&[
            "server/sandboxes/new/package.json",
            "server/sandboxes/two/package.json",
            "server/sandboxes/two/index.ts",
            "server/sandboxes/two/index.mjs"
        ]),
        "Sandbox package \"server/sandboxes/two\" has multiple entrypoints: index.ts, index.mjs."
    );
}

#[test]
fn an_entry_without_a_package_json_is_reported() {
    assert_eq!(
        error(&["server/sandboxes/empty/index.mjs"]),
        "Sandbox folder \"server/sandboxes/empty\" has index.mjs but no package.json; add one with \"type\": \"module\"."
    );
    // Helpers inside a package, and loose files directly in server/sandboxes/, are not.
    assert_eq!(
        names(&[
            "server/sandboxes/index.mjs",
            "server/sandboxes/a/package.json",
            "server/sandboxes/a/index.mjs",
            "server/sandboxes/a/lib/index.mjs",
        ]),
        ["a"]
    );
    let discovery = discover_all(&input(&["server/sandboxes/x/y/index.ts", "server/sandboxes/x/y/index.mjs"])).unwrap();
    let problems: Vec<(Option<&str>, &str)> =
        discovery.problems.iter().map(|p| (p.name.as_deref(), p.origin.as_str())).collect();
    assert_eq!(problems, [(Some("x/y"), "server/sandboxes/x/y")], "one problem per folder");
}
