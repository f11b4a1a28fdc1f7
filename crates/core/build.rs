//! Build step: the in-Box scripts (`src/harness/`: the harness `harness.mjs`, and the prepared-project
//! scripts `fingerprint.cjs` and `kept-prepared.cjs`, each the one source) are embedded in the
//! runtime wasm without their comments and indentation (`crate::harness::HARNESS_SOURCE`,
//! `crate::run::install::KEPT_SCRIPT`), which keeps them readable here and
//! small where they travel: into every Box a Run stages.
//!
//! Only whole lines change: a line that is a `//` comment or inside a `/* … */` block (opened at
//! the start of a line) is dropped, the others lose leading and trailing whitespace, and empty
//! lines go. Line breaks stay, so automatic semicolon insertion reads the code as before. A
//! template literal or string spanning lines would be altered by this, so it fails the build.

use std::path::Path;

const SCRIPTS: [&str; 3] = ["harness.mjs", "fingerprint.cjs", "kept-prepared.cjs"];

fn main() {
    let out_dir = std::env::var("OUT_DIR").unwrap_or_else(|e| panic!("OUT_DIR: {e}"));
    for name in SCRIPTS {
        let source_path = format!("src/harness/{name}");
        println!("cargo:rerun-if-changed={source_path}");
        let source = std::fs::read_to_string(&source_path).unwrap_or_else(|e| panic!("{source_path}: {e}"));
        std::fs::write(Path::new(&out_dir).join(name), strip(&source_path, &source))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// `source` without comment lines, indentation and empty lines (the rules above).
fn strip(source_path: &str, source: &str) -> String {
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
            panic!("{source_path}:{}: a template literal or string continues on the next line; the in-Box script minifier keeps lines whole", index + 1);
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}
