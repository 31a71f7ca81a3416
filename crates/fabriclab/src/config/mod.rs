//! Experiment configuration: TOML tables `[topology]`, `[network]`,
//! `[protocol]`, `[workload]`, `[run]`, `[output]`, with `--set dotted.key=value`
//! overrides. Unknown keys are errors; every error names the key, the bad value
//! and what is allowed.

mod errors;
pub mod limits;
mod network;
mod protocol;
mod run;
pub mod schema;

pub use crate::net::switch_config::{
    ControlClassConfig, IntConfig, MarkAt, PfcConfig, RedConfig, SharedBufferConfig, SwitchFeatures,
};
pub use fabriclab_engine::error::{check_positive, check_range, ConfigError, Validate};
pub use network::{BufferLimit, NetworkConfig};
pub use protocol::{ParamDoc, ProtocolConfig, ProtocolName, ProtocolParams, ProtocolVisitor};
pub use run::{IdealLatency, OutputConfig, RunConfig};

use crate::net::topology_config::TopologyConfig;
use crate::net::LoadBalancing;
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A complete experiment.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub topology: TopologyConfig,
    #[serde(default)]
    pub network: NetworkConfig,
    #[serde(default)]
    pub protocol: ProtocolConfig,
    #[serde(default)]
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub run: RunConfig,
    #[serde(default)]
    pub output: OutputConfig,
}

