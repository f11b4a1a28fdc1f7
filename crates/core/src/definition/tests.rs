//! Unit tests of [`crate::definition`]: one per rule, with the exact messages.

use super::*;

fn file(path: &str, content: &str) -> DefinitionFile {
    DefinitionFile { path: path.into(), content: content.as_bytes().to_vec(), mode: None }
}

const MODULE_PKG: &str = r#"{"name":"x","type":"module"}"#;

fn with_pkg(pkg: &str, extra: &[(&str, &str)]) -> Vec<DefinitionFile> {
    let mut files = vec![file("package.json", pkg)];
    files.extend(extra.iter().map(|(p, c)| file(p, c)));
    files
}

fn err_message(name: &str, files: Vec<DefinitionFile>) -> String {
    let err = Definition::from_files(name, files).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    err.message().to_owned()
}

fn plan(pkg: &str, extra: &[(&str, &str)]) -> Option<(String, Vec<String>)> {
    let mut extra = extra.to_vec();
    extra.push(("index.mjs", "export default () => 1"));
    Definition::from_files("d", with_pkg(pkg, &extra)).unwrap().install.map(|p| {
        assert_eq!(p.command, p.manager.as_str());
        (p.command, p.args)
    })
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

const DEPS: &str = r#""type":"module","dependencies":{"a":"1"}"#;

#[test]
fn valid_names() {
    for name in ["release-notes", "tools/image-optimizer", "a", "A.b_c-9", "a/b/c", "x..y", &"n".repeat(200)] {
        validate_name(name).unwrap();
    }
}

#[test]
fn invalid_names() {
    let tail = "A name is 1-200 bytes of '/'-separated segments of letters, digits, '.', '_' and '-', \
                without empty, '.' or '..' segments.";
    let cases = [
        ("", "it is empty"),
        (&*"n".repeat(201), "it is longer than 200 bytes"),
        ("/a", "it starts or ends with '/'"),
        ("a/", "it starts or ends with '/'"),
        ("a//b", "it has an empty segment"),
        ("a/../b", "it has a '.' or '..' segment"),
        (".", "it has a '.' or '..' segment"),
        ("a b", "it contains the character \" \""),
        ("caf\u{e9}", "it contains the character \"\u{e9}\""),
        ("a\\b", "it contains the character \"\\\\\""),
    ];
    for (name, problem) in cases {
        let err = validate_name(name).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert_eq!(err.message(), format!("Invalid sandbox name {}: {problem}. {tail}", quoted(name)));
    }
    assert!(Definition::from_files("a b", with_pkg(MODULE_PKG, &[("index.mjs", "")]))
        .unwrap_err()
        .message()
        .starts_with("Invalid sandbox name \"a b\""));
}

#[test]
fn minimal_javascript_definition() {
    let def =
        Definition::from_files("tools/x", with_pkg(MODULE_PKG, &[("index.mjs", "export default () => 1")])).unwrap();
    assert_eq!(def.name, "tools/x");
    assert_eq!(def.entry, "index.mjs");
    assert_eq!(def.entry_module, "index.mjs");
    assert_eq!(def.timeout_ms, DEFAULT_TIMEOUT_MS);
    assert_eq!(def.install, None);
    assert_eq!(def.digest.len(), 64);
    assert_eq!(def.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["index.mjs", "package.json"]);
}

#[test]
fn typescript_entry_needs_its_compiled_sibling() {
    let def =
        Definition::from_files("d", with_pkg(MODULE_PKG, &[("index.ts", "export default 1"), ("index.ts.mjs", "")]))
            .unwrap();
    assert_eq!((def.entry.as_str(), def.entry_module.as_str()), ("index.ts", "index.ts.mjs"));
    let def = Definition::from_files("d", with_pkg(MODULE_PKG, &[("index.mts", ""), ("index.mts.mjs", "")])).unwrap();
    assert_eq!(def.entry_module, "index.mts.mjs");
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("index.ts", "")])),
        "Sandbox \"d\" TypeScript entry index.ts was not compiled: index.ts.mjs is missing."
    );
}

#[test]
fn entry_rules() {
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("lib/index.mjs", ""), ("main.js", "")])),
        "Sandbox \"d\" requires one ESM entrypoint (index.ts, index.mts, index.js or index.mjs)."
    );
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("index.mjs", ""), ("index.ts", ""), ("index.js", "")])),
        "Sandbox \"d\" has multiple entrypoints: index.ts, index.js, index.mjs."
    );
}

