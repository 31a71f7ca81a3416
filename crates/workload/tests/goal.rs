//! GOAL schedules through the public API: built from files, driven as the
//! simulator drives a closed-loop workload (a model of `sim/mod.rs`: inject
//! what `next` returns, report completions, call `advance` at the times
//! `take_wake` names, stop when nothing is left), with message times from a
//! fixed network model.

use fabriclab_engine::{Time, MS, NS, US};
use fabriclab_workload::closed::RingAllreduce;
use fabriclab_workload::goal::{collectives, parse, DepKind, GoalRun, OpKind};
use fabriclab_workload::*;
use proptest::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

mod common;
use common::scratch;

fn env(n_hosts: u32, rack: u32, racks_per_pod: u32) -> WorkloadEnv {
    WorkloadEnv {
        n_hosts,
        host_rate_bps: 100_000_000_000,
        rack_of: (0..n_hosts).map(|h| h / rack).collect(),
        core_ratio: 1.0,
        racks_per_pod,
        mss: 1460,
        seed: 1,
        end: 100 * MS,
    }
}

fn goal_cfg(schedule: &Path, rank_map: Option<&Path>, start_us: f64) -> WorkloadConfig {
    WorkloadConfig::Goal(goal::Goal {
        goal_file: Some(schedule.to_path_buf()),
        rank_map_file: rank_map.map(Path::to_path_buf),
        start_us,
    })
}

/// What the simulator calls on a closed-loop workload.
trait ClosedLoop {
    fn next(&mut self) -> Option<MessageSpec>;
    fn on_complete(&mut self, id: u64, now: Time);
    fn advance(&mut self, now: Time);
    fn take_wake(&mut self) -> Option<Time>;
    fn idle(&self) -> bool;
}

/// Both answer the calls by their own methods of the same names.
macro_rules! closed_loop {
    ($($t:ty),*) => {$(
        impl ClosedLoop for $t {
            fn next(&mut self) -> Option<MessageSpec> {
                <$t>::next(self)
            }
            fn on_complete(&mut self, id: u64, now: Time) {
                <$t>::on_complete(self, id, now)
            }
            fn advance(&mut self, now: Time) {
                <$t>::advance(self, now)
            }
            fn take_wake(&mut self) -> Option<Time> {
                <$t>::take_wake(self)
            }
            fn idle(&self) -> bool {
                <$t>::idle(self)
            }
        }
    )*};
}
closed_loop!(Workload, GoalRun);

/// Every message (with its end) in start order, each taking `took(m)`;
/// events at equal times in the order they were scheduled, as in the engine.
fn drive(w: &mut impl ClosedLoop, took: impl Fn(&MessageSpec) -> Time) -> Vec<(MessageSpec, Time)> {
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        Done(u64),
        Wake,
    }
    let mut q: BinaryHeap<Reverse<(Time, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0;
    let mut msgs: Vec<(MessageSpec, Time)> = Vec::new();
    let mut now = 0;
    loop {
        while let Some(m) = w.next() {
            assert!(m.time >= msgs.last().map_or(0, |l| l.0.time), "next's times never decrease");
            let start = m.time.max(now);
            q.push(Reverse((start + took(&m), seq, Ev::Done(msgs.len() as u64))));
            seq += 1;
            msgs.push((m, Time::MAX));
        }
        if let Some(t) = w.take_wake() {
            q.push(Reverse((t.max(now), seq, Ev::Wake)));
            seq += 1;
        }
        let Some(Reverse((t, _, ev))) = q.pop() else { break };
        now = t;
        match ev {
            Ev::Done(id) => {
                msgs[id as usize].1 = t;
                w.on_complete(id, t);
            }
            Ev::Wake => w.advance(t),
        }
    }
    assert!(w.idle(), "the driver stops only when the workload has nothing pending");
    msgs
}

/// A network model: 1 us plus 8 ps a byte, a little more on some pairs so that
/// messages overtake each other.
fn took(m: &MessageSpec) -> Time {
    US + m.size * 8 + ((m.src * 7 + m.dst * 3) % 5) as Time * 100 * NS
}

fn spec(time: Time, src: u32, dst: u32, size: u64) -> MessageSpec {
    MessageSpec { time, src, dst, size, incast: false }
}

