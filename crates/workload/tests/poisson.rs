//! Poisson all-to-all workloads: offered rate, receivers, order, determinism,
//! core load normalisation and the incast overlay.

use fabriclab_engine::{Time, MS, S};
use fabriclab_workload::*;
use std::collections::{BTreeMap, HashSet};

fn env(n_hosts: u32, rate_gbps: u64, rack_size: u32, seed: u64, end: Time) -> WorkloadEnv {
    WorkloadEnv {
        n_hosts,
        host_rate_bps: rate_gbps * 1_000_000_000,
        rack_of: (0..n_hosts).map(|h| h / rack_size).collect(),
        core_ratio: 1.0,
        racks_per_pod: 1,
        mss: 1460,
        seed,
        end,
    }
}

fn poisson(load: f64, size_bytes: Option<u64>) -> Poisson {
    Poisson { load, size_bytes, ..Poisson::default() }
}

fn all(cfg: &Poisson, env: &WorkloadEnv) -> Vec<MessageSpec> {
    let mut w = Workload::build(&WorkloadConfig::Poisson(cfg.clone()), env).unwrap();
    std::iter::from_fn(|| w.next()).collect()
}

fn assert_ordered_and_valid(msgs: &[MessageSpec], env: &WorkloadEnv) {
    for pair in msgs.windows(2) {
        assert!(pair[0].time <= pair[1].time, "time goes back: {pair:?}");
    }
    for m in msgs {
        assert!(m.time < env.end && m.src < env.n_hosts && m.dst < env.n_hosts, "{m:?}");
        assert_ne!(m.src, m.dst, "{m:?}");
        assert!(m.size > 0);
    }
}

#[test]
fn offered_rate_matches_the_load_per_host() {
    // 16 hosts at 10 Gbps, load 0.5, 10 kB messages: 62,500 messages per host per second.
    let env = env(16, 10, 4, 7, S);
    let cfg = poisson(0.5, Some(10_000));
    let msgs = all(&cfg, &env);
    assert_ordered_and_valid(&msgs, &env);
    let want = 0.5 * 10e9 / 8.0; // bytes per host per second
    let w = Workload::build(&WorkloadConfig::Poisson(cfg), &env).unwrap();
    assert!((w.offered_bytes_per_s() - 16.0 * want).abs() < 1e-6 * want);
    let mut per_host = [0u64; 16];
    for m in &msgs {
        assert!(!m.incast);
        assert_eq!(m.size, 10_000);
        per_host[m.src as usize] += m.size;
    }
    for (h, &b) in per_host.iter().enumerate() {
        let rel = (b as f64 - want).abs() / want; // 1 s window
        assert!(rel < 0.02, "host {h}: {b} bytes/s vs {want}");
    }
    let total: u64 = per_host.iter().sum();
    assert!((total as f64 - 16.0 * want).abs() / (16.0 * want) < 0.005, "{total}");
}

#[test]
fn receivers_are_uniform_among_the_other_hosts() {
    let env = env(8, 10, 4, 3, S / 2);
    let msgs = all(&poisson(0.5, Some(10_000)), &env);
    // Each host sends ~31,250 messages, ~4,464 to each of 7 receivers (sd ~67).
    let mut counts = [[0u32; 8]; 8];
    for m in &msgs {
        counts[m.src as usize][m.dst as usize] += 1;
    }
    for (s, row) in counts.iter().enumerate() {
        assert_eq!(row[s], 0);
        let sent: u32 = row.iter().sum();
        let expect = sent as f64 / 7.0;
        for (d, &c) in row.iter().enumerate().filter(|&(d, _)| d != s) {
            let rel = (c as f64 - expect).abs() / expect;
            assert!(rel < 0.06, "{s}->{d}: {c} vs {expect}");
        }
    }
}

