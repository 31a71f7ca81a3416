//! Fuzzing the configuration: arbitrary values (extreme floats, huge and
//! negative integers, wrong types) for every key either get an error that
//! names a key, in the project's words, or are accepted and then run, at a
//! tiny scale, without a panic and within a bound on events.
//!
//! "Never hangs" is a bound on simulated work, not on wall time: the run's
//! duration is capped by the test so that a link carries a few packets'
//! worth, and the run is stopped (and the case fails) past an event budget.

use fabriclab::config::{limits, Config, ProtocolName};
use proptest::prelude::*;
use std::ops::ControlFlow;
use std::path::Path;

/// Small fabrics and workloads of every kind, each with every optional table
/// present so that all their keys can be drawn.
const BASES: &[&str] = &[
    "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"poisson\"\nload = 0.5\n[workload.incast]\nsenders = 2\n",
    "[topology]\nkind = \"leaf_spine\"\ntors = 2\nhosts_per_tor = 2\nspines = 2\n\
     [[topology.link_overrides]]\nbetween = [\"tor0\", \"spine1\"]\nrate_gbps = 50.0\ndelay_ns = 100.0\n\
     [workload]\nkind = \"incast\"\nsenders = 3\nbytes = 20000\n\
     [[network.events]]\nat_us = 5.0\nlink = [\"tor0\", \"spine0\"]\naction = \"rate\"\nrate_gbps = 40.0\n\
     reroute_after_us = 3.0\n",
    "[topology]\nkind = \"fat_tree\"\nk = 4\ntiers = 2\nhosts_per_tor = 1\n[workload]\nkind = \"permutation\"\nbytes = 20000\n\
     [network.shared_buffer]\n[network.pfc]\n[network.int]\n",
    "[topology]\nkind = \"dumbbell\"\nhosts_left = 2\nhosts_right = 2\n[workload]\nkind = \"all_to_all\"\nbytes = 5000\n\
     [network.red]\n[output]\ntraces = [\"cwnd\"]\ntrace_hosts = [0]\n",
    "[topology]\nkind = \"star\"\nhosts = 4\n[workload]\nkind = \"ring_allreduce\"\nbytes = 40000\n[network.control_class]\n",
];

/// Every numeric key of `base` with protocol `p`'s table filled in; none
/// where the two do not go together (ExpressPass's credit shaping and a
/// control class).
fn keys(base: &str, p: ProtocolName) -> Vec<String> {
    let set = [format!("protocol.name={}", p.as_str())];
    let Ok(mut cfg) = Config::from_str_with(base, &set, Path::new(".")) else { return Vec::new() };
    cfg.protocol.fill_defaults();
    // Entries of arrays cannot be set with `--set`; their bounds are checked all the same.
    limits::numeric_keys(&cfg).into_iter().map(|(k, _)| k).filter(|k| !k.contains('[')).collect()
}

/// A value as `--set` would take it: TOML literals of every kind.
fn value() -> impl Strategy<Value = String> {
    let float = prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e308),
        Just(-1e308),
        Just(-0.0),
        Just(1e-300),
        Just(1e30),
        Just(1e13),
        Just(1e-10),
        any::<f64>(),
        -10.0f64..10.0,
        0.0f64..1e6,
    ]
    .prop_map(|v| {
        if v.is_nan() {
            "nan".to_string()
        } else if v.is_infinite() {
            if v > 0.0 { "inf" } else { "-inf" }.to_string()
        } else {
            format!("{v:e}")
        }
    });
    let int = prop_oneof![
        any::<i64>(),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(0),
        Just(-1),
        Just(1 << 32),
        Just(1 << 20),
        0i64..100,
    ]
    .prop_map(|v| v.to_string());
    // Most hostile values are refused; a scale of the key's own value is
    // mostly accepted, so that runs near the bounds are exercised too.
    let scale = prop_oneof![Just(0.0), Just(1e-3), Just(0.1), Just(0.5), Just(2.0), Just(10.0), Just(1e3), 0.0f64..4.0]
        .prop_map(|f| format!("*{f:e}"));
    prop_oneof![
        12 => scale,
        4 => float,
        4 => int,
        1 => Just("\"ten\"".to_string()),
        1 => Just("true".to_string()),
        1 => Just("[1, 2]".to_string()),
        1 => Just("18446744073709551615".to_string()),
    ]
}

