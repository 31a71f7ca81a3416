//! What a run writes on request and what `fabriclab report` makes of it:
//! queue_series.csv on a case computed by hand, packets.pcap read back
//! against messages.csv, and report.html's numbers and labels.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabriclab"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fabriclab-outputs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// experiments/micro/one-message.toml (one 10-packet SIRD message across a
/// dumbbell with a 30 Gbps bottleneck), with both outputs on.
fn dumbbell() -> String {
    let outputs = r#"
[output]
queue_ports = [["switch0", "switch1"], ["switch1", "host1"]]
queue_interval_us = 0.1
pcap_flows = [[0, 1]]
pcap_snaplen = 128
"#;
    format!("{}{outputs}", include_str!("../../../experiments/micro/one-message.toml"))
}

fn run(name: &str, text: &str) -> PathBuf {
    let dir = tmp(name);
    std::fs::write(dir.join("exp.toml"), text).unwrap();
    let out = dir.join("run");
    let r = bin().arg("run").arg(dir.join("exp.toml")).arg("--out").arg(&out).arg("-q").output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    out
}

/// (time_us, port, bytes, max_bytes) rows.
fn series(dir: &Path) -> Vec<(f64, String, u64, u64)> {
    let text = std::fs::read_to_string(dir.join("queue_series.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time_us,port,bytes,max_bytes,control_bytes"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f[4], "0", "SIRD's switches have no control class");
            (f[0].parse().unwrap(), f[1].to_string(), f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn queue_series_follows_the_bottleneck_queue_computed_by_hand() {
    let dir = run("queue", &dumbbell());
    let (sw0, sw1) = ("switch0", "switch1");
    let rows = series(&dir);
    let port = format!("{sw0}->{sw1}");
    let bott: Vec<_> = rows.iter().filter(|r| r.1 == port).collect();
    // Every 0.1 us from 0 to the end of the run (it ends when the message completes, 7.45144 us).
    assert_eq!(bott.len(), 75);
    assert_eq!(rows.len(), 2 * 75);
    assert!(bott.iter().enumerate().all(|(i, r)| (r.0 - i as f64 * 0.1).abs() < 1e-9));
    // The whole trajectory: packet j reaches the bottleneck port at t0 + j T_h (t0: one
    // serialization at 100 Gbps, the host link's 1,185.12 ns and the switch's 250 ns), the
    // port sends back to back from t0, one packet per T_b = 1,538 B at 30 Gbps; a sample at
    // g holds the packets arrived by g less those sent by g (no arrival coincides with a
    // departure: j T_h = k T_b has no solution with j < 10).
    let (th, tb) = (1538.0 * 8.0 / 100.0, 1538.0 * 8.0 / 30.0);
    let t0 = th + 1185.12 + 250.0;
    for r in &bott {
        let g = r.0 * 1e3;
        let arrived = (0..10).filter(|&j| t0 + j as f64 * th <= g).count();
        let sent = (1..=10).filter(|&k| t0 + k as f64 * tb <= g).count();
        assert_eq!(r.2, (arrived - sent) as u64 * 1538, "at {} us", r.0);
    }
    // Packet j (0..9) reaches sw0 at t0 + j T (T = 1,538 B at 100 Gbps) and the bottleneck
    // sends one every 10/3 T, so after arrival j it holds j + 1 - floor(3j / 10) packets
    // (the one being sent included): at most 8 (j = 9), i.e. 8 x 1,538 B.
    let max = bott.iter().map(|r| r.3).max().unwrap();
    assert_eq!(max, 8 * 1538);
    // Every sampled level is a whole number of data packets, and the queue drains.
    assert!(bott.iter().all(|r| r.2 % 1538 == 0 && r.2 <= r.3), "{bott:?}");
    assert_eq!(bott.last().unwrap().2, 0);
    // Behind the bottleneck nothing queues beyond the packet being sent (30 -> 100 Gbps).
    let down = format!("{sw1}->host1");
    assert!(rows.iter().filter(|r| r.1 == down).all(|r| r.3 <= 1538));
}

/// (ts_ns, incl_len, orig_len, frame) of each record of a nanosecond pcap.
fn pcap(path: &Path) -> Vec<(u64, u32, u32, Vec<u8>)> {
    let b = std::fs::read(path).unwrap();
    let u32le = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    assert_eq!(u32le(0), 0xa1b2_3c4d, "nanosecond pcap magic");
    assert_eq!((u16::from_le_bytes([b[4], b[5]]), u16::from_le_bytes([b[6], b[7]])), (2, 4));
    assert_eq!(u32le(16), 128, "snap length");
    assert_eq!(u32le(20), 1, "LINKTYPE_ETHERNET");
    let mut out = Vec::new();
    let mut o = 24;
    while o < b.len() {
        let (sec, ns, incl, orig) = (u32le(o), u32le(o + 4), u32le(o + 8), u32le(o + 12));
        assert!(ns < 1_000_000_000 && incl <= orig && incl <= 128);
        out.push((sec as u64 * 1_000_000_000 + ns as u64, incl, orig, b[o + 16..o + 16 + incl as usize].to_vec()));
        o += 16 + incl as usize;
    }
    assert_eq!(o, b.len(), "a record runs past the end of the file");
    out
}

#[test]
fn pcap_reads_back_against_messages_csv() {
    let dir = run("pcap", &dumbbell());
    let recs = pcap(&dir.join("packets.pcap"));
    let msgs = std::fs::read_to_string(dir.join("messages.csv")).unwrap();
    let m: Vec<&str> = msgs.lines().nth(1).unwrap().split(',').collect();
    let (start_us, end_us): (f64, f64) = (m[5].parse().unwrap(), m[6].parse().unwrap());
    let (size, delivered): (u64, u64) = (m[3].parse().unwrap(), m[4].parse().unwrap());
    assert_eq!((size, delivered), (14600, 14600));
    // Timestamps never go back.
    assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0));
    let field = |f: &[u8], o: usize| u32::from_be_bytes(f[o..o + 4].try_into().unwrap());
    // Ethernet/IPv4/UDP, then "FL": direction at 45, src/dst at 50/54.
    for (_, _, orig, f) in &recs {
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(f[14], 0x45);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]) as u32 + 14, *orig, "IP length = wire size");
        assert_eq!(f[23], 17, "UDP");
        assert_eq!(&f[42..44], b"FL");
    }
    let data = |dir: u8| -> Vec<&(u64, u32, u32, Vec<u8>)> {
        recs.iter().filter(|r| r.3[45] == dir && field(&r.3, 50) == 0 && r.2 == 14 + 1538).collect()
    };
    let (sent, received) = (data(0), data(1));
    // 14,600 B in full 1,460 B packets: 10 data packets each way of the capture.
    assert_eq!((sent.len(), received.len()), (10, 10));
    // The first leaves host 0 when the message starts, back to back at 100 Gbps
    // (1,538 B = 123.04 ns); the last arrives at host 1 when the message completes.
    assert_eq!(sent[0].0, (start_us * 1e3).round() as u64);
    assert_eq!(sent[9].0 - sent[0].0, 9 * 123);
    assert_eq!(received[9].0, (end_us * 1e3).floor() as u64);
    // Only the pair asked for is captured.
    assert!(recs.iter().all(|r| matches!((field(&r.3, 50), field(&r.3, 54)), (0, 1) | (1, 0))));
    // The transport's header is the payload's text, after the fixed 36 bytes.
    let text = String::from_utf8_lossy(&sent[0].3[42 + 36..]);
    assert!(!text.trim_end_matches('\0').is_empty(), "no transport header text");
}

