//! Unit tests of [`crate::definition::sandbox_options`]: one per rule, with the exact messages.

use super::*;
use serde_json::json;

const FILE: &str = "src/notes.sandbox.ts";

fn facts(default_export: Value) -> SandboxFileFacts {
    serde_json::from_value(json!({ "file": FILE, "defaultExport": default_export })).unwrap()
}

fn call(properties: Value) -> SandboxFileFacts {
    facts(json!({
        "line": 3, "kind": "call", "callee": "defineSandbox",
        "arguments": [{ "line": 3, "kind": "object", "properties": properties }],
    }))
}

fn run_property() -> Value {
    json!({ "key": "run", "line": 4, "column": 3, "function": true, "static": false })
}

fn option(key: &str, value: Value) -> Value {
    json!({ "key": key, "line": 5, "column": 3, "static": true, "value": value })
}

fn message(facts: &SandboxFileFacts) -> String {
    let error = sandbox_options(facts).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
    error.message().to_owned()
}

#[test]
fn run_only_and_all_options() {
    assert_eq!(sandbox_options(&call(json!([run_property()]))).unwrap(), SandboxOptions::default());
    let options =
        sandbox_options(&call(json!(
            [run_property(), option("timeout", json!(1500)), option("project", json!(true)),]
        )))
        .unwrap();
    assert_eq!(options, SandboxOptions { timeout_ms: Some(1500), project: Some((true, 5)), ..Default::default() });
    // A run handler that is an imported function (an identifier) is fine.
    let imported = json!({ "key": "run", "line": 4, "column": 3, "static": false });
    assert!(sandbox_options(&call(json!([imported]))).is_ok());
    // Numbers written as floats with no fraction are integers.
    let options = sandbox_options(&call(json!([run_property(), option("timeout", json!(2000.0))]))).unwrap();
    assert_eq!(options.timeout_ms, Some(2000));
}

#[test]
fn missing_default_export() {
    assert_eq!(
        message(&serde_json::from_value(json!({ "file": FILE, "defaultExport": null })).unwrap()),
        "src/notes.sandbox.ts: a free-form Definition must default-export defineSandbox({ run, ... }); add export default defineSandbox({ run(payload, context) { ... } })."
    );
}

#[test]
fn local_binding_is_rejected_with_the_fix() {
    let exported =
        facts(json!({ "line": 9, "kind": "binding", "binding": "definition", "bindingCallee": "defineSandbox" }));
    assert_eq!(
        message(&exported),
        "src/notes.sandbox.ts:9: defineSandbox() is assigned to the local binding \"definition\" and that binding is exported, so its options cannot be read; export the call directly: export default defineSandbox({ run(payload, context) { ... } })."
    );
}

#[test]
fn default_export_must_be_a_define_sandbox_call() {
    let expected = "src/notes.sandbox.ts:2: the default export must be a direct defineSandbox({ ... }) call; write export default defineSandbox({ run(payload, context) { ... } }).";
    for export in [
        json!({ "line": 2, "kind": "other" }),
        json!({ "line": 2, "kind": "binding", "binding": "handler" }),
        json!({ "line": 2, "kind": "call", "callee": "wrap", "arguments": [] }),
        json!({ "line": 2, "kind": "call", "arguments": [] }),
    ] {
        assert_eq!(message(&facts(export.clone())), expected, "{export}");
    }
}

#[test]
fn one_direct_object_literal() {
    let expected = "src/notes.sandbox.ts:3: defineSandbox() takes one direct object literal; pass the options inline: export default defineSandbox({ run(payload, context) { ... } }).";
    for arguments in [
        json!([]),
        json!([{ "line": 3, "kind": "other" }]),
        json!([{ "line": 3, "kind": "spread" }]),
        json!([{ "line": 3, "kind": "object" }, { "line": 3, "kind": "object" }]),
    ] {
        let export = json!({ "line": 3, "kind": "call", "callee": "defineSandbox", "arguments": arguments });
        assert_eq!(message(&facts(export)), expected, "{arguments}");
    }
}

