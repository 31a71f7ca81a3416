//! htsim connection matrices: read as a trace workload
//! (`kind = "trace"`, `trace_format = "htsim"`) and written by
//! `fabriclab export-cm`, so that one experiment's messages can be handed to
//! htsim (Broadcom/csg-htsim, `sim/datacenter`, its `-tm FILE` option) and back.
//!
//! # The format, as htsim's loader reads it
//!
//! Read from `ConnectionMatrix::load(istream&)` in csg-htsim's
//! sim/datacenter/connection_matrix.cpp at commit 841d9e7b (2026-03-23):
//!
//! - Header lines, one keyword and one integer each: `Nodes N` (the hosts;
//!   htsim's mains stop when it differs from their own host count),
//!   `Connections M` (must equal the number of connection lines),
//!   `Triggers T` and `Failures F` (optional). `#` lines are skipped in the
//!   header only.
//! - Then one line per connection, tokens separated by single spaces:
//!   `SRC->DST` first, then any of `start T`, `size BYTES`, `id ID` (non-zero),
//!   `prio P`, `trigger ID` (start when that trigger fires, instead of `start`),
//!   `send_done_trigger ID`, `recv_done_trigger ID`, `addon`. `trigger ...` and
//!   `failure ...` lines declare triggers and switch or link failures.
//! - `start` is in **picoseconds** (htsim's own generators write
//!   `int(us * 1000000)`; the loader assigns it unconverted, commit 8f63513
//!   "tm file starttime is in picoseconds, not microsecs"). The loader parses
//!   it with `stof`, a 32-bit float: exact up to 2^24 ps (16.8 us), beyond
//!   that rounded to 24 significant bits (64 ps steps around 1 ms, 8 ns around
//!   100 ms); [`htsim_start`] gives the time htsim will use. Older files (and
//!   htsim's own `ConnectionMatrix::save`) hold microseconds such as
//!   `0.000000`; the two are not distinguishable from the text, and this
//!   reader, like htsim's loader, takes picoseconds.
//! - `size` is in bytes, parsed with `stoi` (a signed 32-bit int: at most
//!   2^31 - 1); some htsim mains read `size 0` as a flow without end.
//!
//! # What fabriclab reads
//!
//! - `Nodes` and `Connections` are required, each once, before the first
//!   connection; `Nodes` must equal the fabric's host count, and the number of
//!   connection lines must equal `Connections`.
//! - Each connection needs `start` (picoseconds, >= 0, fractions rounded to
//!   the nearest picosecond) and `size` (bytes in [1, 2^32], docs/limits.md);
//!   `id` is optional, a positive integer, and not used. Each field at most once.
//! - Not supported, and refused with the line and the reason, never ignored:
//!   triggers (`Triggers T` with T > 0, `trigger` lines and fields,
//!   `send_done_trigger`, `recv_done_trigger`, `addon`), failures
//!   (`Failures F` with F > 0, `failure` lines: use `network.events`), `prio`
//!   (a trace has no per-message priority), `size 0`.
//! - More lenient than htsim: tabs and runs of spaces separate tokens, and
//!   blank and `#` lines are skipped anywhere.
//! - As with CSV traces, connections are sorted by start time (stably: equal
//!   times keep file order) and those at or after the end of the run dropped.
//!
//! # What fabriclab writes ([`write`])
//!
//! `#` comment lines, `Nodes N`, `Connections M`, then one
//! `SRC->DST id K start PS size BYTES` line per message in injection order,
//! `id` counting from 1 (htsim refuses id 0), `start` in whole picoseconds:
//! reading the file back gives exactly the messages written.

use crate::trace::{content_lines, in_time_order, message_size, pair, Replay};
use crate::{MessageSpec, WorkloadEnv};
use fabriclab_engine::limits::HORIZON_US;
use fabriclab_engine::{ConfigError, Time, US};
use std::io::Write;
use std::path::Path;

