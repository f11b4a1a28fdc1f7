//! The seccomp filter of a local bubblewrap Box (`pkg-template/box-host/engine/box-seccomp.mjs`
//! loads it), made at build time: [`policy`] says which system calls a Box may not make and what
//! they answer, [`program`] compiles that with seccompiler into one classic-BPF program per
//! architecture and answer, and the `box-seccomp` binary writes them where `scripts/build.mjs`
//! ships them (`dist/box-host/seccomp/`). Users install the npm package, which carries the
//! programs: nothing here runs on their machines.
//!
//! Defence in depth behind bubblewrap's namespaces, dropped capabilities and read-only system:
//! the kernel surfaces container runtimes close by default stay closed to a Box.
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod policy;
pub mod program;
