//! Bounds for every number in an experiment, checked before anything else in
//! validation.
//!
//! Why one table instead of a check in each parameter type: every time,
//! rate, size and count, in every protocol's table too, must have an upper
//! and a lower bound, and the docs (`fabriclab protocols`, docs/limits.md)
//! must state the same bound the check applies. A key is classed by its full
//! dotted path where it is special, else by its unit suffix (`_us`, `_gbps`,
//! `_bytes`, `_bdp`, ...), else by its type (a plain count, or a factor).
//! A protocol's own table narrows its keys first (`ProtocolParams::bounds`: a
//! gain in [1e-6, 1], not any number): one statement per bound, which this
//! check, `fabriclab protocols`, the schema and Python's `fl.protocols()` all
//! read, so that the range shown is the range enforced.
//! The checks walk the resolved configuration once; nothing here runs per
//! event. The reasons for each bound are in `fabriclab_engine::limits`.

use super::Config;
use fabriclab_engine::error::ConfigError;
use fabriclab_engine::limits::*;

const TIMER: Bound = Bound::new("a timeout or period in microseconds", MIN_TIMER_US, MAX_TIMER_US);
const HORIZON_TIME: Bound = Bound::new("a time in microseconds", 0.0, HORIZON_US);
const SHORT_US: Bound = Bound::new("a time in microseconds", 0.0, MAX_TIMER_US);
const MS: Bound = Bound::new("a time in milliseconds", 0.0, HORIZON_US / 1e3);
const DELAY_NS: Bound = Bound::new("a delay in nanoseconds", 0.0, MAX_DELAY_NS);
const GBPS: Bound = Bound::new("a rate in Gbps", MIN_RATE_GBPS, MAX_RATE_GBPS);
const MBPS: Bound = Bound::new("a rate in Mbps", 1e-3, MAX_RATE_GBPS * 1e3);
const BUFFER: Bound = Bound::new("a number of bytes", 0.0, MAX_BUFFER_BYTES as f64);
const MESSAGE: Bound = Bound::new("a message size in bytes", 1.0, MAX_MESSAGE_BYTES as f64);
const MULTIPLE: Bound = Bound::new("a multiple", 0.0, MAX_MULTIPLE);
/// A timeout counted in BDP-times or RTTs: as [`TIMER`], not so short that it
/// fires many times per packet.
const TIMER_MULTIPLE: Bound = Bound::new("a multiple", 1e-3, MAX_MULTIPLE);
const PACKETS: Bound = Bound::new("a number of packets", 0.0, MAX_PACKETS);
const COUNT: Bound = Bound::new("an integer", 0.0, MAX_COUNT);
const FACTOR: Bound = Bound::new("a number", -MAX_FACTOR, MAX_FACTOR);
const FRACTION: Bound = Bound::new("a fraction", 0.0, 1.0);
const HOST_ID: Bound = Bound::new("a host id", 0.0, (MAX_HOSTS - 1) as f64);
const HOSTS: Bound = Bound::new("a number of hosts", 1.0, MAX_HOSTS as f64);
/// Largest frame on the wire (9216-byte MTU + 38 bytes of Ethernet framing):
/// a buffer must hold at least one.
const FRAME: f64 = 9254.0;
/// A threshold or a buffer that must hold something (0 would mark, trim or drop everything).
const POSITIVE_BYTES: Bound = Bound::new("a number of bytes", 0.0, MAX_BUFFER_BYTES as f64).above();