#[test]
fn package_json_rules() {
    assert_eq!(err_message("d", vec![file("index.mjs", "")]), "Sandbox \"d\" requires a package.json at its root.");
    assert_eq!(
        err_message("d", vec![file("sub/package.json", MODULE_PKG), file("index.mjs", "")]),
        "Sandbox \"d\" requires a package.json at its root."
    );
    assert_eq!(
        err_message("d", with_pkg("{nope", &[("index.mjs", "")])),
        "Sandbox \"d\" has an invalid package.json: it is not valid JSON."
    );
    assert_eq!(
        err_message("d", with_pkg("[]", &[("index.mjs", "")])),
        "Sandbox \"d\" has an invalid package.json: it must be a JSON object."
    );
    for pkg in [r#"{}"#, r#"{"type":"commonjs"}"#, r#"{"type":1}"#] {
        assert_eq!(
            err_message("d", with_pkg(pkg, &[("index.mjs", "")])),
            "Sandbox \"d\" must be an ES module package: add \"type\": \"module\" to its package.json."
        );
    }
}

#[test]
fn package_json_with_a_byte_order_mark_reads_as_node_and_npm_read_it() {
    let bom = |json: &str| format!("\u{feff}{json}");
    let definition = Definition::from_files("d", with_pkg(&bom(MODULE_PKG), &[("index.mjs", "")])).unwrap();
    assert_eq!(definition.entry, "index.mjs");
    assert_eq!(definition.install, None);
    // The dependencies behind a BOM still make an install plan.
    assert_eq!(plan(&bom(&format!("{{{DEPS}}}")), &[]).unwrap().0, "npm");
    // A BOM anywhere else is not JSON, as for Node.
    assert_eq!(
        err_message("d", with_pkg(&format!(" {}", bom(MODULE_PKG)), &[("index.mjs", "")])),
        "Sandbox \"d\" has an invalid package.json: it is not valid JSON."
    );
}

#[test]
fn file_path_rules() {
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("index.mjs", ""), ("../x", "")])),
        "Sandbox \"d\" has an invalid file path \"../x\": it has a '.' or '..' segment."
    );
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("index.mjs", ""), ("/abs", "")])),
        "Sandbox \"d\" has an invalid file path \"/abs\": it must be relative (no leading '/')."
    );
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("index.mjs", ""), ("index.mjs", "")])),
        "Sandbox \"d\" has the file \"index.mjs\" twice."
    );
    // The first file with a problem, in the given order, is the one reported.
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("index.mjs", ""), ("b.mjs", ""), ("index.mjs", ""), ("/abs", "")])),
        "Sandbox \"d\" has the file \"index.mjs\" twice."
    );
    assert_eq!(
        err_message("d", with_pkg(MODULE_PKG, &[("z.mjs", ""), ("/abs", ""), ("index.mjs", ""), ("z.mjs", "")])),
        "Sandbox \"d\" has an invalid file path \"/abs\": it must be relative (no leading '/')."
    );
}

#[test]
fn excluded_files_are_dropped() {
    let excluded = [
        "node_modules/a/index.js",
        "lib/node_modules/x.js",
        ".git/HEAD",
        ".env",
        "config/.env",
        ".env.local",
        "a/.env.production",
        ".npmrc",
        "sub/.npmrc",
        "bun.lockb",
    ];
    let mut extra: Vec<(&str, &str)> = excluded.iter().map(|p| (*p, "secret")).collect();
    extra.push(("index.mjs", ""));
    extra.push((".environment.md", ""));
    extra.push(("sub/bun.lockb", ""));
    let def = Definition::from_files("d", with_pkg(MODULE_PKG, &extra)).unwrap();
    let paths: Vec<&str> = def.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, [".environment.md", "index.mjs", "package.json", "sub/bun.lockb"]);
    let plain = Definition::from_files(
        "d",
        with_pkg(MODULE_PKG, &[("index.mjs", ""), (".environment.md", ""), ("sub/bun.lockb", "")]),
    )
    .unwrap();
    assert_eq!(def.digest, plain.digest, "excluded files do not change the digest");
}

