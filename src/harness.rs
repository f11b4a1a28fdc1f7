//! The in-Box harness: the JS program that runs inside every Box, imports the Definition's entry,
//! calls its default export with `(payload, context)` and frames the result envelope on stdout
//! with the run's nonce (docs/internals.md, "Envelopes").
//!
//! It is embedded in the wasm so that it travels to the Box in the same write as the project.

/// Source of `harness.mjs` (Node 20+, `node:` imports only).
pub const HARNESS_SOURCE: &str = include_str!("harness/harness.mjs");

/// Box paths of one Run, relative to the Box working directory (`/vercel/sandbox`).
pub mod paths {
    /// Directory holding the Definition's package files; the cwd of install and exec.
    pub const PROJECT_DIR: &str = "project";
    /// The harness file.
    pub const HARNESS_FILE: &str = ".vite-hub/harness.mjs";
    /// The input envelope.
    pub const INPUT_FILE: &str = ".vite-hub/input.json";
    /// The result envelope (fallback when the stdout frame is missing).
    pub const OUTPUT_FILE: &str = ".vite-hub/output.json";
    /// argv of `node` from the project directory: the harness and the input envelope.
    pub const NODE_ARGS: [&str; 2] = ["../.vite-hub/harness.mjs", "../.vite-hub/input.json"];
}
