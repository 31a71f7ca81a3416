//! Executing a [`Schedule`] closed loop: sends become messages when they are
//! ready, deliveries end sends and recvs, calcs end on the workload's own
//! clock (the semantics are in the parent module's comment).
//!
//! Why the workload keeps a clock of its own: a calc ends at a time no
//! message completion marks, and one rank's calcs on one CPU queue behind
//! each other, so which calc runs when is only known once the simulation
//! has reached that time. The workload therefore never works ahead: it
//! handles calc ends when the simulator calls [`GoalRun::advance`] at the
//! times [`GoalRun::take_wake`] names, and every message it releases starts
//! at the time it is released (so [`GoalRun::next`] hands them out in time
//! order).
//!
//! Message ids are the order in which [`GoalRun::next`] hands messages out,
//! which is the order the simulator starts them.

use super::parse::{DepKind, OpId, OpKind, Schedule};
use crate::MessageSpec;
use fabriclab_engine::{Time, NS, US};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt::Write as _;

/// A time not reached yet.
const NEVER: Time = Time::MAX;
/// No op.
const NONE: OpId = OpId::MAX;

/// The sends started and recvs posted, not yet matched, of one (source,
/// destination, tag); one of the two is always empty.
#[derive(Default)]
struct Key {
    sends: VecDeque<OpId>,
    recvs: VecDeque<OpId>,
}

/// One CPU of one rank: whether a calc runs on it, and the calcs waiting.
#[derive(Default)]
struct Cpu {
    busy: bool,
    queue: VecDeque<OpId>,
}

#[derive(Clone, Copy)]
enum Step {
    Ready,
    End,
}

/// A GOAL schedule being executed.
pub struct GoalRun {
    sched: Schedule,
    /// Host of each rank.
    host: Vec<u32>,
    start: Time,
    /// The time being handled.
    now: Time,
    /// Per op, the ops that depend on it (CSR, from the dependencies by `on`).
    succ_start: Vec<u32>,
    succ: Vec<(OpId, DepKind)>,
    /// Per op: `requires` not yet ended, `irequires` not yet started.
    need: Vec<[u32; 2]>,
    ready: Vec<Time>,
    started: Vec<Time>,
    ended: Vec<Time>,
    /// Per op: a send's or recv's key (index into `keys`), a calc's CPU (into `cpus`).
    slot: Vec<u32>,
    /// A send's recv and a recv's send, once matched.
    partner: Vec<OpId>,
    /// A send's message id, once handed out.
    message: Vec<u64>,
    keys: Vec<Key>,
    cpus: Vec<Cpu>,
    /// Calc ends: (time, op).
    timers: BinaryHeap<Reverse<(Time, OpId)>>,
    /// The last wake time given to the simulator.
    announced: Option<Time>,
    /// Ops to make ready or end at `now`, in order.
    work: VecDeque<(Step, OpId)>,
    /// Messages released and not handed out, with their sends.
    released: VecDeque<(MessageSpec, OpId)>,
    /// The send of each message handed out.
    msg_op: Vec<OpId>,
    n_ended: usize,
    total_bytes: u64,
}

