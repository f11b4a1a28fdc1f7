//! One Run: stage → install → execute (followed live) → answer → give the Box back, on a
//! [`BoxSession`](crate::provider::BoxSession), bounded by the Definition timeout,
//! ending in a Web `Response` (DESIGN.md §3, §5).
//!
//! No provider is named here: everything provider-specific is behind
//! [`Provider`](crate::provider::Provider) and the `BoxSession` it opens.

#[cfg(target_arch = "wasm32")]
pub mod events;
#[cfg(target_arch = "wasm32")]
pub mod follow;
#[cfg(target_arch = "wasm32")]
pub mod lease;
#[cfg(target_arch = "wasm32")]
pub mod orchestration;
#[cfg(target_arch = "wasm32")]
pub mod prepared;
#[cfg(target_arch = "wasm32")]
pub mod recover;
#[cfg(target_arch = "wasm32")]
pub mod reply;
#[cfg(target_arch = "wasm32")]
pub mod signal;
#[cfg(target_arch = "wasm32")]
pub mod stage;
#[cfg(target_arch = "wasm32")]
pub mod warm_pool;

#[cfg(target_arch = "wasm32")]
pub use orchestration::{run_definition, RunOptions};
