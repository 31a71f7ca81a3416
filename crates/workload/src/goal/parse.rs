//! Reading GOAL text into a [`Schedule`] ([`parse`]) and writing it back
//! ([`Schedule::to_goal`]); the grammar is in the parent module's comment.
//!
//! Why a hand-written line reader rather than a port of LogGOPSim's re2c
//! scanner: GOAL is one statement per line, so splitting a line into words
//! (and `:`, `{`, `}`) is the whole lexer, and each error can then name the
//! line and the word that is wrong. Every check that needs the whole file
//! (matching sends with recvs, dependency cycles) runs after the last line.

use super::KEY;
use fabriclab_engine::limits::{HORIZON_US, MAX_MESSAGE_BYTES};
use fabriclab_engine::ConfigError;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

/// An op's index in [`Schedule::ops`] (file order).
pub type OpId = u32;

/// What an op does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Send {
        bytes: u64,
        to: u32,
        tag: u32,
    },
    Recv {
        bytes: u64,
        from: u32,
        tag: u32,
    },
    /// Computation for `ns` nanoseconds.
    Calc {
        ns: u64,
    },
}

impl OpKind {
    /// `send`, `recv` or `calc`.
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Send { .. } => "send",
            OpKind::Recv { .. } => "recv",
            OpKind::Calc { .. } => "calc",
        }
    }
}

/// `A requires B` (A starts once B has ended) or `A irequires B` (A may start
/// once B has started).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DepKind {
    Requires,
    Irequires,
}

impl DepKind {
    pub fn name(&self) -> &'static str {
        match self {
            DepKind::Requires => "requires",
            DepKind::Irequires => "irequires",
        }
    }
}

/// One operation of one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub rank: u32,
    pub kind: OpKind,
    pub cpu: u8,
    pub nic: u8,
    /// Its line in the file (from 1); 0 for an op built in code.
    pub line: u32,
    /// Its label: a range of [`Schedule`]'s label text, empty if it has none.
    label: (u32, u32),
}

/// `op` requires or irequires `on` (both of one rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    pub op: OpId,
    pub on: OpId,
    pub kind: DepKind,
    /// Its line in the file; 0 if built in code.
    pub line: u32,
}

/// A GOAL schedule: the ops of every rank and their dependencies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    num_ranks: u32,
    num_ranks_line: u32,
    ops: Vec<Op>,
    deps: Vec<Dep>,
    /// Every label, one after the other (one allocation, not one per op).
    labels: String,
}

impl Schedule {
    /// An empty schedule of `num_ranks` ranks, to fill with [`Schedule::push`].
    pub fn new(num_ranks: u32) -> Schedule {
        Schedule { num_ranks, ..Schedule::default() }
    }

    pub fn num_ranks(&self) -> u32 {
        self.num_ranks
    }

    /// The line of `num_ranks N` (0 if built in code).
    pub fn num_ranks_line(&self) -> u32 {
        self.num_ranks_line
    }

    /// Every op, in file order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// Every dependency, in file order.
    pub fn deps(&self) -> &[Dep] {
        &self.deps
    }

    /// The label of op `op`, if it has one.
    pub fn label(&self, op: OpId) -> Option<&str> {
        let (a, b) = self.ops[op as usize].label;
        (a < b).then(|| &self.labels[a as usize..b as usize])
    }

    /// Op `op` as a person finds it: `rank 2 l7 (line 9)`.
    pub fn describe(&self, op: OpId) -> String {
        let o = &self.ops[op as usize];
        let name = self.label(op).map_or_else(|| format!("unlabelled {}", o.kind.name()), str::to_string);
        if o.line > 0 {
            format!("rank {} {name} (line {})", o.rank, o.line)
        } else {
            format!("rank {} {name}", o.rank)
        }
    }

    /// Adds an op to rank `rank`. Labels must be unique within a rank (as
    /// [`parse`] checks); the builder does not check them.
    pub fn push(&mut self, rank: u32, label: Option<&str>, kind: OpKind) -> OpId {
        let start = self.labels.len() as u32;
        self.labels.push_str(label.unwrap_or(""));
        let id = self.ops.len() as OpId;
        self.ops.push(Op { rank, kind, cpu: 0, nic: 0, line: 0, label: (start, self.labels.len() as u32) });
        id
    }

    /// Puts op `op` on CPU `cpu` and NIC `nic` of its rank.
    pub fn set_cpu_nic(&mut self, op: OpId, cpu: u8, nic: u8) {
        let o = &mut self.ops[op as usize];
        (o.cpu, o.nic) = (cpu, nic);
    }

