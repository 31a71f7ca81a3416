//! Workloads: message-size distributions and arrival processes.
//! (Skeleton: the API below is the contract with the simulator.)

use fabriclab_engine::{ConfigError, Time, Validate};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `[workload]`, tagged by `kind`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    Poisson(Poisson),
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Poisson {
    pub load: f64,
}

impl Default for Poisson {
    fn default() -> Self {
        Poisson { load: 0.5 }
    }
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::Poisson(Poisson::default())
    }
}

impl WorkloadConfig {
    /// Makes relative file paths (CDF files, traces) relative to `base_dir`.
    pub fn resolve_paths(&mut self, _base_dir: &Path) {}
}

impl Validate for WorkloadConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// What the workload needs to know about the fabric.
#[derive(Clone, Debug)]
pub struct WorkloadEnv {
    pub n_hosts: u32,
    pub host_rate_bps: u64,
    /// Rack of each host (index = host).
    pub rack_of: Vec<u32>,
    /// Rack core capacity / rack host capacity (<= 1).
    pub core_ratio: f64,
    /// Payload bytes per full packet.
    pub mss: u32,
    pub seed: u64,
    /// No arrivals at or after this time.
    pub end: Time,
}

/// One message to inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageSpec {
    pub time: Time,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    /// Part of an incast overlay (excluded from slowdown statistics).
    pub incast: bool,
}

/// A stream of messages in non-decreasing time order.
pub struct Workload {
    pending: Vec<MessageSpec>,
}

impl Workload {
    pub fn build(_cfg: &WorkloadConfig, _env: &WorkloadEnv) -> Result<Workload, ConfigError> {
        Ok(Workload { pending: Vec::new() })
    }

    pub fn next(&mut self) -> Option<MessageSpec> {
        self.pending.pop()
    }

    /// Nominal offered payload rate over all hosts, bytes per second.
    pub fn offered_bytes_per_s(&self) -> f64 {
        0.0
    }
}