#[test]
fn message_rate_follows_the_size_distribution() {
    // With the default WKc sizes, messages per second = load * rate / mean size.
    let env = env(144, 100, 16, 11, 100 * MS);
    let cfg = Poisson::default();
    let msgs = all(&cfg, &env);
    assert_ordered_and_valid(&msgs, &env);
    let mean = SizeDist::builtin(BuiltinDist::Wkc).mean();
    let expect = 144.0 * 0.5 * 100e9 / 8.0 / mean * 0.1; // ~35,000 messages
    let rel = (msgs.len() as f64 - expect).abs() / expect;
    assert!(rel < 0.02, "{} messages vs {expect}", msgs.len());
    let w = Workload::build(&WorkloadConfig::Poisson(cfg), &env).unwrap();
    assert_eq!(w.size_dist().unwrap().mean(), mean);
}

#[test]
fn same_seed_same_sequence_different_seed_different_sequence() {
    let cfg = Poisson { incast: Some(IncastOverlay::default()), ..Poisson::default() };
    let a = all(&cfg, &env(64, 100, 16, 5, 20 * MS));
    let b = all(&cfg, &env(64, 100, 16, 5, 20 * MS));
    let c = all(&cfg, &env(64, 100, 16, 6, 20 * MS));
    assert!(a.len() > 2_000, "{}", a.len());
    assert!(a.iter().any(|m| m.incast));
    assert_eq!(a, b);
    assert_ne!(a[..100], c[..100]);
}

#[test]
fn a_longer_run_extends_the_same_sequence() {
    let cfg = poisson(0.7, None);
    let short = all(&cfg, &env(32, 100, 8, 5, 10 * MS));
    let long = all(&cfg, &env(32, 100, 8, 5, 20 * MS));
    assert_eq!(short[..], long[..short.len()]);
    assert!(long.len() > short.len());
}

#[test]
fn core_reference_scales_by_core_ratio_over_cross_fraction() {
    // SIRD "core": 144 hosts, 9 racks of 16, 2:1 oversubscription.
    let mut e = env(144, 100, 16, 1, 10 * MS);
    e.core_ratio = 0.5;
    let host_cfg = poisson(0.6, Some(100_000));
    let core_cfg = Poisson { load_reference: LoadReference::Core, ..host_cfg.clone() };
    let f_cross = 128.0 / 143.0;
    assert!((cross_rack_fraction(&e.rack_of) - f_cross).abs() < 1e-15);
    let host_rate = per_host_bytes_per_s(&host_cfg, &e).unwrap();
    let core_rate = per_host_bytes_per_s(&core_cfg, &e).unwrap();
    assert_eq!(host_rate, 0.6 * 100e9 / 8.0);
    assert!((core_rate - host_rate * 0.5 / f_cross).abs() < 1e-6, "{core_rate}");
    let w = Workload::build(&WorkloadConfig::Poisson(core_cfg.clone()), &e).unwrap();
    assert!((w.offered_bytes_per_s() - 144.0 * core_rate).abs() < 1e-3);
    // And the generated bytes follow: ~100k messages of 100 kB.
    let e = WorkloadEnv { end: 100 * MS, ..e };
    let bytes: u64 = all(&core_cfg, &e).iter().map(|m| m.size).sum();
    let want = 144.0 * core_rate * 0.1;
    assert!((bytes as f64 - want).abs() / want < 0.02, "{bytes} vs {want}");
}

#[test]
fn core_reference_with_one_rack_is_an_error() {
    let cfg = Poisson { load_reference: LoadReference::Core, ..Poisson::default() };
    let e = Workload::build(&WorkloadConfig::Poisson(cfg.clone()), &env(16, 100, 16, 1, MS)).err().unwrap();
    assert_eq!(e.key, "workload.load_reference");
    let mut bad = env(16, 100, 4, 1, MS);
    bad.core_ratio = 0.0;
    let e = Workload::build(&WorkloadConfig::Poisson(cfg), &bad).err().unwrap();
    assert_eq!(e.key, "workload.load_reference");
}