impl GoalRun {
    /// Prepares `sched` (as [`super::parse()`] returns it: matched, acyclic)
    /// with rank r on host `hosts[r]`; the ops without dependencies become
    /// ready at `start`. Panics unless there is one host per rank.
    pub fn new(sched: Schedule, hosts: Vec<u32>, start: Time) -> GoalRun {
        assert_eq!(hosts.len(), sched.num_ranks() as usize, "one host per rank");
        let ops = sched.ops();
        let n = ops.len();
        let mut succ_start = vec![0u32; n + 1];
        let mut need = vec![[0u32; 2]; n];
        for d in sched.deps() {
            succ_start[d.on as usize + 1] += 1;
            need[d.op as usize][matches!(d.kind, DepKind::Irequires) as usize] += 1;
        }
        for i in 0..n {
            succ_start[i + 1] += succ_start[i];
        }
        let mut fill = succ_start.clone();
        let mut succ = vec![(NONE, DepKind::Requires); sched.deps().len()];
        for d in sched.deps() {
            succ[fill[d.on as usize] as usize] = (d.op, d.kind);
            fill[d.on as usize] += 1;
        }
        let (mut key_ids, mut cpu_ids) = (HashMap::new(), HashMap::new());
        let mut total_bytes = 0;
        let slot = ops
            .iter()
            .map(|o| match o.kind {
                OpKind::Send { bytes, to, tag } => {
                    if to != o.rank {
                        total_bytes += bytes.max(1);
                    }
                    dense(&mut key_ids, (o.rank, to, tag))
                }
                OpKind::Recv { from, tag, .. } => dense(&mut key_ids, (from, o.rank, tag)),
                OpKind::Calc { .. } => dense(&mut cpu_ids, (o.rank, o.cpu)),
            })
            .collect();
        let mut run = GoalRun {
            host: hosts,
            start,
            now: start,
            succ_start,
            succ,
            ready: vec![NEVER; n],
            started: vec![NEVER; n],
            ended: vec![NEVER; n],
            slot,
            partner: vec![NONE; n],
            message: vec![u64::MAX; n],
            keys: (0..key_ids.len()).map(|_| Key::default()).collect(),
            cpus: (0..cpu_ids.len()).map(|_| Cpu::default()).collect(),
            timers: BinaryHeap::new(),
            announced: None,
            work: VecDeque::new(),
            released: VecDeque::new(),
            msg_op: Vec::new(),
            n_ended: 0,
            total_bytes,
            need,
            sched,
        };
        for op in 0..n as OpId {
            if run.need[op as usize] == [0, 0] {
                run.work.push_back((Step::Ready, op));
            }
        }
        run.run_work();
        run
    }

    /// Bytes the schedule's sends put on the network (sends to another rank;
    /// a zero-byte send counts the one byte it moves).
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// The next message released and not yet handed out; all start at or
    /// before the time last handled, in non-decreasing order.
    #[allow(clippy::should_implement_trait)] // the closed-loop contract, as `Workload::next`
    pub fn next(&mut self) -> Option<MessageSpec> {
        let (m, op) = self.released.pop_front()?;
        self.message[op as usize] = self.msg_op.len() as u64;
        self.msg_op.push(op);
        Some(m)
    }

    /// Message `id` (in hand-out order) was delivered at `now`: its send
    /// ends, and its recv too if posted. Calcs due by `now` end first.
    pub fn on_complete(&mut self, id: u64, now: Time) {
        self.advance(now);
        let Some(&op) = self.msg_op.get(id as usize) else { return };
        if self.ended[op as usize] != NEVER {
            return;
        }
        self.now = now;
        self.work.push_back((Step::End, op));
        self.run_work();
        self.advance(now); // calcs of zero time it started
    }

    /// Ends, in time order, the calcs due by `now`, and what follows from them.
    pub fn advance(&mut self, now: Time) {
        while let Some(&Reverse((t, op))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            self.now = t;
            self.work.push_back((Step::End, op));
            self.run_work();
        }
        self.now = self.now.max(now);
    }

    /// The time of the next calc end if the simulator has not been given it
    /// yet: it must then call [`GoalRun::advance`] at that time.
    pub fn take_wake(&mut self) -> Option<Time> {
        let Reverse((t, _)) = *self.timers.peek()?;
        if self.announced == Some(t) {
            return None;
        }
        self.announced = Some(t);
        Some(t)
    }

    /// No calc is running or waiting for its CPU.
    pub fn idle(&self) -> bool {
        self.timers.is_empty()
    }

    fn run_work(&mut self) {
        while let Some((step, op)) = self.work.pop_front() {
            match step {
                Step::Ready => self.make_ready(op),
                Step::End => self.end(op),
            }
        }
    }

