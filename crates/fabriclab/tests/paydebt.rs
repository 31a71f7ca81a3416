//! PayDebt: lone messages at their ideal latency, debts drain an incast's
//! standing queue (the §5.5 ablation's ordering), token CC bounds the token
//! queue in front of a sender pulled by many receivers, probes recover losses.

mod common;
use common::*;
use fabriclab::metrics::{MessageRecord, PortRecord};
use fabriclab::sim::RunOutput;

fn fct(m: &MessageRecord) -> u64 {
    m.end_ps.expect("completes") - m.start_ps
}

fn port_to(out: &RunOutput, host: u32) -> &PortRecord {
    out.ports.iter().find(|p| p.peer == host).unwrap()
}

#[test]
fn lone_messages_up_to_a_bdp_take_exactly_their_ideal_latency() {
    for size in [1u64, 1460, 1461, 12_500, 13_140] {
        let m = lone(&star10("paydebt", 2, 5.0), 0, 1, size, &[]);
        assert_eq!(fct(&m), m.ideal_ps, "size {size}");
    }
    // Longer messages are token-clocked after the first BDP: close to line rate.
    for size in [100_000u64, 1_000_000] {
        let m = lone(&star10("paydebt", 2, 5.0), 0, 1, size, &[]);
        assert!((fct(&m) as f64) < 1.1 * m.ideal_ps as f64, "size {size}: {} vs {}", fct(&m), m.ideal_ps);
    }
}

fn incast(extra: &[&str]) -> RunOutput {
    let text =
        star10("paydebt", 17, 20.0) + "[workload]\nkind = \"incast\"\nreceiver = 0\nsenders = 16\nbytes = 400000\n";
    simulate(&text, extra)
}

#[test]
fn debts_drain_the_standing_queue_of_an_incast() {
    let paydebt = incast(&[]);
    let none = incast(&["protocol.paydebt.debt=\"none\""]);
    let late = incast(&["protocol.paydebt.debt=\"late\""]);
    let early = incast(&["protocol.paydebt.debt=\"early\""]);
    for o in [&paydebt, &none, &late, &early] {
        assert_eq!(o.summary.messages_completed, 16);
        assert_eq!(o.summary.drops, 0);
    }
    let mean = |o: &RunOutput| port_to(o, 0).mean_bytes;
    // 16 unscheduled BDPs land at once; without debts the tokens keep them
    // queued, with debts the receiver pays them back and the queue drains.
    let (p, n, l, e) = (mean(&paydebt), mean(&none), mean(&late), mean(&early));
    eprintln!("mean downlink queue: paydebt {p:.0} none {n:.0} late {l:.0} early {e:.0}");
    assert!(n > 2.0 * p, "none {n} vs paydebt {p}");
    assert!(l > p, "late {l} vs paydebt {p}");
    assert!(e <= p * 1.05, "early {e} vs paydebt {p}");
    // Debts cost no goodput: the incast ends about when line rate would end it.
    let end = |o: &RunOutput| o.messages.iter().map(|m| m.end_ps.unwrap()).max().unwrap() as f64;
    let line = 16.0 * 400_000.0 / 1460.0 * 1538.0 * 800.0; // 800 ps per byte at 10 Gbps
    assert!(end(&paydebt) < 1.12 * line, "{} vs {line}", end(&paydebt));
}

#[test]
fn token_cc_bounds_the_token_queue_in_front_of_a_popular_sender() {
    // Host 0 sends 2 MB to each of 8 receivers: their tokens converge on its downlink.
    let text = star10("paydebt", 9, 20.0) + "[workload]\nkind = \"trace\"\ntrace_file = \"TRACE\"\n";
    let rows: Vec<(f64, u32, u32, u64)> = (1..9).map(|d| (0.0, 0, d, 2_000_000)).collect();
    let t = trace(&rows);
    let text = text.replace("TRACE", &t.display().to_string());
    let with = simulate(&text, &[]);
    let without = simulate(&text, &["protocol.paydebt.k_t_bdp=10000"]);
    for o in [&with, &without] {
        assert_eq!(o.summary.messages_completed, 8);
    }
    let q = |o: &RunOutput| port_to(o, 0).max_bytes;
    eprintln!("token queue max: with K_t {} without {}", q(&with), q(&without));
    assert!(q(&with) < q(&without), "{} vs {}", q(&with), q(&without));
}

/// queue_series.csv's `control_bytes`: the token/debt class of the port the
/// tokens converge on, sampled apart from the data and the packet in service.
#[test]
fn queue_series_samples_the_token_queue_apart() {
    let text = star10("paydebt", 9, 20.0) + "[workload]\nkind = \"trace\"\ntrace_file = \"TRACE\"\n";
    let rows: Vec<(f64, u32, u32, u64)> = (1..9).map(|d| (0.0, 0, d, 2_000_000)).collect();
    let text = text.replace("TRACE", &trace(&rows).display().to_string());
    let port = ["output.queue_ports=[[\"switch0\", \"host0\"]]", "output.queue_interval_us=0.25"];
    let mean_tokens = |extra: &[&str]| {
        let o = simulate(&text, &[&port[..], extra].concat());
        assert!(o.queue_series.iter().all(|r| r.control_bytes <= r.bytes), "the class is part of the port's bytes");
        // Only 84 B tokens and debts queue there (host 0 receives no data).
        assert!(o.queue_series.iter().all(|r| r.control_bytes % 84 == 0));
        o.queue_series.iter().map(|r| r.control_bytes as f64).sum::<f64>() / o.queue_series.len() as f64
    };
    // Recording the series (on the control class's dequeue path too) changes nothing in the run.
    let (plain, mut sampled) = (simulate(&text, &[]), simulate(&text, &port));
    assert!(sampled.summary.queue_port_percentiles.take().is_some(), "the watched port's percentiles");
    assert_eq!(plain.summary.without_wall_clock(), sampled.summary.without_wall_clock());
    assert_eq!(plain.messages, sampled.messages);
    let (with, without) = (mean_tokens(&[]), mean_tokens(&["protocol.paydebt.k_t_bdp=10000"]));
    eprintln!("mean token queue: with K_t (9 tokens, 756 B) {with:.0} B, without {without:.0} B");
    assert!(with > 0.0 && with < without, "{with} vs {without}");
}

#[test]
fn probes_and_psn_gaps_recover_losses() {
    // Tiny buffers: the unscheduled bursts of a 16-to-1 incast overflow.
    let out = incast(&["network.buffer_bytes=30000"]);
    let s = &out.summary;
    assert!(s.drops > 0);
    assert_eq!(s.messages_completed, 16);
    assert_eq!(s.bytes_delivered, 16 * 400_000);
}