    /// `op requires on` or `op irequires on`; both must be labelled ops of one rank.
    pub fn depend(&mut self, op: OpId, on: OpId, kind: DepKind) {
        assert!(self.label(op).is_some() && self.label(on).is_some(), "a dependency names two labelled ops");
        assert_eq!(self.ops[op as usize].rank, self.ops[on as usize].rank, "a dependency stays within a rank");
        self.deps.push(Dep { op, on, kind, line: 0 });
    }

    /// The schedule as GOAL text: `num_ranks`, then every rank's block (ops
    /// in order, then its dependencies), ranks in order. [`parse`] reads it
    /// back to the same ops and dependencies.
    pub fn to_goal(&self) -> String {
        let mut by_rank: Vec<Vec<OpId>> = vec![Vec::new(); self.num_ranks as usize];
        for (i, o) in self.ops.iter().enumerate() {
            by_rank[o.rank as usize].push(i as OpId);
        }
        let mut deps_of: Vec<Vec<&Dep>> = vec![Vec::new(); self.num_ranks as usize];
        for d in &self.deps {
            deps_of[self.ops[d.op as usize].rank as usize].push(d);
        }
        let mut out = format!("num_ranks {}\n", self.num_ranks);
        for (rank, ops) in by_rank.iter().enumerate() {
            let _ = writeln!(out, "rank {rank} {{");
            for &id in ops {
                let o = &self.ops[id as usize];
                out.push_str("  ");
                if let Some(l) = self.label(id) {
                    let _ = write!(out, "{l}: ");
                }
                let _ = match o.kind {
                    OpKind::Send { bytes, to, tag } => write!(out, "send {bytes}b to {to} tag {tag}"),
                    OpKind::Recv { bytes, from, tag } => write!(out, "recv {bytes}b from {from} tag {tag}"),
                    OpKind::Calc { ns } => write!(out, "calc {ns}"),
                };
                if o.cpu != 0 {
                    let _ = write!(out, " cpu {}", o.cpu);
                }
                if o.nic != 0 {
                    let _ = write!(out, " nic {}", o.nic);
                }
                out.push('\n');
            }
            for d in &deps_of[rank] {
                let (a, b) = (self.label(d.op).expect("labelled"), self.label(d.on).expect("labelled"));
                let _ = writeln!(out, "  {a} {} {b}", d.kind.name());
            }
            out.push_str("}\n");
        }
        out
    }
}

/// Longest `calc`: the configuration's time horizon (docs/limits.md), in ns.
const MAX_CALC_NS: u64 = (HORIZON_US * 1e3) as u64;

/// Words that cannot be labels: LogGOPSim's scanner reads them as keywords
/// at the start of a statement.
const KEYWORDS: [&str; 5] = ["send", "recv", "calc", "rank", "num_ranks"];

/// Parses GOAL text; `origin` (usually the path) starts every error message,
/// which names the line: `origin:LINE: what is wrong`.
pub fn parse(text: &str, origin: &str) -> Result<Schedule, ConfigError> {
    let err = |line: u32, msg: String| ConfigError::new(KEY, format!("{origin}:{line}: {msg}"));
    let clean = strip_comments(text).map_err(|(line, m)| err(line, m))?;
    let mut p = Parser::default();
    let mut toks = Vec::new();
    for (i, line) in clean.lines().enumerate() {
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        tokens(line, &mut toks);
        if !toks.is_empty() {
            p.statement(&toks, line_no).map_err(|m| err(line_no, m))?;
        }
    }
    p.finish(text.lines().count()).map_err(|(line, m)| err(line, m))
}

/// `text` with its comments blanked (newlines kept, so lines keep their
/// numbers); or the line of a `/*` that is never closed.
fn strip_comments(text: &str) -> Result<Cow<'_, str>, (u32, String)> {
    if !text.contains('/') {
        return Ok(Cow::Borrowed(text));
    }
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let (mut i, mut line) = (0, 1u32);
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (b'\n', _) => line += 1,
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let opened = line;
                out[i..i + 2].fill(b' ');
                i += 2;
                loop {
                    match (b.get(i), b.get(i + 1)) {
                        (None, _) => return Err((opened, "this `/*` comment is never closed with `*/`".into())),
                        (Some(b'*'), Some(b'/')) => {
                            out[i..i + 2].fill(b' ');
                            i += 2;
                            break;
                        }
                        (Some(b'\n'), _) => line += 1,
                        _ => out[i] = b' ',
                    }
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    // Only whole comments, hence whole characters, were blanked.
    Ok(Cow::Owned(String::from_utf8(out).expect("blanking whole characters keeps UTF-8")))
}

/// The words of `line`, with `:`, `{` and `}` as words of their own.
fn tokens<'a>(line: &'a str, out: &mut Vec<&'a str>) {
    out.clear();
    for word in line.split_whitespace() {
        let mut start = 0;
        for (i, c) in word.char_indices() {
            if matches!(c, ':' | '{' | '}') {
                if start < i {
                    out.push(&word[start..i]);
                }
                out.push(&word[i..i + 1]);
                start = i + 1;
            }
        }
        if start < word.len() {
            out.push(&word[start..]);
        }
    }
}

