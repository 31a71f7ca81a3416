//! Closed-loop workloads end to end: every message starts exactly when the
//! completions it waits for have happened, and all of them complete.

mod common;

use common::simulate;
use fabriclab::metrics::MessageRecord;

const FAT_TREE: &str = r#"
[topology]
kind = "fat_tree"
k = 4
[protocol]
name = "dctcp"
[run]
duration_ms = 20.0
warmup_ms = 0.0
"#;

#[test]
fn windowed_all_to_all_keeps_k_flows_per_host_and_refills_on_completion() {
    let text = format!("{FAT_TREE}[workload]\nkind = \"all_to_all\"\nbytes = 20000\nwindow = 3\n");
    let out = simulate(&text, &[]);
    let m = &out.messages;
    assert_eq!(m.len(), 16 * 15);
    assert!(m.iter().all(|r| r.end_ps.is_some()));
    for h in 0..16u32 {
        let mine: Vec<&MessageRecord> = m.iter().filter(|r| r.src == h).collect();
        let dsts: Vec<u32> = mine.iter().map(|r| r.dst).collect();
        assert_eq!(dsts, (1..16).map(|j| (h + j) % 16).collect::<Vec<_>>(), "host {h}: shifted order");
        assert!(mine[..3].iter().all(|r| r.start_ps == 0));
        // Each later message starts at the completion of one of the host's
        // earlier ones; until then exactly 3 are outstanding.
        let mut ends: Vec<u64> = Vec::new();
        for (i, r) in mine.iter().enumerate().skip(3) {
            ends.extend(mine[..i].iter().map(|x| x.end_ps.unwrap()));
            ends.sort_unstable();
            assert_eq!(r.start_ps, ends[i - 3], "host {h} message {i}");
            ends.clear();
        }
    }
}

#[test]
fn ring_allreduce_steps_wait_for_the_previous_step_and_cross_pods() {
    let text = format!("{FAT_TREE}[workload]\nkind = \"ring_allreduce\"\nbytes = 160000\n");
    let out = simulate(&text, &[]);
    let m = &out.messages;
    let n = 16usize;
    assert_eq!(m.len(), 2 * (n - 1) * n);
    assert!(m.iter().all(|r| r.end_ps.is_some()));
    assert!(m.iter().all(|r| r.size == 10_000));
    // Hosts are in pods of 4; every ring hop crosses pods (and so the core).
    assert!(m.iter().all(|r| r.src / 4 != r.dst / 4));
    // For each sender: its s-th message (step s) starts when its own step s-1
    // and its predecessor's step s-1 have both completed.
    let sends = |h: u32| m.iter().filter(move |r| r.src == h).collect::<Vec<_>>();
    for r in m.iter().filter(|r| r.start_ps > 0) {
        let own = sends(r.src);
        let s = own.iter().position(|x| x.id == r.id).unwrap();
        let pred = m.iter().find(|x| x.dst == r.src).unwrap().src;
        let prev = sends(pred)[s - 1].end_ps.unwrap().max(own[s - 1].end_ps.unwrap());
        assert_eq!(r.start_ps, prev, "message {}", r.id);
    }
}

#[test]
fn closed_loop_config_errors_name_their_key() {
    let e = fabriclab::config::Config::from_str_with(
        &format!("{FAT_TREE}[workload]\nkind = \"all_to_all\"\nwindow = 0\n"),
        &[],
        std::path::Path::new("."),
    )
    .unwrap_err();
    assert_eq!(e.key, "workload.window");
    let cfg = common::config(&format!("{FAT_TREE}[workload]\nkind = \"ring_allreduce\"\nranks = 17\n"), &[]);
    let e = fabriclab::sim::run(&cfg, &mut |_, _| {}).err().unwrap();
    assert_eq!(e.key, "workload.ranks");
}
