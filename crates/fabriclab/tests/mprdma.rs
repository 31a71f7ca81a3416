//! MP-RDMA's window over REPS and trimming: an incast completes without loss
//! and near line rate. (The window law itself is tested exactly in
//! transport/smartt/cc.rs.)

mod common;
use common::*;
use fabriclab::net::wire::data_wire;

fn incast(protocol: &str) -> fabriclab::sim::RunOutput {
    let text = experiment("kind = \"star\"\nhosts = 9", protocol, 50.0)
        + SMARTT_NETWORK
        + "[workload]\nkind = \"incast\"\nsenders = 8\nbytes = 2000000\n";
    simulate(&text, &[])
}

/// (first completion, last completion).
fn ends(out: &fabriclab::sim::RunOutput) -> (f64, f64) {
    let e = out.messages.iter().map(|m| m.end_ps.unwrap() as f64);
    (e.clone().fold(f64::INFINITY, f64::min), e.fold(0.0, f64::max))
}

#[test]
fn incast_completes_without_loss_near_line_rate() {
    let out = incast("mprdma");
    let s = &out.summary;
    assert_eq!((s.messages_completed, s.bytes_delivered, s.drops), (8, 8 * 2_000_000, 0));
    let needed = 8 * 2_000_000u64.div_ceil(1460);
    assert_eq!(s.data_packets_sent, needed + s.trims, "every trimmed packet resent once, no timeout");
    let line_rate = (needed * data_wire(1460) as u64 * 80) as f64;
    assert!(ends(&out).1 < 1.1 * line_rate + 20e6, "last {} vs {line_rate}", ends(&out).1);
}