    fn make_ready(&mut self, op: OpId) {
        let i = op as usize;
        self.ready[i] = self.now;
        let o = self.sched.ops()[i];
        let slot = self.slot[i] as usize;
        match o.kind {
            OpKind::Send { bytes, to, .. } => {
                self.begin(op);
                if to == o.rank {
                    // A copy within the rank: nothing crosses the network.
                    self.work.push_back((Step::End, op));
                } else {
                    let (src, dst) = (self.host[o.rank as usize], self.host[to as usize]);
                    let m = MessageSpec { time: self.now, src, dst, size: bytes.max(1), incast: false };
                    self.released.push_back((m, op));
                }
                self.keys[slot].sends.push_back(op);
                self.try_match(slot);
            }
            OpKind::Recv { .. } => {
                self.begin(op);
                self.keys[slot].recvs.push_back(op);
                self.try_match(slot);
            }
            OpKind::Calc { .. } => {
                if self.cpus[slot].busy {
                    self.cpus[slot].queue.push_back(op);
                } else {
                    self.run_calc(op);
                }
            }
        }
    }

    fn run_calc(&mut self, op: OpId) {
        let OpKind::Calc { ns } = self.sched.ops()[op as usize].kind else { unreachable!("a calc") };
        self.cpus[self.slot[op as usize] as usize].busy = true;
        self.begin(op);
        self.timers.push(Reverse((self.now.saturating_add(ns * NS), op)));
    }

    /// `op` starts now: the ops that irequire it may become ready.
    fn begin(&mut self, op: OpId) {
        self.started[op as usize] = self.now;
        self.release(op, DepKind::Irequires);
    }

    fn end(&mut self, op: OpId) {
        let i = op as usize;
        debug_assert_eq!(self.ended[i], NEVER, "GOAL op {} ended twice", self.sched.describe(op));
        self.ended[i] = self.now;
        self.n_ended += 1;
        self.release(op, DepKind::Requires);
        match self.sched.ops()[i].kind {
            OpKind::Send { .. } => {
                if self.partner[i] != NONE {
                    self.work.push_back((Step::End, self.partner[i]));
                }
            }
            OpKind::Recv { .. } => {}
            OpKind::Calc { .. } => {
                let cpu = self.slot[i] as usize;
                match self.cpus[cpu].queue.pop_front() {
                    Some(next) => self.run_calc(next),
                    None => self.cpus[cpu].busy = false,
                }
            }
        }
    }

    /// The ops that depend on `op` by `kind` lose one dependency.
    fn release(&mut self, op: OpId, kind: DepKind) {
        let side = matches!(kind, DepKind::Irequires) as usize;
        let (a, b) = (self.succ_start[op as usize] as usize, self.succ_start[op as usize + 1] as usize);
        for &(s, k) in &self.succ[a..b] {
            if k == kind {
                let need = &mut self.need[s as usize];
                need[side] -= 1;
                if *need == [0, 0] {
                    self.work.push_back((Step::Ready, s));
                }
            }
        }
    }

    /// Pairs the key's started sends with its posted recvs, first with first.
    fn try_match(&mut self, slot: usize) {
        let key = &mut self.keys[slot];
        while !key.sends.is_empty() && !key.recvs.is_empty() {
            let (s, r) = (key.sends.pop_front().expect("a send"), key.recvs.pop_front().expect("a recv"));
            self.partner[s as usize] = r;
            self.partner[r as usize] = s;
            if self.ended[s as usize] != NEVER {
                self.work.push_back((Step::End, r));
            }
        }
    }
}

/// The number of `k` among the keys numbered so far in order of appearance.
fn dense<K: std::hash::Hash + Eq>(ids: &mut HashMap<K, u32>, k: K) -> u32 {
    let n = ids.len() as u32;
    *ids.entry(k).or_insert(n)
}

/// One op of the schedule and its times so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpRecord<'a> {
    pub op: OpId,
    pub rank: u32,
    pub label: Option<&'a str>,
    /// As the schedule says (a zero-byte send moves one byte).
    pub kind: OpKind,
    pub line: u32,
    /// When its dependencies were met.
    pub ready: Option<Time>,
    /// When it started: a send's message started, a recv was posted, a calc got its CPU.
    pub start: Option<Time>,
    pub end: Option<Time>,
    /// A send's message id (None for a send to its own rank).
    pub message: Option<u64>,
    /// A send's matched recv, a recv's matched send.
    pub matched: Option<OpId>,
}