#[test]
fn a_small_schedule_from_files_starts_each_message_at_its_exact_time() {
    // Three ranks on hosts 4, 0, 2: rank 0 scatters to 1 and 2; rank 1 computes 300 ns on the
    // data and answers; rank 2 answers once its recv has *started* (irequires) and a calc ended.
    let text = "num_ranks 3\n\
        rank 0 {\n  a: send 100b to 1\n  b: send 200b to 2\n  c: recv 10b from 1 tag 1\n  d: recv 20b from 2 tag 2\n}\n\
        rank 1 {\n  a: recv 100b from 0\n  b: calc 300\n  c: send 10b to 0 tag 1\n  b requires a\n  c requires b\n}\n\
        rank 2 {\n  a: recv 200b from 0\n  b: calc 50\n  c: send 20b to 0 tag 2\n  c irequires a\n  c requires b\n}\n";
    let sched = scratch("small.goal", text);
    let map = scratch("small.ranks", "# rank -> host\n4\n0\n2\n");
    let e = env(5, 5, 1);
    let mut w = Workload::build(&goal_cfg(&sched, Some(&map), 1.0), &e).unwrap();
    assert!(w.is_closed_loop());
    let msgs = drive(&mut w, |m| m.size * NS); // 1 ns a byte
    let want = [
        (spec(US, 4, 0, 100), US + 100 * NS),
        (spec(US, 4, 2, 200), US + 200 * NS),
        // Rank 2: recv posted at 1 us, calc 50 ns ends at 1.05 us: its send needs no delivery.
        (spec(US + 50 * NS, 2, 4, 20), US + 70 * NS),
        // Rank 1: the data arrives at 1.1 us, then 300 ns of calc.
        (spec(US + 400 * NS, 0, 4, 10), US + 410 * NS),
    ];
    assert_eq!(msgs, want);
    let g = w.goal().expect("a GOAL workload");
    assert!(g.is_complete());
    assert_eq!(g.finish(), Some(US + 410 * NS));
    assert_eq!(g.rank_finish(), [Some(US + 410 * NS), Some(US + 410 * NS), Some(US + 200 * NS)]);
    // Message 2 is rank 2's `c`; rank 2's recv ended when its message arrived.
    let c = g.message_op(2).unwrap();
    assert_eq!((g.op(c).rank, g.op(c).label, g.op(c).line), (2, Some("c"), 18));
    assert_eq!(g.ops().find(|r| r.rank == 2 && r.label == Some("a")).unwrap().end, Some(US + 200 * NS));
    assert!((w.offered_bytes_per_s() - 330.0 / 0.1).abs() < 1e-9);
    // The path: rank 0's send (1-1.1 us), rank 1's recv, its calc (1.1-1.4), its send (1.4-1.41),
    // which ended last with rank 0's recv (the later op in the file is taken).
    let g = w.goal().unwrap();
    let p = g.critical_path().unwrap();
    assert_eq!(p.ops, [0, 4, 5, 6]);
    assert_eq!((p.network, p.calc, p.cpu_wait), (110 * NS, 300 * NS, 0));
    let s = goal::GoalSummary::of(g, Some(&p));
    assert_eq!((s.ranks, s.ops, s.complete, s.ranks_waiting), (3, 10, true, 0));
    assert_eq!((s.start_us, s.completion_us, s.makespan_us.map(|m| (m * 1e6).round())), (1.0, Some(1.41), Some(410e3)));
    let f = s.rank_finish_us.unwrap();
    assert_eq!((f.min, f.median, f.max, f.last_rank), (1.2, 1.41, 1.41, 0));
    assert_eq!((s.op_counts.send, s.op_counts.recv, s.op_counts.calc), (4, 4, 2));
    let cp = s.critical_path.unwrap();
    assert_eq!((cp.ops, cp.network_us, cp.calc_us, cp.cpu_wait_us), (4, 0.11, 0.3, 0.0));
    assert!((cp.network_share + cp.calc_share - 1.0).abs() < 1e-12 && cp.cpu_wait_share == 0.0);
    let rows = goal::OpRow::all(g, Some(&p));
    let marked: Vec<u32> = rows.iter().filter(|r| r.on_critical_path).map(|r| r.op).collect();
    assert_eq!(marked, [0, 4, 5, 6]);
    assert_eq!((rows[9].host, rows[9].msg_id, rows[3].msg_id), (2, Some(2), None));
}

