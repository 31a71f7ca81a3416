//! The `[workload]` configuration: types, defaults, path resolution and checks.
//!
//! Why a module of its own: these types are the user-facing contract (TOML keys,
//! defaults, error messages), kept apart from the generators that consume them.
//! Checks that need the fabric (host ids, number of hosts) happen in
//! [`crate::Workload::build`]; everything else is checked by [`Validate`].

use crate::{BuiltinDist, SizeDist};
use fabriclab_engine::{ConfigError, Validate};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// `[workload]`, tagged by `kind`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadConfig {
    /// Open-loop Poisson all-to-all background, optionally with an incast overlay.
    Poisson(Poisson),
    /// One N-to-1 incast at a given instant.
    Incast(Incast),
    /// Every host sends one message to a distinct host (`crate::permutation`).
    Permutation(crate::permutation::Permutation),
    /// Messages read from a file: a CSV trace or an htsim connection matrix.
    Trace(Trace),
    /// Windowed all-to-all, closed loop (`crate::closed`).
    AllToAll(crate::closed::AllToAll),
    /// Ring AllReduce laid across the spine, closed loop (`crate::closed`).
    RingAllreduce(crate::closed::RingAllreduce),
    /// A GOAL schedule (LogGOPSim, ATLAHS), closed loop (`crate::goal`).
    Goal(crate::goal::Goal),
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::Poisson(Poisson::default())
    }
}

/// What `workload.load` is relative to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadReference {
    /// Fraction of each host's link rate: per-host payload rate
    /// `load * host_rate_bps / 8` bytes/s.
    #[default]
    Host,
    /// Fraction of the core (rack uplink) capacity, as in SIRD's "core"
    /// configuration (SIRD §5.1): per-host payload rate
    /// `load * host_rate_bps / 8 * core_ratio / f_cross`, where `f_cross` is the
    /// fraction of a host's possible receivers outside its rack,
    /// `(n_hosts - rack_size) / (n_hosts - 1)`, averaged over hosts. With uniform
    /// receivers, a fraction `f_cross` of the bytes crosses the core, so the core
    /// links carry `load` times their capacity. SIRD's 144 hosts in 9 racks with
    /// 2:1 oversubscription give `0.5 / (128/143)`, i.e. the paper's "reduce the
    /// load by x0.89*2".
    Core,
    /// Fraction of the receivers' links together, shared evenly by the
    /// senders: per-sender payload rate `load * host_rate_bps / 8 *
    /// n_receivers / n_senders` (with `senders` and `receivers` of a many-to-one
    /// workload, the load of the one downlink).
    Receivers,
}

/// `kind = "poisson"`: every host sends messages with exponential inter-arrival
/// times to receivers drawn uniformly among the other hosts.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Poisson {
    /// Offered payload load (headers excluded) as a fraction of the reference
    /// capacity, in (0, 1.5]. Includes the incast overlay when there is one.
    pub load: f64,
    /// What `load` is relative to.
    pub load_reference: LoadReference,
    /// A built-in size distribution. Exactly one of `size_dist`,
    /// `size_cdf_file` and `size_bytes` may be set; with none, `size_dist = "wkc"`
    /// (filled in by [`WorkloadConfig::fill_defaults`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_dist: Option<BuiltinDist>,
    /// A CDF file (format: [`crate::cdf`]). Relative paths are resolved against
    /// the experiment file's directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_cdf_file: Option<PathBuf>,
    /// Every message has this many bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Bytes per unit of the CDF file's size column (1460 for a file in packets).
    pub size_cdf_unit_bytes: u64,
    /// Optional incast overlay, `[workload.incast]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incast: Option<IncastOverlay>,
    /// The hosts that send (distinct); all hosts when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<Vec<u32>>,
    /// The hosts a message may go to (distinct), drawn uniformly among those
    /// other than its sender; all hosts when absent. `senders = [1, 2, 3]`,
    /// `receivers = [0]` is a 3-to-1 Poisson incast (Bolt's Fig. 4.13).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receivers: Option<Vec<u32>>,
}