impl Config {
    /// Reads `path`, applies `overrides` (`dotted.key=value`), fills defaults
    /// that depend on the protocol, and validates.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new("", format!("cannot read {}: {e}", path.display())))?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse(&text, overrides, base, &path.display().to_string())
    }

    /// As [`Config::load`] from TOML text; relative file paths in the config
    /// are resolved against `base_dir`.
    pub fn from_str_with(text: &str, overrides: &[String], base_dir: &Path) -> Result<Config, ConfigError> {
        Self::parse(text, overrides, base_dir, "<config>")
    }

    /// As [`Config::from_str_with`]; errors locate keys in `origin` (the
    /// file name, or a name such as "<TOML string>") by line and column.
    pub fn parse(text: &str, overrides: &[String], base_dir: &Path, origin: &str) -> Result<Config, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| errors::syntax(&e, text, origin))?;
        Self::build(table, overrides, base_dir, text, origin)
    }

    /// As [`Config::load`] from a TOML table built in memory (the Python
    /// API's dicts): the same checks and errors, which name keys but no
    /// line, as there is no text.
    pub fn from_table(table: toml::Table, overrides: &[String], base_dir: &Path) -> Result<Config, ConfigError> {
        Self::build(table, overrides, base_dir, "", "")
    }

    fn build(
        mut table: toml::Table,
        overrides: &[String],
        base_dir: &Path,
        text: &str,
        origin: &str,
    ) -> Result<Config, ConfigError> {
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        // Tables chosen by `kind` default to the SIRD setup when `kind` is left out.
        for (section, kind) in [("topology", "leaf_spine"), ("workload", "poisson")] {
            if let Some(toml::Value::Table(t)) = table.get_mut(section) {
                t.entry("kind").or_insert_with(|| toml::Value::String(kind.into()));
            }
        }
        let de = toml::Value::Table(table);
        let mut cfg: Config = serde_path_to_error::deserialize(de.clone()).map_err(|e| {
            let path = e.path().to_string();
            let (key, message) = match de.get(&path) {
                // A table chosen by `kind`: serde lost the key inside it.
                Some(t) if path == "topology" || path == "workload" => {
                    errors::inside_kind(&path, t).unwrap_or((path, errors::words(&e.inner().to_string())))
                }
                _ if path == "." => (String::new(), errors::words(&e.inner().to_string())),
                _ => (path, errors::words(&e.inner().to_string())),
            };
            locate(ConfigError::new(&key, message), text, origin, overrides)
        })?;
        // An absolute path, so that the resolved configuration (config.resolved.toml in a run's
        // directory) reads the same file wherever it is loaded from; identity() hashes the
        // file's bytes, not its path, so records keyed on it do not move.
        let base_dir = std::path::absolute(base_dir).unwrap_or_else(|_| base_dir.to_path_buf());
        cfg.workload.resolve_paths(&base_dir);
        cfg.resolve();
        cfg.validate().map_err(|e| locate(e, text, origin, overrides))?;
        Ok(cfg)
    }

    /// Fills the defaults that depend on the chosen protocol (load balancing,
    /// ECN threshold, its parameter table).
    pub fn resolve(&mut self) {
        self.protocol.fill_defaults();
        let p = &self.protocol;
        if self.network.load_balancing.is_none() {
            let sender = p.sender_entropy().then_some(crate::net::LoadBalancing::Sender);
            self.network.load_balancing = Some(sender.unwrap_or(p.default_load_balancing()));
        }
        if self.network.credit_shaping.is_none() {
            self.network.credit_shaping = Some(p.default_credit_shaping());
        }
        if self.network.trimming.is_none() {
            let (on, threshold) = p.default_trimming(crate::net::wire::mss(self.network.mtu.clamp(576, 9216)));
            self.network.trimming = Some(on);
            if on && self.network.trim_threshold_bytes.is_none() {
                self.network.trim_threshold_bytes = threshold;
            }
        }
        let mss = crate::net::wire::mss(self.network.mtu.clamp(576, 9216));
        let f = p.default_switch_features(self.network.bdp_bytes, mss);
        let n = &mut self.network;
        if n.red.is_none() && n.ecn_threshold_bytes.is_none() {
            n.red = f.red;
        }
        n.pfc = n.pfc.take().or(f.pfc);
        n.int = n.int.take().or(f.int);
        n.control_class = n.control_class.take().or(f.control_class);
        n.selective_drop_bytes = n.selective_drop_bytes.or(f.selective_drop_bytes);
        if self.network.ecn_threshold_bytes.is_none() && self.network.red.is_none() {
            self.network.ecn_threshold_bytes = p.default_ecn_threshold_bytes(self.network.bdp_bytes);
        }
        if self.network.ecn_threshold_bytes.is_some() && self.network.ecn_ports.is_none() {
            self.network.ecn_ports = Some(p.default_ecn_ports());
        }
    }

    /// The resolved configuration as TOML (what `fabriclab validate` prints).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render config: {e}"))
    }

    /// What this config runs, independent of where it lives: the SHA-256 of
    /// its resolved TOML with each input file's path replaced by the SHA-256
    /// of the file's bytes. Two checkouts in different folders agree on it; an
    /// edited CDF or trace changes it. Sweep point records are keyed on it.
    pub fn identity(&self) -> Result<String, String> {
        let mut c = self.clone();
        for path in c.workload.input_files_mut() {
            let bytes = std::fs::read(&*path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            *path = format!("sha256:{}", crate::files::sha256_hex(&bytes)).into();
        }
        let name = c.protocol.name.as_str();
        let mut text = without_late_defaults(&c.to_toml(), name);
        if let Some((_, day)) = PROTOCOL_REVISIONS.iter().find(|(p, _)| *p == name) {
            text.push_str(&format!("# {name}'s results as of {day}\n"));
        }
        Ok(crate::files::sha256_hex(text.as_bytes()))
    }
}

/// Protocols whose code moved their results after runs of them were recorded, as
/// (protocol, the day): a revision joins the identity of that protocol's configs, so
/// their point records are run again while every other protocol's stay (bumping
/// `crate::MODEL` would re-run every paper's). Add or move a protocol's day with
/// any change that moves its results and no other protocol's.
const PROTOCOL_REVISIONS: [(&str, &str); 2] = [
    // Issue 49: Bolt's sender sends a whole packet per pacing gap when less than a
    // packet of window is free, as the authors' ns-3 does (it waited for an ACK).
    ("bolt", "2026-12-03"),
    // EP(A)'s pre-credit burst ends at the first credit even when none of it had left
    // (a flow asking for credit again resumed it past its message's last packet).
    ("expresspass_aeolus", "2026-12-03"),
];

