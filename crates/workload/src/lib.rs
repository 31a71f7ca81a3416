//! Workloads: message-size distributions and arrival processes.
//!
//! A [`WorkloadConfig`] (the `[workload]` table) and a [`WorkloadEnv`] (what
//! the fabric looks like) build a [`Workload`]: a deterministic stream of
//! [`MessageSpec`]s in non-decreasing time order. The stream is a pure function
//! of (configuration, environment, seed); all randomness comes from
//! `fabriclab_engine::stream` (`Stream::Workload` per source host,
//! `Stream::Incast` for incast draws).
//!
//! Modules:
//! - [`config`]: the configuration types, defaults and checks;
//! - [`cdf`]: [`SizeDist`] (step CDFs, exact mean, sampling) and the CDF file format;
//! - [`builtin`]: the encoded WKa/WKb/WKc tables;
//! - [`poisson`]: open-loop Poisson all-to-all traffic and load normalisation;
//! - `incast`: the one-shot incast and the periodic incast overlay;
//! - [`trace`]: replay of a CSV trace, and its format;
//! - [`htsim`]: htsim connection matrices, read as a trace and written for htsim;
//! - [`permutation`]: permutations (cross-rack or cross-pod, parallel, one large flow);
//! - [`closed`]: closed-loop workloads (windowed all-to-all, ring AllReduce),
//!   which start messages when earlier ones complete ([`Workload::on_complete`]);
//! - [`goal`]: GOAL schedules (LogGOPSim, ATLAHS) run closed loop, whose
//!   computations also end on the workload's own clock ([`Workload::advance`]),
//!   and generators of GOAL text for collectives.

pub mod builtin;
pub mod cdf;
pub mod closed;
pub mod config;
pub mod goal;
pub mod htsim;
mod incast;
pub mod ns2;
pub mod permutation;
pub mod poisson;
pub mod trace;

pub use builtin::BuiltinDist;
pub use cdf::SizeDist;
pub use config::{Incast, IncastOverlay, LoadReference, Poisson, SizeSource, Trace, TraceFormat, WorkloadConfig};
pub use poisson::{cross_rack_fraction, per_host_bytes_per_s};

use fabriclab_engine::{to_secs, ConfigError, Time};
use std::path::Path;

/// What the workload needs to know about the fabric.
#[derive(Clone, Debug)]
pub struct WorkloadEnv {
    pub n_hosts: u32,
    pub host_rate_bps: u64,
    /// Rack of each host (index = host).
    pub rack_of: Vec<u32>,
    /// Rack core capacity / rack host capacity (<= 1).
    pub core_ratio: f64,
    /// Consecutive racks forming a pod (three-tier fat trees: k/2; 1 elsewhere).
    pub racks_per_pod: u32,
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

enum Source {
    Poisson(Box<poisson::PoissonGen>),
    /// A finite, time-sorted list (incast, trace).
    List {
        msgs: Vec<MessageSpec>,
        pos: usize,
    },
    /// Messages released by completions.
    Closed(Box<closed::ClosedLoop>),
    /// A GOAL schedule: messages released by completions and by calcs ending.
    Goal(Box<goal::GoalRun>),
}

/// A stream of messages in non-decreasing time order.
pub struct Workload {
    source: Source,
    offered_bytes_per_s: f64,
    /// A trace's messages at or after the end of the run (None: not a trace).
    after_end: Option<trace::AfterEnd>,
}

impl Workload {
    /// Checks `cfg` (also against `env`: host ids, number of hosts) and prepares
    /// the stream. Reads the CDF or trace file, if any.
    pub fn build(cfg: &WorkloadConfig, env: &WorkloadEnv) -> Result<Workload, ConfigError> {
        match cfg {
            WorkloadConfig::Poisson(p) => {
                let g = poisson::PoissonGen::new(p, env)?;
                let offered_bytes_per_s = g.offered_bytes_per_s();
                Ok(Workload { source: Source::Poisson(Box::new(g)), offered_bytes_per_s, after_end: None })
            }
            WorkloadConfig::Incast(i) => Ok(Workload::from_list(incast::one_shot(i, env)?, env.end)),
            WorkloadConfig::Permutation(p) => Ok(Workload::from_list(p.messages(env)?, env.end)),
            WorkloadConfig::Trace(t) => {
                t.check()?;
                let replay = match t.trace_format {
                    TraceFormat::Csv => trace::load(t.path()?, env)?,
                    TraceFormat::Htsim => htsim::load(t.path()?, env)?,
                    TraceFormat::Ns2 => ns2::load(t.path()?, env)?,
                };
                let mut w = Workload::from_list(replay.msgs, env.end);
                w.after_end = Some(replay.after_end);
                Ok(w)
            }
            WorkloadConfig::AllToAll(a) => Ok(Workload::closed(closed::ClosedLoop::all_to_all(a, env)?, env.end)),
            WorkloadConfig::RingAllreduce(r) => {
                Ok(Workload::closed(closed::ClosedLoop::ring_allreduce(r, env)?, env.end))
            }
            WorkloadConfig::Goal(g) => {
                let run = goal::load(g, env)?;
                let offered_bytes_per_s = per_second(run.total_bytes() as f64, env.end);
                Ok(Workload { source: Source::Goal(Box::new(run)), offered_bytes_per_s, after_end: None })
            }
        }
    }