impl Default for Poisson {
    fn default() -> Self {
        Poisson {
            load: 0.5,
            load_reference: LoadReference::Host,
            size_dist: None,
            size_cdf_file: None,
            size_bytes: None,
            size_cdf_unit_bytes: 1,
            incast: None,
            senders: None,
            receivers: None,
        }
    }
}

/// `[workload.incast]` of a Poisson workload: SIRD's "incast" configuration.
/// Periodically, `senders` random distinct hosts each send `bytes` to one random
/// receiver (not among them), all at the same instant. The period is such that
/// these bytes are `share` of the total offered load; the Poisson background
/// carries the remaining `1 - share`. The first event is at a seeded random
/// phase within one period.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct IncastOverlay {
    pub senders: u32,
    pub bytes: u64,
    pub share: f64,
}

impl Default for IncastOverlay {
    fn default() -> Self {
        IncastOverlay { senders: 30, bytes: 500_000, share: 0.07 }
    }
}

/// `kind = "incast"`: one N-to-1 incast, all messages at `start_us`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Incast {
    /// Number of senders N. Default 8, or the length of `sender_hosts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// The receiving host.
    pub receiver: u32,
    /// Bytes per sender.
    pub bytes: u64,
    /// Start time in microseconds.
    pub start_us: f64,
    /// Explicit senders (distinct, not the receiver); otherwise N distinct
    /// hosts other than the receiver are drawn with the seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_hosts: Option<Vec<u32>>,
}

impl Default for Incast {
    fn default() -> Self {
        Incast { senders: None, receiver: 0, bytes: 1_000_000, start_us: 0.0, sender_hosts: None }
    }
}

/// Default number of senders of `kind = "incast"`.
pub const DEFAULT_INCAST_SENDERS: u32 = 8;

/// `kind = "trace"`: messages from a file (formats: [`crate::trace`], [`crate::htsim`] and [`crate::ns2`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Trace {
    /// Required. Relative paths are resolved against the experiment file's directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_file: Option<PathBuf>,
    /// How `trace_file` is written; default `"csv"`.
    pub trace_format: TraceFormat,
}

/// `workload.trace_format`: the format of `workload.trace_file`.
///
/// Why a key and not a guess from the file name or its first line: the
/// resolved configuration (`fabriclab validate`) then says how the file is
/// read, and a file in the other format is an error that names the key to set
/// (the CSV reader recognises an htsim header and says so), never a silent
/// second reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// `time_us,src,dst,bytes` rows ([`crate::trace`]).
    #[default]
    Csv,
    /// An htsim connection matrix, `SRC->DST start PS size BYTES` lines ([`crate::htsim`]).
    Htsim,
    /// The SIRD authors' ns-2 request file, `HOST,INTERVAL|DST|SIZE,...` lines ([`crate::ns2`]).
    Ns2,
}

/// Where a Poisson workload's sizes come from, once the defaults are applied.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeSource<'a> {
    Builtin(BuiltinDist),
    File { path: &'a Path, unit_bytes: u64 },
    Fixed(u64),
}

impl WorkloadConfig {
    /// Makes relative file paths (CDF files, traces, schedules) relative to `base_dir`,
    /// then fills the defaults that depend on other keys
    /// ([`WorkloadConfig::fill_defaults`]), so that the resolved configuration
    /// shows what will run.
    pub fn resolve_paths(&mut self, base_dir: &Path) {
        for path in self.input_files_mut() {
            if path.is_relative() {
                *path = base_dir.join(&*path);
            }
        }
        self.fill_defaults();
    }

    /// The files this workload reads (a size CDF, a trace, a schedule and its rank map).
    pub fn input_files_mut(&mut self) -> Vec<&mut PathBuf> {
        match self {
            WorkloadConfig::Poisson(p) => p.size_cdf_file.iter_mut().collect(),
            WorkloadConfig::Trace(t) => t.trace_file.iter_mut().collect(),
            WorkloadConfig::Goal(g) => g.goal_file.iter_mut().chain(g.rank_map_file.iter_mut()).collect(),
            _ => Vec::new(),
        }
    }

    /// The configured offered load (Poisson), or 0 for finite workloads.
    pub fn load(&self) -> f64 {
        match self {
            WorkloadConfig::Poisson(p) => p.load,
            _ => 0.0,
        }
    }

