//! The critical path of a finished GOAL run: the chain of ops that set its
//! completion time, walked back from the op that ended last (the last in
//! file order of those that ended then).
//!
//! Each op on the path was held up last by its predecessor:
//! - a recv whose message was delivered after the recv was posted: by the
//!   matched send (through the send's end);
//! - a calc that waited for its CPU: by the calc that ran before it on that
//!   CPU of its rank (through its end);
//! - otherwise by the dependency that made it ready last: a `requires` dep
//!   through its end, an `irequires` dep through its start (of several
//!   released at the same time, the one written last).
//!
//! The path's time, from the schedule's start to its completion, splits into
//! *network* (a send of the path has its message in flight; a recv waiting
//! for its message is charged through that send), *calc* (a calc of the path
//! runs) and *CPU wait* (a calc of the path is ready but its CPU is busy:
//! from its ready time to its start, whatever runs on the path meanwhile).
//! The three add up to the completion time less `workload.start_us`.
//!
//! Why after the run, from the ops' times: the run stays as lean as it is
//! (nothing recorded per event), and every rule above reads only the times
//! [`GoalRun::op`] keeps.

use super::parse::{DepKind, OpId, OpKind};
use super::run::GoalRun;
use fabriclab_engine::Time;

/// How the path enters an op: through its end, or (for an `irequires`
/// successor) through its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Through {
    End,
    Start,
}

/// What the path spends a stretch of time on.
#[derive(Clone, Copy)]
enum Part {
    Network,
    Calc,
    /// An op that takes no time of its own (a recv, or an op entered through its start).
    Nothing,
}

/// The chain of ops that set a run's completion time, and where its time went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CriticalPath {
    /// Its ops, first to last (the last is the op that ended last).
    pub ops: Vec<OpId>,
    /// The schedule's start (when the path's first op became ready) and its completion.
    pub start: Time,
    pub end: Time,
    /// Picoseconds with a message of the path in flight.
    pub network: Time,
    /// Picoseconds with a calc of the path running.
    pub calc: Time,
    /// Picoseconds with a calc of the path ready and its CPU busy.
    pub cpu_wait: Time,
}

impl GoalRun {
    /// The critical path, once every op has ended (None before, or without ops).
    pub fn critical_path(&self) -> Option<CriticalPath> {
        let end = self.finish()?;
        let last = (0..self.schedule().ops().len() as OpId).rev().find(|&op| self.op(op).end == Some(end))?;
        Some(Walk::new(self).back_from(last, end))
    }
}

/// Lookups the walk needs, built once after the run.
struct Walk<'a> {
    run: &'a GoalRun,
    /// Per op, the indices of its dependencies in `Schedule::deps` (CSR).
    dep_start: Vec<u32>,
    dep_idx: Vec<u32>,
    /// Per calc, the calc that ran before it on its CPU (`OpId::MAX` if none).
    cpu_prev: Vec<OpId>,
}