/// Lines the resolved TOML gained after runs were recorded, as (table, line):
/// the lists left out while empty until 2026-12-02, and keys added later at
/// the value under which the runs before them ran (for `unsch_t_bytes` no
/// longer the default: the default "wire" stays in, so those configs get a
/// new key). Such a line stays out of [`Config::identity`], so that the runs
/// recorded before keep their key.
const LATE_DEFAULTS: [(&str, &str); 15] = [
    ("output", "fct_bins_bytes = []"),
    ("output", "queue_ports = []"),
    ("output", "pcap_hosts = []"),
    ("output", "pcap_flows = []"),
    ("network", "events = []"),
    ("topology", "link_overrides = []"),
    // Issue 44: the SIRD artifact's sender rules, off by default.
    ("protocol.sird", "sender_policy = \"turns\""),
    ("protocol.sird", "unsch_t_bytes = \"payload\""),
    ("protocol.sird", "unsch_capped_by_held_credit = false"),
    // Issue 44: the SIRD artifact's receiver rules, off by default.
    ("protocol.sird", "sender_bucket_check = \"after\""),
    ("protocol.sird", "loops_see_control = false"),
    ("protocol.sird", "credit_pacing_slack_bytes = 0.0"),
    ("protocol.sird", "csn_counts_waiting = false"),
    // Issue 44: DCTCP's host as the SIRD artifact's, a FIFO, the default since 2026-12-03.
    ("protocol.dctcp", "nic = \"round_robin\""),
    // Issue 52: GOAL runs' ops.csv, on by default.
    ("output", "ops = true"),
];

/// Keys added to a protocol's table after runs were recorded, as (table, key).
/// A run of another protocol (whose config shows the table because its base
/// file sets it for every protocol it is swept over) does not read them, so
/// they stay out of its [`Config::identity`] at any value; a run of the
/// protocol itself keeps them unless at their [`LATE_DEFAULTS`] value.
const LATE_PROTOCOL_KEYS: [(&str, &str); 1] = [("protocol.dctcp", "nic")];

