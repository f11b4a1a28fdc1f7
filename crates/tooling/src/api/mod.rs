//! The tooling module's wasm exports: each decodes a plain JS object, calls one rule and encodes
//! its result. No rule lives here.

pub mod discovery;
pub mod facts;
pub mod free_form;
pub mod module_graph;
pub mod project;
pub mod provider_output;
pub mod vite;