/// The capture is held in memory, so it stops at `output.pcap_max_mb`: the
/// file stays within it, ends on a whole record, and the run says how many
/// packets were left out.
#[test]
fn pcap_stops_at_its_size_cap_and_says_so() {
    let dir = tmp("pcap-cap");
    std::fs::write(
        dir.join("exp.toml"),
        dumbbell().replace("pcap_snaplen = 128", "pcap_snaplen = 128\npcap_max_mb = 0.002"),
    )
    .unwrap();
    let out = dir.join("run");
    let r = bin().arg("run").arg(dir.join("exp.toml")).arg("--out").arg(&out).arg("-q").output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let recs = pcap(&out.join("packets.pcap"));
    let bytes = std::fs::metadata(out.join("packets.pcap")).unwrap().len();
    assert!(bytes <= 2000 && bytes + 16 + 128 > 2000, "{bytes} bytes");
    let full = pcap(&run("pcap-uncapped", &dumbbell()).join("packets.pcap"));
    assert_eq!(recs[..], full[..recs.len()], "the capped file is the uncapped one's beginning");
    let err = String::from_utf8_lossy(&r.stderr);
    let note = format!("{} later packets were not written", full.len() - recs.len());
    assert!(err.contains("output.pcap_max_mb = 0.002 MB") && err.contains(&note), "{err}");
    // Out of range: an error naming the key.
    let bad = bin()
        .arg("run")
        .arg(dir.join("exp.toml"))
        .args(["--out", "x", "--set", "output.pcap_max_mb=0"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && e.contains("output.pcap_max_mb"), "{e}");
}

#[test]
fn report_holds_the_runs_numbers_and_labels() {
    let dir = run("report", &dumbbell());
    let r = bin().arg("report").arg(&dir).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let msgs = std::fs::read_to_string(dir.join("messages.csv")).unwrap();
    let m: Vec<&str> = msgs.lines().nth(1).unwrap().split(',').collect();
    let fct: f64 = m[7].parse().unwrap();
    for want in [
        "<svg",
        "FCT CDF",
        "flow completion time (us, log scale)",
        "fraction of completed messages",
        "Slowdown by message size",
        "message size (bytes, log scale",
        "Queue occupancy",
        "bytes queued at the port",
        "switch0-&gt;switch1",
        "Provenance",
        "git_commit",
        "[topology]",
        "bottleneck_rate_gbps = 30.0",
        "8192&ndash;16383", // the one message's size bucket
    ] {
        assert!(html.contains(want), "report.html lacks {want:?}");
    }
    assert!(html.contains(&format!("<td>{}</td>", summary["messages_completed"])));
    // The FCT, to four significant digits, in the CDF's note.
    let digits = (3 - fct.log10().floor() as i32).max(0) as usize;
    assert!(html.contains(&format!("p50 {fct:.digits$} us")), "FCT {fct} not in the report");
    assert!(!html.contains("<script"), "the report must not need JavaScript");
    assert!(!html.contains("http://") || !html.contains("src=\"http"), "nothing fetched");
}

#[test]
fn report_names_what_is_missing() {
    let empty = tmp("report-empty");
    let r = bin().arg("report").arg(&empty).output().unwrap();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("holds no summary.json"));
    std::fs::write(empty.join("provenance.json"), "{}").unwrap();
    let r = bin().arg("report").arg(&empty).output().unwrap();
    assert!(String::from_utf8_lossy(&r.stderr).contains("the run did not finish"));
    std::fs::write(empty.join("summary.json"), "{}").unwrap();
    let r = bin().arg("report").arg(&empty).output().unwrap();
    assert!(String::from_utf8_lossy(&r.stderr).contains("no manifest.json"), "{}", String::from_utf8_lossy(&r.stderr));
    let r = bin().arg("report").arg(empty.join("nope")).output().unwrap();
    assert!(String::from_utf8_lossy(&r.stderr).contains("is not a directory"));
}

