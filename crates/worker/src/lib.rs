//! Run `@vite-hub/sandbox` Definitions from a Rust Cloudflare Worker ([workers-rs](https://docs.rs/worker)).
//!
//! The same core, providers and Run as the npm package: this crate links the runtime crate
//! (`vite-hub-sandbox`, without its npm exports) and only adapts workers-rs types to it.
//!
//! - [`Registry`]: the app's Definitions, generated at build time (`generateSandboxRegistryJson`
//!   of `@vite-hub/sandbox/vite` writes `.vite-hub/sandbox/build/registry.json`; the Worker
//!   `include_str!`s it), and the sandbox config of the isolate.
//! - [`run_sandbox`]: one Run, resolving to the Definition's [`worker::Response`] (the Response
//!   contract of DESIGN.md §5: `200` JSON, `204`, the entry's own Response, or a non-2xx
//!   `{"error":{"code","message","details"?}}`).
//! - [`open_session`]: a [`Session`], one Box held open across Commands ([`Exec`]) and file
//!   operations until [`Session::close`], as `openSandboxSession` in JS.
//!
//! Providers: `cloudflare` reaches its Boxes through the Durable Object binding of
//! [`worker::Env`] (`SANDBOX` unless `cloudflare.binding` says otherwise; the Worker's main module
//! must export `Sandbox` from `@cloudflare/sandbox`); in development, `SANDBOX_LOCAL_URL` and
//! `SANDBOX_LOCAL_TOKEN` in the Worker env send its container traffic to a local Box host, and a
//! config with `provider: "local"` and `local.baseUrl`/`local.token` runs Definitions on a local
//! Box host through the Vercel protocol. Provider selection is the npm package's (DESIGN.md §4).
//!
//! The Run code is wasm-only: on other targets this crate is empty.
#![cfg(target_arch = "wasm32")]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod background;
mod env;
mod registry;
mod run;
mod session;

pub use registry::Registry;
pub use run::{run_sandbox, RunOptions};
pub use session::{open_session, Exec, Session, SessionOptions};

pub use vite_hub_sandbox_core::command::CommandOutcome;
pub use vite_hub_sandbox_core::provider_kind::ProviderKind;
pub use vite_hub_sandbox_core::session::{ExecutionAuthority, SessionStatus};

pub use vite_hub_sandbox_core::config::SandboxConfig;
pub use vite_hub_sandbox_core::error::{Error, ErrorCode};
