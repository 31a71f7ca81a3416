//! Trace workloads: messages replayed from a CSV file (`kind = "trace"`,
//! `trace_format = "csv"`, the default; htsim connection matrices:
//! [`crate::htsim`]).
//!
//! Why: to replay a recorded or hand-written scenario exactly. The file is read
//! and checked once, in [`crate::Workload::build`], against the fabric.
//!
//! # Trace file format (`workload.trace_file`)
//!
//! - Plain text CSV. Blank lines and lines starting with `#` are ignored.
//! - The first other line is the header, exactly `time_us,src,dst,bytes`.
//! - Each further line is one message: `time_us` (start time in microseconds,
//!   a number >= 0, fractions allowed; rounded to the nearest picosecond),
//!   `src` and `dst` (host ids below the number of hosts, different from each
//!   other) and `bytes` (a positive integer). Spaces around fields are allowed.
//! - Rows need not be in time order: messages are sorted by time, stably, so
//!   rows with equal times keep their file order.
//! - Messages at or after the end of the run are not injected: the run warns,
//!   naming how many, the first one's start and the run's end, and
//!   summary.json counts them (`trace_messages_after_end`). A trace without
//!   any message, or with none before the end of the run, is an error.
//!
//! Example:
//!
//! ```text
//! time_us,src,dst,bytes
//! 0,1,0,100000
//! 0.5,2,0,100000
//! ```

use crate::{MessageSpec, WorkloadEnv};
use fabriclab_engine::limits::{HORIZON_US, MAX_MESSAGE_BYTES};
use fabriclab_engine::{ConfigError, Time, US};
use std::path::Path;

const KEY: &str = "workload.trace_file";
const HEADER: [&str; 4] = ["time_us", "src", "dst", "bytes"];

/// What `time_us` counts, for the notes on messages after the end of the run.
const UNIT: &str = "trace times, `time_us`, are in microseconds";

/// Reads and checks a trace file; messages sorted by time, those at or after
/// `env.end` counted and left out.
pub(crate) fn load(path: &Path, env: &WorkloadEnv) -> Result<Replay, ConfigError> {
    let text = crate::read_input(path, KEY, "trace file")?;
    parse(&text, &path.display().to_string(), env)
}

/// Parses trace text; `origin` (usually the path) prefixes error messages.
pub(crate) fn parse(text: &str, origin: &str, env: &WorkloadEnv) -> Result<Replay, ConfigError> {
    let err = |line: usize, msg: String| ConfigError::new(KEY, format!("{origin}:{line}: {msg}"));
    let mut msgs = Vec::new();
    let mut header_seen = false;
    for (line_no, line) in content_lines(text) {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if !header_seen {
            if fields != HEADER {
                // An htsim connection matrix starts with `Nodes N` (or `Connections M`).
                let hint = if line.starts_with("Nodes") || line.starts_with("Connections") {
                    " (this looks like an htsim connection matrix: set workload.trace_format = \"htsim\")"
                } else {
                    ""
                };
                return Err(err(line_no, format!("expected the header `time_us,src,dst,bytes`, found `{line}`{hint}")));
            }
            header_seen = true;
            continue;
        }
        let [time, src, dst, bytes] = fields.as_slice() else {
            return Err(err(
                line_no,
                format!("expected 4 comma-separated fields `time_us,src,dst,bytes`, found {}", fields.len()),
            ));
        };
        let time_us: f64 = time
            .parse()
            .map_err(|_| err(line_no, format!("time_us: expected a number of microseconds, found `{time}`")))?;
        // The configuration's time horizon (docs/limits.md): far from wrapping u64 picoseconds.
        if !(time_us.is_finite() && (0.0..=HORIZON_US).contains(&time_us)) {
            return Err(err(
                line_no,
                format!("time_us: expected a time in [0, 1e11] microseconds (bounds: docs/limits.md), found `{time}`"),
            ));
        }
        let (src, dst) = pair(src, dst, env.n_hosts).map_err(|m| err(line_no, m))?;
        let size = message_size("bytes", bytes).map_err(|m| err(line_no, m))?;
        let time = (time_us * US as f64).round() as Time;
        msgs.push(MessageSpec { time, src, dst, size, incast: false });
    }
    let n_lines = text.lines().count();
    if !header_seen {
        return Err(err(n_lines.max(1), "empty trace: expected the header `time_us,src,dst,bytes`".into()));
    }
    if msgs.is_empty() {
        return Err(err(n_lines, "the trace holds no messages".into()));
    }
    in_time_order(msgs, env, origin, UNIT)
}

// Shared with the htsim reader (`crate::htsim`).

