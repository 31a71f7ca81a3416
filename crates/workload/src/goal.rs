//! GOAL schedules (`kind = "goal"`): a task graph of sends, receives and
//! computations per rank, executed closed loop on the packet-level fabric.
//!
//! GOAL (Group Operation Assembly Language) is the schedule format of
//! LogGOPSim (Hoefler, Schneider, Lumsdaine, "LogGOPSim: Simulating
//! Large-Scale Applications in the LogGOPS Model", HPDC 2010 workshops;
//! github.com/spcl/LogGOPSim) and of ATLAHS (github.com/spcl/atlahs, SC25),
//! whose tools (Schedgen, the NCCL and MPI tracers) write it from collectives
//! and application traces. The grammar below was read from LogGOPSim's
//! `txt2bin.re` (the text-to-binary reader), its matching in `LogGOPSim.cpp`,
//! and ATLAHS's htsim backend (`sim/htsim-backend/sim/datacenter/logsim-interface.cpp`).
//!
//! # The format (`workload.goal_file`)
//!
//! ```text
//! num_ranks 2
//! rank 0 {
//!   l1: calc 500              // 500 ns of computation
//!   l2: send 4096b to 1 tag 7
//!   l2 requires l1            // l2 starts once l1 has ended
//! }
//! rank 1 {
//!   l1: recv 4096b from 0 tag 7
//!   l2: send 8b to 0
//!   l2 irequires l1           // l2 may start once l1 has started
//! }
//! ```
//!
//! - One statement per line. `//` comments run to the end of the line,
//!   `/* ... */` comments may span lines.
//! - `num_ranks N` comes first; then blocks `rank R { ... }` with
//!   `0 <= R < N`, each rank at most once, in any order (a rank without a
//!   block has no operations). The `{` is on the `rank` line, the `}` on a
//!   line of its own.
//! - Operations, each with an optional label `NAME:` (a letter, then letters,
//!   digits or `_`; labels are scoped to their rank block):
//!   - `send SIZEb to PEER [tag T] [cpu C] [nic N]`
//!   - `recv SIZEb from PEER [tag T] [cpu C] [nic N]`
//!   - `calc TIME [cpu C]`, TIME in nanoseconds (LogGOPSim's time unit: its
//!     L, o, g are ns and `calc` is added to them unscaled; ATLAHS's htsim
//!     backend reads it against htsim's clock in ns).
//!
//!   SIZE is a whole number of bytes with the `b` suffix (`4096b` or `4096 b`),
//!   at most 2^32 (docs/limits.md). The tag defaults to 0; tag, cpu and nic
//!   may come in any order, each once (LogGOPSim wants them in that order).
//! - Dependencies between two labels of the same rank, written below both
//!   ops (LogGOPSim resolves a label when it reads the line):
//!   `A requires B` (A starts once B has ended) and `A irequires B` (A may
//!   start once B has started).
//!
//! # How a schedule runs
//!
//! An op is *ready* when every op it `requires` has ended and every op it
//! `irequires` has started; ops with neither are ready at `workload.start_us`.
//! - A send starts when ready: one message from the host of its rank to the
//!   host of the peer rank, of its size. It ends when the message has been
//!   delivered (the transport's completion: every byte at the receiver).
//! - A recv starts (is posted) when ready and ends when its matched message
//!   has been delivered. Sends and recvs are matched as LogGOPSim and MPI
//!   do: by (source rank, destination rank, tag), the k-th send of a key to
//!   start with the k-th recv of that key to be posted. Sizes are not
//!   compared (LogGOPSim does not either); the message carries the send's.
//! - A calc starts when ready and its CPU (`cpu C` of its rank, default 0)
//!   is free, and ends TIME later: one rank's calcs on one CPU run one at a
//!   time, in the order they became ready, as LogGOPSim's per-CPU `nexto`
//!   makes them.
//!
//! The rank-to-host map is the identity unless `workload.rank_map_file`
//! lists a host per rank (one host id per line, rank 0 first; blank lines and
//! `#` comments ignored); hosts must exist and be distinct.
//!
//! # Choices where the sources are silent or differ
//!
//! - LogGP's host overheads (o, O, g, G) are not modelled: the network part
//!   is the packet-level fabric, and the CPU only runs calcs.
//! - A send ends when its message is delivered, whether or not the recv has
//!   been posted (the data moves eagerly). LogGOPSim ends an eager send after
//!   o, and ATLAHS's htsim backend when the message is matched.
//! - A zero-byte send moves one byte (a message needs at least one), as
//!   ATLAHS's backend does; [`run::OpRecord`] keeps the schedule's size.
//! - A send to its own rank moves nothing through the network: it ends when
//!   it starts, and its recv ends when both are there (ATLAHS turns both into
//!   1 ns computations).
//! - A `calc 0` takes no time (ATLAHS's backend makes it 1 ns).
//! - `nic N` is read and kept, but a fabriclab host has one NIC.
//! - Wildcards (`from -1`, `tag -1`) are refused: LogGOPSim's default
//!   (hashed) matching does not honour them either.
//! - Labels scoped to their rank, duplicates refused (LogGOPSim keeps the
//!   first silently).
//!
//! A schedule whose ranks wait on each other (a recv whose send depends on
//! it, through another rank) does not hang the run: with nothing to inject
//! and nothing in flight the simulator stops, and
//! [`run::GoalRun::waiting`] says which ranks wait on which ops.
//!
//! Modules: [`mod@parse`] reads and writes the text ([`Schedule`]); [`run`]
//! executes it ([`run::GoalRun`]); [`critical`] finds a finished run's
//! critical path; [`outputs`] makes summary.json's `goal` object and
//! ops.csv's rows; [`collectives`] writes schedules of common collectives.
//! docs/applications.md shows how to run a schedule and read its outputs.

