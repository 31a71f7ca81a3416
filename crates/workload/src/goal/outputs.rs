//! What a GOAL run writes besides the simulator's own files: summary.json's
//! `goal` object ([`GoalSummary`]) and one ops.csv row per op ([`OpRow`]),
//! both made once after the run (docs/output.md lists the fields).

use super::critical::CriticalPath;
use super::parse::{OpId, OpKind};
use super::run::GoalRun;
use fabriclab_engine::{Time, US};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

fn us(t: Time) -> f64 {
    t as f64 / US as f64
}

/// summary.json's `goal` object: present for `kind = "goal"` runs only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GoalSummary {
    pub ranks: u32,
    pub ops: u64,
    /// Whether every op ended before the run did.
    pub complete: bool,
    /// `workload.start_us`: when the ops without dependencies became ready.
    pub start_us: f64,
    /// When the last op ended (simulated time, as messages.csv's times);
    /// null unless `complete`.
    pub completion_us: Option<f64>,
    /// `completion_us - start_us`; null unless `complete`.
    pub makespan_us: Option<f64>,
    /// Ranks with an op that has not ended (docs/applications.md: why a run stops early).
    pub ranks_waiting: u32,
    /// When the ranks that finished ended their last op; null if none did.
    pub rank_finish_us: Option<RankFinish>,
    pub op_counts: OpCounts,
    /// Null unless `complete`.
    pub critical_path: Option<PathSummary>,
}

/// The finish times of the ranks that finished, microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFinish {
    pub min: f64,
    /// The lower median (the middle rank's, or the lower of the two middle ones).
    pub median: f64,
    pub max: f64,
    /// The rank that finished last (the lowest of those tied).
    pub last_rank: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpCounts {
    pub send: u64,
    pub recv: u64,
    pub calc: u64,
}

/// The critical path ([`CriticalPath`]): its length in ops and where its time went.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PathSummary {
    pub ops: u64,
    pub network_us: f64,
    pub calc_us: f64,
    pub cpu_wait_us: f64,
    /// Each of the three over `makespan_us` (0 for a schedule that takes no time).
    pub network_share: f64,
    pub calc_share: f64,
    pub cpu_wait_share: f64,
}

impl GoalSummary {
    /// The summary of `run` (finished or not), with its critical path if it has one.
    pub fn of(run: &GoalRun, path: Option<&CriticalPath>) -> GoalSummary {
        let finish = run.finish();
        let ranks = run.rank_finish();
        let mut op_counts = OpCounts::default();
        for o in run.schedule().ops() {
            match o.kind {
                OpKind::Send { .. } => op_counts.send += 1,
                OpKind::Recv { .. } => op_counts.recv += 1,
                OpKind::Calc { .. } => op_counts.calc += 1,
            }
        }
        GoalSummary {
            ranks: ranks.len() as u32,
            ops: run.schedule().ops().len() as u64,
            complete: finish.is_some(),
            start_us: us(run.start()),
            completion_us: finish.map(us),
            makespan_us: finish.map(|f| us(f - run.start())),
            ranks_waiting: ranks.iter().filter(|f| f.is_none()).count() as u32,
            rank_finish_us: RankFinish::of(&ranks),
            op_counts,
            critical_path: path.map(PathSummary::of),
        }
    }
}

impl RankFinish {
    fn of(ranks: &[Option<Time>]) -> Option<RankFinish> {
        let mut done: Vec<(Time, u32)> =
            (ranks.iter().enumerate()).filter_map(|(r, f)| Some(((*f)?, r as u32))).collect();
        // Latest first among ties is the lowest rank: sort by time, then by rank descending.
        done.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let (first, last) = (done.first()?, done.last()?);
        Some(RankFinish {
            min: us(first.0),
            median: us(done[(done.len() - 1) / 2].0),
            max: us(last.0),
            last_rank: last.1,
        })
    }
}

impl PathSummary {
    fn of(p: &CriticalPath) -> PathSummary {
        let total = (p.end - p.start) as f64;
        let share = |t: Time| if total > 0.0 { t as f64 / total } else { 0.0 };
        PathSummary {
            ops: p.ops.len() as u64,
            network_us: us(p.network),
            calc_us: us(p.calc),
            cpu_wait_us: us(p.cpu_wait),
            network_share: share(p.network),
            calc_share: share(p.calc),
            cpu_wait_share: share(p.cpu_wait),
        }
    }
}

