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

/// Writes `text` to a scratch file and returns the `[workload]` table running it as GOAL.
fn goal_workload(text: &str, rank_map: Option<&str>) -> String {
    let sched = common::scratch("schedule.goal");
    std::fs::write(&sched, text).unwrap();
    let mut w = format!("[workload]\nkind = \"goal\"\ngoal_file = \"{}\"\n", sched.display());
    if let Some(map) = rank_map {
        let path = common::scratch("ranks.txt");
        std::fs::write(&path, map).unwrap();
        w.push_str(&format!("rank_map_file = \"{}\"\n", path.display()));
    }
    w
}

#[test]
fn goal_ring_allreduce_runs_exactly_as_the_ring_allreduce_workload() {
    let direct = simulate(&format!("{FAT_TREE}[workload]\nkind = \"ring_allreduce\"\nbytes = 160000\n"), &[]);
    // The ring workload's order, pods of 4 hosts taken in turn: 0 4 8 12 1 5 9 13 ...
    let map: String = (0..16).map(|r| format!("{}\n", (r % 4) * 4 + r / 4)).collect();
    let text = fabriclab::workload::goal::collectives::ring_allreduce(16, 160_000);
    let goal = simulate(&format!("{FAT_TREE}{}", goal_workload(&text, Some(&map))), &[]);
    let key = |m: &MessageRecord| (m.id, m.src, m.dst, m.size, m.start_ps, m.end_ps);
    assert_eq!(direct.messages.len(), 2 * 15 * 16);
    assert_eq!(goal.messages.iter().map(key).collect::<Vec<_>>(), direct.messages.iter().map(key).collect::<Vec<_>>());
}

#[test]
fn goal_calcs_delay_sends_exactly_and_a_schedule_that_cannot_finish_ends_the_run() {
    // Ranks 0 and 1 ping-pong with 3 us of calc between; ranks 2 and 3 each wait for the other.
    let text = "num_ranks 4\n\
        rank 0 {\na: send 30000b to 1\nb: recv 100b from 1\n}\n\
        rank 1 {\na: recv 30000b from 0\nc: calc 3000\nb: send 100b to 0\nc requires a\nb requires c\n}\n\
        rank 2 {\nr: recv 8b from 3\ns: send 8b to 3\ns requires r\n}\n\
        rank 3 {\nr: recv 8b from 2\ns: send 8b to 2\ns requires r\n}\n";
    let out = simulate(&format!("{FAT_TREE}{}", goal_workload(text, None)), &[]);
    let m = &out.messages;
    assert_eq!(m.len(), 2);
    assert_eq!((m[0].src, m[0].dst, m[0].size, m[0].start_ps), (0, 1, 30_000, 0));
    assert_eq!((m[1].src, m[1].dst, m[1].size), (1, 0, 100));
    assert_eq!(m[1].start_ps, m[0].end_ps.unwrap() + 3_000_000, "the send starts when the calc ends");
    // The run stops at the last delivery, not at the end of its 20 ms.
    assert_eq!(out.summary.sim_time_s, m[1].end_ps.unwrap() as f64 / 1e12);
}