    /// What [`WorkloadConfig::load`] is a fraction of.
    pub fn load_reference(&self) -> &'static str {
        match self {
            WorkloadConfig::Poisson(Poisson { load_reference: LoadReference::Core, .. }) => "core",
            WorkloadConfig::Poisson(Poisson { load_reference: LoadReference::Receivers, .. }) => "receivers",
            _ => "host",
        }
    }

    /// Fills defaults that depend on other keys: `size_dist = "wkc"` when no
    /// size key is set; an incast's `senders` from `sender_hosts` (or 8).
    pub fn fill_defaults(&mut self) {
        match self {
            WorkloadConfig::Poisson(p)
                if p.size_dist.is_none() && p.size_cdf_file.is_none() && p.size_bytes.is_none() =>
            {
                p.size_dist = Some(BuiltinDist::Wkc);
            }
            WorkloadConfig::Incast(i) if i.senders.is_none() => {
                i.senders = Some(i.default_senders());
            }
            _ => {}
        }
    }
}

impl Poisson {
    /// The size source, with the `wkc` default when no size key is set.
    /// Assumes at most one is set ([`Poisson::check`]).
    pub fn size_source(&self) -> SizeSource<'_> {
        if let Some(b) = self.size_bytes {
            SizeSource::Fixed(b)
        } else if let Some(path) = &self.size_cdf_file {
            SizeSource::File { path, unit_bytes: self.size_cdf_unit_bytes }
        } else {
            SizeSource::Builtin(self.size_dist.unwrap_or(BuiltinDist::Wkc))
        }
    }

    /// Loads the size distribution (reads the CDF file, if any).
    pub fn size_distribution(&self) -> Result<SizeDist, ConfigError> {
        match self.size_source() {
            SizeSource::Builtin(b) => Ok(SizeDist::builtin(b)),
            SizeSource::File { path, unit_bytes } => SizeDist::from_file(path, unit_bytes, "workload.size_cdf_file"),
            SizeSource::Fixed(b) => {
                SizeDist::fixed(b).map_err(|_| ConfigError::value("workload.size_bytes", b, "a positive integer"))
            }
        }
    }

    /// Every check that needs neither files nor the fabric.
    pub fn check(&self) -> Result<(), ConfigError> {
        if !(self.load.is_finite() && self.load > 0.0 && self.load <= 1.5) {
            return Err(ConfigError::value("workload.load", self.load, "a number in (0, 1.5]"));
        }
        let set: Vec<&str> = [
            ("workload.size_dist", self.size_dist.is_some()),
            ("workload.size_cdf_file", self.size_cdf_file.is_some()),
            ("workload.size_bytes", self.size_bytes.is_some()),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(k, _)| *k)
        .collect();
        if set.len() > 1 {
            return Err(ConfigError::new(
                set[1],
                format!("`{}` and `{}` are both set; choose one size distribution", set[0], set[1]),
            ));
        }
        if self.size_bytes == Some(0) {
            return Err(ConfigError::value("workload.size_bytes", 0, "a positive integer"));
        }
        if self.size_cdf_unit_bytes == 0 {
            return Err(ConfigError::value("workload.size_cdf_unit_bytes", 0, "a positive integer"));
        }
        if self.size_cdf_unit_bytes != 1 && self.size_cdf_file.is_none() {
            return Err(ConfigError::new(
                "workload.size_cdf_unit_bytes",
                format!(
                    "is {} but only applies with `workload.size_cdf_file`, which is not set",
                    self.size_cdf_unit_bytes
                ),
            ));
        }
        if let Some(o) = &self.incast {
            o.check()?;
        }
        for (key, list) in [("workload.senders", &self.senders), ("workload.receivers", &self.receivers)] {
            let Some(list) = list else { continue };
            if list.is_empty() {
                return Err(ConfigError::value(key, "[]", "at least one host (or leave it out: all hosts)"));
            }
            let mut seen = HashSet::new();
            if let Some(h) = list.iter().find(|&h| !seen.insert(h)) {
                return Err(ConfigError::value(
                    key,
                    format!("{list:?}"),
                    &format!("distinct hosts ({h} appears twice)"),
                ));
            }
            if self.incast.is_some() {
                return Err(ConfigError::new(
                    key,
                    "is set together with [workload.incast]; the incast overlay draws its hosts among all hosts, so use one or the other".into(),
                ));
            }
        }
        Ok(())
    }
}