/// One op of a GOAL run (ops.csv); `msg_id` joins a send to messages.csv's `id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpRow {
    pub op: OpId,
    pub rank: u32,
    pub host: u32,
    pub label: Option<Box<str>>,
    pub kind: OpKind,
    pub ready: Option<Time>,
    pub start: Option<Time>,
    pub end: Option<Time>,
    pub msg_id: Option<u64>,
    pub on_critical_path: bool,
}

impl OpRow {
    pub const CSV_HEADER: &'static str =
        "op,rank,host,label,kind,peer,tag,bytes,calc_ns,ready_us,start_us,end_us,msg_id,on_critical_path";

    /// Every op of `run` in file order, those of `path` marked.
    pub fn all(run: &GoalRun, path: Option<&CriticalPath>) -> Vec<OpRow> {
        let mut on_path = vec![false; run.schedule().ops().len()];
        for &op in path.map_or(&[][..], |p| &p.ops) {
            on_path[op as usize] = true;
        }
        run.ops()
            .map(|r| OpRow {
                op: r.op,
                rank: r.rank,
                host: run.hosts()[r.rank as usize],
                label: r.label.map(Into::into),
                kind: r.kind,
                ready: r.ready,
                start: r.start,
                end: r.end,
                msg_id: r.message,
                on_critical_path: on_path[r.op as usize],
            })
            .collect()
    }

    /// The row as ops.csv writes it (times in microseconds to the picosecond;
    /// empty fields for what the op has not got or not reached).
    pub fn csv_row(&self, out: &mut String) {
        let (peer, tag, bytes, ns) = match self.kind {
            OpKind::Send { bytes, to, tag } => (Some(to), Some(tag), Some(bytes), None),
            OpKind::Recv { bytes, from, tag } => (Some(from), Some(tag), Some(bytes), None),
            OpKind::Calc { ns } => (None, None, None, Some(ns)),
        };
        let _ = write!(
            out,
            "{},{},{},{},{},",
            self.op,
            self.rank,
            self.host,
            self.label.as_deref().unwrap_or(""),
            self.kind.name()
        );
        for v in [peer.map(u64::from), tag.map(u64::from), bytes, ns] {
            opt(out, v.map(|v| v.to_string()));
        }
        for t in [self.ready, self.start, self.end] {
            opt(out, t.map(|t| format!("{:.6}", us(t))));
        }
        opt(out, self.msg_id.map(|m| m.to_string()));
        let _ = writeln!(out, "{}", u8::from(self.on_critical_path));
    }
}

/// A field and its comma, empty when absent.
fn opt(out: &mut String, v: Option<String>) {
    if let Some(v) = v {
        out.push_str(&v);
    }
    out.push(',');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_finish_takes_the_lower_median_and_the_lowest_last_rank() {
        let f = RankFinish::of(&[Some(3 * US), None, Some(US), Some(3 * US), Some(2 * US)]).unwrap();
        assert_eq!(f, RankFinish { min: 1.0, median: 2.0, max: 3.0, last_rank: 0 });
        assert_eq!(RankFinish::of(&[None, None]), None);
    }

    #[test]
    fn rows_leave_what_an_op_has_not_got_empty() {
        let row = OpRow {
            op: 4,
            rank: 1,
            host: 7,
            label: None,
            kind: OpKind::Calc { ns: 250 },
            ready: Some(US),
            start: Some(2 * US),
            end: None,
            msg_id: None,
            on_critical_path: false,
        };
        let mut s = String::new();
        row.csv_row(&mut s);
        assert_eq!(s, "4,1,7,,calc,,,,250,1.000000,2.000000,,,0\n");
        let send = OpRow {
            label: Some("l2".into()),
            kind: OpKind::Send { bytes: 0, to: 3, tag: 9 },
            msg_id: Some(12),
            end: Some(3 * US),
            on_critical_path: true,
            ..row
        };
        s.clear();
        send.csv_row(&mut s);
        assert_eq!(s, "4,1,7,l2,send,3,9,0,,1.000000,2.000000,3.000000,12,1\n");
        assert_eq!(s.trim_end().split(',').count(), OpRow::CSV_HEADER.split(',').count());
    }
}
