//! Aeolus (Homa(A), ExpressPass(A)): the first RTT at line rate costs nothing
//! alone, and under a many-to-one burst switches drop only pre-credit packets,
//! which come back on grants/credits instead of after a timeout.

mod common;
use common::*;
use fabriclab::engine::serialization_time;
use fabriclab::metrics::MessageRecord;
use fabriclab::net::wire::CONTROL_WIRE;
use fabriclab::sim::RunOutput;

fn fct(m: &MessageRecord) -> u64 {
    m.end_ps.expect("completes") - m.start_ps
}

#[test]
fn homa_aeolus_lone_messages_take_their_ideal_latency() {
    // The PROBE follows the last unscheduled packet, the ACKs go the other way.
    for dst in [1, 143] {
        for size in [1u64, 1460, 1461, 50_000, 69 * 1460] {
            let m = lone(&leaf_spine("homa_aeolus"), 0, dst, size, &[]);
            assert_eq!(fct(&m), m.ideal_ps, "size {size} 0->{dst}");
        }
    }
}

#[test]
fn expresspass_aeolus_sends_the_first_rtt_without_waiting_for_credit() {
    // Pre-credit packets follow the CREDIT_REQUEST at once: one BDP or less
    // arrives one request's serialisation after its ideal, where ExpressPass
    // waits a round trip for its first credit.
    let t_req = serialization_time(CONTROL_WIRE as u64, 100_000_000_000);
    for size in [1u64, 1460, 50_000] {
        let a = lone(&leaf_spine("expresspass_aeolus"), 0, 143, size, &[]);
        assert_eq!(fct(&a), a.ideal_ps + t_req, "size {size}");
        let plain = lone(&leaf_spine("expresspass"), 0, 143, size, &[]);
        assert!(fct(&plain) > fct(&a) + 5_000_000, "size {size}: {} vs {}", fct(&plain), fct(&a));
    }
}

/// 32 senders each send 30 KB (9 unscheduled packets of a 12.5 KB BDP, then
/// grants) to one host of a 10 Gbps star whose ports hold 150 KB: the first
/// RTT alone is 440 KB.
fn incast(protocol: &str) -> RunOutput {
    let text = star10(protocol, 33, 20.0)
        + "buffer_bytes = 150000\n[workload]\nkind = \"incast\"\nreceiver = 0\nsenders = 32\nbytes = 30000\n";
    simulate(&text, &[])
}

#[test]
fn homa_aeolus_drops_only_unscheduled_packets_and_recovers_without_timeouts() {
    let resend_timeout = 1_000_000_000; // Homa's 1 ms
    let homa = incast("homa");
    let s = &homa.summary;
    assert!(s.drops > 0 && s.selective_drops == 0, "{s:?}");
    assert_eq!(s.messages_completed, 32);
    // Plain Homa's lost unscheduled packets wait for the RESEND timeout.
    let slowest = homa.messages.iter().map(fct).max().unwrap();
    assert!(slowest > resend_timeout, "{slowest}");

    let a = incast("homa_aeolus");
    let s = &a.summary;
    assert!(s.selective_drops > 0, "{s:?}");
    assert_eq!(s.drops, s.selective_drops, "a scheduled packet was dropped");
    assert_eq!(s.messages_completed, 32);
    assert_eq!(s.bytes_delivered, 32 * 30_000);
    let slowest_a = a.messages.iter().map(fct).max().unwrap();
    assert!(slowest_a < resend_timeout, "{slowest_a}");
    let mean = |o: &RunOutput| o.messages.iter().map(fct).sum::<u64>() / 32;
    assert!(mean(&a) * 2 < mean(&homa), "{} vs {}", mean(&a), mean(&homa));
}

#[test]
fn expresspass_aeolus_drops_only_pre_credit_packets_and_delivers_everything() {
    let a = incast("expresspass_aeolus");
    let s = &a.summary;
    assert!(s.selective_drops > 0, "{s:?}");
    assert_eq!(s.drops, s.selective_drops);
    assert_eq!(s.messages_completed, 32);
    assert_eq!(s.bytes_delivered, 32 * 30_000);
    assert_eq!(s.packets_sent, s.packets_received + s.drops + s.credit_drops + s.packets_in_flight);
    // The 440 KB first RTT builds no queue: the 8 KB threshold plus ExpressPass's
    // own few credited packets (it alone never drops here).
    let plain = incast("expresspass");
    assert_eq!(plain.summary.drops, 0);
    assert!(s.switch_queue_max_bytes < 8000 + 5 * plain.summary.switch_queue_max_bytes.max(1538), "{s:?}");
}
