//! Bad input gets a clear error naming the key, the value and what is allowed.

use fabriclab::config::Config;
use std::path::Path;

fn error(text: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match Config::from_str_with(text, &o, Path::new(".")) {
        Ok(_) => panic!("accepted bad config:\n{text}\n{overrides:?}"),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "error `{msg}` does not mention `{p}`");
    }
}

const OK: &str = "[protocol]\nname = \"sird\"\n";

#[test]
fn defaults_alone_are_valid() {
    let cfg = Config::from_str_with("", &[], Path::new(".")).unwrap();
    assert_eq!(cfg.protocol.name.as_str(), "sird");
    // The resolved config round-trips through TOML.
    let again = Config::from_str_with(&cfg.to_toml(), &[], Path::new(".")).unwrap();
    assert_eq!(cfg, again);
}

/// SIRD's NThr marks only ports facing switches (its authors' simulator marks ToR-spine links
/// alone); DCTCP's K every port; a protocol without ECN, or RED, takes no `ecn_ports`.
#[test]
fn ecn_ports_default_to_the_protocols_and_need_a_fixed_threshold() {
    use fabriclab::net::switch_config::EcnPorts;
    let resolved = |set: &[&str]| {
        let o: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        Config::from_str_with(OK, &o, Path::new(".")).unwrap().network.ecn_ports
    };
    assert_eq!(resolved(&[]), Some(EcnPorts::Fabric));
    assert_eq!(resolved(&["protocol.name=dctcp"]), Some(EcnPorts::All));
    assert_eq!(resolved(&["network.ecn_ports=\"all\""]), Some(EcnPorts::All));
    assert_eq!(resolved(&["protocol.name=homa"]), None);
    let e = error(OK, &["protocol.name=homa", "network.ecn_ports=\"fabric\""]);
    assert_mentions(&e, &["network.ecn_ports", "fabric", "without network.ecn_threshold_bytes"]);
    let red = "network.red={kmin_bytes=1000, kmax_bytes=2000, pmax=1.0, mark_at=\"enqueue\"}";
    let e = error(OK, &[red, "network.ecn_ports=\"fabric\""]);
    assert_mentions(&e, &["network.ecn_ports", "with network.red", "fabric_kmin_bytes"]);
    assert_mentions(&error(OK, &["network.ecn_ports=\"core\""]), &["network.ecn_ports", "core", "all", "fabric"]);
}

#[test]
fn unknown_keys_are_rejected() {
    assert_mentions(&error("[network]\nmtuu = 1500\n", &[]), &["network", "mtuu"]);
    assert_mentions(&error("[bogus]\nx = 1\n", &[]), &["bogus"]);
    assert_mentions(&error(OK, &["protocol.sird.bee=1"]), &["protocol.sird", "bee"]);
    assert_mentions(&error("[topology]\nkind = \"leaf_spine\"\ntorz = 3\n", &[]), &["torz"]);
    assert_mentions(&error(OK, &["run.durration_ms=3"]), &["run", "durration_ms"]);
}

#[test]
fn wrong_types_are_rejected() {
    assert_mentions(&error(OK, &["run.duration_ms=\"long\""]), &["run.duration_ms", "long"]);
    assert_mentions(&error(OK, &["network.mtu=1500.5"]), &["network.mtu"]);
    assert_mentions(&error(OK, &["protocol.name=tcp"]), &["protocol.name", "tcp", "sird", "dctcp"]);
    assert_mentions(&error(OK, &["network.load_balancing=random"]), &["network.load_balancing", "spray", "ecmp"]);
    assert_mentions(
        &error(OK, &["network.queue_accounting=until_last_byte"]),
        &["network.queue_accounting", "until_last_byte", "until_last_bit", "until_first_bit"],
    );
}

#[test]
fn out_of_range_values_name_key_value_and_range() {
    let cases: [(&str, &[&str]); 10] = [
        ("topology.host_rate_gbps=0", &["topology.host_rate_gbps", "0", "positive"]),
        ("topology.fabric_rate_gbps=-400", &["topology.fabric_rate_gbps", "-400", "positive"]),
        ("topology.hosts_per_tor=0", &["topology.hosts_per_tor", "0", ">= 1"]),
        ("network.mtu=100", &["network.mtu", "100", "[576, 9216]"]),
        ("protocol.sird.b_bdp=0", &["protocol.sird.b_bdp", "0", "a multiple in (0, 10000]"]),
        ("run.duration_ms=-1", &["run.duration_ms", "-1"]),
        ("workload.load=2", &["workload.load", "2"]),
        ("network.buffer_bytes=-5", &["network.buffer_bytes", "-5"]),
        ("network.fabric_buffer_bytes=4000", &["network.fabric_buffer_bytes", "4000", "9254"]),
        ("network.red.fabric_kmax_bytes=100", &["network.red.fabric_kmax_bytes", "100", ">= fabric_kmin_bytes (5000)"]),
    ];
    for (o, parts) in cases {
        assert_mentions(&error(OK, &[o]), parts);
    }
}

