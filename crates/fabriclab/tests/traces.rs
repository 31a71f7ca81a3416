//! Transport traces (`[output] traces`, docs/output.md): they change nothing
//! in a run, record what the senders see, and reject bad settings by key.

mod common;

use common::{config, dumbbell, lone_run, simulate, star10};
use fabriclab::metrics::trace::{TraceKind, TraceRecord};
use fabriclab::metrics::Summary;
use fabriclab::sim::base_rtts;

const BOTH: &str = "output.traces=[\"cwnd\", \"rtt\"]";

/// A 4:1 incast of 300 KB each on a 10 Gbps star: windows shrink, RTTs grow.
fn incast(protocol: &str) -> String {
    star10(protocol, 5, 5.0) + "[workload]\nkind = \"incast\"\nreceiver = 0\nsenders = 4\nbytes = 300000\n"
}

fn untraced(s: &Summary) -> Summary {
    Summary { rtt_us: None, cwnd: None, ..s.without_wall_clock() }
}

fn rows(traces: &[TraceRecord], kind: TraceKind) -> Vec<&TraceRecord> {
    traces.iter().filter(|r| r.kind == kind).collect()
}

#[test]
fn tracing_changes_no_result_and_every_window_sender_reports() {
    // (protocol, extra setting, whether it measures RTTs): HPCC's window is rate-derived, no RTT.
    let cases = [
        ("dctcp", "", true),
        ("swift", "", true),
        ("smartt", "", true),
        ("mprdma", "", true),
        ("eqds", "protocol.eqds.cwnd_cap=\"smartt\"", true),
        ("bolt", "", true),
        ("bbr", "", true),
        ("hpcc", "", false),
    ];
    for (protocol, extra, measures_rtt) in cases {
        let mut set = vec![BOTH];
        if !extra.is_empty() {
            set.push(extra);
        }
        let text = incast(protocol);
        let off = simulate(&text, &set[1..]);
        let on = simulate(&text, &set);
        assert!(off.traces.is_empty() && off.summary.rtt_us.is_none() && off.summary.cwnd.is_none());
        assert_eq!(untraced(&on.summary), untraced(&off.summary), "{protocol}: tracing changed the run");
        assert_eq!(on.messages, off.messages, "{protocol}");
        let (cwnd, rtt) = (rows(&on.traces, TraceKind::Cwnd), rows(&on.traces, TraceKind::Rtt));
        let senders: std::collections::BTreeSet<u32> = cwnd.iter().map(|r| r.host).collect();
        assert_eq!(senders.into_iter().collect::<Vec<_>>(), vec![1, 2, 3, 4], "{protocol}");
        assert!(on.traces.windows(2).all(|w| w[0].time <= w[1].time), "{protocol}: rows in time order");
        let s = on.summary.rtt_us.clone().unwrap();
        assert_eq!(s.count as usize, rtt.len(), "{protocol}: interval 0 keeps every RTT sample");
        assert_eq!(s.count > 0, measures_rtt, "{protocol}");
        if measures_rtt {
            assert!(s.min > 0.0 && s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max, "{protocol}: {s:?}");
        }
        let c = on.summary.cwnd.clone().unwrap();
        assert_eq!((c.flows, c.samples as usize), (4, cwnd.len()), "{protocol}");
        assert!(c.jain > 0.0 && c.jain <= 1.0 + 1e-12, "{protocol}: {c:?}");
    }
}

