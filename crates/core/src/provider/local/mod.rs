//! The local Box host, as data: its options. It speaks the Vercel protocol, so its wire shapes
//! are [`crate::provider::vercel::wire`].

pub mod options;

pub use options::LocalOptions;
