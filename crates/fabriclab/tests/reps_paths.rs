//! REPS on a degraded fabric (SMaRTT-REPS §4.1.1, Fig. 7, run here in
//! simulation): a k = 4 fat tree where every flow crosses the core, one ToR
//! uplink slowed to a quarter of its rate or brought down, SMaRTT over REPS
//! against SMaRTT over oblivious spraying. REPS recycles only entropies whose
//! ACKs came back unmarked, so it steers off the bad uplink; spraying keeps
//! sending half of tor0's cross-pod traffic onto it. (That REPS recycles an
//! entropy that came back unmarked is tested in transport/lb.rs.)

mod common;
use common::*;
use fabriclab::sim::RunOutput;

/// A cross-pod permutation of 1 MB per host on a k = 4 fat tree (100 Gbps)
/// with SMaRTT-REPS's buffers, `lb` the load balancer, `degrade` appended.
fn run(lb: &str, degrade: &str) -> RunOutput {
    let text = experiment("kind = \"fat_tree\"\nk = 4", "smartt", 20.0)
        + SMARTT_NETWORK
        + "[workload]\nkind = \"permutation\"\nbytes = 1000000\ncross_pod = true\n"
        + degrade;
    simulate(&text, &[&format!("protocol.smartt.lb.kind=\"{lb}\"")])
}

/// The last completion (the run's end if some message did not complete).
fn last_end(out: &RunOutput) -> u64 {
    out.messages.iter().map(|m| m.end_ps.unwrap_or(u64::MAX)).max().unwrap()
}

#[test]
fn reps_loses_far_fewer_packets_on_a_dead_uplink_and_finishes_sooner() {
    let dead = "[[network.events]]\nlink = [\"tor0\", \"agg0\"]\nat_us = 5.0\naction = \"down\"\n";
    let reps = run("reps", dead);
    let spray = run("spray", dead);
    let (r, s) = (reps.summary.link_down_drops, spray.summary.link_down_drops);
    eprintln!(
        "dead uplink: drops reps {r} spray {s}; completed reps {} spray {}; last reps {}",
        reps.summary.messages_completed,
        spray.summary.messages_completed,
        last_end(&reps)
    );
    assert_eq!(reps.summary.messages_completed, 16);
    assert!(r > 0, "REPS too loses what it sent before it learned");
    // The paper measures "an order of magnitude" fewer drops in hardware (Fig. 7c).
    assert!(r * 8 < s, "REPS drops {r}, spraying {s}");
    assert!(last_end(&reps) < last_end(&spray));
}

#[test]
fn reps_avoids_a_quarter_rate_uplink_and_finishes_sooner() {
    let slow = "[[topology.link_overrides]]\nbetween = [\"tor0\", \"agg0\"]\nrate_gbps = 25.0\n";
    let reps = run("reps", slow);
    let spray = run("spray", slow);
    let healthy = run("reps", "");
    eprintln!(
        "slow uplink: trims reps {} spray {}; last reps {} spray {} healthy {}",
        reps.summary.trims,
        spray.summary.trims,
        last_end(&reps),
        last_end(&spray),
        last_end(&healthy)
    );
    for o in [&reps, &spray, &healthy] {
        assert_eq!(o.summary.messages_completed, 16);
    }
    // Spraying overflows the slow uplink's queue again and again; REPS's
    // marked ACKs move it off after the first BDP.
    assert!(reps.summary.trims * 4 < spray.summary.trims);
    assert!((last_end(&reps) as f64) < 0.6 * last_end(&spray) as f64);
}

/// Fig. 7c, simulated: a T0-T1 link dies 50 us into a ring AllReduce, whose
/// every step is a new message on the same ring connection. REPS's state
/// belongs to the connection (Algorithm 4), so only the first step explores
/// onto the dead link; with per-message state every step explores again.
#[test]
fn reps_per_connection_explores_a_dead_link_once_across_allreduce_steps() {
    let text = include_str!("../../../experiments/smartt/testbed-linkdown.toml");
    let run = |kind: &str, scope: &str| {
        simulate(
            text,
            &[&format!("protocol.smartt.lb.kind=\"{kind}\""), &format!("protocol.smartt.lb.scope=\"{scope}\"")],
        )
    };
    let conn = run("reps", "connection");
    let msg = run("reps", "message");
    let spray = run("spray", "connection");
    let drops = |o: &RunOutput| o.summary.link_down_drops;
    eprintln!("dead link in an AllReduce: drops conn {} msg {} spray {}", drops(&conn), drops(&msg), drops(&spray));
    assert_eq!(conn.summary.messages_completed, conn.messages.len() as u64, "every step completes");
    assert!(drops(&conn) > 0, "the first step's exploration meets the dead link");
    // The paper: "an order of magnitude reduction in the total number of packet drops".
    assert!(drops(&conn) * 10 < drops(&spray), "REPS {} vs spraying {}", drops(&conn), drops(&spray));
    assert!(drops(&conn) * 5 < drops(&msg), "per connection {} vs per message {}", drops(&conn), drops(&msg));
}