#[derive(Default)]
struct Parser<'a> {
    sched: Schedule,
    num_ranks: Option<u32>,
    /// The line of each rank's block.
    block_line: HashMap<u32, u32>,
    /// The open block: (rank, line).
    block: Option<(u32, u32)>,
    /// Labels of the open block.
    labels: HashMap<&'a str, OpId>,
}

impl<'a> Parser<'a> {
    fn statement(&mut self, t: &[&'a str], line: u32) -> Result<(), String> {
        match (self.block, t) {
            (None, ["num_ranks", rest @ ..]) => self.num_ranks(rest, line),
            (None, ["rank", rest @ ..]) => self.open(rest, line),
            (None, ["}"]) => Err("`}` without an open `rank R {` block".into()),
            (None, _) => Err(format!("expected `num_ranks N` or `rank R {{`, found `{}`", t.join(" "))),
            (Some(_), ["}"]) => {
                self.block = None;
                self.labels.clear();
                Ok(())
            }
            (Some((r, l)), ["rank", ..]) => {
                Err(format!("`rank` inside the block of rank {r} (opened at line {l}): is a `}}` missing?"))
            }
            (Some(_), ["num_ranks", ..]) => Err("`num_ranks` inside a rank block; it comes first in the file".into()),
            (Some((r, _)), [a, kind @ ("requires" | "irequires"), b]) => {
                let kind = if *kind == "requires" { DepKind::Requires } else { DepKind::Irequires };
                self.dep(r, a, kind, b, line)
            }
            (Some(_), [_, "requires" | "irequires", ..]) => {
                Err(format!("expected one label on each side, as in `l2 requires l1`; found `{}`", t.join(" ")))
            }
            (Some((r, _)), [label, ":", rest @ ..]) => self.op(r, Some(label), rest, line),
            (Some((r, _)), _) => self.op(r, None, t, line),
        }
    }

    fn num_ranks(&mut self, rest: &[&str], line: u32) -> Result<(), String> {
        if self.num_ranks.is_some() {
            return Err(format!("`num_ranks` is already set, at line {}", self.sched.num_ranks_line));
        }
        let n = match rest {
            [n] => number::<u32>(n).filter(|&n| n >= 1),
            _ => None,
        };
        let n = n.ok_or_else(|| format!("expected `num_ranks N` with N >= 1, found `num_ranks {}`", rest.join(" ")))?;
        self.num_ranks = Some(n);
        self.sched.num_ranks = n;
        self.sched.num_ranks_line = line;
        Ok(())
    }

    fn open(&mut self, rest: &[&str], line: u32) -> Result<(), String> {
        let n = self.num_ranks.ok_or("a `rank` block before `num_ranks N`, which comes first")?;
        let [r, "{"] = rest else {
            return Err(format!("expected `rank R {{`, found `rank {}`", rest.join(" ")));
        };
        let r = parse_rank(r, n)?;
        if let Some(first) = self.block_line.insert(r, line) {
            return Err(format!("rank {r} already has a block, at line {first}"));
        }
        self.block = Some((r, line));
        Ok(())
    }

    fn dep(&mut self, rank: u32, a: &str, kind: DepKind, b: &str, line: u32) -> Result<(), String> {
        let find = |l: &str| {
            self.labels.get(l).copied().ok_or_else(|| {
                format!(
                    "`{l}` is not the label of an op above this line in rank {rank} (a dependency comes after \
                     the ops it names)"
                )
            })
        };
        let (op, on) = (find(a)?, find(b)?);
        self.sched.deps.push(Dep { op, on, kind, line });
        Ok(())
    }

    fn op(&mut self, rank: u32, label: Option<&'a str>, t: &[&str], line: u32) -> Result<(), String> {
        let n = self.sched.num_ranks;
        let Some((&word, args)) = t.split_first() else {
            return Err(format!("the label `{}` has no operation after `:`", label.unwrap_or("")));
        };
        let (kind, opts) = match word {
            "send" | "recv" => {
                let (bytes, rest) = size(args)?;
                let (dir, other) = if word == "send" { ("to", "from") } else { ("from", "to") };
                let (peer, rest) = match rest {
                    [d, p, rest @ ..] if *d == dir => (*p, rest),
                    [d, ..] if *d == other => {
                        return Err(format!("a {word} names its peer with `{dir}`, not `{other}`"))
                    }
                    _ => return Err(format!("expected `{dir} PEER` after the size of a {word}")),
                };
                if peer == "-1" && word == "recv" {
                    return Err("a recv from any source (`from -1`) is not supported: sends and recvs are matched \
                                by (source, destination, tag)"
                        .into());
                }
                let peer = parse_rank(peer, n)?;
                let kind = if word == "send" {
                    OpKind::Send { bytes, to: peer, tag: 0 }
                } else {
                    OpKind::Recv { bytes, from: peer, tag: 0 }
                };
                (kind, rest)
            }
            "calc" => {
                let [d, rest @ ..] = args else { return Err("expected `calc TIME` (nanoseconds)".into()) };
                let ns = number::<u64>(d).filter(|&ns| ns <= MAX_CALC_NS).ok_or_else(|| {
                    format!(
                        "bad time `{d}`: expected a whole number of nanoseconds up to {MAX_CALC_NS} (docs/limits.md)"
                    )
                })?;
                (OpKind::Calc { ns }, rest)
            }
            _ if label.is_none() && t.get(1).is_some_and(|w| matches!(*w, "send" | "recv" | "calc")) => {
                return Err(format!("unknown operation `{word}`: is a `:` missing after the label?"));
            }
            _ => return Err(format!("unknown operation `{word}` (expected send, recv or calc)")),
        };
        let mut op = Op { rank, kind, cpu: 0, nic: 0, line, label: (0, 0) };
        options(&mut op, opts)?;
        let id = self.sched.ops.len() as OpId;
        if let Some(l) = label {
            if !is_label(l) {
                return Err(format!("`{l}` is not a label (a letter, then letters, digits or `_`; not a keyword)"));
            }
            if let Some(&first) = self.labels.get(l) {
                let first = self.sched.ops[first as usize].line;
                return Err(format!("label `{l}` is already used in rank {rank}, at line {first}"));
            }
            self.labels.insert(l, id);
            let start = self.sched.labels.len();
            self.sched.labels.push_str(l);
            let end = self.sched.labels.len();
            let span = |x: usize| u32::try_from(x).map_err(|_| "the labels exceed 4 GiB of text".to_string());
            op.label = (span(start)?, span(end)?);
        }
        self.sched.ops.push(op);
        Ok(())
    }

    /// Checks what needs the whole file: every block closed, `num_ranks`
    /// present, every send matched by a recv, no dependency cycle.
    fn finish(self, n_lines: usize) -> Result<Schedule, (u32, String)> {
        if let Some((r, line)) = self.block {
            return Err((line, format!("the block of rank {r} is never closed with `}}`")));
        }
        if self.num_ranks.is_none() {
            let line = u32::try_from(n_lines.max(1)).unwrap_or(u32::MAX);
            return Err((line, "no `num_ranks N` line: a schedule starts with one".into()));
        }
        check_matching(&self.sched)?;
        check_cycles(&self.sched)?;
        Ok(self.sched)
    }
}

/// A rank number below `n`, or what is wrong.
fn parse_rank(word: &str, n: u32) -> Result<u32, String> {
    match number::<u32>(word) {
        Some(r) if r < n => Ok(r),
        Some(r) => Err(format!("rank {r} is out of range: num_ranks is {n} (ranks 0 to {})", n - 1)),
        None => Err(format!("expected a rank number, found `{word}`")),
    }
}

/// The size at the start of `args` (`4096b` or `4096 b`) and the words after it.
fn size<'t, 'a>(args: &'t [&'a str]) -> Result<(u64, &'t [&'a str]), String> {
    let digits = |w: &str| !w.is_empty() && w.bytes().all(|c| c.is_ascii_digit());
    let (num, rest) = match args {
        [w, rest @ ..] if w.ends_with('b') && digits(&w[..w.len() - 1]) => (&w[..w.len() - 1], rest),
        [w, "b", rest @ ..] if digits(w) => (*w, rest),
        [w, ..] if digits(w) => return Err(format!("bad size `{w}`: sizes are bytes with a `b` suffix, as in `{w}b`")),
        [w, ..] => {
            return Err(format!("bad size `{w}`: expected a whole number of bytes with a `b` suffix, as in `4096b`"))
        }
        [] => return Err("expected a size, as in `4096b`".into()),
    };
    match number::<u64>(num) {
        Some(b) if b <= MAX_MESSAGE_BYTES => Ok((b, rest)),
        _ => Err(format!("bad size `{num}b`: at most {MAX_MESSAGE_BYTES} bytes (docs/limits.md)")),
    }
}