/// `text` (a resolved config of a run of `protocol`) without the lines of
/// [`LATE_DEFAULTS`] and the [`LATE_PROTOCOL_KEYS`] of other protocols.
fn without_late_defaults(text: &str, protocol: &str) -> String {
    let mut table = "";
    let mut kept = String::with_capacity(text.len());
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name;
        }
        let unread = LATE_PROTOCOL_KEYS.iter().any(|&(t, k)| {
            t == table
                && t.strip_prefix("protocol.") != Some(protocol)
                && line.strip_prefix(k).is_some_and(|rest| rest.starts_with(" ="))
        });
        let late = unread || LATE_DEFAULTS.iter().any(|&(t, l)| t == table && line == l);
        if !late {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

impl Validate for Config {
    fn validate(&self) -> Result<(), ConfigError> {
        // The topology's own checks bound its counts and the work of building
        // it before anything builds it (an absurd count would exhaust memory).
        self.topology.validate()?;
        // Every number against its bound (docs/limits.md) before the checks
        // between keys, so that an absurd value is named by its own key
        // rather than by a key compared with it.
        limits::check(self)?;
        // The protocol before the network: some network defaults derive from
        // protocol parameters, which are then named first.
        self.protocol.validate()?;
        self.network.validate()?;
        if self.network.trimming == Some(true) && !self.protocol.handles_trims() {
            let ok: Vec<&str> = ProtocolName::ALL.iter().filter(|p| p.handles_trims()).map(|p| p.as_str()).collect();
            return Err(ConfigError::value(
                "network.trimming",
                format!("true with protocol {}", self.protocol.name.as_str()),
                &format!(
                    "trimming only with a protocol that handles trimmed packets ({}; swift with \
                     protocol.swift.trimming = true)",
                    ok.join(", ")
                ),
            ));
        }
        if self.network.load_balancing == Some(LoadBalancing::Sender) && !self.protocol.sender_entropy() {
            return Err(ConfigError::value(
                "network.load_balancing",
                format!("\"sender\" with protocol {}", self.protocol.name.as_str()),
                "\"sender\" only with a protocol that chooses its own entropies (smartt, eqds, or swift with a \
                 [protocol.swift.lb] table)",
            ));
        }
        if !self.network.events.is_empty() {
            crate::net::link_events::check(&self.network.events, &self.topology.build())?;
        }
        self.workload.validate()?;
        self.run.validate()?;
        let o = &self.output;
        if o.trace_hosts.is_empty() && !o.pcap() && o.queue_ports.is_empty() {
            return o.check(u32::MAX);
        }
        let topo = self.topology.build();
        o.check(topo.n_hosts)?;
        for i in 0..o.queue_ports.len() {
            topo.queue_port(&o.queue_ports, i)?;
        }
        // One row per port and interval: kept in memory until the run ends.
        let rows = self.run.duration_ms * 1e3 / o.queue_interval_us * o.queue_ports.len() as f64;
        if rows > MAX_QUEUE_ROWS {
            return Err(ConfigError::value(
                "output.queue_interval_us",
                o.queue_interval_us,
                &format!(
                    "at least {} us for {} port(s) over {} ms (at most {MAX_QUEUE_ROWS:e} rows)",
                    self.run.duration_ms * 1e3 * o.queue_ports.len() as f64 / MAX_QUEUE_ROWS,
                    o.queue_ports.len(),
                    self.run.duration_ms
                ),
            ));
        }
        Ok(())
    }
}

/// Most rows queue_series.csv may have (about 3 GB of memory while the run lasts).
const MAX_QUEUE_ROWS: f64 = 1e8;

/// `e` with the file position of its key, when the file sets that key and
/// no `--set` replaced it.
fn locate(e: ConfigError, text: &str, origin: &str, overrides: &[String]) -> ConfigError {
    let from_set = overrides.iter().any(|o| o.split_once('=').is_some_and(|(k, _)| k.trim() == e.key));
    if from_set {
        return ConfigError { message: format!("(from --set) {}", e.message), ..e };
    }
    match errors::position(text, origin, &e.key) {
        Some(at) if !e.key.is_empty() => ConfigError { message: format!("{at}: {}", e.message), ..e },
        _ => e,
    }
}

/// Applies one `a.b.c=value` override to a TOML table. The value is parsed as a
/// TOML literal (number, bool, array, quoted string) and taken as a bare string otherwise.
pub fn apply_override(table: &mut toml::Table, spec: &str) -> Result<(), ConfigError> {
    let (key, value) = parse_override(spec)?;
    let (parent, last) = parent_table(table, &key)?;
    parent.insert(last.to_string(), value);
    Ok(())
}

/// One `a.b.c=value` override as its dotted key and value (see [`apply_override`]).
pub fn parse_override(spec: &str) -> Result<(String, toml::Value), ConfigError> {
    let (key, raw) = spec
        .split_once('=')
        .ok_or_else(|| ConfigError::new(spec, "override must look like dotted.key=value".to_string()))?;
    let key = key.trim();
    let raw = raw.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(ConfigError::new(key, "override key must be a dotted path like workload.load".into()));
    }
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    Ok((key.to_string(), value))
}

/// The table that holds the dotted `key` inside `table` (the tables on the way
/// are created), and the key's last part. Errors name the part that is a value,
/// not a table. `key` must have no empty part.
pub fn parent_table<'t, 'k>(
    table: &'t mut toml::Table,
    key: &'k str,
) -> Result<(&'t mut toml::Table, &'k str), ConfigError> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = table;
    for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = cur.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            other => {
                return Err(ConfigError::new(
                    &parts[..=i].join("."),
                    format!("is a {}, not a table, so `{key}` cannot be set", other.type_str()),
                ))
            }
        };
    }
    Ok((cur, parts[parts.len() - 1]))
}

#[cfg(test)]
mod tests;
