//! Build step: the in-Box harness (`src/harness/harness.mjs`, the one source) is embedded in the
//! runtime wasm without its comments and indentation (`crate::harness::HARNESS_SOURCE`), which
//! keeps about 0.7 KB (gzipped) out of the runtime module (docs/internals.md, "Runtime size").
//!
//! Only whole lines change: a line that is a `//` comment or inside a `/* … */` block (opened at
//! the start of a line) is dropped, the others lose leading and trailing whitespace, and empty
//! lines go. Line breaks stay, so automatic semicolon insertion reads the code as before. A
//! template literal or string spanning lines would be altered by this, so it fails the build.

use std::path::Path;

fn main() {
    let source_path = "src/harness/harness.mjs";
    println!("cargo:rerun-if-changed={source_path}");
    let source = std::fs::read_to_string(source_path).unwrap_or_else(|e| panic!("{source_path}: {e}"));
    let mut out = String::with_capacity(source.len());
    let mut in_block = false;
    for (index, line) in source.lines().enumerate() {
        let code = line.trim();
        if in_block {
            in_block = !code.contains("*/");
            continue;
        }
        if code.starts_with("/*") {
            in_block = !code.contains("*/");
            continue;
        }
        if code.is_empty() || code.starts_with("//") {
            continue;
        }
        if code.matches('`').count() % 2 == 1 || code.ends_with('\\') {
            panic!("{source_path}:{}: a template literal or string continues on the next line; the harness minifier keeps lines whole", index + 1);
        }
        out.push_str(code);
        out.push('\n');
    }
    let out_dir = std::env::var("OUT_DIR").unwrap_or_else(|e| panic!("OUT_DIR: {e}"));
    std::fs::write(Path::new(&out_dir).join("harness.mjs"), out).unwrap_or_else(|e| panic!("harness.mjs: {e}"));
}
