//! fabriclab: a deterministic packet-level datacenter network simulator.
//!
//! Data flows one way: [`config`] -> [`sim`] (builds the [`net`] and the hosts'
//! [`transport`]s, feeds them the [`workload`]) -> [`metrics`] -> result files.

pub mod config;
pub mod estimate;
pub mod files;
pub mod metrics;
pub mod net;
pub mod sim;
pub mod sweep;
pub mod transport;
pub use fabriclab_workload as workload;

pub use fabriclab_engine as engine;
pub use fabriclab_engine::Time;