/// Reads the `tag T`, `cpu C` and `nic N` suffixes into `op`.
fn options(op: &mut Op, mut rest: &[&str]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    let calc = matches!(op.kind, OpKind::Calc { .. });
    while let [name, tail @ ..] = rest {
        let allowed: &[&str] = if calc { &["cpu"] } else { &["tag", "cpu", "nic"] };
        if !allowed.contains(name) {
            let what = if calc { "`cpu`" } else { "`tag`, `cpu` or `nic`" };
            return Err(format!("unexpected `{name}`: a {} takes only {what} after it", op.kind.name()));
        }
        if seen.contains(name) {
            return Err(format!("`{name}` is given twice"));
        }
        seen.push(name);
        let [value, tail @ ..] = tail else { return Err(format!("`{name}` needs a value")) };
        match *name {
            "tag" => {
                if *value == "-1" {
                    return Err("any tag (`tag -1`) is not supported: sends and recvs are matched by (source, \
                                destination, tag)"
                        .into());
                }
                let t = number::<u32>(value).ok_or_else(|| format!("bad tag `{value}`: expected an integer >= 0"))?;
                match &mut op.kind {
                    OpKind::Send { tag, .. } | OpKind::Recv { tag, .. } => *tag = t,
                    OpKind::Calc { .. } => unreachable!("a calc takes no tag"),
                }
            }
            _ => {
                let v =
                    number::<u8>(value).ok_or_else(|| format!("bad {name} `{value}`: expected an integer 0 to 255"))?;
                if *name == "cpu" {
                    op.cpu = v;
                } else {
                    op.nic = v;
                }
            }
        }
        rest = tail;
    }
    Ok(())
}