#[test]
fn a_bad_queue_port_names_the_key_and_the_names_allowed() {
    let text = dumbbell().replace(r#"["switch1", "host1"]"#, r#"["host1", "switch1"]"#);
    let dir = tmp("badport");
    std::fs::write(dir.join("exp.toml"), &text).unwrap();
    let r = bin().arg("validate").arg(dir.join("exp.toml")).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("output.queue_ports[1]") && err.contains("expected a switch port"), "{err}");
    std::fs::write(dir.join("exp.toml"), dumbbell().replace("\"switch1\", \"host1\"", "\"switch1\", \"host7\""))
        .unwrap();
    let r = bin().arg("validate").arg(dir.join("exp.toml")).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("output.queue_ports[1]") && err.contains("host0..host1"), "{err}");
}

#[test]
fn recording_changes_nothing_else_in_the_run() {
    let plain = dumbbell().split("[output]").next().unwrap().to_string();
    let strip = |dir: &Path| {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
        // The watched ports' level percentiles are what recording adds to the summary.
        let added = v.as_object_mut().unwrap().remove("queue_port_percentiles").is_some();
        for k in ["wall_time_s", "events_per_s", "packet_hops_per_s"] {
            v.as_object_mut().unwrap().remove(k);
        }
        (v, std::fs::read_to_string(dir.join("messages.csv")).unwrap(), added)
    };
    let (with, without) = (run("same-with", &dumbbell()), run("same-without", &plain));
    assert!(!without.join("packets.pcap").exists() && !without.join("queue_series.csv").exists());
    let (with, without) = (strip(&with), strip(&without));
    assert!(with.2 && !without.2, "queue_port_percentiles only with output.queue_ports");
    assert_eq!((with.0, with.1), (without.0, without.1));
}