#[test]
fn ring_schedule_runs_exactly_as_the_ring_allreduce_workload() {
    // 8 hosts in racks of 2, pods of 2 racks: ring_allreduce lays the ring 0 4 1 5 2 6 3 7.
    let e = env(8, 2, 2);
    let (ranks, bytes) = (8, 1_000_003);
    let ring = WorkloadConfig::RingAllreduce(RingAllreduce { bytes, ranks: Some(ranks), start_us: 3.0 });
    let direct = drive(&mut Workload::build(&ring, &e).unwrap(), took);
    let sched = scratch("ring.goal", &collectives::ring_allreduce(ranks, bytes));
    let map = scratch("ring.ranks", "0\n4\n1\n5\n2\n6\n3\n7\n");
    let mut w = Workload::build(&goal_cfg(&sched, Some(&map), 3.0), &e).unwrap();
    let via_goal = drive(&mut w, took);
    assert_eq!(via_goal.len(), 2 * 7 * 8);
    // The same messages (pairs, sizes, start and end times) in the same order.
    assert_eq!(via_goal, direct);
    assert!(w.goal().unwrap().is_complete());
    // And so the same bytes between the same pairs, 2 (N - 1) / N of the buffer from each host.
    for h in 0..8 {
        let sent: u64 = via_goal.iter().filter(|(m, _)| m.src == h).map(|(m, _)| m.size).sum();
        assert!((sent as f64 - bytes as f64 * 14.0 / 8.0).abs() <= 14.0, "host {h}: {sent}");
    }
}

#[test]
fn a_schedule_that_cannot_finish_stops_and_says_who_waits() {
    // Ranks 0 and 1 each receive before sending; rank 2 and 3 exchange normally.
    let text = "num_ranks 4\n\
        rank 0 {\nr: recv 8b from 1 tag 5\ns: send 8b to 1 tag 5\ns requires r\n}\n\
        rank 1 {\nr: recv 8b from 0 tag 5\ns: send 8b to 0 tag 5\ns requires r\n}\n\
        rank 2 {\nsend 64b to 3\n}\nrank 3 {\nx: recv 64b from 2\ny: calc 10\ny requires x\n}\n";
    let sched = scratch("stuck.goal", text);
    let mut w = Workload::build(&goal_cfg(&sched, None, 0.0), &env(4, 4, 1)).unwrap();
    let msgs = drive(&mut w, took);
    assert_eq!(msgs.len(), 1);
    let g = w.goal().unwrap();
    assert!(!g.is_complete() && g.idle());
    let who: Vec<(u32, Option<&str>)> = g.waiting().iter().map(|x| (x.rank, g.op(x.op).label)).collect();
    assert_eq!(who, [(0, Some("r")), (1, Some("r"))]);
    let text = g.describe_waiting(20);
    assert!(text.contains("2 of 4 ranks have not finished"), "{text}");
    assert!(text.contains("rank 1 r (line 8): recv from rank 0 tag 5"), "{text}");
    assert!(text.contains("its send, rank 0 s (line 4), is not ready: it waits on rank 0 r (line 3)"), "{text}");
    assert_eq!(g.rank_finish()[2..], [Some(msgs[0].1), Some(msgs[0].1 + 10 * NS)]);
    // The summary says so: no completion time, two ranks waiting, no critical path.
    let s = goal::GoalSummary::of(g, g.critical_path().as_ref());
    assert_eq!((s.complete, s.completion_us, s.makespan_us, s.ranks_waiting), (false, None, None, 2));
    assert_eq!((s.critical_path, s.rank_finish_us.unwrap().last_rank), (None, 3));
}

#[test]
fn file_errors_name_the_key_the_file_and_the_line() {
    let e = env(4, 4, 1);
    let bad = scratch("bad.goal", "num_ranks 2\nrank 0 {\nl1: send 10 to 1\n}\n");
    let err = Workload::build(&goal_cfg(&bad, None, 0.0), &e).err().unwrap();
    assert_eq!(err.key, "workload.goal_file");
    assert!(err.message.starts_with(&format!("{}:3: bad size `10`", bad.display())), "{}", err.message);
    let big = scratch("big.goal", "num_ranks 6\n");
    let err = Workload::build(&goal_cfg(&big, None, 0.0), &e).err().unwrap();
    assert!(err.message.contains(":1: num_ranks is 6 but the topology has 4 hosts"), "{}", err.message);
    let ok = scratch("ok.goal", "num_ranks 2\n");
    let map = scratch("dup.ranks", "3\n3\n");
    let err = Workload::build(&goal_cfg(&ok, Some(&map), 0.0), &e).err().unwrap();
    assert_eq!(err.key, "workload.rank_map_file");
    assert!(err.message.starts_with(&format!("{}:2: host 3 is already", map.display())), "{}", err.message);
    let map = scratch("far.ranks", "3\n9\n");
    let err = Workload::build(&goal_cfg(&ok, Some(&map), 0.0), &e).err().unwrap();
    assert!(err.message.contains(":2: host 9 does not exist"), "{}", err.message);
    let err = Workload::build(&goal_cfg(Path::new("/nonexistent/x.goal"), None, 0.0), &e).err().unwrap();
    assert!(err.key == "workload.goal_file" && err.message.contains("/nonexistent/x.goal"), "{err:?}");
    let err = Workload::build(&goal_cfg(&ok, None, -1.0), &e).err().unwrap();
    assert_eq!(err.key, "workload.start_us");
}