impl<'a> Walk<'a> {
    fn new(run: &'a GoalRun) -> Walk<'a> {
        let (ops, deps) = (run.schedule().ops(), run.schedule().deps());
        let mut dep_start = vec![0u32; ops.len() + 1];
        for d in deps {
            dep_start[d.op as usize + 1] += 1;
        }
        for i in 0..ops.len() {
            dep_start[i + 1] += dep_start[i];
        }
        let mut fill = dep_start.clone();
        let mut dep_idx = vec![0u32; deps.len()];
        for (i, d) in deps.iter().enumerate() {
            dep_idx[fill[d.op as usize] as usize] = i as u32;
            fill[d.op as usize] += 1;
        }
        Walk { run, dep_start, dep_idx, cpu_prev: cpu_order(run) }
    }

    /// Walks back from `last`, which ended at `end`, to an op nothing held up.
    fn back_from(&self, last: OpId, end: Time) -> CriticalPath {
        let mut path = CriticalPath { end, ..CriticalPath::default() };
        let (mut at, mut cursor, mut wait_from) = (Some((last, Through::End)), end, Time::MAX);
        while let Some((op, through)) = at {
            path.ops.push(op);
            let r = self.run.op(op);
            let (ready, start) = (r.ready.expect("ended ops were ready"), r.start.expect("and started"));
            let (from, part) = match (r.kind, through) {
                (OpKind::Send { .. }, Through::End) => (start, Part::Network),
                (OpKind::Calc { .. }, Through::End) => (start, Part::Calc),
                _ => (cursor, Part::Nothing),
            };
            path.charge(from, cursor, part, wait_from);
            cursor = from;
            at = match r.kind {
                OpKind::Recv { .. } if through == Through::End && self.delivered_after_posting(op) => {
                    r.matched.map(|send| (send, Through::End))
                }
                OpKind::Calc { .. } if start > ready => {
                    wait_from = wait_from.min(ready);
                    Some((self.cpu_prev[op as usize], Through::End))
                }
                _ => self.released_by(op),
            };
            debug_assert!(at.is_some() || cursor == ready, "the path starts where its first op became ready");
        }
        path.ops.reverse();
        path.start = cursor;
        path
    }

    /// Whether recv `op`'s message was delivered after the recv was posted.
    fn delivered_after_posting(&self, op: OpId) -> bool {
        let r = self.run.op(op);
        r.matched.and_then(|s| self.run.op(s).end) > r.start
    }

    /// The dependency of `op` whose end (`requires`) or start (`irequires`)
    /// made it ready, the last written of those at that time.
    fn released_by(&self, op: OpId) -> Option<(OpId, Through)> {
        let deps = self.run.schedule().deps();
        let (a, b) = (self.dep_start[op as usize] as usize, self.dep_start[op as usize + 1] as usize);
        let mut best: Option<(Time, OpId, Through)> = None;
        for &i in &self.dep_idx[a..b] {
            let d = deps[i as usize];
            let on = self.run.op(d.on);
            let (t, through) = match d.kind {
                DepKind::Requires => (on.end, Through::End),
                DepKind::Irequires => (on.start, Through::Start),
            };
            let t = t.expect("a ready op's dependencies are met");
            if best.is_none_or(|(bt, _, _)| t >= bt) {
                best = Some((t, d.on, through));
            }
        }
        best.map(|(_, on, through)| (on, through))
    }
}

impl CriticalPath {
    /// Adds `[from, to)` spent on `part`, its stretch from `wait_from` on as CPU wait.
    fn charge(&mut self, from: Time, to: Time, part: Part, wait_from: Time) {
        let waited = to.saturating_sub(from.max(wait_from));
        self.cpu_wait += waited;
        let rest = to - from - waited;
        match part {
            Part::Network => self.network += rest,
            Part::Calc => self.calc += rest,
            Part::Nothing => debug_assert_eq!(rest, 0, "an op without time of its own"),
        }
    }
}

/// Per calc, the calc before it on the same CPU of its rank, in the order
/// they ran (by start, then end: a zero-time calc at a time runs before one
/// that starts then and lasts).
fn cpu_order(run: &GoalRun) -> Vec<OpId> {
    let ops = run.schedule().ops();
    let mut calcs: Vec<(u32, u8, Time, Time, OpId)> = run
        .ops()
        .filter(|r| matches!(r.kind, OpKind::Calc { .. }))
        .filter_map(|r| Some((r.rank, ops[r.op as usize].cpu, r.start?, r.end?, r.op)))
        .collect();
    calcs.sort_unstable();
    let mut prev = vec![OpId::MAX; ops.len()];
    for w in calcs.windows(2) {
        if (w[0].0, w[0].1) == (w[1].0, w[1].1) {
            prev[w[1].4 as usize] = w[0].4;
        }
    }
    prev
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal::parse;
    use fabriclab_engine::NS;

    fn run(text: &str) -> GoalRun {
        GoalRun::new(parse(text, "t.goal").unwrap_or_else(|e| panic!("{e}")), vec![0, 1], 0)
    }

    /// Hands out every released message and delivers each `flight` after it starts, until done.
    fn finish(g: &mut GoalRun, flight: Time) {
        let (mut flying, mut wake, mut id) = (Vec::<(Time, u64)>::new(), None, 0);
        loop {
            while let Some(m) = g.next() {
                flying.push((m.time + flight, id));
                id += 1;
            }
            wake = g.take_wake().or(wake);
            flying.sort_unstable_by(|a, b| b.cmp(a)); // the earliest last
            match (flying.last().copied(), wake) {
                (Some((t, m)), w) if w.is_none_or(|w| t <= w) => {
                    flying.pop();
                    g.on_complete(m, t);
                }
                (_, Some(w)) => {
                    wake = None;
                    g.advance(w);
                }
                _ => break,
            }
        }
        assert!(g.is_complete(), "{}", g.describe_waiting(10));
    }

    /// Rank 0 sends, rank 1 computes on it and answers; rank 0 then computes.
    /// With 1 us per message: send 0-1, recv 0-1, calc 1-1.2, send 1.2-2.2,
    /// recv 0-2.2, calc 2.2-2.25.
    #[test]
    fn ping_calc_pong_path_and_times_are_known_by_hand() {
        let mut g = run(crate::goal::run::PING_CALC_PONG);
        finish(&mut g, 1000 * NS);
        let p = g.critical_path().unwrap();
        // 0.a (send) -> 1.a (recv) -> 1.b (calc) -> 1.c (send) -> 0.b (recv) -> 0.c (calc).
        assert_eq!(p.ops, [0, 3, 4, 5, 1, 2]);
        assert_eq!((p.start, p.end), (0, 2250 * NS));
        assert_eq!((p.network, p.calc, p.cpu_wait), (2000 * NS, 250 * NS, 0));
    }

    /// A message delivered before its recv is posted leaves the send off the
    /// path: the recv waited for its own dependency.
    #[test]
    fn an_early_message_leaves_its_send_off_the_path() {
        let text = "num_ranks 2\nrank 0 {\nsend 8b to 1\n}\n\
                    rank 1 {\nc: calc 400\nr: recv 8b from 0\nd: calc 10\nr requires c\nd requires r\n}\n";
        let mut g = run(text);
        finish(&mut g, 100 * NS);
        let p = g.critical_path().unwrap();
        assert_eq!(p.ops, [1, 2, 3]);
        assert_eq!((p.network, p.calc, p.cpu_wait, p.end), (0, 410 * NS, 0, 410 * NS));
    }

    /// Two calcs on one CPU: the second, ready at once, waits 300 ns for the
    /// first; its predecessor is the first calc, and the wait is CPU wait.
    /// `x irequires w`: only w's start (after its CPU wait) holds x up.
    #[test]
    fn a_calc_that_waited_for_its_cpu_follows_the_calc_before_it() {
        let text = "num_ranks 2\nrank 0 {\na: calc 300\nw: calc 100\nx: send 8b to 1\nx irequires w\n}\n\
                    rank 1 {\nrecv 8b from 0\n}\n";
        let mut g = run(text);
        finish(&mut g, 1000 * NS);
        assert_eq!((g.op(1).ready, g.op(1).start), (Some(0), Some(300 * NS)));
        let p = g.critical_path().unwrap();
        // a (calc 0-300) -> w (entered through its start at 300) -> x (send 300-1300) -> recv.
        assert_eq!(p.ops, [0, 1, 2, 3]);
        assert_eq!((p.network, p.calc, p.cpu_wait, p.end), (1000 * NS, 0, 300 * NS, 1300 * NS));
    }

    #[test]
    fn of_several_dependencies_the_one_met_last_is_the_predecessor() {
        let text = "num_ranks 2\nrank 0 {\na: calc 100 cpu 1\nb: calc 70\ns: send 8b to 1\n\
                    s requires a\ns requires b\n}\nrank 1 {\nrecv 8b from 0\n}\n";
        let mut g = run(text);
        finish(&mut g, 10 * NS);
        let p = g.critical_path().unwrap();
        assert_eq!(p.ops, [0, 2, 3]);
        assert_eq!((p.network, p.calc), (10 * NS, 100 * NS));
    }

    #[test]
    fn an_unfinished_run_has_no_critical_path() {
        let g = run("num_ranks 2\nrank 0 {\nsend 8b to 1\n}\nrank 1 {\nrecv 8b from 0\n}\n");
        assert_eq!(g.critical_path(), None);
        let empty = run("num_ranks 2\n");
        assert!(empty.is_complete() && empty.critical_path().is_none());
    }
}
