//! Unit tests of [`crate::definition::box_project`].

use super::*;

fn manifest(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text).unwrap() {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

const APP: &str = r#"{"name":"app","packageManager":"npm@10.9.0","dependencies":{"slugify":"^1.6.0","vite":"^7","nitro":"3.0.0","alias":"npm:real-pkg@^2"},"devDependencies":{"typescript":"^5"}}"#;

/// An app lock: slugify (no deps), `a` → `b@1` nested under a (root has b@2) and `c` (hoisted),
/// an alias, vite (dev), and a workspace link.
const LOCK: &str = r#"{
  "name": "app", "lockfileVersion": 3, "requires": true,
  "packages": {
    "": { "name": "app", "dependencies": { "slugify": "^1.6.0" } },
    "node_modules/slugify": { "version": "1.6.9", "resolved": "https://registry.npmjs.org/slugify/-/slugify-1.6.9.tgz", "integrity": "sha512-s" },
    "node_modules/a": { "version": "1.0.0", "resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz", "dev": true, "dependencies": { "b": "^1", "c": "^1" }, "optionalDependencies": { "missing-optional": "1" } },
    "node_modules/a/node_modules/b": { "version": "1.5.0", "resolved": "https://registry.npmjs.org/b/-/b-1.5.0.tgz", "dev": true },
    "node_modules/b": { "version": "2.0.0", "resolved": "https://registry.npmjs.org/b/-/b-2.0.0.tgz" },
    "node_modules/c": { "version": "1.1.0", "resolved": "https://registry.npmjs.org/c/-/c-1.1.0.tgz", "devOptional": true },
    "node_modules/alias": { "name": "real-pkg", "version": "2.3.4", "resolved": "https://registry.npmjs.org/real-pkg/-/real-pkg-2.3.4.tgz" },
    "node_modules/vite": { "version": "7.3.8", "resolved": "https://registry.npmjs.org/vite/-/vite-7.3.8.tgz", "dev": true },
    "node_modules/local": { "resolved": "packages/local", "link": true }
  }
}"#;

fn project(dependencies: &[&str], lock: &AppLock<'_>) -> Vec<GeneratedFile> {
    let deps: Vec<String> = dependencies.iter().map(|d| (*d).to_owned()).collect();
    box_project("src/x.sandbox.ts", &manifest(APP), &deps, lock, "package-lock.json").unwrap()
}

#[test]
fn only_the_imported_packages_at_the_npm_lock_versions_with_their_lock_closure() {
    let files = project(&["a", "slugify"], &AppLock { npm: Some(LOCK), pnpm: None });
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].path, "package.json");
    assert_eq!(
        parse(&files[0].text),
        parse(
            r#"{"private":true,"type":"module","dependencies":{"a":"1.0.0","slugify":"1.6.9"},"packageManager":"npm@10.9.0"}"#
        )
    );
    assert_eq!(files[1].path, "package-lock.json");
    let lock = parse(&files[1].text);
    let packages = lock["packages"].as_object().unwrap();
    // a's own b@1.5.0 (nested), the hoisted c; not the root b@2, vite, typescript or the link.
    let paths: Vec<&str> = packages.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        ["", "node_modules/a", "node_modules/a/node_modules/b", "node_modules/c", "node_modules/slugify"]
    );
    assert_eq!(packages[""], parse(r#"{"dependencies":{"a":"1.0.0","slugify":"1.6.9"}}"#));
    assert_eq!(lock["lockfileVersion"], 3);
    // Every copied entry is a runtime package now: dev flags are dropped, the rest kept.
    assert_eq!(packages["node_modules/a"].get("dev"), None);
    assert_eq!(packages["node_modules/c"].get("devOptional"), None);
    assert_eq!(packages["node_modules/slugify"]["integrity"], "sha512-s");
}

#[test]
fn an_alias_stays_an_alias_and_a_link_gets_no_lockfile() {
    let files = project(&["alias"], &AppLock { npm: Some(LOCK), pnpm: None });
    assert_eq!(parse(&files[0].text)["dependencies"], parse(r#"{"alias":"npm:real-pkg@2.3.4"}"#));
    let files = project(&["local", "slugify"], &AppLock { npm: Some(LOCK), pnpm: None });
    assert_eq!(files.len(), 1, "a workspace link cannot be reproduced in the Box");
    assert_eq!(parse(&files[0].text)["dependencies"], parse(r#"{"local":"*","slugify":"1.6.9"}"#));
}

#[test]
fn a_pnpm_lock_pins_the_manifest_to_the_root_importer_versions() {
    let v9 = parse(
        r#"{"lockfileVersion":"9.0","importers":{".":{"dependencies":{"slugify":{"specifier":"^1.6.0","version":"1.6.9"},"alias":{"specifier":"npm:real-pkg@^2","version":"real-pkg@2.3.4"},"vite":{"specifier":"^7","version":"7.3.8(@types/node@22.0.0)"}}}}}"#,
    );
    let files = project(&["alias", "slugify", "vite"], &AppLock { npm: None, pnpm: Some(&v9) });
    assert_eq!(files.len(), 1, "no pnpm lockfile is generated");
    assert_eq!(
        parse(&files[0].text)["dependencies"],
        parse(r#"{"alias":"npm:real-pkg@2.3.4","slugify":"1.6.9","vite":"7.3.8"}"#)
    );
    let v5 = parse(r#"{"lockfileVersion":5.4,"dependencies":{"slugify":"1.6.8"}}"#);
    assert_eq!(
        parse(&project(&["slugify"], &AppLock { npm: None, pnpm: Some(&v5) })[0].text)["dependencies"],
        parse(r#"{"slugify":"1.6.8"}"#)
    );
}

#[test]
fn without_a_lockfile_the_manifest_ranges_are_kept_and_never_the_whole_manifest() {
    let files = project(&["slugify"], &AppLock::default());
    assert_eq!(files.len(), 1);
    assert_eq!(
        parse(&files[0].text),
        parse(r#"{"private":true,"type":"module","dependencies":{"slugify":"^1.6.0"},"packageManager":"npm@10.9.0"}"#)
    );
}

#[test]
fn a_broken_npm_lock_is_an_error_naming_it() {
    let error = box_project(
        "src/x.sandbox.ts",
        &manifest(APP),
        &["slugify".into()],
        &AppLock { npm: Some("{"), pnpm: None },
        "package-lock.json",
    )
    .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        error.message(),
        "src/x.sandbox.ts: its project's package-lock.json is not a JSON object; fix or regenerate it (npm install)."
    );
}