    fn closed(c: closed::ClosedLoop, end: Time) -> Workload {
        let offered_bytes_per_s = per_second(c.total_bytes() as f64, end);
        Workload { source: Source::Closed(Box::new(c)), offered_bytes_per_s, after_end: None }
    }

    /// Whether messages start on completions: the simulator then reports
    /// each completion with [`Workload::on_complete`] and asks for more.
    #[inline]
    pub fn is_closed_loop(&self) -> bool {
        matches!(self.source, Source::Closed(_) | Source::Goal(_))
    }

    /// Message `id` (the `id`-th message [`Workload::next`] returned)
    /// completed at `now`; a closed-loop workload may release new messages,
    /// stamped `now`, which `next` then returns.
    pub fn on_complete(&mut self, id: u64, now: Time) {
        match &mut self.source {
            Source::Closed(c) => c.on_complete(id, now),
            Source::Goal(g) => g.on_complete(id, now),
            Source::Poisson(_) | Source::List { .. } => {}
        }
    }

    /// Closed loop: handles the workload's own events due by `now` (a GOAL
    /// calc ending), which may release messages, stamped with their times
    /// (at most `now`), that [`Workload::next`] then returns.
    ///
    /// Driving contract: after building the workload, after each
    /// [`Workload::on_complete`] and after each `advance`, the simulator asks
    /// [`Workload::take_wake`] and, if it gets a time, calls `advance` at that
    /// time. A run is over when `next` returns nothing, every message started
    /// has completed and [`Workload::idle`] holds.
    pub fn advance(&mut self, now: Time) {
        if let Source::Goal(g) = &mut self.source {
            g.advance(now);
        }
    }

    /// Closed loop: a time at which [`Workload::advance`] must be called that
    /// the simulator has not been given yet (see there).
    pub fn take_wake(&mut self) -> Option<Time> {
        match &mut self.source {
            Source::Goal(g) => g.take_wake(),
            _ => None,
        }
    }

    /// Nothing of the workload's own is pending: without messages to start
    /// or in flight, nothing more will happen (a GOAL schedule that cannot
    /// finish says why: [`goal::GoalRun::waiting`]).
    pub fn idle(&self) -> bool {
        match &self.source {
            Source::Goal(g) => g.idle(),
            _ => true,
        }
    }

    /// The GOAL schedule being run, with each op's times so far.
    pub fn goal(&self) -> Option<&goal::GoalRun> {
        match &self.source {
            Source::Goal(g) => Some(g),
            _ => None,
        }
    }

    /// A finite workload: its offered rate is its bytes spread over `[0, end)`.
    fn from_list(msgs: Vec<MessageSpec>, end: Time) -> Workload {
        let bytes: f64 = msgs.iter().map(|m| m.size as f64).sum();
        let offered_bytes_per_s = per_second(bytes, end);
        Workload { source: Source::List { msgs, pos: 0 }, offered_bytes_per_s, after_end: None }
    }

    /// The next message; times never decrease. `None` once exhausted (no
    /// message starts at or after `env.end`), or, closed loop, until a
    /// completion releases more.
    #[inline]
    #[allow(clippy::should_implement_trait)] // it also implements Iterator; this is the contract
    pub fn next(&mut self) -> Option<MessageSpec> {
        match &mut self.source {
            Source::Poisson(g) => g.next(),
            Source::List { msgs, pos } => {
                let m = msgs.get(*pos).copied()?;
                *pos += 1;
                Some(m)
            }
            Source::Closed(c) => c.next(),
            Source::Goal(g) => g.next(),
        }
    }

    /// Nominal offered payload rate over all hosts, bytes per second.
    /// Poisson: the configured load (background and incast overlay together).
    /// Incast and trace: their total bytes divided by the run length (`env.end`).
    pub fn offered_bytes_per_s(&self) -> f64 {
        self.offered_bytes_per_s
    }

    /// A trace workload's messages that start at or after the end of the run
    /// and are not injected (None for other workloads).
    pub fn trace_after_end(&self) -> Option<&trace::AfterEnd> {
        self.after_end.as_ref()
    }

    /// The size distribution of a Poisson workload (for its exact mean, say).
    pub fn size_dist(&self) -> Option<&SizeDist> {
        match &self.source {
            Source::Poisson(g) => Some(g.sizes()),
            Source::List { .. } | Source::Closed(_) | Source::Goal(_) => None,
        }
    }
}

/// `bytes` spread over `[0, end)`, per second (0 for an empty run).
fn per_second(bytes: f64, end: Time) -> f64 {
    let secs = to_secs(end);
    if secs > 0.0 {
        bytes / secs
    } else {
        0.0
    }
}

impl Iterator for Workload {
    type Item = MessageSpec;

    fn next(&mut self) -> Option<MessageSpec> {
        Workload::next(self)
    }
}

/// The text of an input file (`what` names it in an error under `key`),
/// without the byte-order mark some editors put first, which would otherwise
/// be an invisible character in the first line's error.
pub(crate) fn read_input(path: &Path, key: &str, what: &str) -> Result<String, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(key, format!("cannot read {what} {}: {e}", path.display())))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}
