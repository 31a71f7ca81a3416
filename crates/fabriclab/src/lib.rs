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

/// The version of the model's results: two builds with the same `MODEL` give
/// the same results for the same resolved config and seed. Bump it (to the
/// day, with a letter for a second change that day) with any change that
/// moves a result: the engine, a protocol, the network, a metric's
/// definition. Recorded points (a reproduction's `points/` folders) are
/// reused only under the model that made them; tests/fidelity.rs refuses to
/// re-record changed results under an unchanged `MODEL`.
pub const MODEL: &str = "2026-12-02";