/// Words of Rust's type system that an error must not show a user.
const RUST_WORDS: &[&str] = &["f64", "u32", "u64", "u8", "i64", "invalid type", "unit variant", "usize"];

/// `key`'s value in `base` with protocol `p`, times `f` (an integer stays one).
fn scaled(base: &str, p: ProtocolName, key: &str, f: f64) -> String {
    let set = [format!("protocol.name={}", p.as_str())];
    let mut cfg = Config::from_str_with(base, &set, Path::new(".")).expect("the bases are valid");
    cfg.protocol.fill_defaults();
    let mut v = toml::Value::try_from(&cfg).expect("a valid config serializes");
    for seg in key.split('.') {
        v = v.get(seg).cloned().unwrap_or(toml::Value::Float(1.0));
    }
    match v {
        toml::Value::Integer(i) => format!("{}", (i as f64 * f).round() as i64),
        toml::Value::Float(x) => format!("{:e}", x * f),
        _ => format!("{f:e}"),
    }
}

/// Whether the case ran a simulation (true) or was refused (false).
fn check_case(base: usize, proto: usize, picks: &[(usize, String)]) -> Result<bool, TestCaseError> {
    let p = ProtocolName::ALL[proto % ProtocolName::ALL.len()];
    let base = BASES[base % BASES.len()];
    let all = keys(base, p);
    if all.is_empty() {
        return Ok(false);
    }
    let mut set = vec![format!("protocol.name={}", p.as_str())];
    for (i, v) in picks {
        let key = &all[i % all.len()];
        let v = match v.strip_prefix('*') {
            Some(f) => scaled(base, p, key, f.parse().unwrap_or(1.0)),
            None => v.clone(),
        };
        set.push(format!("{key}={v}"));
    }
    // Every protocol's table, so the chosen keys of other protocols exist too.
    match Config::from_str_with(base, &set, Path::new(".")) {
        Err(e) => {
            let text = e.to_string();
            prop_assert!(!e.key.is_empty(), "no key named: {text} (from {set:?})");
            for w in RUST_WORDS {
                prop_assert!(!text.contains(&format!(" {w}")), "Rust words in: {text} (from {set:?})");
            }
        }
        Ok(mut cfg) => {
            // Tiny scale: about 2,000 full packets' worth at the fastest link.
            let fastest = cfg.topology.host_rate_gbps().max(1.0);
            let cap_ms = 0.02 * 100.0 / fastest.max(100.0);
            cfg.run.duration_ms = cfg.run.duration_ms.min(cap_ms);
            cfg.run.warmup_ms = cfg.run.warmup_ms.min(cfg.run.duration_ms / 2.0);
            // Work the memory estimate would refuse on a small machine is not run.
            let est = fabriclab::estimate::estimate(&cfg);
            if est.total_bytes() > 1e9 {
                return Ok(false);
            }
            // Never past a bound: 2M events, or 4x the estimate's count for a
            // big fabric (the run reports progress every 2^18 events).
            let budget = (2e6f64).max(4.0 * est.events);
            let max_calls = (budget / f64::from(1u32 << 18)).ceil() as u64;
            let mut calls = 0;
            let out = fabriclab::sim::run_stoppable(&cfg, &mut |_, _| {
                calls += 1;
                if calls > max_calls {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            });
            match out {
                Ok(Some(_)) => return Ok(true),
                Ok(None) => prop_assert!(false, "more than {budget:.0} events at tiny scale (from {set:?})"),
                // Checks that need the fabric (host ids, counts) come at build time.
                Err(e) => prop_assert!(!e.key.is_empty(), "no key named: {e} (from {set:?})"),
            }
        }
    }
    Ok(false)
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// One to three keys set to arbitrary values. A fixed seed: CI explores
/// the same cases on every run, so a failure is reproducible, and a finding
/// becomes an explicit case below. To search further:
/// `FUZZ_SEED=<n> FUZZ_CASES=<n> cargo test --release --test fuzz_config`.
#[test]
fn arbitrary_values_are_refused_by_key_or_run_within_bounds() {
    use proptest::test_runner::{RngSeed, TestRunner};
    let cases = env_or("FUZZ_CASES", 3000) as u32;
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(env_or("FUZZ_SEED", 0x5eed_f00d)),
        ..ProptestConfig::default()
    });
    let ran = std::cell::Cell::new(0u32);
    let strategy = (0usize..BASES.len(), 0usize..64, proptest::collection::vec((any::<usize>(), value()), 1..4));
    runner
        .run(&strategy, |(base, proto, picks)| {
            ran.set(ran.get() + u32::from(check_case(base, proto, &picks)?));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    // The search must reach the simulator, not only the validator.
    assert!(ran.get() >= cases / 20, "only {} of {cases} cases ran", ran.get());
}

/// Every key of every base and protocol, once each with hostile values:
/// the exhaustive complement of the random search above (validation only).
#[test]
fn every_key_refuses_or_survives_extreme_values() {
    for base in BASES {
        for &p in ProtocolName::ALL {
            let all = keys(base, p);
            for key in &all {
                // Above every bound: refused, naming exactly this key.
                let set = [format!("protocol.name={}", p.as_str()), format!("{key}=1e30")];
                let e = Config::from_str_with(base, &set, Path::new(".")).expect_err(key);
                // Or a key checked against it that names it (Homa's busy timeout >= its timeout).
                let leaf = key.rsplit('.').next().unwrap_or(key);
                assert!(&e.key == key || e.message.contains(leaf), "{key}: {e}");
                // Refused naming a key in our words, or accepted (the runs are the random test's job).
                for v in ["-1", "nan", "\"ten\"", "1e-300", "-0.0", "18446744073709551615"] {
                    let set = [format!("protocol.name={}", p.as_str()), format!("{key}={v}")];
                    if let Err(e) = Config::from_str_with(base, &set, Path::new(".")) {
                        let text = e.to_string();
                        assert!(!e.key.is_empty(), "no key named: {text} (from {set:?})");
                        assert!(!RUST_WORDS.iter().any(|w| text.contains(&format!(" {w}"))), "{text}");
                    }
                }
            }
        }
    }
}

/// Every key of every base and protocol set once to each hostile value and,
/// where accepted, run at a tiny scale. This found a pacing timer that
/// wrapped (ExpressPass alpha = 1e-300) and a PFC panic on packets made at a
/// switch (Bolt with cc_thresh_mtu = 0).
#[test]
fn every_key_with_hostile_values_runs_within_bounds() {
    for (b, base) in BASES.iter().enumerate() {
        for (pi, &p) in ProtocolName::ALL.iter().enumerate() {
            let n = keys(base, p).len();
            for i in 0..n {
                for v in ["-1", "nan", "\"ten\"", "1e-300", "0"] {
                    check_case(b, pi, &[(i, v.to_string())]).unwrap_or_else(|e| panic!("{e}"));
                }
            }
        }
    }
}

/// Findings of the random search, kept as explicit cases.
#[test]
fn earlier_findings_are_refused_by_key() {
    // A BDP near 2^63 made the derived ECN threshold too large for TOML and
    // the error spoke of "u64".
    let base = BASES[0];
    for p in ["sird", "dctcp", "homa"] {
        let set = [format!("protocol.name={p}"), "network.bdp_bytes=9223372036854775807".to_string()];
        let e = Config::from_str_with(base, &set, Path::new(".")).expect_err(p);
        assert_eq!(e.key, "network.bdp_bytes", "{e}");
        assert!(!RUST_WORDS.iter().any(|w| e.to_string().contains(&format!(" {w}"))), "{e}");
    }
}