#[test]
fn smartts_base_rtt_override_must_be_a_time() {
    let smartt = "[protocol]\nname = \"smartt\"\n";
    assert_mentions(&error(smartt, &["protocol.smartt.base_rtt_us=0"]), &["protocol.smartt.base_rtt_us", "0"]);
    // A buffer for links between switches where there are none is refused, not ignored.
    let star = "[topology]\nkind = \"star\"\nhosts = 4\n[network]\nfabric_buffer_bytes = 100000\n";
    let cfg = Config::from_str_with(star, &[], Path::new(".")).unwrap();
    let err = fabriclab::sim::run(&cfg, &mut |_, _| {}).err().expect("a star has no fabric ports").to_string();
    assert_mentions(&err, &["network.fabric_buffer_bytes", "100000", "between switches"]);
    // Absent is the fabric's own base RTT; a positive value is taken.
    Config::from_str_with(smartt, &["protocol.smartt.base_rtt_us=8.653".into()], Path::new(".")).unwrap();
}

#[test]
fn fct_size_bins_must_ascend() {
    let bins = |b: &str, fct: bool| vec![format!("output.fct_bins_bytes={b}"), format!("output.fct={fct}")];
    let err = |o: Vec<String>| error(OK, &o.iter().map(String::as_str).collect::<Vec<_>>());
    assert_mentions(&err(bins("[1460, 1460]", true)), &["output.fct_bins_bytes[1]", "1460", "ascending"]);
    assert_mentions(&err(bins("[0]", true)), &["output.fct_bins_bytes[0]", "0", "positive"]);
    let no_fct = bins("[1460]", false);
    assert!(Config::from_str_with(OK, &no_fct, Path::new(".")).is_ok(), "bins without fct give slowdown_bins only");
    let ok = bins("[1460, 100000]", true);
    let cfg = Config::from_str_with(OK, &ok, Path::new(".")).unwrap();
    assert_eq!(cfg.output.fct_bin_keys(), ["le_1460", "le_100000", "gt_100000"]);
    assert_eq!([1, 1460, 1461, 100_000, 100_001].map(|s| cfg.output.fct_bin(s)), [0, 0, 1, 1, 2]);
}

#[test]
fn impossible_topologies_are_rejected() {
    assert_mentions(&error("[topology]\nkind = \"star\"\nhosts = 1\n", &[]), &["topology.hosts", "1"]);
    assert_mentions(&error("[topology]\nkind = \"torus\"\n", &[]), &["topology", "torus"]);
    assert_mentions(
        &error("[topology]\nkind = \"leaf_spine\"\ntors = 1\nhosts_per_tor = 1\n", &[]),
        &["topology.hosts_per_tor"],
    );
    assert_mentions(&error(OK, &["run.warmup_ms=20", "run.duration_ms=10"]), &["run.warmup_ms", "20"]);
}

