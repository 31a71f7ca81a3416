//! The SIRD authors' ns-2 request files ("manual" request mode): read as a
//! trace workload (`kind = "trace"`, `trace_format = "ns2"`) and written by
//! `fabriclab export-ns2`, so that one experiment's messages can be replayed
//! through the SIRD artifact (github.com/dalehuangzihan/SIRD-Simulator) and
//! the two simulators compared message by message (docs/xval.md).
//!
//! # The format, as the artifact reads it
//!
//! Read from `ManualDistr::ManualDistr` in
//! `other_simulators/common/src/workload-distr.cc` at commit 116e981f, which
//! the ns-2 applications (`r2p2-cc/common/generic-app.cc`, `set-req-dstr`,
//! `set-target-distr`, `set-req-sz-dstr` with `manual`) build three times per
//! host, once per field:
//!
//! - One line per request stream: `HOST,INTERVAL|DST|SIZE,INTERVAL|DST|SIZE,...`
//!   with no spaces. Every line must hold a `,` and a `|` (it asserts so): the
//!   file has no comments, headers or blank lines.
//! - A host reads every line whose first field is its own address, in file
//!   order; its requests are the tuples of those lines in order.
//! - `INTERVAL` is in seconds (`stod`), the gap since the host's previous
//!   request (the first one's since the start of the run); `DST` the
//!   destination host; `SIZE` the request's bytes. Past its last tuple a host
//!   draws an interval of 10^6 s, so it sends no more.
//!
//! # What fabriclab writes ([`write`]) and reads
//!
//! One line per host that sends, hosts in ascending order, each host's
//! messages in injection order, intervals as exact decimal seconds with 12
//! digits after the point (whole picoseconds): reading the file back gives
//! exactly the messages written. The reader also takes several lines per host
//! (concatenated in file order, as the artifact does) and rounds intervals to
//! the nearest picosecond; it refuses what the artifact would misread (a line
//! without tuples, a tuple of other than three fields, a negative interval).

use crate::trace::{content_lines, in_time_order, message_size, pair, Replay};
use crate::{MessageSpec, WorkloadEnv};
use fabriclab_engine::limits::HORIZON_US;
use fabriclab_engine::{ConfigError, Time, S as PS_PER_S, US};
use std::io::Write;
use std::path::Path;

const KEY: &str = "workload.trace_file";

/// Reads and checks a request file; messages sorted by time, those at or
/// after `env.end` dropped.
pub(crate) fn load(path: &Path, env: &WorkloadEnv) -> Result<Replay, ConfigError> {
    let text = crate::read_input(path, KEY, "ns-2 request file")?;
    parse(&text, &path.display().to_string(), env)
}

/// Parses request-file text; `origin` (usually the path) prefixes error messages.
pub(crate) fn parse(text: &str, origin: &str, env: &WorkloadEnv) -> Result<Replay, ConfigError> {
    let err = |line: usize, msg: String| ConfigError::new(KEY, format!("{origin}:{line}: {msg}"));
    // Each host's clock: the time of its previous request.
    let mut clock: Vec<Time> = vec![0; env.n_hosts as usize];
    let mut msgs = Vec::new();
    for (line_no, line) in content_lines(text) {
        let mut fields = line.split(',');
        let host = fields.next().unwrap_or_default().trim();
        let src: u32 = match host.parse() {
            Ok(h) if h < env.n_hosts => h,
            _ => {
                return Err(err(
                    line_no,
                    format!("expected `HOST,INTERVAL|DST|SIZE,...` with HOST in 0..{}, found `{host}`", env.n_hosts),
                ))
            }
        };
        let mut tuples = 0;
        for (k, tuple) in fields.enumerate() {
            let at = |m: String| err(line_no, format!("request {} of host {src}: {m}", k + 1));
            let [interval, dst, size] = tuple.split('|').map(str::trim).collect::<Vec<_>>()[..] else {
                return Err(at(format!("expected `INTERVAL|DST|SIZE`, found `{tuple}`")));
            };
            let gap = interval_ps(interval).ok_or_else(|| {
                at(format!("interval: expected a gap in [0, 1e5] seconds (bounds: docs/limits.md), found `{interval}`"))
            })?;
            let (_, dst) = pair(&src.to_string(), dst, env.n_hosts).map_err(at)?;
            let size = message_size("size", size).map_err(at)?;
            let t = &mut clock[src as usize];
            *t += gap;
            if *t as f64 > HORIZON_US * US as f64 {
                return Err(at(format!(
                    "its start, {} s, is past the horizon of 1e5 seconds (docs/limits.md)",
                    *t / PS_PER_S
                )));
            }
            msgs.push(MessageSpec { time: *t, src, dst, size, incast: false });
            tuples += 1;
        }
        if tuples == 0 {
            return Err(err(
                line_no,
                format!("host {src} has no `INTERVAL|DST|SIZE` tuple (the artifact asserts one)"),
            ));
        }
    }
    if msgs.is_empty() {
        return Err(err(text.lines().count().max(1), "the request file holds no requests".into()));
    }
    in_time_order(msgs, env, origin, "ns-2 request intervals are in seconds, each since the host's previous request")
}