const KEY: &str = "workload.trace_file";

/// Largest `size` htsim's loader accepts (`stoi` into an `int`).
pub const HTSIM_MAX_SIZE: u64 = i32::MAX as u64;

/// The start time htsim's loader uses for a `start` written as `ps`: the
/// nearest 32-bit float (its `stof`), truncated to integer picoseconds.
pub fn htsim_start(ps: Time) -> Time {
    (ps as f32) as Time
}

/// Reads and checks a connection matrix; messages sorted by time, those at or
/// after `env.end` dropped.
pub(crate) fn load(path: &Path, env: &WorkloadEnv) -> Result<Replay, ConfigError> {
    let text = crate::read_input(path, KEY, "connection matrix")?;
    parse(&text, &path.display().to_string(), env)
}

/// A header keyword's line and value.
#[derive(Clone, Copy, Default)]
struct Header {
    line: usize,
    value: Option<u64>,
}

/// Parses connection-matrix text; `origin` (usually the path) prefixes error messages.
pub(crate) fn parse(text: &str, origin: &str, env: &WorkloadEnv) -> Result<Replay, ConfigError> {
    let err = |line: usize, msg: String| ConfigError::new(KEY, format!("{origin}:{line}: {msg}"));
    let unsupported_trigger = |line: usize, what: &str| {
        err(
            line,
            format!(
                "{what}: connections started or signalled by htsim triggers are not supported (fabriclab reads \
                 connections with a start time only); remove the triggers or give each connection a `start`"
            ),
        )
    };
    let no_failures = |line: usize, what: &str| {
        err(line, format!("{what}: htsim failures are not supported in a connection matrix; use network.events"))
    };
    let (mut nodes, mut conns) = (Header::default(), Header::default());
    let mut n_conn_lines = 0u64;
    let mut msgs = Vec::new();
    for (line_no, line) in content_lines(text) {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let first = tokens[0];
        let body_started = n_conn_lines > 0;
        match first {
            "Nodes" | "Connections" | "Triggers" | "Failures" => {
                if body_started {
                    return Err(err(line_no, format!("`{first}` after the first connection: header lines come first")));
                }
                let value = match tokens.as_slice() {
                    [_, v] => v.parse::<u64>().ok(),
                    _ => None,
                }
                .ok_or_else(|| {
                    err(line_no, format!("expected `{first} COUNT` (a non-negative integer), found `{line}`"))
                })?;
                let slot = match first {
                    "Nodes" => &mut nodes,
                    "Connections" => &mut conns,
                    _ if value == 0 => continue,
                    "Triggers" => return Err(unsupported_trigger(line_no, &format!("`Triggers {value}`"))),
                    _ => return Err(no_failures(line_no, &format!("`Failures {value}`"))),
                };
                if slot.value.is_some() {
                    return Err(err(line_no, format!("`{first}` given twice (first at line {})", slot.line)));
                }
                *slot = Header { line: line_no, value: Some(value) };
                if first == "Nodes" && value != u64::from(env.n_hosts) {
                    return Err(err(
                        line_no,
                        format!("`Nodes {value}`: the matrix is for {value} hosts, the topology has {}", env.n_hosts),
                    ));
                }
            }
            "trigger" => return Err(unsupported_trigger(line_no, "a `trigger` line")),
            "failure" => return Err(no_failures(line_no, "a `failure` line")),
            _ if first.contains("->") => {
                if nodes.value.is_none() || conns.value.is_none() {
                    return Err(err(line_no, "expected the header lines `Nodes N` and `Connections M` first".into()));
                }
                n_conn_lines += 1;
                msgs.push(connection(&tokens, env, &|m| err(line_no, m), &|w| unsupported_trigger(line_no, w))?);
            }
            _ => {
                return Err(err(
                    line_no,
                    format!(
                        "expected a header line (`Nodes N`, `Connections M`) or a connection \
                         `SRC->DST start PS size BYTES`, found `{line}`"
                    ),
                ))
            }
        }
    }
    let n_lines = text.lines().count();
    let Some(want) = conns.value else {
        return Err(err(n_lines.max(1), "not a connection matrix: expected `Nodes N` and `Connections M`".into()));
    };
    if nodes.value.is_none() {
        return Err(err(n_lines.max(1), "expected a `Nodes N` header line".into()));
    }
    if want != n_conn_lines {
        return Err(err(
            conns.line,
            format!("`Connections {want}`, but the file holds {n_conn_lines} connection lines"),
        ));
    }
    if msgs.is_empty() {
        return Err(err(n_lines, "the matrix holds no connections".into()));
    }
    in_time_order(msgs, env, origin, "htsim's `start` is in picoseconds")
}