/// Keys (array indices left out) whose bound differs from their suffix's.
const BY_KEY: &[(&str, Bound)] = &[
    ("run.duration_ms", Bound::new("a duration in milliseconds", 0.0, HORIZON_US / 1e3).above()),
    ("run.warmup_ms", MS),
    // TOML integers are signed 64-bit, so a seed above this cannot be written.
    ("run.seed", Bound::new("a seed", 0.0, i64::MAX as f64)),
    ("run.stable_tolerance", FRACTION),
    ("output.trace_interval_us", Bound::new("a time in microseconds", 0.0, 1e9)),
    ("output.trace_hosts", HOST_ID),
    ("output.pcap_hosts", HOST_ID),
    ("output.pcap_flows", HOST_ID),
    // An Ethernet + IPv4 + UDP header and the fixed part of ours; at most a pcap's usual maximum.
    ("output.pcap_snaplen", Bound::new("a snap length in bytes", 74.0, 262144.0)),
    // At least the file header and one full record; at most what a machine could hold.
    ("output.pcap_max_mb", Bound::new("a size in MB", 0.001, 1e6)),
    ("network.mtu", Bound::new("an MTU in bytes", 576.0, 9216.0)),
    ("network.bdp_bytes", Bound::new("a number of bytes", 1.0, MAX_MESSAGE_BYTES as f64)),
    ("network.priorities", Bound::new("a number of priority classes", 1.0, 8.0)),
    ("network.buffer_bytes", Bound::new("a number of bytes", FRAME, MAX_BUFFER_BYTES as f64)),
    ("network.fabric_buffer_bytes", Bound::new("a number of bytes", FRAME, MAX_BUFFER_BYTES as f64)),
    ("network.credit_queue_packets", Bound::new("a number of credits", 1.0, MAX_PACKETS)),
    ("network.ecn_threshold_bytes", POSITIVE_BYTES),
    ("network.queue_buffer_bytes", POSITIVE_BYTES),
    ("network.trim_threshold_bytes", POSITIVE_BYTES),
    ("network.selective_drop_bytes", POSITIVE_BYTES),
    ("network.red.kmin_bytes", POSITIVE_BYTES),
    ("network.red.fabric_kmin_bytes", POSITIVE_BYTES),
    ("network.pfc.xoff_bytes", POSITIVE_BYTES),
    ("network.pfc.headroom_bytes", Bound::new("a number of bytes", FRAME, MAX_BUFFER_BYTES as f64)),
    ("network.control_class.ecn_threshold_bytes", POSITIVE_BYTES),
    ("network.control_class.buffer_bytes", POSITIVE_BYTES),
    ("network.shared_buffer.bytes", Bound::new("a number of bytes", FRAME, MAX_BUFFER_BYTES as f64)),
    ("network.shared_buffer.alpha", Bound::new("a factor", 1.0 / 64.0, 64.0)),
    ("network.red.pmax", Bound::new("a probability", 0.0, 1.0).above()),
    ("network.pfc.classes", Bound::new("a priority class", 0.0, 7.0)),
    ("network.int.hop_bytes", Bound::new("a number of bytes", 1.0, 64.0)),
    ("network.control_class.rate_fraction", Bound::new("a fraction of the link", 0.0, 1.0).above()),
    ("network.events.at_us", HORIZON_TIME),
    ("network.events.reroute_after_us", HORIZON_TIME),
    ("topology.tors", HOSTS),
    ("topology.hosts_per_tor", HOSTS),
    // A ToR's uplinks: far above any switch radix; every ToR's route list
    // to another rack holds every spine.
    ("topology.spines", Bound::new("a number of spines", 1.0, 4096.0)),
    ("topology.hosts", Bound::new("a number of hosts", 2.0, MAX_HOSTS as f64)),
    ("topology.hosts_left", HOSTS),
    ("topology.hosts_right", HOSTS),
    // Radix of the largest merchant-silicon switches twice over; the route
    // table grows as k^4 (`topology::check_route_table`).
    ("topology.k", Bound::new("an even switch radix", 2.0, 128.0)),
    ("topology.tiers", Bound::new("a number of tiers", 2.0, 3.0)),
    ("workload.load", Bound::new("a load", 0.0, 1.5).above()),
    ("workload.incast.share", Bound::new("a share of the load", 0.0, 1.0)),
    ("workload.incast.senders", HOSTS),
    ("workload.incast.bytes", MESSAGE),
    ("workload.senders", HOSTS),
    ("workload.receiver", HOST_ID),
    ("workload.sender_hosts", HOST_ID),
    ("workload.large_src", HOST_ID),
    ("workload.ranks", HOSTS),
    ("workload.start_us", HORIZON_TIME),
    ("workload.bytes", MESSAGE),
    ("workload.size_bytes", MESSAGE),
    ("workload.large_bytes", MESSAGE),
    ("workload.size_cdf_unit_bytes", Bound::new("a number of bytes", 1.0, MAX_MESSAGE_BYTES as f64)),
    ("workload.window", Bound::new("a number of messages", 1.0, MAX_COUNT)),
    ("workload.count", COUNT),
];