#[test]
fn timeout_rules() {
    let timeout = |pkg: &str| Definition::from_files("d", with_pkg(pkg, &[("index.mjs", "")])).map(|d| d.timeout_ms);
    assert_eq!(timeout(r#"{"type":"module","vitehub":{"sandbox":{"timeout":1000}}}"#).unwrap(), 1000);
    assert_eq!(timeout(r#"{"type":"module","vitehub":{"sandbox":{"timeout":2147483647}}}"#).unwrap(), MAX_TIMEOUT_MS);
    assert_eq!(timeout(r#"{"type":"module","vitehub":{"sandbox":{"timeout":5e3}}}"#).unwrap(), 5000);
    assert_eq!(timeout(r#"{"type":"module","vitehub":{}}"#).unwrap(), DEFAULT_TIMEOUT_MS);
    assert_eq!(timeout(r#"{"type":"module","vitehub":{"sandbox":{}}}"#).unwrap(), DEFAULT_TIMEOUT_MS);
    let bad_timeout = "Sandbox \"d\" package.json \"vitehub.sandbox.timeout\" must be a positive integer <= 2147483647 (milliseconds).";
    for value in ["0", "-1", "1.5", "2147483648", "\"1000\"", "null", "true"] {
        let pkg = format!(r#"{{"type":"module","vitehub":{{"sandbox":{{"timeout":{value}}}}}}}"#);
        assert_eq!(timeout(&pkg).unwrap_err().message(), bad_timeout, "{value}");
    }
    assert_eq!(
        timeout(r#"{"type":"module","vitehub":[]}"#).unwrap_err().message(),
        "Sandbox \"d\" package.json \"vitehub\" must be an object."
    );
    assert_eq!(
        timeout(r#"{"type":"module","vitehub":{"sandbox":5}}"#).unwrap_err().message(),
        "Sandbox \"d\" package.json \"vitehub.sandbox\" must be an object."
    );
    assert_eq!(
        timeout(r#"{"type":"module","vitehub":{"sandbox":{"timeout":1,"env":{},"memory":1}}}"#).unwrap_err().message(),
        "Sandbox \"d\" package.json \"vitehub.sandbox\" has unsupported keys: env, memory."
    );
}

#[test]
fn no_install_without_dependencies() {
    assert_eq!(plan(MODULE_PKG, &[("package-lock.json", "{}")]), None);
    assert_eq!(plan(r#"{"type":"module","dependencies":{},"devDependencies":{}}"#, &[]), None);
    assert_eq!(plan(r#"{"type":"module","dependencies":["a"]}"#, &[]), None);
    // packageManager is checked even without dependencies: it feeds the digest.
    assert_eq!(
        err_message("d", with_pkg(r#"{"type":"module","packageManager":"deno@1"}"#, &[("index.mjs", "")])),
        "Sandbox \"d\" package.json \"packageManager\" must be \"<npm|pnpm|yarn|bun>@<version>\" (got \"deno@1\")."
    );
}

#[test]
fn npm_plans() {
    let pkg = format!("{{{DEPS}}}");
    assert_eq!(plan(&pkg, &[]), Some(("npm".into(), args(&["install", "--no-audit", "--no-fund"]))));
    assert_eq!(
        plan(&pkg, &[("package-lock.json", "{}")]),
        Some(("npm".into(), args(&["ci", "--no-audit", "--no-fund"])))
    );
    let dev = r#"{"type":"module","devDependencies":{"t":"1"}}"#;
    assert_eq!(plan(dev, &[]).unwrap().0, "npm");
    let optional = r#"{"type":"module","optionalDependencies":{"t":"1"}}"#;
    assert_eq!(plan(optional, &[]).unwrap().0, "npm");
}

#[test]
fn lockfile_order_and_args() {
    let pkg = format!("{{{DEPS}}}");
    let frozen = args(&["install", "--frozen-lockfile"]);
    assert_eq!(plan(&pkg, &[("pnpm-lock.yaml", ""), ("package-lock.json", "")]), Some(("pnpm".into(), frozen.clone())));
    assert_eq!(plan(&pkg, &[("bun.lock", "")]), Some(("bun".into(), frozen.clone())));
    assert_eq!(plan(&pkg, &[("yarn.lock", "# yarn lockfile v1\n")]), Some(("yarn".into(), frozen.clone())));
    assert_eq!(
        plan(&pkg, &[("yarn.lock", "__metadata:\n  version: 8\n")]),
        Some(("yarn".into(), args(&["install", "--immutable"])))
    );
    assert_eq!(plan(&pkg, &[("sub/pnpm-lock.yaml", "")]).unwrap().0, "npm", "only root lockfiles count");
    assert_eq!(plan(&pkg, &[("bun.lockb", "")]).unwrap().0, "npm", "bun.lockb is ignored");
}

#[test]
fn package_manager_field_wins() {
    let with = |pm: &str| format!(r#"{{{DEPS},"packageManager":"{pm}"}}"#);
    assert_eq!(plan(&with("pnpm@9.1.0"), &[("package-lock.json", "")]), Some(("pnpm".into(), args(&["install"]))));
    assert_eq!(
        plan(&with("pnpm@9.1.0+sha512.abc"), &[("pnpm-lock.yaml", "")]),
        Some(("pnpm".into(), args(&["install", "--frozen-lockfile"])))
    );
    assert_eq!(plan(&with("bun@1.1.0"), &[]), Some(("bun".into(), args(&["install"]))));
    assert_eq!(
        plan(&with("npm@10.0.0"), &[("pnpm-lock.yaml", "")]).unwrap().1,
        args(&["install", "--no-audit", "--no-fund"])
    );
    assert_eq!(
        plan(&with("yarn@1.22.19"), &[("yarn.lock", "__metadata:\n")]),
        Some(("yarn".into(), args(&["install", "--frozen-lockfile"])))
    );
    assert_eq!(
        plan(&with("yarn@4.1.0"), &[("yarn.lock", "# yarn lockfile v1\n")]),
        Some(("yarn".into(), args(&["install", "--immutable"])))
    );
    assert_eq!(plan(&with("yarn@4.1.0"), &[]), Some(("yarn".into(), args(&["install"]))));
    for bad in ["\"deno@1.0.0\"", "\"pnpm\"", "\"pnpm@latest\"", "3"] {
        let pkg = format!(r#"{{{DEPS},"packageManager":{bad}}}"#);
        assert_eq!(
            err_message("d", with_pkg(&pkg, &[("index.mjs", "")])),
            format!(
                "Sandbox \"d\" package.json \"packageManager\" must be \"<npm|pnpm|yarn|bun>@<version>\" (got {bad})."
            )
        );
    }
}

#[test]
fn the_digests_read_files_in_path_order_whatever_order_they_are_given_in() {
    let files = [file("b.mjs", "2"), file("a/z.mjs", "1"), file("a.mjs", "3")];
    let mut reversed = files.clone();
    reversed.reverse();
    assert_eq!(content_digest(&files), content_digest(&reversed));
    let inputs = |files: &[DefinitionFile]| -> Vec<(String, Option<u32>, Vec<u8>)> {
        files.iter().map(|f| (f.path.clone(), f.mode, f.content.clone())).collect()
    };
    let digest = |files: &[DefinitionFile]| {
        let owned = inputs(files);
        let borrowed: Vec<(&str, Option<u32>, &[u8])> =
            owned.iter().map(|(p, m, c)| (p.as_str(), *m, c.as_slice())).collect();
        install::install_digest("npm", &[], PackageManager::Npm, "", &borrowed)
    };
    // Every file is an install input once a manifest runs install scripts.
    let scripted =
        [file("package.json", r#"{"scripts":{"postinstall":"node a.mjs"}}"#), file("a.mjs", "3"), file("b.mjs", "2")];
    let mut scripted_reversed = scripted.clone();
    scripted_reversed.reverse();
    assert_eq!(digest(&scripted), digest(&scripted_reversed));
    // `"a.mjs" < "a/z.mjs" < "b.mjs"` bytewise ('.' is 0x2E, '/' 0x2F); equal paths keep their order.
    let ordered = in_path_order(vec![("b.mjs", 0), ("a/z.mjs", 1), ("a.mjs", 2), ("a.mjs", 3)], |(path, _)| path);
    assert_eq!(ordered, [("a.mjs", 2), ("a.mjs", 3), ("a/z.mjs", 1), ("b.mjs", 0)]);
}

#[test]
fn digest_is_order_independent_and_content_sensitive() {
    let a = Definition::from_files("d", with_pkg(MODULE_PKG, &[("index.mjs", "1"), ("lib/a.mjs", "2")])).unwrap();
    let mut reversed = with_pkg(MODULE_PKG, &[("index.mjs", "1"), ("lib/a.mjs", "2")]);
    reversed.reverse();
    let b = Definition::from_files("other", reversed).unwrap();
    assert_eq!(a.digest, b.digest);
    let changed = Definition::from_files("d", with_pkg(MODULE_PKG, &[("index.mjs", "1"), ("lib/a.mjs", "3")])).unwrap();
    assert_ne!(a.digest, changed.digest);
    let mut moded = with_pkg(MODULE_PKG, &[("index.mjs", "1"), ("lib/a.mjs", "2")]);
    moded[2].mode = Some(0o755);
    assert_ne!(a.digest, Definition::from_files("d", moded).unwrap().digest);
    // Moving bytes between path and content must change the digest (length-prefixed).
    let x = content_digest(&[file("ab", "c")]);
    let y = content_digest(&[file("a", "bc")]);
    assert_ne!(x, y);
    // Snapshot of the encoding (computed independently): a format change must be deliberate.
    assert_eq!(content_digest(&[]), "6b0f515ecfae287071d14d69683582d1138f4bbe9142000f9ad65c37fa2f2ed0");
    assert_eq!(x, "b9baeb1744559ec8729bc6646b81325363bff7aa1c07d27c781b1cf880245995");
}

#[test]
fn definitions_over_the_size_limit_are_rejected() {
    let big =
        DefinitionFile { path: "blob.bin".into(), content: vec![0; (MAX_DEFINITION_BYTES + 1) as usize], mode: None };
    let files = vec![
        DefinitionFile { path: "package.json".into(), content: br#"{"type":"module"}"#.to_vec(), mode: None },
        DefinitionFile { path: "index.mjs".into(), content: b"export default () => 1".to_vec(), mode: None },
        big,
    ];
    let error = Definition::from_files("big", files).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    assert!(error.message().contains("over the 67108864-byte limit"), "{}", error.message());
}

#[test]
fn exclusion_ignores_ascii_case_of_names() {
    for path in [
        ".ENV",
        ".Env.local",
        "sub/.NPMRC",
        "a/.EnvRC",
        "Node_Modules/x/index.js",
        "x/.GIT/config",
        "BUN.LOCKB",
        ".git",
        "node_modules",
    ] {
        assert!(is_excluded_path(path), "{path} should be excluded");
    }
    for path in ["prod.env", "env/.environment", "sub/bun.lockb", "gitlink/config", "src/.gitignore", "x.npmrc"] {
        assert!(!is_excluded_path(path), "{path} should be shipped");
    }
}

#[test]
fn envrc_files_are_never_shipped_and_backslashes_are_rejected() {
    assert!(is_excluded_path(".envrc"));
    assert!(is_excluded_path("sub/.envrc"));
    let files = vec![
        DefinitionFile { path: "package.json".into(), content: br#"{"type":"module"}"#.to_vec(), mode: None },
        DefinitionFile { path: "index.mjs".into(), content: b"export default () => 1".to_vec(), mode: None },
        DefinitionFile { path: "..\\evil.txt".into(), content: vec![], mode: None },
    ];
    let error = Definition::from_files("x", files).unwrap_err();
    assert!(error.message().contains("backslash"), "{}", error.message());
}

#[test]
fn an_explicit_mjs_entry_needs_no_module_type() {
    // A bundled free-form Definition: the nearest package.json may be CommonJS-typed.
    let source = DefinitionSource {
        files: with_pkg(r#"{"name":"app"}"#, &[(".vite-hub-sandbox/definition.mjs", "export default () => 1")]),
        entry: Some(".vite-hub-sandbox/definition.mjs".into()),
        ..DefinitionSource::default()
    };
    assert_eq!(Definition::from_source("d", source).unwrap().entry_module, ".vite-hub-sandbox/definition.mjs");
    // A .js entry still needs "type": "module".
    let source = DefinitionSource {
        files: with_pkg(r#"{"name":"x"}"#, &[("main.js", "")]),
        entry: Some("main.js".into()),
        ..DefinitionSource::default()
    };
    assert_eq!(
        Definition::from_source("d", source).unwrap_err().message(),
        "Sandbox \"d\" must be an ES module package: add \"type\": \"module\" to its package.json."
    );
}

#[test]
fn the_box_outlives_the_timeout_by_the_grace_but_never_past_the_timer_maximum() {
    assert_eq!(box_lifetime_ms(30_000), 90_000);
    assert_eq!(box_lifetime_ms(MAX_TIMEOUT_MS - BOX_GRACE_MS), MAX_TIMEOUT_MS);
    assert_eq!(box_lifetime_ms(MAX_TIMEOUT_MS - BOX_GRACE_MS + 1), MAX_TIMEOUT_MS);
    assert_eq!(box_lifetime_ms(MAX_TIMEOUT_MS), MAX_TIMEOUT_MS);
}