#[test]
fn incast_overlay_carries_its_share_in_full_events() {
    // 32 hosts at 10 Gbps, load 0.5: 20 GB/s in total, 7% of it in events of
    // 30 x 500 kB, i.e. one event every ~10.7 ms.
    let e = env(32, 10, 8, 9, 2 * S);
    let overlay = IncastOverlay::default();
    let cfg = Poisson { incast: Some(overlay.clone()), ..poisson(0.5, Some(100_000)) };
    let msgs = all(&cfg, &e);
    assert_ordered_and_valid(&msgs, &e);
    let total_rate = 32.0 * 0.5 * 10e9 / 8.0;
    let w = Workload::build(&WorkloadConfig::Poisson(cfg), &e).unwrap();
    assert!((w.offered_bytes_per_s() - total_rate).abs() < 1e-3);

    let incast_bytes: u64 = msgs.iter().filter(|m| m.incast).map(|m| m.size).sum();
    let total_bytes: u64 = msgs.iter().map(|m| m.size).sum();
    let share = incast_bytes as f64 / total_bytes as f64;
    assert!((share - 0.07).abs() / 0.07 < 0.02, "incast share {share}");
    assert!((total_bytes as f64 - 2.0 * total_rate).abs() / (2.0 * total_rate) < 0.02, "{total_bytes}");

    // Events: 30 messages at one instant, in a row, distinct senders, one receiver not among them.
    let mut events: BTreeMap<Time, Vec<MessageSpec>> = BTreeMap::new();
    let mut i = 0;
    while i < msgs.len() {
        if msgs[i].incast {
            let burst: Vec<MessageSpec> = msgs[i..].iter().take_while(|m| m.incast).copied().collect();
            assert_eq!(burst.len(), 30, "an incast event is emitted in one burst");
            assert!(events.insert(burst[0].time, burst.clone()).is_none());
            i += burst.len();
        } else {
            i += 1;
        }
    }
    let period = 30.0 * 500_000.0 / (0.07 * total_rate) * S as f64;
    let times: Vec<Time> = events.keys().copied().collect();
    let expected_events = ((2.0 * S as f64 - times[0] as f64) / period).ceil() as usize;
    assert_eq!(times.len(), expected_events);
    assert!((times[0] as f64) < period);
    for pair in times.windows(2) {
        assert!(((pair[1] - pair[0]) as f64 - period).abs() <= 1.0, "{pair:?}");
    }
    let mut receivers = HashSet::new();
    for (t, ev) in &events {
        let dst = ev[0].dst;
        let senders: HashSet<u32> = ev.iter().map(|m| m.src).collect();
        assert_eq!(senders.len(), 30, "at {t}");
        assert!(!senders.contains(&dst));
        assert!(ev.iter().all(|m| m.time == *t && m.dst == dst && m.size == 500_000));
        receivers.insert(dst);
    }
    assert!(receivers.len() > 10, "receivers vary: {receivers:?}");
}

#[test]
fn build_checks_the_fabric() {
    let e = Workload::build(&WorkloadConfig::default(), &env(1, 100, 1, 1, MS)).err().unwrap();
    assert_eq!(e.key, "workload.kind");
    let cfg = Poisson { incast: Some(IncastOverlay::default()), ..Poisson::default() };
    let e = Workload::build(&WorkloadConfig::Poisson(cfg), &env(30, 100, 10, 1, MS)).err().unwrap();
    assert_eq!(e.key, "workload.incast.senders");
    let e = Workload::build(&WorkloadConfig::Poisson(poisson(2.0, None)), &env(4, 100, 2, 1, MS)).err().unwrap();
    assert_eq!(e.key, "workload.load");
    let mut zero_rate = env(4, 100, 2, 1, MS);
    zero_rate.host_rate_bps = 0;
    assert!(Workload::build(&WorkloadConfig::default(), &zero_rate).is_err());
}

#[test]
fn zero_length_run_has_no_messages() {
    let cfg = Poisson { incast: Some(IncastOverlay::default()), ..Poisson::default() };
    let mut w = Workload::build(&WorkloadConfig::Poisson(cfg), &env(32, 100, 8, 1, 0)).unwrap();
    assert_eq!(w.next(), None);
    assert_eq!(w.next(), None);
}