/// An op that a rank waits on, and what it waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub rank: u32,
    pub op: OpId,
    pub on: WaitsOn,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitsOn {
    /// A posted recv that no started send matches; `send` is the send of its
    /// key next in file order that has not started, which would match it.
    Message { send: Option<OpId> },
    /// A started send whose message has not been delivered, or a recv
    /// matched to it.
    Delivery { send: OpId },
    /// A calc running, or waiting for its CPU.
    Cpu,
}

fn time(t: Time) -> Option<Time> {
    (t != NEVER).then_some(t)
}

impl GoalRun {
    pub fn schedule(&self) -> &Schedule {
        &self.sched
    }

    /// The host of each rank.
    pub fn hosts(&self) -> &[u32] {
        &self.host
    }

    /// When the ops without dependencies became ready (`workload.start_us`).
    pub fn start(&self) -> Time {
        self.start
    }

    /// Op `op` and its times so far.
    pub fn op(&self, op: OpId) -> OpRecord<'_> {
        let i = op as usize;
        let o = &self.sched.ops()[i];
        OpRecord {
            op,
            rank: o.rank,
            label: self.sched.label(op),
            kind: o.kind,
            line: o.line,
            ready: time(self.ready[i]),
            start: time(self.started[i]),
            end: time(self.ended[i]),
            message: (self.message[i] != u64::MAX).then_some(self.message[i]),
            matched: (self.partner[i] != NONE).then_some(self.partner[i]),
        }
    }

    /// Every op and its times so far, in file order.
    pub fn ops(&self) -> impl Iterator<Item = OpRecord<'_>> + '_ {
        (0..self.sched.ops().len() as OpId).map(|op| self.op(op))
    }

    /// The send op of message `id`.
    pub fn message_op(&self, id: u64) -> Option<OpId> {
        self.msg_op.get(id as usize).copied()
    }

    /// Whether every op has ended.
    pub fn is_complete(&self) -> bool {
        self.n_ended == self.sched.ops().len()
    }

    /// When the last op ended, once every op has.
    pub fn finish(&self) -> Option<Time> {
        self.is_complete().then(|| self.ended.iter().copied().max().unwrap_or(self.start))
    }

    /// Per rank, when its last op ended, once all its ops have (a rank
    /// without ops finishes at the start).
    pub fn rank_finish(&self) -> Vec<Option<Time>> {
        let mut fin = vec![Some(self.start); self.host.len()];
        for (o, &end) in self.sched.ops().iter().zip(&self.ended) {
            let f = &mut fin[o.rank as usize];
            *f = if end == NEVER { None } else { f.map(|t| t.max(end)) };
        }
        fin
    }

    /// What each unfinished rank waits on: every op of it that is ready and
    /// has not ended (a posted recv, a send on its way, a calc). Every
    /// unfinished rank has one, since dependencies stay within a rank and
    /// have no cycle; the ops behind them are not listed ([`GoalRun::unmet`]
    /// gives what one of those lacks).
    pub fn waiting(&self) -> Vec<Waiting> {
        let ops = self.sched.ops();
        let mut out = Vec::new();
        // For a posted recv with no send, the k-th unstarted send of its key (file order).
        let mut unstarted: HashMap<usize, Vec<OpId>> = HashMap::new();
        for (i, o) in ops.iter().enumerate() {
            if matches!(o.kind, OpKind::Send { .. }) && self.started[i] == NEVER {
                unstarted.entry(self.slot[i] as usize).or_default().push(i as OpId);
            }
        }
        for (i, o) in ops.iter().enumerate() {
            let op = i as OpId;
            if self.ended[i] != NEVER {
                continue;
            }
            let on = match o.kind {
                _ if self.ready[i] == NEVER => continue,
                OpKind::Calc { .. } => WaitsOn::Cpu,
                OpKind::Send { .. } => WaitsOn::Delivery { send: op },
                OpKind::Recv { .. } if self.partner[i] != NONE => WaitsOn::Delivery { send: self.partner[i] },
                OpKind::Recv { .. } => {
                    let slot = self.slot[i] as usize;
                    let k = self.keys[slot].recvs.iter().position(|&x| x == op).unwrap_or(0);
                    WaitsOn::Message { send: unstarted.get(&slot).and_then(|v| v.get(k)).copied() }
                }
            };
            out.push(Waiting { rank: o.rank, op, on });
        }
        out.sort_by_key(|w| (w.rank, w.op));
        out
    }

    /// The dependencies of `op` not met yet: the ops it requires that have
    /// not ended and those it irequires that have not started.
    pub fn unmet(&self, op: OpId) -> Vec<OpId> {
        let mut m: Vec<OpId> = (self.sched.deps().iter())
            .filter(|d| d.op == op)
            .filter(|d| match d.kind {
                DepKind::Requires => self.ended[d.on as usize] == NEVER,
                DepKind::Irequires => self.started[d.on as usize] == NEVER,
            })
            .map(|d| d.on)
            .collect();
        m.dedup();
        m
    }

    /// [`GoalRun::waiting`] in words, one line per op (at most `max_lines`),
    /// empty when every op has ended.
    pub fn describe_waiting(&self, max_lines: usize) -> String {
        let w = self.waiting();
        let ranks = {
            let mut r: Vec<u32> = w.iter().map(|x| x.rank).collect();
            r.dedup();
            r.len()
        };
        let mut out = String::new();
        if w.is_empty() {
            return out;
        }
        let _ = writeln!(out, "{ranks} of {} ranks have not finished:", self.host.len());
        let d = |op: OpId| self.sched.describe(op);
        let us = |t: Time| t as f64 / US as f64;
        for x in w.iter().take(max_lines) {
            let o = &self.sched.ops()[x.op as usize];
            let what = match (o.kind, &x.on) {
                (OpKind::Recv { from, tag, .. }, WaitsOn::Message { send }) => {
                    let posted = us(self.started[x.op as usize]);
                    let why = match send {
                        Some(s) if self.ready[*s as usize] == NEVER => {
                            let lacks: Vec<String> = self.unmet(*s).into_iter().map(d).collect();
                            format!("; its send, {}, is not ready: it waits on {}", d(*s), lacks.join(", "))
                        }
                        Some(s) => format!("; its send is {}", d(*s)),
                        None => String::new(),
                    };
                    format!("recv from rank {from} tag {tag}, posted at {posted} us, has no message{why}")
                }
                (_, WaitsOn::Delivery { send }) => {
                    let id = self.message[*send as usize];
                    format!("{} waits for the delivery of message {id} ({})", o.kind.name(), d(*send))
                }
                (_, WaitsOn::Cpu) => format!("calc on cpu {}", o.cpu),
                (_, WaitsOn::Message { .. }) => unreachable!("only recvs wait for a message"),
            };
            let _ = writeln!(out, "  {}: {what}", d(x.op));
        }
        if w.len() > max_lines {
            let _ = writeln!(out, "  ... and {} more", w.len() - max_lines);
        }
        out
    }
}

