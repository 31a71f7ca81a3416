//! Failure injection (`[[network.events]]`): a dead link loses exactly the
//! packets sent onto it, a rate change applies from its instant on, and
//! loss-recovering transports still complete every message, with or without
//! routing reconvergence.

mod common;

use common::{config, simulate, trace, trace_workload};
use fabriclab::config::Config;
use fabriclab::net::Packet;
use fabriclab::sim::run_custom;
use fabriclab::transport::{Cx, HostInfo, Message, Transport};
use fabriclab::Time;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Sends `count` full-size packets back to back; the receiver logs (arrival, seq).
struct Blast {
    id: u32,
    count: u32,
    out: VecDeque<Packet<u32>>,
    log: Arc<Mutex<Vec<(Time, u32)>>>,
}

impl Transport for Blast {
    type Header = u32;
    fn start_message(&mut self, _: &mut Cx, msg: &Message) {
        self.out.extend((0..self.count).map(|seq| Packet::new(self.id, msg.dst, 1538, 0, 0, seq)));
    }
    fn on_packet(&mut self, cx: &mut Cx, p: &Packet<u32>) {
        self.log.lock().unwrap().push((cx.now, p.hdr));
    }
    fn on_timer(&mut self, _: &mut Cx, _: u64) {}
    fn poll_transmit(&mut self, _: &mut Cx) -> Option<Packet<u32>> {
        self.out.pop_front()
    }
}

/// 50 packets over a 100 Gbps dumbbell, with `event` on its bottleneck.
/// Packet i starts on the bottleneck at (i + 1) x 123.04 ns + 750 ns.
fn blast(event: &str) -> (Vec<(Time, u32)>, fabriclab::metrics::Summary) {
    let t = trace(&[(0.0, 0, 1, 1)]);
    let text = format!(
        "[topology]\nkind = \"dumbbell\"\nhost_rate_gbps = 100.0\nbottleneck_rate_gbps = 100.0\n\
         host_link_delay_ns = 500.0\nbottleneck_delay_ns = 700.0\nswitch_latency_ns = 250.0\n\
         [run]\nduration_ms = 0.1\nwarmup_ms = 0.0\n{}\n[[network.events]]\nlink = [\"switch0\", \"switch1\"]\n{event}\n",
        trace_workload(&t)
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let out = run_custom(&config(&text, &[]), move |i: &HostInfo| Blast {
        id: i.id,
        count: 50,
        out: VecDeque::new(),
        log: l.clone(),
    })
    .unwrap();
    let v = log.lock().unwrap().clone();
    (v, out.summary)
}

#[test]
fn a_dead_link_loses_exactly_the_packets_sent_onto_it() {
    // Down at 3.0 us: packets 0..=17 started on the bottleneck before (the
    // 18th at 2.96472 us), 18..50 would start after.
    let (seen, s) = blast("at_us = 3.0\naction = \"down\"");
    let seqs: Vec<u32> = seen.iter().map(|x| x.1).collect();
    assert_eq!(seqs, (0..18).collect::<Vec<_>>());
    assert_eq!(s.link_down_drops, 32);
    assert_eq!(s.drops, 32, "no other loss");
    assert_eq!(s.packets_sent, s.packets_received + s.drops + s.packets_in_flight);
    // Back up at 4.0 us: the queue that waited behind the dead port is lost
    // only until then.
    let up = "\n[[network.events]]\nlink = [\"switch1\", \"switch0\"]\nat_us = 4.0\naction = \"up\"";
    let (seen, s) = blast(&format!("at_us = 3.0\naction = \"down\"{up}"));
    // Packets start every 123.04 ns from 3.0877 us; those starting at or after 4.0 us get through.
    let first_after = (0..50).find(|&i| (i + 1) * 123_040 + 750_000 >= 4_000_000).unwrap();
    assert_eq!(s.link_down_drops, (first_after - 18) as u64);
    assert_eq!(seen.len() as u32, 50 - (first_after - 18));
}

#[test]
fn a_rate_change_takes_effect_at_its_instant() {
    let (seen, s) = blast("at_us = 3.0\naction = \"rate\"\nrate_gbps = 50.0");
    assert_eq!(seen.len(), 50);
    assert_eq!(s.drops, 0);
    let gaps: Vec<Time> = seen.windows(2).map(|w| w[1].0 - w[0].0).collect();
    // Packets 0..=17 left at 100 Gbps (123.04 ns apart), 18 onwards at 50 Gbps.
    assert!(gaps[..17].iter().all(|&g| g == 123_040), "{gaps:?}");
    assert!(gaps[17..].iter().all(|&g| g == 246_080), "{gaps:?}");
}

const FAT_TREE: &str = r#"
[topology]
kind = "fat_tree"
k = 4
[workload]
kind = "permutation"
bytes = 200000
[run]
duration_ms = 3.0
warmup_ms = 0.0
[[network.events]]
link = ["tor0", "agg0"]
at_us = 5.0
action = "down"
"#;

#[test]
fn sprayed_ndp_completes_every_message_across_a_dead_link() {
    let s = simulate(FAT_TREE, &["protocol.name=ndp", "protocol.ndp.rto_us=50"]).summary;
    assert!(s.link_down_drops > 0);
    assert_eq!(s.messages_completed, 16);
}

#[test]
fn per_flow_ecmp_needs_rerouting_to_get_past_a_dead_link() {
    let stuck = simulate(FAT_TREE, &["protocol.name=dctcp"]).summary;
    assert!(stuck.link_down_drops > 0);
    assert!(stuck.messages_completed < 16, "some flow is hashed onto the dead link");
    let text = format!("{FAT_TREE}reroute_after_us = 100.0\n");
    let s = simulate(&text, &["protocol.name=dctcp"]).summary;
    assert!(s.link_down_drops > 0);
    assert_eq!(s.messages_completed, 16);
}

#[test]
fn no_events_no_new_summary_field() {
    let s = simulate(&FAT_TREE[..FAT_TREE.find("[[network.events]]").unwrap()], &["protocol.name=dctcp"]).summary;
    assert_eq!(s.link_down_drops, 0);
    assert!(!s.to_json().contains("link_down_drops"));
}

#[test]
fn bad_events_name_their_key() {
    let base = "[topology]\nkind = \"fat_tree\"\nk = 4\n[[network.events]]\n";
    let cases = [
        ("link = [\"tor0\", \"agg0\"]\nat_us = -1.0\naction = \"down\"", "network.events[0].at_us"),
        ("link = [\"tor0\", \"tor1\"]\nat_us = 1.0\naction = \"down\"", "network.events[0].link"),
        ("link = [\"host0\", \"tor0\"]\nat_us = 1.0\naction = \"down\"", "network.events[0].link"),
        ("link = [\"tor0\", \"agg0\"]\nat_us = 1.0\naction = \"rate\"", "network.events[0].rate_gbps"),
        ("link = [\"tor0\", \"agg0\"]\nat_us = 1.0\naction = \"down\"\nrate_gbps = 5.0", "network.events[0].rate_gbps"),
        (
            "link = [\"tor0\", \"agg0\"]\nat_us = 1.0\naction = \"down\"\nreroute_after_us = -3.0",
            "network.events[0].reroute_after_us",
        ),
        ("link = [\"tor0\", \"agg0\"]\nat_us = 1.0\naction = \"explode\"", "network.events[0].action"),
    ];
    for (ev, key) in cases {
        let e = Config::from_str_with(&format!("{base}{ev}\n"), &[], Path::new(".")).unwrap_err();
        assert!(e.key.starts_with(key), "{ev}: {e}");
    }
}