#[test]
fn requires_a_run_handler() {
    assert_eq!(
        message(&call(json!([option("timeout", json!(10))]))),
        "src/notes.sandbox.ts:3: defineSandbox() requires a `run` handler; add run(payload, context) { ... } to its object."
    );
    assert_eq!(
        message(&call(json!([option("run", json!(5))]))),
        "src/notes.sandbox.ts:5: defineSandbox() `run` must be a function: run(payload, context) { ... }."
    );
}

#[test]
fn options_must_be_static_json() {
    let computed = json!({ "key": "timeout", "line": 6, "column": 3, "static": false });
    assert_eq!(
        message(&call(json!([run_property(), computed]))),
        "src/notes.sandbox.ts:6: defineSandbox() options must be static JSON-serializable values, and \"timeout\" is computed; write a literal (string, number, boolean, null, or an array or object of them)."
    );
    let function = json!({ "key": "project", "line": 6, "column": 3, "static": false, "function": true });
    assert!(message(&call(json!([run_property(), function]))).contains("static JSON-serializable values"));
}

#[test]
fn spread_computed_and_duplicate_keys() {
    let spread = json!({ "key": null, "line": 7, "column": 3, "spread": true, "static": false });
    assert_eq!(
        message(&call(json!([run_property(), spread]))),
        "src/notes.sandbox.ts:7: defineSandbox() takes one direct object literal without spread (...) properties; write each option inline."
    );
    let computed_key = json!({ "key": null, "line": 7, "column": 3, "static": true, "value": 1 });
    assert_eq!(
        message(&call(json!([run_property(), computed_key]))),
        "src/notes.sandbox.ts:7: defineSandbox() options need plain keys, not computed [keys]; write each option inline."
    );
    assert_eq!(
        message(&call(json!([run_property(), option("timeout", json!(1)), option("timeout", json!(2))]))),
        "src/notes.sandbox.ts:5: defineSandbox() option \"timeout\" is set twice; keep one."
    );
}

#[test]
fn project_must_be_a_boolean() {
    for value in [json!("yes"), json!(1), json!(null), json!([true])] {
        assert_eq!(
            message(&call(json!([run_property(), option("project", value.clone())]))),
            "src/notes.sandbox.ts:5: defineSandbox() option \"project\" must be a boolean (true or false).",
            "{value}"
        );
    }
    // A static null arrives without a value at all.
    let bare = json!({ "key": "project", "line": 5, "column": 3, "static": true });
    assert!(message(&call(json!([run_property(), bare]))).contains("must be a boolean"));
}

#[test]
fn timeout_bounds() {
    let expected = "src/notes.sandbox.ts:5: defineSandbox() option \"timeout\" must be a positive integer <= 2147483647 (milliseconds).";
    for value in [json!(0), json!(-1), json!(1.5), json!(2_147_483_648u64), json!("1000"), json!(null), json!(true)] {
        assert_eq!(message(&call(json!([run_property(), option("timeout", value.clone())]))), expected, "{value}");
    }
    let max = sandbox_options(&call(json!([run_property(), option("timeout", json!(2_147_483_647u64))]))).unwrap();
    assert_eq!(max.timeout_ms, Some(MAX_TIMEOUT_MS));
}

#[test]
fn unknown_and_not_yet_supported_keys() {
    assert_eq!(
        message(&call(json!([run_property(), option("memory", json!(512))]))),
        "src/notes.sandbox.ts:5: defineSandbox() has an unknown option \"memory\"; supported options: run, timeout, project, description, input."
    );
    for key in ["env", "transfer"] {
        assert_eq!(
            message(&call(json!([run_property(), option(key, json!({}))]))),
            format!("src/notes.sandbox.ts:5: defineSandbox() option \"{key}\" is not supported by @vite-hub/sandbox yet; remove it (supported options: run, timeout, project, description, input).")
        );
    }
    // An unknown key is named even when its value is computed.
    let computed = json!({ "key": "runtime", "line": 5, "column": 3, "static": false });
    assert!(message(&call(json!([run_property(), computed]))).contains("unknown option \"runtime\""));
}