/// The bound of `key` (a dotted path, array indices allowed); `is_int`
/// tells a plain count from a factor when neither key nor suffix says.
pub fn bound_for(key: &str, is_int: bool) -> Bound {
    let plain = strip_indices(key);
    // `workload.senders` is a count in the incast but a list of host ids in a
    // Poisson workload: an element of the list is an id (host 0 included).
    if plain == "workload.senders" && plain.len() != key.len() {
        return HOST_ID;
    }
    if let Some(b) = protocol_bound(&plain) {
        return b;
    }
    if let Some((_, b)) = BY_KEY.iter().find(|(k, _)| *k == plain) {
        return *b;
    }
    let leaf = plain.rsplit('.').next().unwrap_or(&plain);
    let timer = ["timeout", "rto", "interval"].iter().any(|w| leaf.contains(w));
    let suffix = |s: &str| leaf.ends_with(s);
    match () {
        _ if suffix("_us") && timer => TIMER,
        _ if suffix("_us") => SHORT_US,
        _ if suffix("_ms") => MS,
        _ if suffix("_ns") => DELAY_NS,
        _ if suffix("_gbps") => GBPS,
        _ if suffix("_mbps") => MBPS,
        _ if suffix("_bytes") => BUFFER,
        _ if suffix("_bdp") && timer => TIMER_MULTIPLE,
        _ if suffix("_bdp") => MULTIPLE,
        _ if suffix("_mtu") || suffix("_pkts") || suffix("_packets") => PACKETS,
        _ if suffix("_trtt") || suffix("_rtt") || suffix("_rtts") || suffix("_epochs") => {
            if timer {
                TIMER_MULTIPLE
            } else {
                MULTIPLE
            }
        }
        _ if is_int => COUNT,
        _ => FACTOR,
    }
}

/// The bound `[protocol.NAME]`'s own table declares for `key` (`protocol.NAME.KEY`,
/// array indices left out), if it narrows one.
fn protocol_bound(key: &str) -> Option<Bound> {
    let (name, rest) = key.strip_prefix("protocol.")?.split_once('.')?;
    let p = super::ProtocolName::ALL.iter().find(|p| p.as_str() == name)?;
    p.bounds().into_iter().find(|(k, _)| *k == rest).map(|(_, b)| b)
}