pub mod collectives;
pub mod critical;
pub mod outputs;
pub mod parse;
pub mod run;

pub use critical::CriticalPath;
pub use outputs::{GoalSummary, OpRow};
pub use parse::{parse, Dep, DepKind, Op, OpId, OpKind, Schedule};
pub use run::{GoalRun, OpRecord, Waiting, WaitsOn};

use crate::trace::content_lines;
use crate::WorkloadEnv;
use fabriclab_engine::{from_us, ConfigError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub(crate) const KEY: &str = "workload.goal_file";
const MAP_KEY: &str = "workload.rank_map_file";

/// `kind = "goal"`: a GOAL schedule run closed loop.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Goal {
    /// Required: the GOAL schedule (text). Relative paths are resolved
    /// against the experiment file's directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goal_file: Option<PathBuf>,
    /// The host of each rank, one host id per line, rank 0 first; absent:
    /// rank r runs on host r.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_map_file: Option<PathBuf>,
    /// When the ops without dependencies become ready, microseconds.
    pub start_us: f64,
}

impl Goal {
    /// The schedule's path; an error when `goal_file` is not set.
    pub fn path(&self) -> Result<&Path, ConfigError> {
        self.goal_file.as_deref().ok_or_else(|| ConfigError::new(KEY, "is required with kind = \"goal\"".into()))
    }

    /// Every check that needs neither the files' contents nor the fabric.
    pub fn check(&self) -> Result<(), ConfigError> {
        let files = [(KEY, Some(self.path()?)), (MAP_KEY, self.rank_map_file.as_deref())];
        for (key, path) in files {
            if let Some(path) = path.filter(|p| !p.is_file()) {
                return Err(ConfigError::new(key, format!("{} does not exist or is not a file", path.display())));
            }
        }
        crate::closed::check_start(self.start_us)
    }
}

/// Reads, checks and prepares the schedule of `cfg` on `env`'s fabric.
pub(crate) fn load(cfg: &Goal, env: &WorkloadEnv) -> Result<GoalRun, ConfigError> {
    cfg.check()?;
    let path = cfg.path()?;
    let origin = path.display().to_string();
    let sched = parse(&crate::read_input(path, KEY, "GOAL schedule")?, &origin)?;
    let hosts = match &cfg.rank_map_file {
        Some(map) => {
            let text = crate::read_input(map, MAP_KEY, "rank map")?;
            rank_map(&text, &map.display().to_string(), sched.num_ranks(), env.n_hosts)?
        }
        None if sched.num_ranks() <= env.n_hosts => (0..sched.num_ranks()).collect(),
        None => {
            return Err(ConfigError::new(
                KEY,
                format!(
                    "{origin}:{}: num_ranks is {} but the topology has {} hosts; set workload.rank_map_file \
                     or use a larger topology",
                    sched.num_ranks_line(),
                    sched.num_ranks(),
                    env.n_hosts
                ),
            ))
        }
    };
    Ok(GoalRun::new(sched, hosts, from_us(cfg.start_us)))
}