#[test]
fn package_names_of_bare_specifiers() {
    assert_eq!(package_name("slugify"), Some("slugify"));
    assert_eq!(package_name("slugify/lib/x.js"), Some("slugify"));
    assert_eq!(package_name("@scope/name"), Some("@scope/name"));
    assert_eq!(package_name("@scope/name/sub/path"), Some("@scope/name"));
    for not_a_package in ["", "./x", "../x", "/abs", "#alias", "node:fs", "https://x", "@scope", "@/x", "@scope/"] {
        assert_eq!(package_name(not_a_package), None, "{not_a_package}");
    }
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn plan(project: Option<(bool, u32)>, specifiers: &[&str], declared: &[&str]) -> Result<ProjectPlan> {
    let options = SandboxOptions { project, ..Default::default() };
    let deps: serde_json::Map<String, Value> = declared.iter().map(|d| ((*d).to_owned(), json!("1.0.0"))).collect();
    let manifest = json!({ "name": "app", "devDependencies": deps }).to_string();
    project_plan(FILE, &options, "package.json", &manifest, &strings(specifiers))
}

#[test]
fn project_attached_only_when_needed() {
    let detached = plan(None, &[], &[]).unwrap();
    assert_eq!(detached, ProjectPlan { attach: false, dependencies: vec![], files: vec![] });
    assert!(!plan(Some((false, 4)), &[], &["slugify"]).unwrap().attach);
    let forced = plan(Some((true, 4)), &[], &[]).unwrap();
    assert!(forced.attach);
    assert_eq!(forced.files, PROJECT_FILES.map(str::to_owned).to_vec());
    let needed = plan(None, &["slugify/x", "@a/b/c", "slugify"], &["slugify", "@a/b"]).unwrap();
    assert_eq!((needed.attach, needed.dependencies), (true, strings(&["@a/b", "slugify"])));
}

#[test]
fn every_dependency_field_declares() {
    let options = SandboxOptions::default();
    for field in ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies"] {
        let manifest = json!({ field: { "slugify": "1" } }).to_string();
        assert!(project_plan(FILE, &options, "package.json", &manifest, &strings(&["slugify"])).is_ok(), "{field}");
    }
    assert_eq!(
        project_plan(FILE, &options, "app/package.json", "[1]", &strings(&["slugify"])).unwrap_err().message(),
        "src/notes.sandbox.ts: its project manifest app/package.json is not a JSON object; fix app/package.json."
    );
    // Without a runtime dependency the manifest is not read.
    assert!(project_plan(FILE, &options, "package.json", "not json", &[]).is_ok());
}

#[test]
fn project_false_with_a_runtime_dependency() {
    assert_eq!(
        plan(Some((false, 4)), &["slugify"], &["slugify"]).unwrap_err().message(),
        "src/notes.sandbox.ts:4: declares project: false but has a runtime dependency \"slugify\"; remove project: false so package.json and its lockfile are installed in the Box, or stop importing \"slugify\"."
    );
}

#[test]
fn undeclared_and_malformed_dependencies() {
    assert_eq!(
        plan(None, &["left-pad"], &["slugify"]).unwrap_err().message(),
        "src/notes.sandbox.ts: imports the package \"left-pad\" but package.json does not declare it; add it to the dependencies of package.json."
    );
    assert_eq!(
        plan(None, &["@scope"], &[]).unwrap_err().message(),
        "src/notes.sandbox.ts: imports \"@scope\" which names no npm package; import a package (\"name\" or \"@scope/name\") or a relative file."
    );
}

#[test]
fn description_and_input_schema() {
    let input = json!({ "key": "input", "line": 6, "column": 3, "static": false });
    let options =
        sandbox_options(&call(json!([run_property(), option("description", json!("Counts words")), input]))).unwrap();
    assert_eq!(options.description.as_deref(), Some("Counts words"));
    assert_eq!(options.input_line, Some(6));
    for bad in [json!(""), json!("  "), json!(3), json!("x".repeat(MAX_DESCRIPTION_BYTES + 1))] {
        assert_eq!(
            message(&call(json!([run_property(), option("description", bad)]))),
            "src/notes.sandbox.ts:5: defineSandbox() option \"description\" must be a non-empty string of at most 4096 bytes."
        );
    }
    let arrow = json!({ "key": "input", "line": 6, "column": 3, "static": false, "function": true });
    for bad in [option("input", json!({ "type": "object" })), arrow] {
        assert!(
            message(&call(json!([run_property(), bad]))).contains("`input` must be a Standard Schema of the payload")
        );
    }
}