/// `network.events[2].at_us` -> `network.events.at_us`.
fn strip_indices(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut depth = 0;
    for c in key.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Checks every number of `cfg` against its bound; the first error names
/// the key, the value and the range.
pub fn check(cfg: &Config) -> Result<(), ConfigError> {
    // Table by table, `[network]` last: its defaults are derived from the
    // protocol's parameters (an ECN threshold of nthr_bdp x BDP), so an
    // out-of-bound parameter is named before the value derived from it.
    let sections: [(&str, Result<toml::Value, toml::ser::Error>); 6] = [
        ("run", toml::Value::try_from(&cfg.run)),
        ("topology", toml::Value::try_from(&cfg.topology)),
        ("protocol", toml::Value::try_from(&cfg.protocol)),
        ("workload", toml::Value::try_from(&cfg.workload)),
        ("output", toml::Value::try_from(&cfg.output)),
        ("network", toml::Value::try_from(&cfg.network)),
    ];
    // The BDP is the root of `[network]`'s derived defaults (ECN thresholds,
    // buffers); one near 2^63 makes a derived value too large to write as a
    // TOML integer, so it is checked before the table is.
    let bdp = "network.bdp_bytes";
    bound_for(bdp, true).check(bdp, cfg.network.bdp_bytes as f64)?;
    for (key, tree) in sections {
        let tree =
            tree.map_err(|_| ConfigError::new(key, "holds a value above 2^63, beyond every bound".to_string()))?;
        walk(key, &tree)?;
    }
    Ok(())
}

/// Checks every number of one table `t` against its bound, its keys named
/// under `key` (a protocol's table outside an experiment file, such as
/// `fabriclab udp`'s `[sird]`, checked as `protocol.sird`).
pub fn check_table<T: serde::Serialize>(key: &str, t: &T) -> Result<(), ConfigError> {
    let tree = toml::Value::try_from(t)
        .map_err(|_| ConfigError::new(key, "holds a value above 2^63, beyond every bound".into()))?;
    walk(key, &tree)
}

fn walk(key: &str, v: &toml::Value) -> Result<(), ConfigError> {
    match v {
        toml::Value::Integer(i) => bound_for(key, true).check(key, *i as f64),
        toml::Value::Float(f) => bound_for(key, false).check(key, *f),
        toml::Value::Table(t) => {
            for (k, v) in t {
                let sub = if key.is_empty() { k.clone() } else { format!("{key}.{k}") };
                walk(&sub, v)?;
            }
            Ok(())
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                walk(&format!("{key}[{i}]"), v)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The allowed range of a documented parameter whose default reads
/// `default`, for `fabriclab protocols` (empty for flags and names).
pub fn describe(key: &str, default: &str) -> String {
    let d = default.trim();
    if d == "true" || d == "false" || d.starts_with('"') || d.starts_with('[') {
        return String::new();
    }
    // A bound the protocol's table declares, also for a key absent by default.
    if let Some(b) = protocol_bound(key) {
        return format!("{} in {}", b.what, b.range());
    }
    // The type of the key as the defaults serialize it (1.0 prints as "1").
    let name = key.split('.').nth(1).unwrap_or("");
    let mut cfg = Config::default();
    let known = super::ProtocolName::ALL.iter().find(|p| p.as_str() == name);
    let typed = known.and_then(|&p| {
        cfg.protocol.name = p;
        cfg.protocol.fill_defaults();
        numeric_keys(&cfg).into_iter().find(|(k, _)| k == key).map(|(_, b)| b)
    });
    let b = match typed {
        Some(b) => b,
        // Not a numeric key of the defaults: a number only if its default is one (an enum such
        // as `cwnd_cap = none` has no numeric bound to state).
        None if d.parse::<f64>().is_ok() => bound_for(key, d.parse::<i64>().is_ok()),
        None => return String::new(),
    };
    format!("{} in {}", b.what, b.range())
}

/// Every numeric key of `cfg` with its bound, for the docs and tests.
pub fn numeric_keys(cfg: &Config) -> Vec<(String, Bound)> {
    fn go(key: &str, v: &toml::Value, out: &mut Vec<(String, Bound)>) {
        match v {
            toml::Value::Integer(_) => out.push((key.to_string(), bound_for(key, true))),
            toml::Value::Float(_) => out.push((key.to_string(), bound_for(key, false))),
            toml::Value::Table(t) => t.iter().for_each(|(k, v)| go(&format!("{key}.{k}"), v, out)),
            toml::Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| go(&format!("{key}[{i}]"), v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(toml::Value::Table(t)) = toml::Value::try_from(cfg) {
        t.iter().for_each(|(k, v)| go(k, v, &mut out));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enum_keys_state_no_numeric_bound() {
        assert_eq!(describe("protocol.eqds.cwnd_cap", "none"), "");
        assert_eq!(describe("protocol.eqds.lb.kind", "reps"), "");
        assert!(describe("protocol.eqds.pull_rate_modifier", "1").contains("in ["));
    }

    #[test]
    fn keys_are_classed_by_path_then_suffix_then_type() {
        assert_eq!(bound_for("protocol.sird.timeout_us", false), TIMER);
        assert_eq!(bound_for("protocol.dcqcn.alpha_interval_us", false), TIMER);
        assert_eq!(bound_for("protocol.bolt.unlisted_us", false), SHORT_US);
        assert_eq!(bound_for("network.events[3].at_us", false), HORIZON_TIME);
        assert_eq!(bound_for("workload.senders", true), HOSTS, "the incast's count");
        assert_eq!(bound_for("workload.senders[0]", true), HOST_ID, "a Poisson sender list's ids");
        assert_eq!(bound_for("topology.link_overrides[0].rate_gbps", false), GBPS);
        assert_eq!(bound_for("network.unlisted_bytes[2]", true), BUFFER);
        assert_eq!(bound_for("protocol.dcpim.unlisted", true), COUNT);
        assert_eq!(bound_for("protocol.swift.unlisted", false), FACTOR);
        assert_eq!(bound_for("protocol.sird.g", false), Bound::new("a gain", 1e-6, 1.0), "SIRD's own table");
        assert_eq!(bound_for("protocol.bbr.probe_rtt_ms", false), MS);
    }
}