/// A whole number written in digits only (no sign: Rust's parser takes `+5`, LogGOPSim's does not).
fn number<T: std::str::FromStr>(w: &str) -> Option<T> {
    w.bytes().all(|c| c.is_ascii_digit()).then(|| w.parse().ok()).flatten()
}

fn is_label(l: &str) -> bool {
    let mut c = l.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic())
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
        && !KEYWORDS.contains(&l)
}

/// (source, destination, tag) of a send or recv, and which it is (0 send, 1 recv).
fn comm_key(o: &Op) -> Option<((u32, u32, u32), usize)> {
    match o.kind {
        OpKind::Send { to, tag, .. } => Some(((o.rank, to, tag), 0)),
        OpKind::Recv { from, tag, .. } => Some(((from, o.rank, tag), 1)),
        OpKind::Calc { .. } => None,
    }
}

/// Every send has a recv of its key and every recv a send: the first op (in
/// file order) beyond the count on the other side is the error.
fn check_matching(s: &Schedule) -> Result<(), (u32, String)> {
    let mut total: HashMap<(u32, u32, u32), [u32; 2]> = HashMap::new();
    for o in &s.ops {
        if let Some((key, side)) = comm_key(o) {
            total.entry(key).or_default()[side] += 1;
        }
    }
    if total.values().all(|[a, b]| a == b) {
        return Ok(());
    }
    let mut seen: HashMap<(u32, u32, u32), [u32; 2]> = HashMap::new();
    for o in &s.ops {
        let Some((key, side)) = comm_key(o) else { continue };
        let count = &mut seen.entry(key).or_default()[side];
        *count += 1;
        let t = total[&key];
        if *count > t[1 - side] {
            let (src, dst, tag) = key;
            let msg = if side == 0 {
                format!(
                    "this send to rank {dst} with tag {tag} has no matching recv: rank {src} sends {} messages to rank \
                     {dst} with tag {tag}, rank {dst} posts {} recvs from rank {src} with tag {tag}",
                    t[0], t[1]
                )
            } else {
                format!(
                    "this recv from rank {src} with tag {tag} has no matching send: rank {dst} posts {} recvs from \
                     rank {src} with tag {tag}, rank {src} sends {} messages to rank {dst} with tag {tag}",
                    t[1], t[0]
                )
            };
            return Err((o.line, msg));
        }
    }
    unreachable!("some key has unequal counts")
}