#[test]
fn an_unloaded_packet_sees_the_base_rtt() {
    // One MSS message over an empty dumbbell: SMaRTT's RTT sample is the
    // fabric's base RTT (a full data packet out, a control packet back). A
    // second message 100 us later keeps the run going until the ACK is back.
    let base = dumbbell("smartt");
    let t = common::trace(&[(0.0, 0, 1, 1460), (100.0, 0, 1, 1460)]);
    let out = simulate(&format!("{base}{}", common::trace_workload(&t)), &[BOTH]);
    let rtt = rows(&out.traces, TraceKind::Rtt);
    assert_eq!(rtt.len(), 1, "the second ACK ends the run before it reaches the sender");
    let cfg = config(&(base + "[workload]\nkind = \"incast\"\nsenders = 1\nreceiver = 1\nbytes = 1\n"), &[]);
    let &(_, want) = base_rtts(&cfg).unwrap().iter().max_by_key(|(hops, _)| *hops).unwrap();
    assert_eq!(rtt[0].value as u64, want);
    assert_eq!(out.summary.rtt_us.unwrap().min, want as f64 / 1e6);
}

#[test]
fn dctcp_starts_at_its_initial_window_and_grows_in_slow_start() {
    let out = lone_run(&dumbbell("dctcp"), 0, 1, 1_000_000, &[BOTH]);
    let cwnd: Vec<f64> = rows(&out.traces, TraceKind::Cwnd).iter().map(|r| r.value).collect();
    // init_cwnd_bdp = 1 of the 100 KB BDP, then byte counting: + 1 MSS per
    // ACKed segment while cwnd-limited. Nothing is marked while cwnd is at
    // most K = 125 KB: the host's FIFO (the NIC, protocol.dctcp.nic) cannot
    // hold more than a window, and the switches see no queue. Beyond K the
    // window queues in the host's FIFO, which marks as ns-2's host queue does.
    assert_eq!(cwnd[0], 100_000.0);
    let first_cut = cwnd.windows(2).position(|w| w[1] <= w[0]).unwrap_or(cwnd.len());
    assert!(
        cwnd[first_cut.min(cwnd.len() - 1)] > 125_000.0,
        "a cut before cwnd passed K: {:?}",
        &cwnd[..first_cut + 1]
    );
    assert!(cwnd[..first_cut].windows(2).all(|w| w[1] - w[0] == 1460.0), "slow start adds 1 MSS per ACK");
}

#[test]
fn host_filter_and_interval_bound_the_rows() {
    let text = incast("smartt");
    let all = simulate(&text, &[BOTH]);
    let some = simulate(&text, &[BOTH, "output.trace_hosts=[2]", "output.trace_interval_us=20.0"]);
    assert!(some.traces.iter().all(|r| r.host == 2));
    assert!(some.traces.len() < all.traces.len() / 8, "{} vs {}", some.traces.len(), all.traces.len());
    for kind in [TraceKind::Cwnd, TraceKind::Rtt] {
        let r = rows(&some.traces, kind);
        assert!(r.len() >= 2, "{kind:?}");
        assert!(r.windows(2).all(|w| w[1].time - w[0].time >= 20_000_000), "{kind:?}: one row per 20 us at most");
    }
    // The histogram still holds every RTT sample of host 2.
    let host2 = rows(&all.traces, TraceKind::Rtt).iter().filter(|r| r.host == 2).count();
    assert_eq!(some.summary.rtt_us.unwrap().count as usize, host2);
}

#[test]
fn bad_trace_settings_name_their_key() {
    let text = incast("smartt");
    let o = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for (set, key, words) in [
        (o(&["output.traces=[\"cwnd\", \"queue\"]"]), "output.traces", "queue"),
        (o(&["output.traces=\"cwnd\""]), "output.traces", "array"),
        (o(&[BOTH, "output.trace_interval_us=-1.0"]), "output.trace_interval_us", "-1"),
        (o(&[BOTH, "output.trace_hosts=[7]"]), "output.trace_hosts", "0 to 4"),
        (o(&["output.trace_every=1"]), "output", "trace_every"),
    ] {
        let e = fabriclab::config::Config::from_str_with(&text, &set, std::path::Path::new("."))
            .expect_err(&format!("{set:?} must be rejected"));
        assert!(e.key.starts_with(key), "{set:?}: key {:?}", e.key);
        assert!(e.to_string().contains(words), "{set:?}: {e}");
    }
}