/// One `SRC->DST field value ...` line.
fn connection(
    tokens: &[&str],
    env: &WorkloadEnv,
    err: &dyn Fn(String) -> ConfigError,
    unsupported_trigger: &dyn Fn(&str) -> ConfigError,
) -> Result<MessageSpec, ConfigError> {
    let (src, dst) = tokens[0].split_once("->").unwrap_or_default();
    let (src, dst) = pair(src, dst, env.n_hosts).map_err(err)?;
    let (mut start, mut size, mut id) = (None, None, None);
    let mut rest = tokens[1..].iter();
    while let Some(&field) = rest.next() {
        let slot = match field {
            "start" => &mut start,
            "size" => &mut size,
            "id" => &mut id,
            "trigger" | "send_done_trigger" | "recv_done_trigger" | "addon" => {
                return Err(unsupported_trigger(&format!("`{field}`")))
            }
            "prio" => {
                return Err(err(
                    "`prio`: per-connection priorities are not supported in a trace (every message uses the \
                     protocol's own classes); remove the field"
                        .into(),
                ))
            }
            _ => {
                return Err(err(format!(
                    "unknown field `{field}`: expected `start PS`, `size BYTES` or `id ID` after `SRC->DST`"
                )))
            }
        };
        let Some(&value) = rest.next() else {
            return Err(err(format!("`{field}` without a value")));
        };
        if slot.replace(value).is_some() {
            return Err(err(format!("`{field}` given twice")));
        }
    }
    let Some(start) = start else {
        return Err(err("missing `start PS` (the start time in picoseconds)".into()));
    };
    let time = start_ps(start).ok_or_else(|| {
        err(format!("start: expected a time in [0, 1e17] picoseconds (bounds: docs/limits.md), found `{start}`"))
    })?;
    let Some(size) = size else {
        return Err(err("missing `size BYTES`".into()));
    };
    if size.parse::<u64>() == Ok(0) {
        return Err(err("size: `size 0` (a flow without end in some htsim mains) is not supported".into()));
    }
    let size = message_size("size", size).map_err(err)?;
    if let Some(id) = id {
        if !matches!(id.parse::<u64>(), Ok(i) if i > 0) {
            return Err(err(format!("id: expected a positive integer (htsim refuses id 0), found `{id}`")));
        }
    }
    Ok(MessageSpec { time, src, dst, size, incast: false })
}

/// A `start` value in picoseconds: integers exactly, decimals rounded to the
/// nearest picosecond; `None` outside [0, the horizon].
fn start_ps(v: &str) -> Option<Time> {
    const HORIZON_PS: f64 = HORIZON_US * US as f64;
    if let Ok(ps) = v.parse::<u64>() {
        return (ps as f64 <= HORIZON_PS).then_some(ps);
    }
    let ps: f64 = v.parse().ok()?;
    (ps.is_finite() && (0.0..=HORIZON_PS).contains(&ps)).then(|| ps.round() as Time)
}

