//! Incast and trace workloads through the public API, and files named in the config.

use fabriclab_engine::{Validate, MS, US};
use fabriclab_workload::*;

mod common;
use common::scratch;

fn env(n_hosts: u32) -> WorkloadEnv {
    WorkloadEnv {
        n_hosts,
        host_rate_bps: 100_000_000_000,
        rack_of: vec![0; n_hosts as usize],
        core_ratio: 1.0,
        racks_per_pod: 1,
        mss: 1460,
        seed: 77,
        end: 10 * MS,
    }
}

fn drain(mut w: Workload) -> Vec<MessageSpec> {
    std::iter::from_fn(|| w.next()).collect()
}

#[test]
fn incast_with_explicit_senders_is_exact() {
    let cfg = WorkloadConfig::Incast(Incast {
        senders: None,
        receiver: 2,
        bytes: 64_000,
        start_us: 10.0,
        sender_hosts: Some(vec![0, 5, 3]),
    });
    let w = Workload::build(&cfg, &env(6)).unwrap();
    assert!((w.offered_bytes_per_s() - 3.0 * 64_000.0 / 0.01).abs() < 1e-6);
    let want: Vec<MessageSpec> = [0, 5, 3]
        .into_iter()
        .map(|src| MessageSpec { time: 10 * US, src, dst: 2, size: 64_000, incast: false })
        .collect();
    assert_eq!(drain(w), want);
}

#[test]
fn incast_defaults_draw_eight_senders() {
    let cfg = WorkloadConfig::Incast(Incast::default());
    let msgs = drain(Workload::build(&cfg, &env(16)).unwrap());
    assert_eq!(msgs.len(), 8);
    let mut srcs: Vec<u32> = msgs.iter().map(|m| m.src).collect();
    srcs.sort_unstable();
    srcs.dedup();
    assert_eq!(srcs.len(), 8);
    assert!(msgs.iter().all(|m| m.dst == 0 && m.src != 0 && m.time == 0 && m.size == 1_000_000 && !m.incast));
    assert_eq!(msgs, drain(Workload::build(&cfg, &env(16)).unwrap()));
    let other_seed = WorkloadEnv { seed: 78, ..env(16) };
    assert_ne!(msgs, drain(Workload::build(&cfg, &other_seed).unwrap()));
}

#[test]
fn incast_errors_name_the_key() {
    let cfg = WorkloadConfig::Incast(Incast { receiver: 16, ..Incast::default() });
    assert_eq!(Workload::build(&cfg, &env(16)).err().unwrap().key, "workload.receiver");
    let cfg = WorkloadConfig::Incast(Incast { senders: Some(16), ..Incast::default() });
    assert_eq!(Workload::build(&cfg, &env(16)).err().unwrap().key, "workload.senders");
    let cfg = WorkloadConfig::Incast(Incast { sender_hosts: Some(vec![3, 3]), ..Incast::default() });
    assert_eq!(Workload::build(&cfg, &env(16)).err().unwrap().key, "workload.sender_hosts");
}

#[test]
fn trace_is_replayed_exactly() {
    let path = scratch("ok.csv", "time_us,src,dst,bytes\n0,1,0,1000\n1.5,2,0,2000\n0.25,3,1,10\n");
    let mut cfg = WorkloadConfig::Trace(Trace { trace_file: Some("ok.csv".into()), ..Trace::default() });
    cfg.resolve_paths(path.parent().unwrap());
    assert!(cfg.validate().is_ok());
    let w = Workload::build(&cfg, &env(4)).unwrap();
    assert!((w.offered_bytes_per_s() - 3010.0 / 0.01).abs() < 1e-6);
    let m = |time, src, dst, size| MessageSpec { time, src, dst, size, incast: false };
    assert_eq!(drain(w), vec![m(0, 1, 0, 1000), m(250_000, 3, 1, 10), m(1_500_000, 2, 0, 2000)]);
}

#[test]
fn trace_errors_name_the_file_and_line() {
    let path = scratch("bad.csv", "time_us,src,dst,bytes\n0,1,0,1000\n\n2,1,4,10\n");
    let cfg = WorkloadConfig::Trace(Trace { trace_file: Some(path.clone()), ..Trace::default() });
    let e = Workload::build(&cfg, &env(4)).err().unwrap();
    assert_eq!(e.key, "workload.trace_file");
    assert!(e.message.contains(&format!("{}:4:", path.display())), "{}", e.message);
    let missing = WorkloadConfig::Trace(Trace { trace_file: Some("/nonexistent/x.csv".into()), ..Trace::default() });
    let e = Workload::build(&missing, &env(4)).err().unwrap();
    assert_eq!(e.key, "workload.trace_file");
    assert!(e.message.contains("/nonexistent/x.csv"), "{}", e.message);
}

#[test]
fn cdf_file_with_a_unit_is_used_for_sizes() {
    let path = scratch("pkts.cdf", "# sizes in packets\n1.5\n1 0.5\n2 1.0\n");
    let mut cfg = WorkloadConfig::Poisson(Poisson {
        size_cdf_file: Some("pkts.cdf".into()),
        size_cdf_unit_bytes: 1460,
        ..Poisson::default()
    });
    cfg.resolve_paths(path.parent().unwrap());
    assert!(cfg.validate().is_ok());
    let WorkloadConfig::Poisson(p) = &cfg else { panic!() };
    assert_eq!(p.size_dist, None, "no default added when a CDF file is set");
    let mut w = Workload::build(&cfg, &env(4)).unwrap();
    assert_eq!(w.size_dist().unwrap().mean(), 1.5 * 1460.0);
    let mut seen = [false; 2];
    for _ in 0..1000 {
        let m = w.next().unwrap();
        assert!(m.size == 1460 || m.size == 2920, "{m:?}");
        seen[(m.size / 1460 - 1) as usize] = true;
    }
    assert_eq!(seen, [true, true]);
}

#[test]
fn bad_cdf_file_fails_validation_with_path_and_line() {
    let path = scratch("bad.cdf", "10 0.5\n5 1.0\n");
    let cfg = WorkloadConfig::Poisson(Poisson { size_cdf_file: Some(path.clone()), ..Poisson::default() });
    for e in [cfg.validate().unwrap_err(), Workload::build(&cfg, &env(4)).err().unwrap()] {
        assert_eq!(e.key, "workload.size_cdf_file");
        assert!(e.message.contains(&format!("{}:2:", path.display())), "{}", e.message);
    }
}

#[test]
fn a_byte_order_mark_before_a_trace_or_cdf_is_not_part_of_its_first_line() {
    let path = scratch("bom.csv", "\u{feff}time_us,src,dst,bytes\n0,1,0,1000\n");
    let mut cfg = WorkloadConfig::Trace(Trace { trace_file: Some("bom.csv".into()), ..Trace::default() });
    cfg.resolve_paths(path.parent().unwrap());
    let w = Workload::build(&cfg, &env(4)).unwrap();
    assert_eq!(drain(w).len(), 1, "the header with a BOM is still the header");
    let cdf = scratch("bom-cdf.txt", "\u{feff}100 0.5\n1000 1.0\n");
    let dist = fabriclab_workload::cdf::SizeDist::from_file(&cdf, 1, "workload.size_cdf_file").unwrap();
    assert_eq!(dist.max(), 1000);
}