/// issue 46: a run that recorded window and RTT traces gets a plot of each, per flow over
/// time, with a table of the flows shown that matches traces.csv and a note when flows are
/// left out; a run without traces gets neither (the dumbbell above records none).
#[test]
fn report_plots_the_traces_a_run_recorded() {
    let quick = include_str!("../../../experiments/quickstart.toml");
    let dir = tmp("report-traces");
    std::fs::write(dir.join("exp.toml"), quick).unwrap();
    let out = dir.join("run");
    let r = bin()
        .arg("run")
        .arg(dir.join("exp.toml"))
        .arg("--out")
        .arg(&out)
        .arg("-q")
        .args(["--set", "protocol.name=dctcp", "--set", "run.duration_ms=0.3", "--set", "run.warmup_ms=0"])
        .args(["--set", r#"output.traces=["cwnd", "rtt"]"#])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = bin().arg("report").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Rows per (kind, host, flow), and each flow's largest value, from traces.csv.
    let text = std::fs::read_to_string(out.join("traces.csv")).unwrap();
    let mut flows: std::collections::BTreeMap<(String, u64, u64), (usize, f64)> = Default::default();
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let e = flows.entry((f[3].to_string(), f[1].parse().unwrap(), f[2].parse().unwrap())).or_insert((0, 0.0));
        *e = (e.0 + 1, e.1.max(f[4].parse().unwrap()));
    }
    for (kind, title) in [("cwnd", "Congestion window"), ("rtt", "RTT samples")] {
        let of_kind: Vec<_> = flows.iter().filter(|((k, _, _), _)| k == kind).collect();
        assert!(of_kind.len() > 8, "the test needs flows left out: {} {kind} flows", of_kind.len());
        let note = format!("8 of the {} traced flows are shown, those with the most rows", of_kind.len());
        assert!(html.contains(&note), "{kind}: {note:?} not in the report");
        // Its plot, then its table.
        let aria = format!("aria-label=\"{title}\"");
        let html = &html[html.find(&aria).unwrap_or_else(|| panic!("no {title} plot"))..];
        // The busiest flow is shown, with its row count and maximum.
        let ((_, host, flow), (rows, max)) = of_kind.iter().max_by_key(|(k, v)| (v.0, std::cmp::Reverse(*k))).unwrap();
        assert!(html.contains(&format!("host {host} flow {flow}")), "{kind}: busiest flow {host}/{flow} not shown");
        let digits = (3 - max.abs().log10().floor() as i32).clamp(0, 9) as usize;
        let row = format!("<tr><td>{host}</td><td>{flow}</td><td>{rows}</td>");
        let at = html.find(&row).unwrap_or_else(|| panic!("{kind}: no row {row}"));
        assert!(html[at..].contains(&format!("<td>{max:.digits$}</td></tr>")), "{kind}: max {max} of {host}/{flow}");
    }
    // Without traces: no trace section at all.
    let plain = run("report-no-traces", &dumbbell());
    assert!(bin().arg("report").arg(&plain).status().unwrap().success());
    let html = std::fs::read_to_string(plain.join("report.html")).unwrap();
    assert!(!html.contains("Transport traces") && !html.contains("Congestion window") && !html.contains("RTT samples"));
}