/// Writes `msgs` (in injection order) as a connection matrix for `n_hosts`
/// hosts, `comment` lines first as `#` lines. A message larger than htsim's
/// [`HTSIM_MAX_SIZE`] is an `InvalidInput` error naming it, before anything
/// is written.
pub fn write(w: &mut dyn Write, n_hosts: u32, msgs: &[MessageSpec], comment: &str) -> std::io::Result<()> {
    if let Some((i, m)) = msgs.iter().enumerate().find(|(_, m)| m.size > HTSIM_MAX_SIZE) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "message {} ({}->{} at {} ps) has {} bytes; htsim reads sizes as a 32-bit int (at most {})",
                i + 1,
                m.src,
                m.dst,
                m.time,
                m.size,
                HTSIM_MAX_SIZE
            ),
        ));
    }
    for c in comment.lines() {
        writeln!(w, "# {c}")?;
    }
    writeln!(w, "Nodes {n_hosts}")?;
    writeln!(w, "Connections {}", msgs.len())?;
    for (i, m) in msgs.iter().enumerate() {
        writeln!(w, "{}->{} id {} start {} size {}", m.src, m.dst, i + 1, m.time, m.size)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tests::{env, msg, within_bounds_or_refused};
    use proptest::prelude::*;

    fn written(msgs: &[MessageSpec]) -> String {
        let mut out = Vec::new();
        write(&mut out, 4, msgs, "a test\nsecond line").unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn reads_htsims_own_example_layouts() {
        // The layouts of csg-htsim's connection_matrices/incast.cm and outcast_incast.cm (ids, start 0).
        let text = "Nodes 4\nConnections 3\n0->3 start 0 size 2000000\n1->3 id 2 start 0 size 2000000\n\
                    2->0 id 3 start 1500000 size 10\n";
        let msgs = parse(text, "m.cm", &env()).unwrap().msgs;
        assert_eq!(msgs, vec![msg(0, 0, 3, 2_000_000), msg(0, 1, 3, 2_000_000), msg(1_500_000, 2, 0, 10)]);
    }

    #[test]
    fn start_is_picoseconds_sorted_stably_and_cut_at_the_end() {
        let text = "# comment\nNodes 4\n\nConnections 5\n# more\n1->0 start 2500000 size 100\n\
                    2->3   start\t0 size 7\n3->1 size 5 start 2500000.4\n1->2 start 1000000000 size 9\n\
                    0->1 start 0.000000 size 1\r\n";
        let msgs = parse(text, "m.cm", &env()).unwrap().msgs;
        assert_eq!(
            msgs,
            vec![msg(0, 2, 3, 7), msg(0, 0, 1, 1), msg(2_500_000, 1, 0, 100), msg(2_500_000, 3, 1, 5)],
            "ties keep file order; 1e9 ps = 1000 us is the end and is dropped"
        );
    }

    #[test]
    fn write_then_read_gives_the_same_messages() {
        let msgs = vec![msg(0, 1, 0, 1), msg(7, 2, 0, 100), msg(123_456_789_012, 3, 2, HTSIM_MAX_SIZE)];
        let text = written(&msgs);
        assert!(
            text.starts_with("# a test\n# second line\nNodes 4\nConnections 3\n1->0 id 1 start 0 size 1\n"),
            "{text}"
        );
        let mut e = env();
        e.end = Time::MAX;
        assert_eq!(parse(&text, "w.cm", &e).unwrap().msgs, msgs);
    }

    #[test]
    fn sizes_htsim_cannot_read_are_not_written() {
        let mut out = Vec::new();
        let e = write(&mut out, 4, &[msg(0, 1, 0, 5), msg(9, 1, 2, HTSIM_MAX_SIZE + 1)], "").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("message 2 (1->2 at 9 ps) has 2147483648 bytes"), "{e}");
        assert!(out.is_empty(), "nothing written");
    }

    #[test]
    fn htsim_reads_start_as_a_32_bit_float() {
        assert_eq!(htsim_start(16_777_216), 16_777_216, "exact up to 2^24 ps");
        assert_eq!(htsim_start(16_777_217), 16_777_216);
        assert_eq!(htsim_start(1_000_000_001), 1_000_000_000, "64 ps steps around 1 ms");
        assert_eq!(htsim_start(100_000_000_000) % 8192, 0, "8 ns steps around 100 ms");
    }

    fn parse_err(text: &str) -> String {
        let e = parse(text, "m.cm", &env()).expect_err(text);
        assert_eq!(e.key, KEY);
        e.message
    }

    #[test]
    fn errors_name_file_line_and_what_was_expected() {
        let h = "Nodes 4\nConnections 1\n";
        let cases = [
            (format!("{h}0->1 start 0 size 10 trigger 3\n"), "m.cm:3:", "`trigger`: connections started"),
            (format!("{h}0->1 id 1 trigger 3 size 10\n"), "m.cm:3:", "not supported"),
            (format!("{h}0->1 start 0 size 10 send_done_trigger 2\n"), "m.cm:3:", "`send_done_trigger`"),
            (format!("{h}0->1 start 0 size 10 recv_done_trigger 2\n"), "m.cm:3:", "`recv_done_trigger`"),
            (format!("{h}0->1 start 0 size 10 addon\n"), "m.cm:3:", "`addon`"),
            (format!("{h}trigger id 1 oneshot\n"), "m.cm:3:", "a `trigger` line"),
            ("Nodes 4\nTriggers 2\nConnections 1\n".into(), "m.cm:2:", "`Triggers 2`: connections started"),
            ("Nodes 4\nFailures 1\n".into(), "m.cm:2:", "network.events"),
            (format!("{h}failure switch_type TOR switch_id 0\n"), "m.cm:3:", "network.events"),
            (format!("{h}0->1 start 0 size 10 prio 3\n"), "m.cm:3:", "`prio`"),
            ("Nodes 16\nConnections 1\n0->1 start 0 size 1\n".into(), "m.cm:1:", "for 16 hosts, the topology has 4"),
            ("Nodes 4\nConnections 2\n0->1 start 0 size 1\n".into(), "m.cm:2:", "holds 1 connection lines"),
            ("Nodes 4\nConnections 0\n".into(), "m.cm:2:", "no connections"),
            ("Nodes 4\n0->1 start 0 size 1\n".into(), "m.cm:2:", "`Nodes N` and `Connections M` first"),
            ("Connections 1\n0->1 start 0 size 1\n".into(), "m.cm:2:", "`Nodes N` and `Connections M` first"),
            ("Connections 0\n".into(), "m.cm:1:", "`Nodes N` header"),
            (String::new(), "m.cm:1:", "not a connection matrix"),
            ("time_us,src,dst,bytes\n".into(), "m.cm:1:", "expected a header line"),
            ("Nodes four\n".into(), "m.cm:1:", "`Nodes COUNT`"),
            ("Nodes 4 5\n".into(), "m.cm:1:", "`Nodes COUNT`"),
            ("Nodes 4\nNodes 4\n".into(), "m.cm:2:", "given twice (first at line 1)"),
            (format!("{h}0->1 start 0 size 1\nConnections 1\n"), "m.cm:4:", "header lines come first"),
            (format!("{h}0->1 size 10\n"), "m.cm:3:", "missing `start"),
            (format!("{h}0->1 start 0\n"), "m.cm:3:", "missing `size"),
            (format!("{h}0->1 start 0 size\n"), "m.cm:3:", "`size` without a value"),
            (format!("{h}0->1 start 0 start 1 size 1\n"), "m.cm:3:", "`start` given twice"),
            (format!("{h}0->1 start -1 size 1\n"), "m.cm:3:", "start:"),
            (format!("{h}0->1 start 1e18 size 1\n"), "m.cm:3:", "start:"),
            (format!("{h}0->1 start nan size 1\n"), "m.cm:3:", "start:"),
            (format!("{h}0->1 start 0 size 0\n"), "m.cm:3:", "`size 0`"),
            (format!("{h}0->1 start 0 size 1.5\n"), "m.cm:3:", "size:"),
            (format!("{h}0->1 start 0 size 4294967297\n"), "m.cm:3:", "4294967296"),
            (format!("{h}0->1 start 0 size 1 id 0\n"), "m.cm:3:", "id:"),
            (format!("{h}0->1 start 0 size 1 flow 2\n"), "m.cm:3:", "unknown field `flow`"),
            (format!("{h}0->4 start 0 size 1\n"), "m.cm:3:", "host 4 does not exist"),
            (format!("{h}x->1 start 0 size 1\n"), "m.cm:3:", "src: expected a host id"),
            (format!("{h}1-> start 0 size 1\n"), "m.cm:3:", "dst: expected a host id"),
            (format!("{h}2->2 start 0 size 1\n"), "m.cm:3:", "both host 2"),
        ];
        for (text, line, what) in cases {
            let m = parse_err(&text);
            assert!(m.contains(line) && m.contains(what), "{text:?}: {m}");
        }
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = load(Path::new("/nonexistent/m.cm"), &env()).unwrap_err();
        assert_eq!(e.key, KEY);
        assert!(e.message.contains("/nonexistent/m.cm"));
    }

    fn line() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            Just("start".to_string()),
            Just("size".to_string()),
            Just("id".to_string()),
            Just("trigger".to_string()),
            Just("Nodes".to_string()),
            Just("Connections".to_string()),
            Just("0->1".to_string()),
            Just("3->2".to_string()),
            any::<u64>().prop_map(|v| v.to_string()),
            any::<f64>().prop_map(|v| v.to_string()),
            (0u32..6).prop_map(|v| v.to_string()),
            "\\PC{0,8}",
        ];
        prop_oneof![proptest::collection::vec(word, 0..8).prop_map(|w| w.join(" ")), "\\PC{0,30}"]
    }

    fn message() -> impl Strategy<Value = MessageSpec> {
        (0u64..(HORIZON_US as u64 * US), 0u32..4, 1u32..4, 1..=HTSIM_MAX_SIZE)
            .prop_map(|(t, s, d, b)| msg(t, s, (s + d) % 4, b))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Any text is a list of messages within the bounds or an error naming
        /// the key and the line, never a panic.
        #[test]
        fn any_matrix_text_parses_within_bounds_or_is_refused(lines in proptest::collection::vec(line(), 0..8)) {
            let text = format!("Nodes 4\nConnections 2\n{}", lines.join("\n"));
            within_bounds_or_refused(parse(&text, "fuzz.cm", &env()).map(|r| r.msgs), "fuzz.cm")?;
        }

        /// htsim's reading of a start is within half a unit in the 24th
        /// significant bit (plus the truncation to whole picoseconds).
        #[test]
        fn htsim_start_is_within_float_resolution(ps in 0u64..(HORIZON_US as u64 * US)) {
            let got = htsim_start(ps);
            prop_assert!(got.abs_diff(ps) as f64 <= ps as f64 * 2f64.powi(-24) + 1.0, "{ps} -> {got}");
            if ps <= 1 << 24 {
                prop_assert_eq!(got, ps, "exact up to 2^24 ps");
            }
        }

        /// Written then read: the same messages, sorted stably by time (the
        /// format keeps whole picoseconds, so nothing is lost).
        #[test]
        fn any_messages_round_trip_exactly(mut msgs in proptest::collection::vec(message(), 1..40)) {
            let mut e = env();
            e.end = Time::MAX;
            let back = parse(&written(&msgs), "w.cm", &e).unwrap().msgs;
            msgs.sort_by_key(|m| m.time);
            prop_assert_eq!(back, msgs);
        }
    }
}