/// The lines that are not blank or `#` comments, trimmed, with their 1-based numbers.
pub(crate) fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// A message's `src` and `dst` host ids: below `n`, different; or what is wrong.
pub(crate) fn pair(src: &str, dst: &str, n: u32) -> Result<(u32, u32), String> {
    let host = |name: &str, v: &str| match v.parse::<u32>() {
        Ok(h) if h < n => Ok(h),
        Ok(h) => Err(format!("{name}: host {h} does not exist (the topology has hosts 0..{n})")),
        Err(_) => Err(format!("{name}: expected a host id, found `{v}`")),
    };
    let (src, dst) = (host("src", src)?, host("dst", dst)?);
    if src == dst {
        return Err(format!("src and dst are both host {src}"));
    }
    Ok((src, dst))
}

/// A message size in [1, 2^32] bytes (docs/limits.md) from field `name`; or what is wrong.
pub(crate) fn message_size(name: &str, v: &str) -> Result<u64, String> {
    match v.parse::<u64>() {
        Ok(b) if b > 0 && b <= MAX_MESSAGE_BYTES => Ok(b),
        _ => Err(format!(
            "{name}: expected a message size in [1, {MAX_MESSAGE_BYTES}] bytes (bounds: docs/limits.md), found `{v}`"
        )),
    }
}

/// A trace's messages that start before the end of the run, and what was left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub msgs: Vec<MessageSpec>,
    pub after_end: AfterEnd,
}

/// The messages of a trace file that start at or after the end of the run:
/// not injected, and reported (a warning, summary.json's
/// `trace_messages_after_end`) rather than dropped without a word.
#[derive(Clone, Debug, PartialEq)]
pub struct AfterEnd {
    /// How many; 0 when the whole trace is within the run.
    pub count: u64,
    /// Messages in the file.
    pub total: u64,
    /// The earliest start among them.
    pub first: Option<Time>,
    /// The end of the run.
    pub end: Time,
    /// The trace file, as the error messages name it.
    pub file: String,
    /// What the format's times count, for the hint.
    pub unit: &'static str,
}

impl AfterEnd {
    /// The warning a run prints when some messages are left out (without the
    /// leading "warning: "); `None` when none are.
    pub fn warning(&self) -> Option<String> {
        let first = self.first.filter(|_| self.count > 0)?;
        Some(format!(
            "{} of the {} messages of {} start at or after the end of the run ({} us) and are not injected; \
             the first at {} us ({}; lengthen run.duration_ms to replay them)",
            self.count,
            self.total,
            self.file,
            us(self.end),
            us(first),
            self.unit
        ))
    }
}

/// Picoseconds as microseconds, as a person reads them (5000, 1000.5).
fn us(t: Time) -> f64 {
    t as f64 / US as f64
}