/// An interval in seconds as picoseconds, rounded to the nearest; `None` if
/// negative, not a number or beyond the horizon.
fn interval_ps(v: &str) -> Option<Time> {
    let s: f64 = v.parse().ok()?;
    let ps = s * PS_PER_S as f64;
    (ps.is_finite() && (0.0..=HORIZON_US * US as f64).contains(&ps)).then(|| ps.round() as Time)
}

/// Writes `msgs` (in injection order) as a request file for `n_hosts` hosts:
/// one line per sending host, intervals in exact decimal seconds.
pub fn write(w: &mut dyn Write, n_hosts: u32, msgs: &[MessageSpec]) -> std::io::Result<()> {
    let mut per_host: Vec<Vec<&MessageSpec>> = vec![Vec::new(); n_hosts as usize];
    for m in msgs {
        per_host[m.src as usize].push(m);
    }
    for (host, own) in per_host.iter().enumerate().filter(|(_, own)| !own.is_empty()) {
        write!(w, "{host}")?;
        let mut prev = 0;
        for m in own {
            let gap = m.time - prev;
            write!(w, ",{}.{:012}|{}|{}", gap / PS_PER_S, gap % PS_PER_S, m.dst, m.size)?;
            prev = m.time;
        }
        writeln!(w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tests::{env, msg};
    use proptest::prelude::*;

    /// A run of 10 s, so that no test message is past its end.
    fn long_env() -> WorkloadEnv {
        WorkloadEnv { end: 10 * PS_PER_S, ..env() }
    }

    fn written(msgs: &[MessageSpec]) -> String {
        let mut out = Vec::new();
        write(&mut out, 4, msgs).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn reads_the_artifacts_own_example() {
        // scripts/r2p2/coord/config/manual-req-intervals/example-congested-sender.csv at 116e981f.
        let text = "0,0.0000001|3|10000000,0.00022|2|5000000\n1,0.0002|3|15000000\n";
        let msgs = parse(text, "r.csv", &env()).unwrap().msgs;
        assert_eq!(
            msgs,
            vec![msg(100_000, 0, 3, 10_000_000), msg(200_000_000, 1, 3, 15_000_000), msg(220_100_000, 0, 2, 5_000_000)]
        );
    }

    #[test]
    fn writes_one_line_per_sending_host_with_gaps_in_seconds() {
        let msgs = [msg(0, 2, 0, 1000), msg(1_500_000, 1, 0, 20), msg(1_000_000_000_001, 2, 3, 7)];
        assert_eq!(written(&msgs), "1,0.000001500000|0|20\n2,0.000000000000|0|1000,1.000000000001|3|7\n");
    }

    #[test]
    fn lines_of_one_host_continue_its_clock() {
        let msgs = parse("0,0.5|1|10\n0,0.25|2|10\n", "r.csv", &long_env()).unwrap().msgs;
        assert_eq!(msgs.iter().map(|m| m.time).collect::<Vec<_>>(), vec![500_000_000_000, 750_000_000_000]);
    }

    #[test]
    fn bad_lines_name_the_line_and_the_field() {
        for (text, want) in [
            ("x,1|2|3\n", "r.csv:1: expected `HOST,INTERVAL|DST|SIZE,...` with HOST in 0..4, found `x`"),
            ("9,1|2|3\n", "HOST in 0..4, found `9`"),
            ("0\n", "r.csv:1: host 0 has no `INTERVAL|DST|SIZE` tuple"),
            ("0,1|2\n", "request 1 of host 0: expected `INTERVAL|DST|SIZE`, found `1|2`"),
            ("0,1|2|3\n1,-1|2|3\n", "r.csv:2: request 1 of host 1: interval: expected a gap in [0, 1e5] seconds"),
            ("0,0|0|3\n", "src and dst are both host 0"),
            ("0,0|1|0\n", "size: expected a message size in [1,"),
            ("0,nan|1|5\n", "interval: expected a gap"),
        ] {
            let e = parse(text, "r.csv", &env()).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(e.contains("workload.trace_file"), "{e}");
        }
    }

    proptest! {
        #[test]
        fn written_files_read_back_exactly(raw in proptest::collection::vec((0u64..5_000_000_000, 0u32..4, 1u32..4, 1u64..10_000_000), 1..40)) {
            let mut msgs: Vec<MessageSpec> = raw.iter().map(|&(t, s, d, b)| msg(t, s, (s + d) % 4, b)).collect();
            msgs.sort_by_key(|m| m.time);
            let back = parse(&written(&msgs), "r.csv", &long_env()).unwrap().msgs;
            // Read back in time order, equal times in host order: compare as sets per host.
            let key = |m: &MessageSpec| (m.src, m.time, m.dst, m.size);
            let (mut a, mut b): (Vec<_>, Vec<_>) = (msgs.iter().map(key).collect(), back.iter().map(key).collect());
            a.sort();
            b.sort();
            prop_assert_eq!(a, b);
        }

        #[test]
        fn any_text_is_read_or_refused(text in "\\PC{0,80}") {
            let _ = parse(&text, "r.csv", &env());
        }
    }
}
