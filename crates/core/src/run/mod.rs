//! The pure parts of a Run: the install command, its fingerprint and kept-project scripts, and
//! how an install outcome becomes an error; the `warmPool` option ([`warm_pool`]). The Run itself (stage, execute, recover, close) is
//! the runtime crate's `run/`.

pub mod install;
pub mod warm_pool;