/// A random schedule that can always finish: a global sequence of calcs and
/// messages (each a send and its recv), dependencies only on ops earlier in
/// the sequence, and the sends (and recvs) of one (source, destination, tag)
/// started in sequence order (each irequires the one before), so that the
/// k-th send meets the k-th recv.
#[derive(Clone, Debug)]
enum Item {
    Calc { rank: u32, ns: u64, cpu: u8 },
    Msg { src: u32, dst: u32, tag: u32, bytes: u64 },
}

fn items() -> impl Strategy<Value = (u32, Vec<Item>, Vec<(usize, usize, bool)>)> {
    (1u32..5).prop_flat_map(|n| {
        let item = prop_oneof![
            (0..n, 0u64..2_000, 0u8..2).prop_map(|(rank, ns, cpu)| Item::Calc { rank, ns, cpu }),
            (0..n, 0..n, 0u32..2, 0u64..5_000).prop_map(|(src, dst, tag, bytes)| Item::Msg { src, dst, tag, bytes }),
        ];
        let deps = proptest::collection::vec((any::<usize>(), any::<usize>(), any::<bool>()), 0..30);
        (Just(n), proptest::collection::vec(item, 0..25), deps)
    })
}

/// The GOAL text of a random schedule; `deps` pick pairs of ops of one rank.
fn schedule_text(n: u32, items: &[Item], deps: &[(usize, usize, bool)]) -> String {
    let mut s = goal::Schedule::new(n);
    let mut last_of_key: std::collections::HashMap<(u32, u32, u32, bool), u32> = Default::default();
    for (i, it) in items.iter().enumerate() {
        match *it {
            Item::Calc { rank, ns, cpu } => {
                let op = s.push(rank, Some(&format!("c{i}")), OpKind::Calc { ns });
                s.set_cpu_nic(op, cpu, 0);
            }
            Item::Msg { src, dst, tag, bytes } => {
                let tx = s.push(src, Some(&format!("s{i}")), OpKind::Send { bytes, to: dst, tag });
                let rx = s.push(dst, Some(&format!("r{i}")), OpKind::Recv { bytes, from: src, tag });
                for (op, side) in [(tx, false), (rx, true)] {
                    if let Some(prev) = last_of_key.insert((src, dst, tag, side), op) {
                        s.depend(op, prev, DepKind::Irequires);
                    }
                }
            }
        }
    }
    let ops = s.ops().to_vec();
    for &(a, b, requires) in deps {
        if ops.is_empty() {
            break;
        }
        let (a, b) = ((a % ops.len()) as u32, (b % ops.len()) as u32);
        let (later, earlier) = (a.max(b), a.min(b));
        if later != earlier && ops[later as usize].rank == ops[earlier as usize].rank {
            s.depend(later, earlier, if requires { DepKind::Requires } else { DepKind::Irequires });
        }
    }
    s.to_goal()
}

/// Drives a parsed schedule and checks every op's times against its
/// dependencies and its message.
fn run_and_check(text: &str, expect_complete: bool) -> Result<(), TestCaseError> {
    let sched = match parse(text, "p.goal") {
        Ok(s) => s,
        Err(e) => {
            prop_assert!(!expect_complete, "a valid schedule was refused: {e}\n{text}");
            prop_assert_eq!(&e.key, "workload.goal_file");
            prop_assert!(e.message.starts_with("p.goal:"), "{}", e.message);
            let line: usize = e.message["p.goal:".len()..].split(':').next().unwrap().parse().unwrap();
            prop_assert!(line >= 1 && line <= text.lines().count().max(1), "{}", e.message);
            return Ok(());
        }
    };
    let n = sched.num_ranks();
    let mut g = GoalRun::new(sched, (0..n).collect(), 0);
    let msgs = drive(&mut g, took);
    prop_assert!(!expect_complete || g.is_complete(), "{}\n{text}", g.describe_waiting(20));
    if !g.is_complete() {
        prop_assert!(!g.waiting().is_empty(), "an unfinished schedule names what it waits on");
    }
    let s = g.schedule();
    for d in s.deps() {
        let (a, b) = (g.op(d.op), g.op(d.on));
        let Some(start) = a.start else { continue };
        let need = if d.kind == DepKind::Requires { b.end } else { b.start };
        prop_assert!(need.is_some_and(|t| t <= start), "{:?} {:?} {:?}", d.kind, a, b);
    }
    for r in g.ops() {
        prop_assert!(r.ready <= r.start && (r.end.is_none() || r.start <= r.end), "{r:?}");
        if let (OpKind::Recv { .. }, Some(end)) = (r.kind, r.end) {
            let send = g.op(r.matched.expect("an ended recv has its send"));
            prop_assert!(send.end.is_some_and(|t| t <= end) && r.start.is_some_and(|t| t <= end));
        }
        if let Some(id) = r.message {
            prop_assert_eq!(msgs[id as usize].0.time, r.start.unwrap());
            prop_assert_eq!(Some(msgs[id as usize].1), r.end);
        }
    }
    check_critical_path(&g)
}

