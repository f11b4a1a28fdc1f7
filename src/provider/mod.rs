//! Providers: who supplies Boxes. Each one turns its protocol into [`crate::session::BoxSession`];
//! nothing above this module knows which protocol is in use.
//!
//! Provider differences live only here (`vercel/`, `local`). Selection rules are in
//! [`crate::config`].

pub mod kind;
pub mod vercel;

#[cfg(target_arch = "wasm32")]
pub mod local;

pub use kind::ProviderKind;