/// The host of each of `ranks` ranks from rank-map text: one host id per
/// line, below `n_hosts`, distinct. `origin` names the file in errors.
pub fn rank_map(text: &str, origin: &str, ranks: u32, n_hosts: u32) -> Result<Vec<u32>, ConfigError> {
    let err = |line: usize, msg: String| ConfigError::new(MAP_KEY, format!("{origin}:{line}: {msg}"));
    let mut hosts = Vec::new();
    let mut line_of = std::collections::HashMap::new();
    for (line, field) in content_lines(text) {
        let host = match field.parse::<u32>() {
            Ok(h) if h < n_hosts => h,
            Ok(h) => return Err(err(line, format!("host {h} does not exist (the topology has hosts 0..{n_hosts})"))),
            Err(_) => return Err(err(line, format!("expected a host id, found `{field}`"))),
        };
        if hosts.len() == ranks as usize {
            return Err(err(line, format!("lists more hosts than the schedule's {ranks} ranks")));
        }
        if let Some(first) = line_of.insert(host, line) {
            return Err(err(line, format!("host {host} is already the host of another rank (line {first})")));
        }
        hosts.push(host);
    }
    if hosts.len() < ranks as usize {
        let last = text.lines().count().max(1);
        return Err(err(last, format!("lists {} hosts but the schedule has {ranks} ranks", hosts.len())));
    }
    Ok(hosts)
}

/// What a quick look at a schedule file finds, for estimates before a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Scan {
    pub ranks: f64,
    pub ops: f64,
    pub sends: f64,
    pub bytes: f64,
    pub max_bytes: f64,
}

/// Memory a run holds per op (the op, its times and execution state), for estimates.
pub const OP_BYTES: f64 = 96.0;

/// Counts the ops, sends and send bytes in the first `limit` bytes of the
/// schedule at `path`, scaled to the whole file. Malformed lines are
/// skipped: [`parse()`] reports them.
pub fn scan(path: &Path, limit: u64) -> std::io::Result<Scan> {
    use std::io::{BufRead, Read};
    let len = std::fs::metadata(path)?.len();
    let mut r = std::io::BufReader::new(std::fs::File::open(path)?.take(limit));
    let (mut read, mut line, mut s) = (0u64, String::new(), Scan::default());
    loop {
        line.clear();
        let n = r.read_line(&mut line)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        let words: Vec<&str> = line.split_whitespace().collect();
        let op = words.iter().position(|w| matches!(*w, "send" | "recv" | "calc"));
        if words.first() == Some(&"num_ranks") {
            s.ranks = words.get(1).and_then(|w| w.parse().ok()).unwrap_or(0.0);
        }
        let Some(i) = op else { continue };
        s.ops += 1.0;
        if words[i] == "send" {
            let size = words.get(i + 1).map_or("", |w| w.trim_end_matches('b')).parse::<f64>().unwrap_or(0.0);
            s.sends += 1.0;
            s.bytes += size;
            s.max_bytes = s.max_bytes.max(size);
        }
    }
    let scale = if read > 0 && read < len { len as f64 / read as f64 } else { 1.0 };
    Ok(Scan { ops: s.ops * scale, sends: s.sends * scale, bytes: s.bytes * scale, ..s })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_maps_name_the_file_and_line() {
        assert_eq!(rank_map("# hosts\n3\n\n1\n0\n", "m.txt", 3, 4).unwrap(), [3, 1, 0]);
        let cases = [
            ("3\n4\n0\n", "m.txt:2:", "host 4 does not exist"),
            ("3\nx\n0\n", "m.txt:2:", "expected a host id, found `x`"),
            ("3\n1\n3\n", "m.txt:3:", "host 3 is already the host of another rank (line 1)"),
            ("3\n1\n", "m.txt:2:", "lists 2 hosts but the schedule has 3 ranks"),
            ("3\n1\n0\n2\n", "m.txt:4:", "more hosts than the schedule's 3 ranks"),
            ("", "m.txt:1:", "lists 0 hosts"),
        ];
        for (text, line, what) in cases {
            let e = rank_map(text, "m.txt", 3, 4).unwrap_err();
            assert_eq!(e.key, MAP_KEY);
            assert!(e.message.starts_with(line) && e.message.contains(what), "{text:?}: {}", e.message);
        }
    }

    #[test]
    fn check_names_missing_files() {
        assert_eq!(Goal::default().check().unwrap_err().key, KEY);
        let g = Goal { goal_file: Some("/nonexistent/a.goal".into()), ..Goal::default() };
        let e = g.check().unwrap_err();
        assert!(e.key == KEY && e.message.contains("/nonexistent/a.goal"), "{e:?}");
        let this = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/goal.rs");
        let g = Goal { goal_file: Some(this), rank_map_file: Some("/nonexistent/m".into()), start_us: 0.0 };
        assert_eq!(g.check().unwrap_err().key, MAP_KEY);
    }
}