impl IncastOverlay {
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.senders == 0 {
            return Err(ConfigError::value("workload.incast.senders", 0, "a positive integer"));
        }
        if self.bytes == 0 {
            return Err(ConfigError::value("workload.incast.bytes", 0, "a positive integer"));
        }
        if !(self.share.is_finite() && self.share > 0.0 && self.share < 1.0) {
            return Err(ConfigError::value("workload.incast.share", self.share, "a number in (0, 1)"));
        }
        Ok(())
    }
}

impl Incast {
    fn default_senders(&self) -> u32 {
        match &self.sender_hosts {
            Some(h) => u32::try_from(h.len()).unwrap_or(u32::MAX),
            None => DEFAULT_INCAST_SENDERS,
        }
    }

    /// The number of senders, with its default applied.
    pub fn n_senders(&self) -> u32 {
        self.senders.unwrap_or_else(|| self.default_senders())
    }

    pub fn check(&self) -> Result<(), ConfigError> {
        if self.bytes == 0 {
            return Err(ConfigError::value("workload.bytes", 0, "a positive integer"));
        }
        // Largest start that fits in u64 picoseconds.
        if !(self.start_us.is_finite() && self.start_us >= 0.0 && self.start_us < 1.8e13) {
            return Err(ConfigError::value("workload.start_us", self.start_us, "a time in microseconds, >= 0"));
        }
        if let Some(hosts) = &self.sender_hosts {
            if hosts.is_empty() {
                return Err(ConfigError::new("workload.sender_hosts", "is empty; list at least one host".into()));
            }
            let mut seen = HashSet::new();
            for &h in hosts {
                if !seen.insert(h) {
                    return Err(ConfigError::new("workload.sender_hosts", format!("lists host {h} twice")));
                }
                if h == self.receiver {
                    return Err(ConfigError::new(
                        "workload.sender_hosts",
                        format!("lists host {h}, which is the receiver (`workload.receiver`)"),
                    ));
                }
            }
            if let Some(n) = self.senders {
                if n as usize != hosts.len() {
                    return Err(ConfigError::new(
                        "workload.senders",
                        format!(
                            "is {n} but `workload.sender_hosts` lists {} hosts; set one of them, or make them agree",
                            hosts.len()
                        ),
                    ));
                }
            }
        }
        if self.senders == Some(0) {
            return Err(ConfigError::value("workload.senders", 0, "a positive integer"));
        }
        Ok(())
    }
}

impl Trace {
    /// The trace path; an error when `trace_file` is not set.
    pub fn path(&self) -> Result<&Path, ConfigError> {
        self.trace_file
            .as_deref()
            .ok_or_else(|| ConfigError::new("workload.trace_file", "is required with kind = \"trace\"".into()))
    }

    pub fn check(&self) -> Result<(), ConfigError> {
        let path = self.path()?;
        if !path.is_file() {
            return Err(ConfigError::new(
                "workload.trace_file",
                format!("{} does not exist or is not a file", path.display()),
            ));
        }
        Ok(())
    }
}