#[test]
fn two_hosts_always_send_to_each_other() {
    let msgs = all(&poisson(0.5, Some(1000)), &env(2, 10, 1, 1, MS));
    assert!(msgs.len() > 100);
    assert!(msgs.iter().all(|m| m.dst == 1 - m.src));
}

#[test]
fn senders_and_receivers_restrict_the_pairs_and_receivers_load_is_the_downlinks() {
    // Bolt's Fig. 4.13: 5 senders to host 0 at 80% of its 10 Gbps link, 10 kB messages.
    let e = env(16, 10, 4, 3, S);
    let senders = vec![3, 5, 7, 9, 11];
    let cfg = Poisson {
        senders: Some(senders.clone()),
        receivers: Some(vec![0]),
        load_reference: LoadReference::Receivers,
        ..poisson(0.8, Some(10_000))
    };
    let msgs = all(&cfg, &e);
    assert_ordered_and_valid(&msgs, &e);
    assert!(msgs.iter().all(|m| senders.contains(&m.src) && m.dst == 0), "only the senders, only to host 0");
    let per_sender = per_host_bytes_per_s(&cfg, &e).unwrap();
    assert!((per_sender - 0.8 * 10e9 / 8.0 / 5.0).abs() < 1e-6);
    let bytes: u64 = msgs.iter().map(|m| m.size).sum();
    let want = 0.8 * 10e9 / 8.0; // one second of 80% of the downlink
    assert!((bytes as f64 - want).abs() / want < 0.02, "{bytes} vs {want}");
    let srcs: HashSet<u32> = msgs.iter().map(|m| m.src).collect();
    assert_eq!(srcs.len(), 5, "every sender sends");
}

#[test]
fn a_receiver_list_draws_among_the_others_and_all_hosts_listed_is_the_default() {
    let e = env(8, 10, 4, 5, 20 * MS);
    let base = poisson(0.5, Some(10_000));
    let listed = Poisson { senders: Some((0..8).collect()), receivers: Some((0..8).collect()), ..base.clone() };
    assert_eq!(all(&base, &e), all(&listed, &e), "listing every host changes nothing");
    // Senders that are also receivers never send to themselves and reach every other receiver.
    let cfg = Poisson { senders: Some(vec![1, 2]), receivers: Some(vec![1, 2, 6]), ..base };
    let msgs = all(&cfg, &e);
    assert_ordered_and_valid(&msgs, &e);
    let pairs: HashSet<(u32, u32)> = msgs.iter().map(|m| (m.src, m.dst)).collect();
    assert_eq!(pairs, HashSet::from([(1, 2), (1, 6), (2, 1), (2, 6)]));
}

#[test]
fn bad_sender_and_receiver_lists_name_the_key() {
    let e = env(8, 10, 4, 1, MS);
    let build = |senders: Option<Vec<u32>>, receivers: Option<Vec<u32>>| {
        let cfg = Poisson { senders, receivers, ..poisson(0.5, Some(10_000)) };
        Workload::build(&WorkloadConfig::Poisson(cfg), &e).err().map(|e| (e.key.to_string(), e.to_string()))
    };
    let (k, m) = build(Some(vec![]), None).unwrap();
    assert_eq!(k, "workload.senders", "{m}");
    let (k, m) = build(None, Some(vec![1, 2, 1])).unwrap();
    assert_eq!(k, "workload.receivers");
    assert!(m.contains("1 appears twice"), "{m}");
    let (k, m) = build(Some(vec![1, 8]), None).unwrap();
    assert_eq!(k, "workload.senders");
    assert!(m.contains('8') && m.contains("below 8"), "{m}");
    let (k, m) = build(Some(vec![1, 2]), Some(vec![2])).unwrap();
    assert_eq!(k, "workload.receivers");
    assert!(m.contains("sender 2"), "{m}");
    let cfg = Poisson { receivers: Some(vec![0]), incast: Some(IncastOverlay::default()), ..Poisson::default() };
    let err = Workload::build(&WorkloadConfig::Poisson(cfg), &env(64, 10, 8, 1, MS)).err().unwrap();
    assert_eq!(err.key, "workload.receivers");
}