#[test]
fn malformed_cdf_and_trace_files_are_rejected() {
    let dir = std::env::temp_dir().join(format!("fabriclab-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cdf = dir.join("bad.cdf");
    std::fs::write(&cdf, "100 0.5\n50 1.0\n").unwrap();
    let text = format!("[workload]\nkind = \"poisson\"\nsize_cdf_file = \"{}\"\n", cdf.display());
    assert_mentions(&error(&text, &[]), &["workload.size_cdf_file", "bad.cdf", "2"]);
    let missing = "[workload]\nkind = \"poisson\"\nsize_cdf_file = \"/nonexistent/x.cdf\"\n";
    assert_mentions(&error(missing, &[]), &["workload.size_cdf_file", "/nonexistent/x.cdf"]);
}

#[test]
fn bad_overrides_are_rejected() {
    assert_mentions(&error(OK, &["workload.load"]), &["workload.load", "dotted.key=value"]);
    assert_mentions(&error(OK, &["protocol.name.x=1"]), &["protocol.name"]);
}

#[test]
fn trace_errors_surface_when_the_run_is_built() {
    let dir = std::env::temp_dir().join(format!("fabriclab-cfg2-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = dir.join("t.csv");
    std::fs::write(&t, "time_us,src,dst,bytes\n0,0,999,100\n").unwrap();
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"trace\"\ntrace_file = \"{}\"\n",
        t.display()
    );
    let cfg = Config::from_str_with(&text, &[], Path::new(".")).unwrap();
    let err = fabriclab::sim::run(&cfg, &mut |_, _| {}).err().expect("trace with host 999 on 4 hosts").to_string();
    assert_mentions(&err, &["workload.trace_file", "t.csv", "999"]);
}

#[test]
fn swift_runs_on_a_trimming_fabric_only_with_its_trim_handling_on() {
    let swift = "[protocol]\nname = \"swift\"\n";
    let msg = error(swift, &["network.trimming=true"]);
    assert_mentions(&msg, &["network.trimming", "swift", "protocol.swift.trimming = true"]);
    let ok = Config::from_str_with(
        swift,
        &["network.trimming=true".into(), "protocol.swift.trimming=true".into()],
        Path::new("."),
    );
    assert!(ok.is_ok(), "{:?}", ok.err());
}

#[test]
fn swift_keeps_its_balancer_per_connection_only() {
    let msg = error("[protocol]\nname = \"swift\"\n[protocol.swift.lb]\nkind = \"reps\"\nscope = \"message\"\n", &[]);
    assert_mentions(&msg, &["protocol.swift.lb.scope", "message", "connection"]);
}

#[test]
fn only_the_window_clocked_smartt_host_stamps_entropies_at_admission() {
    for (name, table) in [("swift", "protocol.swift.lb"), ("eqds", "protocol.eqds.lb"), ("bbr", "protocol.bbr.lb")] {
        let cfg = format!("[protocol]\nname = \"{name}\"\n[{table}]\nkind = \"reps\"\nstamp = \"admission\"\n");
        assert_mentions(&error(&cfg, &[]), &[&format!("{table}.stamp"), "admission", "transmission"]);
    }
    let spray = "[protocol]\nname = \"smartt\"\n[protocol.smartt.lb]\nkind = \"spray\"\nstamp = \"transmission\"\n";
    assert_mentions(&error(spray, &[]), &["protocol.smartt.lb.stamp", "transmission", "reps"]);
    for name in ["smartt", "mprdma"] {
        let cfg = format!("[protocol]\nname = \"{name}\"\n[protocol.{name}.lb]\nstamp = \"transmission\"\n");
        assert!(Config::from_str_with(&cfg, &[], Path::new(".")).is_ok(), "{name}");
    }
}

/// The range `fabriclab protocols`, `fabriclab schema` and Python's `fl.protocols()` state for a
/// protocol parameter (`limits::describe`), parsed: (lo, lo excluded, hi, hi excluded, inf too).
fn shown_range(shown: &str) -> (f64, bool, f64, bool, bool) {
    let inf = shown.ends_with(" or inf");
    let r = shown.trim_end_matches(" or inf");
    let start = r.rfind(['[', '(']).unwrap_or_else(|| panic!("no range in `{shown}`"));
    let body = &r[start..];
    let (lo, hi) = body[1..body.len() - 1].split_once(", ").unwrap_or_else(|| panic!("`{shown}`"));
    let num = |s: &str| s.parse::<f64>().unwrap_or_else(|_| panic!("`{s}` in `{shown}`"));
    (num(lo), body.starts_with('('), num(hi), body.ends_with(')'), inf)
}

/// The default value of `key` (dotted, within `[protocol.NAME]`) as the defaults serialise it.
fn default_value(name: fabriclab::config::ProtocolName, key: &str) -> Option<toml::Value> {
    let mut cfg = Config::default();
    cfg.protocol.name = name;
    cfg.protocol.fill_defaults();
    let mut v = toml::Value::try_from(&cfg.protocol).ok()?.get(name.as_str())?.clone();
    for part in key.split('.') {
        v = v.get(part)?.clone();
    }
    Some(v)
}

/// One source of truth per bound: for every protocol parameter whose range is shown, a value just
/// outside it is refused with an error naming the key, the value and that range; its edges (or,
/// where an edge is excluded, a value just inside) are accepted, unless a rule between keys
/// refuses them, whose message then names the other key.
#[test]
fn every_protocol_parameter_is_bounded_as_shown() {
    use fabriclab::config::{limits, ProtocolName};
    let mut failures = Vec::new();
    for &p in ProtocolName::ALL {
        let name = p.as_str();
        let docs = p.docs();
        for d in &docs {
            let key = format!("protocol.{name}.{}", d.key);
            let shown = limits::describe(&key, &d.default);
            if shown.is_empty() {
                continue;
            }
            let (lo, lo_open, hi, hi_open, inf) = shown_range(&shown);
            let range = &shown[shown.rfind(['[', '(']).unwrap()..];
            let int = matches!(default_value(p, d.key), Some(toml::Value::Integer(_)));
            let fmt = |v: f64| if int { format!("{}", v as i64) } else { format!("{v:?}") };
            let step = |v: f64| if int { 1.0 } else { (v.abs() * 1e-9).max(1e-12) };
            let set = |v: String| {
                let o = vec![format!("protocol.name={name}"), format!("{key}={v}")];
                Config::from_str_with("", &o, Path::new("."))
            };
            let (out_lo, in_lo) = if lo_open { (lo, lo + step(lo)) } else { (lo - step(lo), lo) };
            let (out_hi, in_hi) = if hi_open { (hi, hi - step(hi)) } else { (hi + step(hi), hi) };
            for out in [out_lo, out_hi] {
                match set(fmt(out)) {
                    Ok(_) => failures.push(format!("{key} = {} accepted, shown as {shown}", fmt(out))),
                    Err(e) if e.key != key => {
                        failures.push(format!("{key} = {}: the error names another key: {e}", fmt(out)))
                    }
                    // Below an unsigned integer's 0 the type refuses it, naming its own range.
                    Err(e) if !e.message.contains(range) && !e.message.contains("expected an integer") => {
                        failures.push(format!("{key} = {}: the error does not state {range}: {e}", fmt(out)))
                    }
                    Err(_) => {}
                }
            }
            let mut inside = vec![fmt(in_lo), fmt(in_hi)];
            if inf {
                inside.push("inf".into());
            }
            for v in inside {
                if let Err(e) = set(v.clone()) {
                    let other = e.key != key
                        || docs.iter().any(|o| o.key != d.key && o.key.len() > 2 && e.message.contains(o.key));
                    if !other {
                        failures.push(format!("{key} = {v} refused, shown as {shown}: {e}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} bounds shown are not the bounds enforced:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A trace's messages at or after the end of the run are not injected, and said so: the run's
/// warning names how many, the first one's start and the run's end, summary.json counts them;
/// a trace none of whose messages falls within the run (one written in ms, read as us) is an
/// error naming the file and the run's duration, not a silent run of nothing.
#[test]
fn trace_messages_after_the_end_of_the_run_are_reported() {
    let dir = std::env::temp_dir().join(format!("fabriclab-after-end-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = |file: &Path| {
        let text = format!(
            "[topology]\nkind = \"star\"\nhosts = 4\n[run]\nduration_ms = 1\nwarmup_ms = 0\n\
             [workload]\nkind = \"trace\"\ntrace_file = \"{}\"\n",
            file.display()
        );
        Config::from_str_with(&text, &[], Path::new(".")).unwrap()
    };
    // One message at 5,000 us, in a 1 ms run.
    let late = dir.join("late.csv");
    std::fs::write(&late, "time_us,src,dst,bytes\n5000,1,0,1000\n").unwrap();
    let err = fabriclab::sim::run(&config(&late), &mut |_, _| {}).err().expect("nothing to inject").to_string();
    assert_mentions(
        &err,
        &[
            "workload.trace_file",
            "late.csv",
            "its one message starts",
            "1000 us",
            "run.duration_ms = 1",
            "5000 us",
            "microseconds",
        ],
    );
    // 100 messages over 5 ms: the 80 from 1,000 us on are left out.
    let long = dir.join("long.csv");
    let rows: String = (0..100).map(|i| format!("{},{},{},1000\n", i * 50, 1 + i % 3, 0)).collect();
    std::fs::write(&long, format!("time_us,src,dst,bytes\n{rows}")).unwrap();
    let out = fabriclab::sim::run(&config(&long), &mut |_, _| {}).unwrap();
    assert_eq!(out.summary.messages_started, 20);
    assert_eq!(out.summary.trace_messages_after_end, Some(80));
    assert!(out.summary.to_json().contains("\"trace_messages_after_end\": 80"));
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert_mentions(
        &out.warnings[0],
        &["80 of the 100 messages", "long.csv", "(1000 us)", "the first at 1000 us", "microseconds"],
    );
    // Within the run: counted as 0, no warning; not a trace: no count.
    std::fs::write(&long, "time_us,src,dst,bytes\n0,1,0,1000\n").unwrap();
    let out = fabriclab::sim::run(&config(&long), &mut |_, _| {}).unwrap();
    assert_eq!((out.summary.trace_messages_after_end, out.warnings.len()), (Some(0), 0));
    let _ = std::fs::remove_dir_all(&dir);
}