/// Messages sorted by time, stably (equal times keep file order); those at
/// or after the end of the run counted and left out. `origin` names the file
/// and `unit` says what its times count: a trace whose every message starts
/// after the end (a trace written in ms read as us, say) is an error.
pub(crate) fn in_time_order(
    mut msgs: Vec<MessageSpec>,
    env: &WorkloadEnv,
    origin: &str,
    unit: &'static str,
) -> Result<Replay, ConfigError> {
    msgs.sort_by_key(|m| m.time);
    let total = msgs.len() as u64;
    let within = msgs.partition_point(|m| m.time < env.end);
    let first = msgs.get(within).map(|m| m.time);
    msgs.truncate(within);
    let after_end = AfterEnd { count: total - within as u64, total, first, end: env.end, file: origin.into(), unit };
    if let (true, Some(first)) = (msgs.is_empty(), first) {
        return Err(ConfigError::new(
            KEY,
            format!(
                "{origin}: {} at or after the end of the run ({} us, run.duration_ms = {}), the first at {} us, so \
                 the run would inject nothing ({unit}; lengthen run.duration_ms or check the trace's times)",
                if total == 1 { "its one message starts".to_string() } else { format!("all {total} messages start") },
                us(env.end),
                us(env.end) / 1e3,
                us(first)
            ),
        ));
    }
    Ok(Replay { msgs, after_end })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row() -> impl Strategy<Value = String> {
        let num = prop_oneof![
            any::<f64>().prop_map(|v| v.to_string()),
            any::<u64>().prop_map(|v| v.to_string()),
            any::<i64>().prop_map(|v| v.to_string()),
            (0u32..8).prop_map(|v| v.to_string()),
            Just("1e14".to_string()),
            Just("nan".to_string()),
            "\\PC{0,8}",
        ];
        prop_oneof![
            proptest::collection::vec(num, 0..6).prop_map(|f| f.join(",")),
            Just("time_us,src,dst,bytes".to_string()),
            Just("# note".to_string()),
            "\\PC{0,30}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Any text is a list of messages within the bounds or an error naming
        /// the key and the line, never a panic.
        #[test]
        fn any_trace_text_parses_within_bounds_or_is_refused(rows in proptest::collection::vec(row(), 0..10)) {
            let text = format!("time_us,src,dst,bytes\n{}", rows.join("\n"));
            within_bounds_or_refused(parse(&text, "fuzz.csv", &env()).map(|r| r.msgs), "fuzz.csv")?;
        }
    }

    /// What a reader may return for any text: messages within the bounds and
    /// [`env`]'s fabric, or an error naming the key and `origin:LINE`.
    pub(crate) fn within_bounds_or_refused(
        parsed: Result<Vec<MessageSpec>, ConfigError>,
        origin: &str,
    ) -> Result<(), TestCaseError> {
        match parsed {
            Ok(msgs) => {
                for m in msgs {
                    prop_assert!(m.size >= 1 && m.size <= MAX_MESSAGE_BYTES);
                    prop_assert!(m.time < env().end && m.src < 4 && m.dst < 4 && m.src != m.dst);
                }
            }
            Err(e) => {
                prop_assert_eq!(&e.key, KEY);
                prop_assert!(e.message.starts_with(&format!("{origin}:")), "{}", e.message);
            }
        }
        Ok(())
    }

    #[test]
    fn huge_messages_and_times_are_refused_naming_the_line() {
        let e = parse("time_us,src,dst,bytes\n0,1,0,100000000000000\n", "t.csv", &env()).unwrap_err();
        assert!(e.message.starts_with("t.csv:2: bytes:") && e.message.contains("4294967296"), "{}", e.message);
        let e = parse("time_us,src,dst,bytes\n1e12,1,0,1\n", "t.csv", &env()).unwrap_err();
        assert!(e.message.starts_with("t.csv:2: time_us:"), "{}", e.message);
    }

    pub(crate) fn env() -> WorkloadEnv {
        WorkloadEnv {
            n_hosts: 4,
            host_rate_bps: 100_000_000_000,
            rack_of: vec![0; 4],
            core_ratio: 1.0,
            racks_per_pod: 1,
            mss: 1460,
            seed: 1,
            end: 1_000 * US,
        }
    }

    pub(crate) fn msg(time: Time, src: u32, dst: u32, size: u64) -> MessageSpec {
        MessageSpec { time, src, dst, size, incast: false }
    }

    #[test]
    fn parses_and_sorts_stably() {
        let text = "# a trace\ntime_us,src,dst,bytes\n\n2.5,1,0,100\n 0 , 2 , 3 , 7 \n2.5,3,1,5\n1e3,1,2,9\n0.0000004,0,1,1\r\n";
        let msgs = parse(text, "t.csv", &env()).unwrap().msgs;
        assert_eq!(
            msgs,
            vec![msg(0, 2, 3, 7), msg(0, 0, 1, 1), msg(2_500_000, 1, 0, 100), msg(2_500_000, 3, 1, 5)],
            "sorted by time, file order kept for ties, the row at the end (1000 us) dropped"
        );
    }

    fn parse_err(text: &str) -> String {
        let e = parse(text, "t.csv", &env()).expect_err(text);
        assert_eq!(e.key, KEY);
        e.message
    }

    #[test]
    fn errors_name_file_and_line() {
        let h = "time_us,src,dst,bytes\n";
        let cases = [
            (format!("{h}1,0,1,10\nx,0,1,10\n"), "t.csv:3:", "time_us"),
            (format!("{h}-1,0,1,10\n"), "t.csv:2:", "time_us"),
            (format!("{h}inf,0,1,10\n"), "t.csv:2:", "time_us"),
            (format!("{h}1,4,1,10\n"), "t.csv:2:", "host 4"),
            (format!("{h}1,0,9,10\n"), "t.csv:2:", "host 9"),
            (format!("{h}1,a,1,10\n"), "t.csv:2:", "src"),
            (format!("{h}1,2,2,10\n"), "t.csv:2:", "both host 2"),
            (format!("{h}1,0,1,0\n"), "t.csv:2:", "bytes"),
            (format!("{h}1,0,1,-3\n"), "t.csv:2:", "bytes"),
            (format!("{h}1,0,1\n"), "t.csv:2:", "4 comma-separated"),
            (format!("{h}1,0,1,5,6\n"), "t.csv:2:", "4 comma-separated"),
            ("time,src,dst,bytes\n1,0,1,10\n".to_string(), "t.csv:1:", "header"),
            ("1,0,1,10\n".to_string(), "t.csv:1:", "header"),
            ("Nodes 4\nConnections 1\n".to_string(), "t.csv:1:", "trace_format = \"htsim\""),
            (String::new(), "t.csv:1:", "empty"),
            (format!("# c\n{h}\n"), "t.csv:3:", "no messages"),
        ];
        for (text, line, what) in cases {
            let m = parse_err(&text);
            assert!(m.contains(line) && m.contains(what), "{text:?}: {m}");
        }
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = load(Path::new("/nonexistent/t.csv"), &env()).unwrap_err();
        assert_eq!(e.key, KEY);
        assert!(e.message.contains("/nonexistent/t.csv"));
    }
}