/// A finished run's critical path ends with an op that ended last, each op
/// was held up by the one before it (ended or started no later than it
/// became ready, a send delivered no later than its recv ended), and its
/// network, calc and CPU-wait time add up to the run's time.
fn check_critical_path(g: &GoalRun) -> Result<(), TestCaseError> {
    let Some(p) = g.critical_path() else {
        prop_assert!(!g.is_complete() || g.schedule().ops().is_empty());
        return Ok(());
    };
    prop_assert_eq!(g.op(*p.ops.last().unwrap()).end, g.finish());
    prop_assert_eq!((p.start, p.end), (g.start(), g.finish().unwrap()));
    prop_assert_eq!(p.network + p.calc + p.cpu_wait, p.end - p.start, "{:?}", p);
    for w in p.ops.windows(2) {
        let (a, b) = (g.op(w[0]), g.op(w[1]));
        prop_assert!(a.start <= b.ready || a.end <= b.end, "{:?} then {:?}", a, b);
    }
    let first = g.op(p.ops[0]);
    prop_assert_eq!(first.ready, Some(g.start()), "the path starts with an op ready at the start");
    Ok(())
}

/// Ways to break a valid schedule: a line dropped, duplicated or changed.
fn mutate(text: &str, what: u8, at: usize) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = at % lines.len();
    match what % 6 {
        0 => {
            lines.remove(i);
        }
        1 => lines.insert(i, lines[i].clone()),
        2 => lines[i] = lines[i].replacen("send", "sned", 1),
        3 => lines[i] = lines[i].replace('b', ""),
        4 => lines[i] = lines[i].replacen(" 1", " 7", 1),
        _ => {
            // A back edge: the first label of the line's rank block requires the line's label.
            if let Some(l) = lines[i].trim().split(':').next().filter(|l| !l.contains(' ')) {
                let first = lines[..i].iter().rev().take_while(|x| !x.starts_with("rank")).last().cloned();
                if let Some(f) = first.and_then(|f| f.trim().split(':').next().map(str::to_string)) {
                    lines.insert(i + 1, format!("{f} requires {l}"));
                }
            }
        }
    }
    lines.join("\n") + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// A schedule that can finish parses and finishes, each op after what it
    /// depends on; broken, it is an error naming its line, or runs and either
    /// finishes or names what its ranks wait on. Never a panic.
    #[test]
    fn random_schedules_finish_or_are_refused_with_a_line((n, items, deps) in items(), what in any::<u8>(), at in any::<usize>()) {
        let text = schedule_text(n, &items, &deps);
        run_and_check(&text, true)?;
        run_and_check(&mutate(&text, what, at), false)?;
    }

    /// Any soup of GOAL words is an error naming a line, or a schedule that
    /// runs to its end or to a wait it can name.
    #[test]
    fn any_text_parses_runs_or_is_refused(lines in proptest::collection::vec(
        proptest::collection::vec(prop_oneof![
            Just("num_ranks"), Just("rank"), Just("{"), Just("}"), Just("send"), Just("recv"), Just("calc"),
            Just("to"), Just("from"), Just("tag"), Just("cpu"), Just("nic"), Just("requires"), Just("irequires"),
            Just("a:"), Just("b:"), Just("a"), Just("b"), Just("0"), Just("1"), Just("2"), Just("3b"), Just("0b"),
            Just("-1"), Just("//"), Just("/*"), Just("*/"), Just("99999999999999999999"), Just("é"),
        ], 0..8), 0..14)) {
        let text: String = lines.iter().map(|l| l.join(" ") + "\n").collect();
        run_and_check(&text, false)?;
        // The canonical start of a file, then the soup.
        run_and_check(&format!("num_ranks 3\nrank 0 {{\n{text}"), false)?;
    }
}
