//! The local Box host, as data: its options (network policy, parked spares, isolation). It speaks the Vercel protocol, so its wire shapes
//! are [`crate::provider::vercel::wire`].

pub mod network_policy;
pub mod options;

pub use network_policy::LocalNetworkPolicy;
pub use options::LocalOptions;
