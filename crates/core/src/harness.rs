//! The in-Box harness: the JS program that runs inside every Box, imports the Definition's entry,
//! calls its default export with `(payload, context)` and frames the result envelope on stdout
//! with the run's nonce (docs/internals/transfer.md, "Envelopes").
//!
//! It is embedded in the wasm so that it travels to the Box in the same write as the project.

/// Source of `harness.mjs` (Node 20+, `node:` imports only), without comments and indentation
/// (see `build.rs`: `crates/core/src/harness/harness.mjs` stays the one source).
pub const HARNESS_SOURCE: &str = include_str!(concat!(env!("OUT_DIR"), "/harness.mjs"));

/// Box paths of one Run, relative to the Box working directory (`/vercel/sandbox`).
pub mod paths {
    /// The install root: holds the Definition's files; the cwd of install. The handler's cwd is
    /// `project/<packagePath>` (see [`package_dir`]).
    pub const PROJECT_DIR: &str = "project";
    /// The harness file.
    pub const HARNESS_FILE: &str = ".vite-hub/harness.mjs";
    /// The input envelope.
    pub const INPUT_FILE: &str = ".vite-hub/input.json";
    /// The result envelope (fallback when the stdout frame is missing).
    pub const OUTPUT_FILE: &str = ".vite-hub/output.json";

    /// The package directory, relative to the Box working directory: `project` or
    /// `project/<package_path>`.
    pub fn package_dir(package_path: &str) -> String {
        let package_path = package_path.trim_matches('/');
        if package_path.is_empty() {
            PROJECT_DIR.to_owned()
        } else {
            format!("{PROJECT_DIR}/{package_path}")
        }
    }

    /// argv of `node` run with cwd = [`package_dir`]: the harness and the input envelope, as
    /// relative paths (one `../` per level), so the same argv works with and without bubblewrap.
    pub fn node_args(package_path: &str) -> [String; 2] {
        let up = "../".repeat(package_dir(package_path).split('/').count());
        [format!("{up}{HARNESS_FILE}"), format!("{up}{INPUT_FILE}")]
    }

    /// The options before [`node_args`] for a Yarn Plug'n'Play install, whose packages have no
    /// `node_modules`: its resolver (`.pnp.cjs` at the install root) preloaded and its ESM loader
    /// (`.pnp.loader.mjs`) as the module hook, as `yarn node` runs Node. Options, not a set-up in
    /// the harness: Node gives the hook's own thread the preload only through them.
    pub fn pnp_node_options(package_path: &str) -> [String; 4] {
        let up = "../".repeat(package_dir(package_path).split('/').count());
        [
            "--require".to_owned(),
            format!("{up}{PROJECT_DIR}/.pnp.cjs"),
            "--experimental-loader".to_owned(),
            format!("{up}{PROJECT_DIR}/.pnp.loader.mjs"),
        ]
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn embedded_harness_keeps_every_code_line_of_the_source() {
            let source = include_str!("harness/harness.mjs");
            let mut embedded = crate::harness::HARNESS_SOURCE.lines();
            let mut block = false;
            for line in source.lines().map(str::trim) {
                let comment = block || line.starts_with("/*") || line.starts_with("//");
                block = (block || line.starts_with("/*")) && !line.contains("*/");
                if !comment && !line.is_empty() {
                    assert_eq!(embedded.next(), Some(line));
                }
            }
            assert_eq!(embedded.next(), None);
            let embedded = crate::harness::HARNESS_SOURCE;
            assert!(
                embedded.lines().all(|line| !line.is_empty() && !line.starts_with([' ', '/'])),
                "no comment, indent or blank line"
            );
        }

        #[test]
        fn node_args_climb_out_of_the_package_dir() {
            assert_eq!(package_dir(""), "project");
            assert_eq!(node_args(""), ["../.vite-hub/harness.mjs", "../.vite-hub/input.json"]);
            assert_eq!(package_dir("packages/report"), "project/packages/report");
            assert_eq!(
                node_args("packages/report"),
                ["../../../.vite-hub/harness.mjs", "../../../.vite-hub/input.json"]
            );
            assert_eq!(
                pnp_node_options(""),
                ["--require", "../project/.pnp.cjs", "--experimental-loader", "../project/.pnp.loader.mjs"]
            );
            assert_eq!(pnp_node_options("packages/report")[1], "../../../project/.pnp.cjs");
        }
    }
}