/// Rank 0 sends 1000 B to rank 1, which computes 200 ns and answers 10 B;
/// rank 0 then computes 50 ns (the unit tests' hand-computed case).
#[cfg(test)]
pub(crate) const PING_CALC_PONG: &str = "num_ranks 2\n\
    rank 0 {\n  a: send 1000b to 1 tag 1\n  b: recv 10b from 1 tag 2\n  c: calc 50\n  c requires b\n}\n\
    rank 1 {\n  a: recv 1000b from 0 tag 1\n  b: calc 200\n  c: send 10b to 0 tag 2\n  b requires a\n  c requires b\n}\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal::parse;

    fn run(text: &str, hosts: Vec<u32>, start: Time) -> GoalRun {
        GoalRun::new(parse(text, "t.goal").unwrap_or_else(|e| panic!("{e}")), hosts, start)
    }

    fn drain(g: &mut GoalRun) -> Vec<MessageSpec> {
        std::iter::from_fn(|| g.next()).collect()
    }

    fn msg(time: Time, src: u32, dst: u32, size: u64) -> MessageSpec {
        MessageSpec { time, src, dst, size, incast: false }
    }

    /// Two ranks ping-pong, with a calc between, on hosts 5 and 2.
    #[test]
    fn ping_calc_pong_starts_each_message_at_its_exact_time() {
        let mut g = run(PING_CALC_PONG, vec![5, 2], 1_000);
        assert_eq!(drain(&mut g), [msg(1_000, 5, 2, 1000)]);
        assert_eq!(g.take_wake(), None);
        // Message 0 delivered at 9 ns: rank 1's recv ends, its calc of 200 ns starts.
        g.on_complete(0, 9_000);
        assert!(drain(&mut g).is_empty());
        assert_eq!(g.take_wake(), Some(209_000));
        assert_eq!(g.take_wake(), None, "told once");
        g.advance(208_999);
        assert!(drain(&mut g).is_empty());
        g.advance(209_000);
        assert_eq!(drain(&mut g), [msg(209_000, 2, 5, 10)]);
        g.on_complete(1, 300_000);
        assert!(!g.is_complete() && !g.idle());
        assert_eq!(g.take_wake(), Some(350_000));
        g.advance(350_000);
        assert!(g.is_complete() && g.idle());
        assert_eq!(g.finish(), Some(350_000));
        assert_eq!(g.rank_finish(), [Some(350_000), Some(300_000)]);
        type Times<'a> = (Option<&'a str>, Option<Time>, Option<Time>, Option<u64>);
        let recs: Vec<Times> = g.ops().map(|r| (r.label, r.start, r.end, r.message)).collect();
        assert_eq!(
            recs,
            [
                (Some("a"), Some(1_000), Some(9_000), Some(0)),
                (Some("b"), Some(1_000), Some(300_000), None),
                (Some("c"), Some(300_000), Some(350_000), None),
                (Some("a"), Some(1_000), Some(9_000), None),
                (Some("b"), Some(9_000), Some(209_000), None),
                (Some("c"), Some(209_000), Some(300_000), Some(1)),
            ]
        );
        assert_eq!(g.message_op(1), Some(5));
        assert_eq!(g.op(4).matched, None);
        assert_eq!((g.op(0).matched, g.op(3).matched), (Some(3), Some(0)));
        assert!(g.waiting().is_empty() && g.describe_waiting(10).is_empty());
    }

    #[test]
    fn irequires_waits_for_the_start_and_requires_for_the_end() {
        // Rank 0: a calc of 100 ns; x may start with it, y once it has ended.
        let text = "num_ranks 2\nrank 0 {\nc: calc 100\nx: send 1b to 1\ny: send 2b to 1\n\
                    x irequires c\ny requires c\n}\nrank 1 {\nrecv 1b from 0\nrecv 2b from 0\n}\n";
        let mut g = run(text, vec![0, 1], 0);
        assert_eq!(drain(&mut g), [msg(0, 0, 1, 1)]);
        assert_eq!(g.take_wake(), Some(100_000));
        g.advance(100_000);
        assert_eq!(drain(&mut g), [msg(100_000, 0, 1, 2)]);
        // The recvs match the sends in the order the sends started (tag 0 both).
        g.on_complete(1, 150_000);
        assert_eq!((g.op(4).end, g.op(3).end), (Some(150_000), None));
        assert_eq!(g.op(4).matched, Some(2));
    }

    #[test]
    fn calcs_on_one_cpu_run_one_at_a_time() {
        // Three independent calcs: two on cpu 0 queue, one on cpu 1 runs beside them.
        let text = "num_ranks 1\nrank 0 {\na: calc 10\nb: calc 20\nc: calc 5 cpu 1\nd: calc 0\n\
                    d requires b\n}\n";
        let mut g = run(text, vec![0], 0);
        g.advance(1_000_000);
        let t: Vec<(Option<Time>, Option<Time>)> = g.ops().map(|r| (r.start, r.end)).collect();
        assert_eq!(
            t,
            [
                (Some(0), Some(10_000)),
                (Some(10_000), Some(30_000)),
                (Some(0), Some(5_000)),
                (Some(30_000), Some(30_000))
            ]
        );
        assert!(g.is_complete());
    }

    #[test]
    fn a_message_delivered_before_its_recv_is_posted_ends_the_recv_at_posting() {
        let text = "num_ranks 2\nrank 0 {\nsend 8b to 1 tag 3\n}\n\
                    rank 1 {\nc: calc 40\nr: recv 8b from 0 tag 3\nr requires c\n}\n";
        let mut g = run(text, vec![0, 1], 0);
        assert_eq!(drain(&mut g), [msg(0, 0, 1, 8)]);
        g.on_complete(0, 10_000);
        assert_eq!(g.op(2).end, None);
        g.advance(40_000);
        assert_eq!((g.op(2).start, g.op(2).end), (Some(40_000), Some(40_000)));
        assert_eq!(g.op(0).end, Some(10_000), "a send ends at delivery");
    }

    #[test]
    fn sends_to_the_own_rank_and_zero_bytes() {
        let text = "num_ranks 2\nrank 0 {\ns: send 5b to 0\nr: recv 5b from 0\nz: send 0b to 1\n\
                    z requires r\n}\nrank 1 {\nrecv 0b from 0\n}\n";
        let mut g = run(text, vec![3, 1], 7);
        assert_eq!(drain(&mut g), [msg(7, 3, 1, 1)], "the local copy ends at once; zero bytes move one");
        assert_eq!(g.op(1).end, Some(7));
        assert_eq!(g.total_bytes(), 1);
        assert_eq!(g.op(2).kind, OpKind::Send { bytes: 0, to: 1, tag: 0 });
    }

    #[test]
    fn a_cross_rank_deadlock_names_who_waits_on_what() {
        // Each rank receives before it sends: neither send can start.
        let text = "num_ranks 3\nrank 0 {\nr: recv 4b from 1\ns: send 4b to 1\ns requires r\n}\n\
                    rank 1 {\nr: recv 4b from 0\ns: send 4b to 0\ns requires r\n}\n\
                    rank 2 {\nc: calc 1\n}\n";
        let mut g = run(text, vec![0, 1, 2], 0);
        assert!(drain(&mut g).is_empty());
        g.advance(1_000);
        assert!(g.idle() && !g.is_complete());
        assert_eq!(
            g.waiting(),
            [
                Waiting { rank: 0, op: 0, on: WaitsOn::Message { send: Some(3) } },
                Waiting { rank: 1, op: 2, on: WaitsOn::Message { send: Some(1) } },
            ]
        );
        let text = g.describe_waiting(10);
        assert!(text.starts_with("2 of 3 ranks have not finished:"), "{text}");
        assert!(
            text.contains(
                "rank 0 r (line 3): recv from rank 1 tag 0, posted at 0 us, has no message; its send, rank 1 s \
                 (line 9), is not ready: it waits on rank 1 r (line 8)"
            ),
            "{text}"
        );
        assert_eq!(g.rank_finish(), [None, None, Some(1_000)]);
        assert_eq!(g.finish(), None);
        assert_eq!(g.describe_waiting(1).lines().last(), Some("  ... and 1 more"));
    }

    #[test]
    fn messages_on_their_way_and_running_calcs_are_what_ranks_wait_on() {
        // Rank 1 waits on a recv whose message is on its way; rank 0 has one in flight.
        let text = "num_ranks 2\nrank 0 {\ns: send 4b to 1\n}\nrank 1 {\nr: recv 4b from 0\nc: calc 5\n\
                    c requires r\n}\n";
        let mut g = run(text, vec![0, 1], 0);
        assert_eq!(drain(&mut g).len(), 1);
        let w = g.waiting();
        assert_eq!(
            w,
            [
                Waiting { rank: 0, op: 0, on: WaitsOn::Delivery { send: 0 } },
                Waiting { rank: 1, op: 1, on: WaitsOn::Delivery { send: 0 } },
            ]
        );
        let mut s = Schedule::new(1);
        let a = s.push(0, Some("a"), OpKind::Calc { ns: 5 });
        let b = s.push(0, Some("b"), OpKind::Calc { ns: 5 });
        s.depend(b, a, DepKind::Requires);
        let g = GoalRun::new(s, vec![0], 0);
        assert_eq!(g.waiting(), [Waiting { rank: 0, op: 0, on: WaitsOn::Cpu }]);
        assert_eq!(g.unmet(1), [0]);
        assert!(g.describe_waiting(5).contains("rank 0 a: calc on cpu 0"), "{}", g.describe_waiting(5));
    }
}
