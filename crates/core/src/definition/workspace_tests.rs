//! Unit tests of [`super::resolve_workspace`].

use super::*;

fn input(package_path: &str, globs: &[&str], manifests: &[(&str, &str)]) -> WorkspaceInput {
    WorkspaceInput {
        root_label: "app".into(),
        package_path: package_path.into(),
        globs: globs.iter().map(|g| (*g).to_owned()).collect(),
        workspace_patches: None,
        manifests: manifests.iter().map(|(d, t)| ((*d).to_owned(), (*t).to_owned())).collect(),
    }
}

const ROOT: &str = r#"{"name":"root","private":true}"#;

fn plan(input: &WorkspaceInput) -> WorkspacePlan {
    resolve_workspace(input).unwrap().expect("the workspace applies")
}

#[test]
fn transitive_closure_over_all_dependency_fields() {
    let manifests = [
        ("", ROOT),
        (
            "sandboxes/report",
            r#"{"name":"report","dependencies":{"@acme/a":"workspace:*","left-pad":"1"},"devDependencies":{"@acme/t":"workspace:^"}}"#,
        ),
        ("packages/a", r#"{"name":"@acme/a","optionalDependencies":{"@acme/b":"workspace:~"}}"#),
        ("packages/b", r#"{"name":"@acme/b","peerDependencies":{"@acme/a":"workspace:*"}}"#),
        ("packages/t", r#"{"name":"@acme/t"}"#),
        ("packages/unused", r#"{"name":"@acme/unused"}"#),
        ("packages/alias-target", r#"{"name":"@acme/real"}"#),
    ];
    let p = plan(&input("sandboxes/report", &["packages/*", "sandboxes/*"], &manifests));
    assert_eq!(p.package_path, "sandboxes/report");
    assert_eq!(p.dirs, ["packages/a", "packages/b", "packages/t", "sandboxes/report"]);
    assert!(p.patch_files.is_empty());

    let aliased = [("", ROOT), ("s", r#"{"name":"s","dependencies":{"x":"workspace:@acme/real@*"}}"#), manifests[6]];
    assert_eq!(plan(&input("s", &["s", "packages/*"], &aliased)).dirs, ["packages/alias-target", "s"]);
}

#[test]
fn the_root_itself_is_a_definition_and_a_workspace_package() {
    let manifests =
        [("", r#"{"name":"root","dependencies":{"@acme/a":"workspace:*"}}"#), ("packages/a", r#"{"name":"@acme/a"}"#)];
    let p = plan(&input("", &["packages/*"], &manifests));
    assert_eq!((p.package_path.as_str(), p.dirs.clone()), ("", vec!["".to_owned(), "packages/a".to_owned()]));
    let depends_on_root = [("", ROOT), ("packages/a", r#"{"name":"a","dependencies":{"root":"workspace:*"}}"#)];
    assert_eq!(plan(&input("packages/a", &["packages/*"], &depends_on_root)).dirs, ["", "packages/a"]);
}

#[test]
fn a_missing_workspace_dependency_is_an_error_naming_the_manifest() {
    let manifests = [
        ("", ROOT),
        ("s", r#"{"name":"s","dependencies":{"@acme/a":"workspace:*"}}"#),
        ("packages/a", r#"{"name":"@acme/a","dependencies":{"@acme/gone":"workspace:^"}}"#),
        ("excluded/gone", r#"{"name":"@acme/gone"}"#),
    ];
    let error = resolve_workspace(&input("s", &["s", "packages/*"], &manifests)).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        error.message(),
        "app/packages/a/package.json references missing pnpm workspace dependency \"@acme/gone\" (\"@acme/gone\": \"workspace:^\"); \
         add a package with that name under a \"packages\" pattern of app/pnpm-workspace.yaml or remove the dependency."
    );
}

#[test]
fn the_workspace_does_not_apply_outside_its_globs_or_for_another_manager() {
    let manifests = [("", ROOT), ("sandboxes/x", r#"{"name":"x"}"#), ("packages/a", r#"{"name":"a"}"#)];
    assert_eq!(resolve_workspace(&input("sandboxes/x", &["packages/*"], &manifests)).unwrap(), None);
    assert_eq!(resolve_workspace(&input("sandboxes/x", &["**", "!sandboxes/**"], &manifests)).unwrap(), None);
    assert!(resolve_workspace(&input("sandboxes/x", &["**"], &manifests)).unwrap().is_some());
    let npm = [("", ROOT), ("sandboxes/x", r#"{"name":"x","packageManager":"npm@10.0.0"}"#)];
    assert_eq!(resolve_workspace(&input("sandboxes/x", &["sandboxes/*"], &npm)).unwrap(), None);
    let pnpm = [("", ROOT), ("sandboxes/x", r#"{"name":"x","packageManager":"pnpm@9.9.0"}"#)];
    assert!(resolve_workspace(&input("sandboxes/x", &["sandboxes/*"], &pnpm)).unwrap().is_some());
}

#[test]
fn patch_files_come_from_the_root_manifest_and_the_workspace_file() {
    let root = r#"{"name":"root","pnpm":{"patchedDependencies":{"a@1.0.0":"patches/a@1.0.0.patch"}}}"#;
    let mut i = input("", &[], &[("", root)]);
    i.workspace_patches = Some(serde_json::json!({ "b": "./patches/b.patch", "a@1.0.0": "patches/a@1.0.0.patch" }));
    assert_eq!(plan(&i).patch_files, ["patches/a@1.0.0.patch", "patches/b.patch"]);
    i.workspace_patches = Some(serde_json::json!({ "b": "../outside.patch" }));
    assert_eq!(
        resolve_workspace(&i).unwrap_err().message(),
        "app/pnpm-workspace.yaml \"patchedDependencies\" entry \"b\" has an invalid patch path \"../outside.patch\": it has a '.' or '..' segment; use a path relative to the workspace root."
    );
    i.workspace_patches = Some(serde_json::json!(["x"]));
    assert_eq!(
        resolve_workspace(&i).unwrap_err().message(),
        "app/pnpm-workspace.yaml \"patchedDependencies\" must be an object of dependency → patch file path."
    );
}

#[test]
fn manifest_and_pattern_errors_name_the_file() {
    let error = resolve_workspace(&input("s", &["s"], &[("s", r#"{"name":"s"}"#)])).unwrap_err();
    assert_eq!(error.message(), "app/package.json is missing: a pnpm workspace needs it.");
    let error = resolve_workspace(&input("s", &["s"], &[("", ROOT), ("s", "{nope")])).unwrap_err();
    assert_eq!(error.message(), "app/s/package.json is not a JSON object; fix its syntax.");
    let error = resolve_workspace(&input("s", &["{s,t}"], &[("", ROOT), ("s", "{}")])).unwrap_err();
    assert!(
        error.message().starts_with("app/pnpm-workspace.yaml \"packages\" pattern \"{s,t}\" uses glob syntax"),
        "{}",
        error.message()
    );
    let twins = [("", ROOT), ("s", r#"{"name":"s"}"#), ("p/a", r#"{"name":"dup"}"#), ("p/b", r#"{"name":"dup"}"#)];
    let error = resolve_workspace(&input("s", &["s", "p/*"], &twins)).unwrap_err();
    assert_eq!(
        error.message(),
        "app/p/a/package.json and app/p/b/package.json are both named \"dup\"; workspace package names must be unique."
    );
}