impl Validate for WorkloadConfig {
    /// Checks keys and reads the CDF file, if any. Host ids and counts are
    /// checked against the fabric by [`crate::Workload::build`].
    fn validate(&self) -> Result<(), ConfigError> {
        match self {
            WorkloadConfig::Poisson(p) => {
                p.check()?;
                p.size_distribution().map(|_| ())
            }
            WorkloadConfig::Incast(i) => i.check(),
            WorkloadConfig::Permutation(p) => p.check(),
            WorkloadConfig::Trace(t) => t.check(),
            WorkloadConfig::AllToAll(a) => a.check(),
            WorkloadConfig::RingAllreduce(r) => r.check(),
            WorkloadConfig::Goal(g) => g.check(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Exp {
        #[serde(default)]
        workload: WorkloadConfig,
    }

    fn parse(text: &str) -> Result<WorkloadConfig, String> {
        toml::from_str::<Exp>(text).map(|e| e.workload).map_err(|e| e.to_string())
    }

    fn poisson(text: &str) -> Poisson {
        match parse(text).unwrap() {
            WorkloadConfig::Poisson(p) => p,
            other => panic!("not poisson: {other:?}"),
        }
    }

    #[test]
    fn default_is_poisson_with_sird_values() {
        let WorkloadConfig::Poisson(p) = parse("").unwrap() else { panic!() };
        assert_eq!(p, Poisson::default());
        assert_eq!(p.load, 0.5);
        assert_eq!(p.size_source(), SizeSource::Builtin(BuiltinDist::Wkc));
        let p = poisson("[workload]\nkind = \"poisson\"\n[workload.incast]\n");
        assert_eq!(p.incast, Some(IncastOverlay { senders: 30, bytes: 500_000, share: 0.07 }));
    }

    #[test]
    fn parses_every_key() {
        let p = poisson(
            "[workload]\nkind = \"poisson\"\nload = 0.8\nload_reference = \"core\"\nsize_dist = \"wka\"\n\
             [workload.incast]\nsenders = 10\nbytes = 1000\nshare = 0.1\n",
        );
        assert_eq!(p.load, 0.8);
        assert_eq!(p.load_reference, LoadReference::Core);
        assert_eq!(p.size_dist, Some(BuiltinDist::Wka));
        assert_eq!(p.incast, Some(IncastOverlay { senders: 10, bytes: 1000, share: 0.1 }));
        let w = parse(
            "[workload]\nkind = \"incast\"\nsenders = 3\nreceiver = 5\nbytes = 7\nstart_us = 1.5\n\
             sender_hosts = [1, 2, 3]\n",
        )
        .unwrap();
        let want = Incast { senders: Some(3), receiver: 5, bytes: 7, start_us: 1.5, sender_hosts: Some(vec![1, 2, 3]) };
        assert_eq!(w, WorkloadConfig::Incast(want));
        let w = parse("[workload]\nkind = \"trace\"\ntrace_file = \"t.csv\"\n").unwrap();
        assert_eq!(w, WorkloadConfig::Trace(Trace { trace_file: Some("t.csv".into()), ..Trace::default() }));
        let w = parse("[workload]\nkind = \"trace\"\ntrace_file = \"m.cm\"\ntrace_format = \"htsim\"\n").unwrap();
        let want = Trace { trace_file: Some("m.cm".into()), trace_format: TraceFormat::Htsim };
        assert_eq!(w, WorkloadConfig::Trace(want));
        let e = parse("[workload]\nkind = \"trace\"\ntrace_file = \"m.cm\"\ntrace_format = \"cm\"\n").unwrap_err();
        assert!(e.contains("unknown variant `cm`, expected one of `csv`, `htsim`, `ns2`"), "{e}");
    }

    #[test]
    fn integer_load_is_accepted() {
        assert_eq!(poisson("[workload]\nkind = \"poisson\"\nload = 1\n").load, 1.0);
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let e = parse("[workload]\nkind = \"poisson\"\nsender = 3\n").unwrap_err();
        assert!(e.contains("unknown field `sender`"), "{e}");
        let e = parse("[workload]\nkind = \"poisson\"\nsenders = 3\n").unwrap_err();
        assert!(e.contains("expected a sequence"), "{e}");
        let e = parse("[workload]\nkind = \"poisson\"\n[workload.incast]\nreceivers = 3\n").unwrap_err();
        assert!(e.contains("unknown field `receivers`"), "{e}");
        let e = parse("[workload]\nkind = \"incast\"\nload = 0.5\n").unwrap_err();
        assert!(e.contains("unknown field `load`"), "{e}");
        let e = parse("[workload]\nkind = \"trace\"\nfile = \"x\"\n").unwrap_err();
        assert!(e.contains("unknown field `file`"), "{e}");
        let e = parse("[workload]\nkind = \"closed_loop\"\n").unwrap_err();
        assert!(e.contains("closed_loop"), "{e}");
    }

    #[test]
    fn wrong_types_are_rejected() {
        for bad in [
            "load = \"high\"",
            "size_dist = \"wkd\"",
            "size_dist = 3",
            "size_bytes = -5",
            "size_bytes = 1.5",
            "load_reference = \"spine\"",
            "size_cdf_unit_bytes = \"1460\"",
        ] {
            let text = format!("[workload]\nkind = \"poisson\"\n{bad}\n");
            assert!(parse(&text).is_err(), "accepted {bad}");
        }
        assert!(parse("[workload]\nkind = \"incast\"\nsenders = 2.5\n").is_err());
        assert!(parse("[workload]\nkind = \"incast\"\nsender_hosts = [1, \"a\"]\n").is_err());
        assert!(parse("[workload]\nkind = \"poisson\"\n[workload.incast]\nshare = \"7%\"\n").is_err());
    }

    #[test]
    fn defaults_round_trip_through_toml() {
        let mut configs = vec![
            WorkloadConfig::default(),
            WorkloadConfig::Poisson(Poisson { incast: Some(IncastOverlay::default()), ..Poisson::default() }),
            WorkloadConfig::Incast(Incast::default()),
            WorkloadConfig::Trace(Trace { trace_file: Some("/x/t.csv".into()), ..Trace::default() }),
            WorkloadConfig::Goal(crate::goal::Goal {
                goal_file: Some("/x/a.goal".into()),
                rank_map_file: Some("/x/ranks".into()),
                start_us: 1.5,
            }),
        ];
        let filled: Vec<WorkloadConfig> = configs
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.fill_defaults();
                c
            })
            .collect();
        configs.extend(filled);
        for cfg in configs {
            let exp = Exp { workload: cfg };
            let text = toml::to_string(&exp).unwrap();
            let back: Exp = toml::from_str(&text).unwrap_or_else(|e| panic!("{text}\n{e}"));
            assert_eq!(back, exp, "{text}");
        }
    }

    #[test]
    fn resolved_default_size_is_visible() {
        let mut w = WorkloadConfig::default();
        w.resolve_paths(Path::new("/base"));
        let text = toml::to_string(&Exp { workload: w }).unwrap();
        assert!(text.contains("size_dist = \"wkc\""), "{text}");
        // A configuration that sets another size source keeps it alone.
        let mut w = parse("[workload]\nkind = \"poisson\"\nsize_bytes = 100\n").unwrap();
        w.resolve_paths(Path::new("/base"));
        let WorkloadConfig::Poisson(p) = &w else { panic!() };
        assert_eq!(p.size_dist, None);
        assert!(w.validate().is_ok());
    }

    #[test]
    fn relative_paths_resolve_against_the_base_dir() {
        let mut w = parse("[workload]\nkind = \"poisson\"\nsize_cdf_file = \"d/x.cdf\"\n").unwrap();
        w.resolve_paths(Path::new("/exp"));
        let WorkloadConfig::Poisson(p) = &w else { panic!() };
        assert_eq!(p.size_cdf_file.as_deref(), Some(Path::new("/exp/d/x.cdf")));
        let mut w = parse("[workload]\nkind = \"trace\"\ntrace_file = \"/abs/t.csv\"\n").unwrap();
        w.resolve_paths(Path::new("/exp"));
        let WorkloadConfig::Trace(t) = &w else { panic!() };
        assert_eq!(t.trace_file.as_deref(), Some(Path::new("/abs/t.csv")));
    }

    fn validate_err(text: &str) -> fabriclab_engine::ConfigError {
        let mut w = parse(text).unwrap();
        w.fill_defaults();
        w.validate().expect_err(text)
    }

    #[test]
    fn two_size_sources_name_both_keys() {
        let e = validate_err("[workload]\nkind = \"poisson\"\nsize_dist = \"wka\"\nsize_bytes = 10\n");
        assert_eq!(e.key, "workload.size_bytes");
        assert!(e.message.contains("workload.size_dist"), "{}", e.message);
        let e = validate_err("[workload]\nkind = \"poisson\"\nsize_cdf_file = \"/x\"\nsize_bytes = 10\n");
        assert_eq!(e.key, "workload.size_bytes");
        assert!(e.message.contains("workload.size_cdf_file"), "{}", e.message);
    }

    #[test]
    fn out_of_range_values_name_their_key() {
        let cases = [
            ("[workload]\nkind = \"poisson\"\nload = 0\n", "workload.load"),
            ("[workload]\nkind = \"poisson\"\nload = 1.6\n", "workload.load"),
            ("[workload]\nkind = \"poisson\"\nload = nan\n", "workload.load"),
            ("[workload]\nkind = \"poisson\"\nsize_bytes = 0\n", "workload.size_bytes"),
            ("[workload]\nkind = \"poisson\"\nsize_cdf_unit_bytes = 1460\n", "workload.size_cdf_unit_bytes"),
            ("[workload]\nkind = \"poisson\"\nsize_cdf_file = \"/nonexistent.cdf\"\n", "workload.size_cdf_file"),
            ("[workload]\nkind = \"poisson\"\n[workload.incast]\nsenders = 0\n", "workload.incast.senders"),
            ("[workload]\nkind = \"poisson\"\n[workload.incast]\nbytes = 0\n", "workload.incast.bytes"),
            ("[workload]\nkind = \"poisson\"\n[workload.incast]\nshare = 1.0\n", "workload.incast.share"),
            ("[workload]\nkind = \"poisson\"\n[workload.incast]\nshare = 0\n", "workload.incast.share"),
            ("[workload]\nkind = \"incast\"\nsenders = 0\n", "workload.senders"),
            ("[workload]\nkind = \"incast\"\nbytes = 0\n", "workload.bytes"),
            ("[workload]\nkind = \"incast\"\nstart_us = -1.0\n", "workload.start_us"),
            ("[workload]\nkind = \"incast\"\nstart_us = 1e30\n", "workload.start_us"),
            ("[workload]\nkind = \"incast\"\nsender_hosts = []\n", "workload.sender_hosts"),
            ("[workload]\nkind = \"incast\"\nsender_hosts = [1, 2, 1]\n", "workload.sender_hosts"),
            ("[workload]\nkind = \"incast\"\nreceiver = 2\nsender_hosts = [1, 2]\n", "workload.sender_hosts"),
            ("[workload]\nkind = \"incast\"\nsenders = 3\nsender_hosts = [1, 2]\n", "workload.senders"),
            ("[workload]\nkind = \"trace\"\n", "workload.trace_file"),
            ("[workload]\nkind = \"trace\"\ntrace_file = \"/nonexistent.csv\"\n", "workload.trace_file"),
        ];
        for (text, key) in cases {
            assert_eq!(validate_err(text).key, key, "{text}");
        }
    }

    #[test]
    fn goal_keys_parse_and_both_files_resolve() {
        let text =
            "[workload]\nkind = \"goal\"\ngoal_file = \"s.goal\"\nrank_map_file = \"/m/ranks\"\nstart_us = 2.5\n";
        let mut w = parse(text).unwrap();
        w.resolve_paths(Path::new("/exp"));
        let WorkloadConfig::Goal(g) = &w else { panic!() };
        assert_eq!(g.goal_file.as_deref(), Some(Path::new("/exp/s.goal")));
        assert_eq!(g.rank_map_file.as_deref(), Some(Path::new("/m/ranks")));
        assert_eq!(g.start_us, 2.5);
        assert_eq!(w.input_files_mut().len(), 2);
        let e = parse("[workload]\nkind = \"goal\"\nschedule = \"s.goal\"\n").unwrap_err();
        assert!(e.contains("unknown field `schedule`"), "{e}");
        assert_eq!(validate_err("[workload]\nkind = \"goal\"\n").key, "workload.goal_file");
        let e = validate_err("[workload]\nkind = \"goal\"\ngoal_file = \"/nonexistent.goal\"\n");
        assert_eq!(e.key, "workload.goal_file");
    }

    #[test]
    fn incast_senders_default_follows_the_host_list() {
        let mut w = parse("[workload]\nkind = \"incast\"\nsender_hosts = [4, 5, 6]\n").unwrap();
        w.fill_defaults();
        let WorkloadConfig::Incast(i) = &w else { panic!() };
        assert_eq!(i.senders, Some(3));
        assert!(w.validate().is_ok());
        let mut w = parse("[workload]\nkind = \"incast\"\n").unwrap();
        w.fill_defaults();
        let WorkloadConfig::Incast(i) = &w else { panic!() };
        assert_eq!(i.senders, Some(8));
    }
}