/// No op waits on itself through dependencies (Kahn's algorithm; a cycle is
/// named by walking back from an op that never became free). The error is at
/// the cycle's last dependency in the file.
fn check_cycles(s: &Schedule) -> Result<(), (u32, String)> {
    let n = s.ops.len();
    // Dependencies by dependent op (CSR), to walk back, and by the op depended on, to walk forward.
    let by = |key: fn(&Dep) -> OpId| {
        let mut start = vec![0u32; n + 1];
        for d in &s.deps {
            start[key(d) as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; s.deps.len()];
        for (i, d) in s.deps.iter().enumerate() {
            let k = key(d) as usize;
            list[fill[k] as usize] = i as u32;
            fill[k] += 1;
        }
        (start, list)
    };
    let (out_start, out) = by(|d| d.on);
    let mut indeg = vec![0u32; n];
    for d in &s.deps {
        indeg[d.op as usize] += 1;
    }
    let mut free: Vec<u32> = (0..n as u32).filter(|&i| indeg[i as usize] == 0).collect();
    let mut freed = 0;
    while let Some(v) = free.pop() {
        freed += 1;
        for &d in &out[out_start[v as usize] as usize..out_start[v as usize + 1] as usize] {
            let w = s.deps[d as usize].op as usize;
            indeg[w] -= 1;
            if indeg[w] == 0 {
                free.push(w as u32);
            }
        }
    }
    if freed == n {
        return Ok(());
    }
    // Every op left has a dependency on another op left: walk those back until one repeats.
    let (in_start, inn) = by(|d| d.op);
    let mut pos: HashMap<u32, usize> = HashMap::new();
    let mut path: Vec<u32> = Vec::new(); // dependency indices
    let mut v = (0..n as u32).find(|&i| indeg[i as usize] > 0).expect("an op left");
    loop {
        if let Some(&at) = pos.get(&v) {
            path.drain(..at);
            break;
        }
        pos.insert(v, path.len());
        let d = inn[in_start[v as usize] as usize..in_start[v as usize + 1] as usize]
            .iter()
            .copied()
            .find(|&d| indeg[s.deps[d as usize].on as usize] > 0)
            .expect("an op left depends on another op left");
        path.push(d);
        v = s.deps[d as usize].on;
    }
    let last = path.iter().map(|&d| s.deps[d as usize].line).max().unwrap_or(0);
    let lab = |op: OpId| s.label(op).unwrap_or("?").to_string();
    let mut chain = lab(s.deps[path[0] as usize].op);
    for &d in &path {
        let d = &s.deps[d as usize];
        let _ = write!(chain, " {} {}", d.kind.name(), lab(d.on));
    }
    let mut lines: Vec<u32> = path.iter().map(|&d| s.deps[d as usize].line).collect();
    lines.sort_unstable();
    let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
    let rank = s.ops[s.deps[path[0] as usize].op as usize].rank;
    Err((
        last,
        format!(
            "dependency cycle in rank {rank}: {chain} (lines {}); none of these ops can ever start",
            lines.join(", ")
        ),
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn ok(text: &str) -> Schedule {
        parse(text, "t.goal").unwrap_or_else(|e| panic!("{text}\n{e}"))
    }

    fn parse_err(text: &str) -> String {
        let e = parse(text, "t.goal").expect_err(text);
        assert_eq!(e.key, KEY);
        e.message
    }

    #[test]
    fn reads_every_form_of_the_grammar() {
        let s = ok("// a comment line\n\
             num_ranks 3\n\
             rank 2{\n\
             send 7b to 0\n\
             }\n\
             rank 0 {\n\
             \tl1 : send 10b to 1 tag 4 cpu 1 nic 2 // trailing comment\n\
             l2: recv 7 b from 2\r\n\
             calc 300 cpu 3\n\
             /* a block comment\n\
                over two lines */ l3: calc 0\n\
             recv 0b from 0 nic 1 tag 9 cpu 2\n\
             send 0b to 0 tag 9\n\
             l3 requires l1\n\
             l3 irequires l2\n\
             }\n\
             rank 1 {\n\
             l1: recv 10b from 0 tag 4\n\
             }\n");
        assert_eq!(s.num_ranks(), 3);
        type Row<'a> = (u32, Option<&'a str>, OpKind, u8, u8, u32);
        let got: Vec<Row> = (0..s.ops().len() as u32)
            .map(|i| {
                let o = &s.ops()[i as usize];
                (o.rank, s.label(i), o.kind, o.cpu, o.nic, o.line)
            })
            .collect();
        assert_eq!(
            got,
            [
                (2, None, OpKind::Send { bytes: 7, to: 0, tag: 0 }, 0, 0, 4),
                (0, Some("l1"), OpKind::Send { bytes: 10, to: 1, tag: 4 }, 1, 2, 7),
                (0, Some("l2"), OpKind::Recv { bytes: 7, from: 2, tag: 0 }, 0, 0, 8),
                (0, None, OpKind::Calc { ns: 300 }, 3, 0, 9),
                (0, Some("l3"), OpKind::Calc { ns: 0 }, 0, 0, 11),
                (0, None, OpKind::Recv { bytes: 0, from: 0, tag: 9 }, 2, 1, 12),
                (0, None, OpKind::Send { bytes: 0, to: 0, tag: 9 }, 0, 0, 13),
                (1, Some("l1"), OpKind::Recv { bytes: 10, from: 0, tag: 4 }, 0, 0, 18),
            ]
        );
        assert_eq!(
            s.deps(),
            [
                Dep { op: 4, on: 1, kind: DepKind::Requires, line: 14 },
                Dep { op: 4, on: 2, kind: DepKind::Irequires, line: 15 }
            ]
        );
        assert_eq!(s.describe(4), "rank 0 l3 (line 11)");
        assert_eq!(s.describe(0), "rank 2 unlabelled send (line 4)");
    }

    #[test]
    fn labels_are_scoped_to_their_rank() {
        let s = ok(
            "num_ranks 2\nrank 0 {\nl1: send 1b to 1\n}\nrank 1 {\nl1: recv 1b from 0\nl2: calc 5\nl2 requires l1\n}\n",
        );
        assert_eq!(s.deps(), [Dep { op: 2, on: 1, kind: DepKind::Requires, line: 8 }]);
    }

    /// Each wrong file: its line and what the message must say.
    #[test]
    fn every_error_names_its_line() {
        let h = "num_ranks 2\nrank 0 {\n";
        let cases: Vec<(String, &str, &str)> = vec![
            (format!("{h}l1: sned 5b to 1\n}}\n"), "t.goal:3:", "unknown operation `sned`"),
            (format!("{h}l1 send 5b to 1\n}}\n"), "t.goal:3:", "is a `:` missing"),
            (format!("{h}l1: send 5 to 1\n}}\n"), "t.goal:3:", "bad size `5`: sizes are bytes with a `b` suffix"),
            (format!("{h}l1: send 5kb to 1\n}}\n"), "t.goal:3:", "bad size `5kb`"),
            (format!("{h}l1: send -5b to 1\n}}\n"), "t.goal:3:", "bad size `-5b`"),
            (format!("{h}l1: send 1.5b to 1\n}}\n"), "t.goal:3:", "bad size `1.5b`"),
            (format!("{h}l1: send 4294967297b to 1\n}}\n"), "t.goal:3:", "at most 4294967296 bytes"),
            (format!("{h}l1: send 99999999999999999999999b to 1\n}}\n"), "t.goal:3:", "at most"),
            (format!("{h}l1: send 5b from 1\n}}\n"), "t.goal:3:", "with `to`, not `from`"),
            (format!("{h}l1: send 5b to 2\n}}\n"), "t.goal:3:", "rank 2 is out of range: num_ranks is 2"),
            (format!("{h}l1: recv 5b from 1 tag x\n}}\n"), "t.goal:3:", "bad tag `x`"),
            (format!("{h}l1: recv 5b from +1\n}}\n"), "t.goal:3:", "expected a rank number, found `+1`"),
            (format!("{h}l1: recv 5b from -1\n}}\n"), "t.goal:3:", "any source"),
            (format!("{h}l1: recv 5b from 1 tag -1\n}}\n"), "t.goal:3:", "any tag"),
            (format!("{h}l1: recv 5b from 1 tag 1 tag 2\n}}\n"), "t.goal:3:", "`tag` is given twice"),
            (format!("{h}l1: recv 5b from 1 cpu 256\n}}\n"), "t.goal:3:", "bad cpu `256`"),
            (format!("{h}l1: recv 5b from 1 tag\n}}\n"), "t.goal:3:", "`tag` needs a value"),
            (format!("{h}l1: calc 5 tag 1\n}}\n"), "t.goal:3:", "takes only `cpu`"),
            (format!("{h}l1: calc 5.5\n}}\n"), "t.goal:3:", "bad time `5.5`"),
            (format!("{h}l1: calc 100000000000000001\n}}\n"), "t.goal:3:", "bad time"),
            (
                format!("{h}l1: calc 5\nl1: calc 6\n}}\n"),
                "t.goal:4:",
                "label `l1` is already used in rank 0, at line 3",
            ),
            (format!("{h}send: calc 5\n}}\n"), "t.goal:3:", "`send` is not a label"),
            (format!("{h}rank: calc 5\n}}\n"), "t.goal:3:", "`rank` inside the block of rank 0"),
            (format!("{h}9x: calc 5\n}}\n"), "t.goal:3:", "`9x` is not a label"),
            (format!("{h}l1: calc 5\nl1 requires l2\n}}\n"), "t.goal:4:", "`l2` is not the label of an op above"),
            (format!("{h}l1 requires l2\nl1: calc 5\nl2: calc 5\n}}\n"), "t.goal:3:", "`l1` is not the label"),
            (format!("{h}l1: calc 5\nl1 requires\n}}\n"), "t.goal:4:", "one label on each side"),
            (format!("{h}l1: calc 5\n"), "t.goal:2:", "block of rank 0 is never closed"),
            (format!("{h}}}\nrank 0 {{\n}}\n"), "t.goal:4:", "rank 0 already has a block, at line 2"),
            (format!("{h}}}\nrank 2 {{\n}}\n"), "t.goal:4:", "rank 2 is out of range"),
            (format!("{h}}}\n}}\n"), "t.goal:4:", "`}` without an open"),
            (format!("{h}}}\nnum_ranks 3\n"), "t.goal:4:", "already set, at line 1"),
            (format!("{h}num_ranks 3\n}}\n"), "t.goal:3:", "`num_ranks` inside a rank block"),
            (format!("{h}}}\nsend 5b to 1\n"), "t.goal:4:", "expected `num_ranks N` or `rank R {`"),
            ("rank 0 {\n}\n".to_string(), "t.goal:1:", "before `num_ranks N`"),
            ("num_ranks 0\n".to_string(), "t.goal:1:", "N >= 1"),
            ("num_ranks 2\nrank 0\n".to_string(), "t.goal:2:", "expected `rank R {`"),
            ("\n\n".to_string(), "t.goal:2:", "no `num_ranks N` line"),
            ("num_ranks 2\n/* open\n\n".to_string(), "t.goal:2:", "never closed with `*/`"),
            (format!("{h}l1: calc 5\nl1 requires l1\n}}\n"), "t.goal:4:", "dependency cycle in rank 0: l1 requires l1"),
        ];
        for (text, line, what) in cases {
            let m = parse_err(&text);
            assert!(m.starts_with(line) && m.contains(what), "{text:?}\n  gave: {m}\n  want: {line} ... {what}");
        }
    }

    #[test]
    fn unmatched_sends_and_recvs_are_named() {
        // Rank 0 sends twice with tag 3; rank 1 posts one recv: the second send is the error.
        let text = "num_ranks 2\nrank 0 {\nsend 5b to 1 tag 3\nsend 5b to 1 tag 3\nsend 5b to 1 tag 4\n}\n\
                    rank 1 {\nrecv 5b from 0 tag 3\nrecv 9b from 0 tag 4\n}\n";
        let m = parse_err(text);
        assert!(m.starts_with("t.goal:4: this send to rank 1 with tag 3 has no matching recv"), "{m}");
        assert!(m.contains("sends 2 messages") && m.contains("posts 1 recvs"), "{m}");
        // A recv without a send; the tag decides, not the size (9b against 5b above is fine).
        let text = "num_ranks 2\nrank 0 {\nsend 5b to 1 tag 3\n}\nrank 1 {\nrecv 5b from 0 tag 3\nrecv 5b from 0\n}\n";
        let m = parse_err(text);
        assert!(m.starts_with("t.goal:7: this recv from rank 0 with tag 0 has no matching send"), "{m}");
    }

    #[test]
    fn a_cycle_is_named_at_its_last_dependency() {
        let text = "num_ranks 1\nrank 0 {\na: calc 1\nb: calc 1\nc: calc 1\nd: calc 1\n\
                    b requires a\nc requires b\nb irequires c\nd requires c\n}\n";
        let m = parse_err(text);
        assert!(m.starts_with("t.goal:9: dependency cycle in rank 0:"), "{m}");
        assert!(m.contains("b irequires c requires b") || m.contains("c requires b irequires c"), "{m}");
        assert!(m.contains("(lines 8, 9)"), "{m}");
        // The same ops without the back edge are fine.
        ok("num_ranks 1\nrank 0 {\na: calc 1\nb: calc 1\nc: calc 1\nb requires a\nc requires b\nc irequires a\n}\n");
    }

    #[test]
    fn written_schedules_read_back_the_same() {
        let mut s = Schedule::new(3);
        let a = s.push(2, Some("x"), OpKind::Calc { ns: 7 });
        let b = s.push(0, Some("y_1"), OpKind::Send { bytes: 0, to: 2, tag: 5 });
        let c = s.push(2, None, OpKind::Recv { bytes: 3, from: 0, tag: 5 });
        let d = s.push(2, Some("z"), OpKind::Send { bytes: 9, to: 2, tag: 0 });
        let e = s.push(2, Some("w"), OpKind::Recv { bytes: 9, from: 2, tag: 0 });
        s.set_cpu_nic(c, 4, 1);
        s.depend(d, a, DepKind::Irequires);
        s.depend(e, d, DepKind::Requires);
        let text = s.to_goal();
        let back = ok(&text);
        assert_eq!(canonical(&back), canonical(&s), "{text}");
        assert_eq!(back.to_goal(), text);
        let _ = b;
    }

    /// One rank's ops (label, kind, cpu, nic) and dependencies (by label).
    pub(crate) type RankOps = (Vec<(Option<String>, OpKind, u8, u8)>, Vec<(String, DepKind, String)>);

    /// Per rank, its ops in order and its dependencies by label.
    pub(crate) fn canonical(s: &Schedule) -> Vec<RankOps> {
        let mut out = vec![(Vec::new(), Vec::new()); s.num_ranks() as usize];
        for (i, o) in s.ops().iter().enumerate() {
            out[o.rank as usize].0.push((s.label(i as u32).map(str::to_string), o.kind, o.cpu, o.nic));
        }
        for d in s.deps() {
            let r = s.ops()[d.op as usize].rank as usize;
            out[r].1.push((s.label(d.op).unwrap().to_string(), d.kind, s.label(d.on).unwrap().to_string()));
        }
        out
    }
}
