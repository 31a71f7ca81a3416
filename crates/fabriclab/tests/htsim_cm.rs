//! htsim connection matrices and the SIRD artifact's ns-2 request files
//! (docs/xval.md): the messages a run injects, written as a matrix (as
//! `fabriclab export-cm` does) or a request file (`export-ns2`) and read back
//! as a trace, are the same messages, and a run from the file is the same run.

mod common;

use common::{config, core_permutation, experiment, scratch, simulate};
use fabriclab::metrics::Summary;
use fabriclab::sim::injected_messages;
use fabriclab::workload::{htsim, ns2, MessageSpec};
use std::path::PathBuf;

/// The messages of experiment `text`, written as a connection matrix.
fn export(text: &str) -> (PathBuf, Vec<MessageSpec>) {
    export_as(text, "htsim")
}

/// The messages of experiment `text`, written in `format` ("htsim" or "ns2").
fn export_as(text: &str, format: &str) -> (PathBuf, Vec<MessageSpec>) {
    let (n_hosts, msgs) = injected_messages(&config(text, &[])).unwrap_or_else(|e| panic!("{e}"));
    assert!(!msgs.is_empty());
    let mut out = Vec::new();
    match format {
        "htsim" => htsim::write(&mut out, n_hosts, &msgs, "a test").unwrap(),
        _ => ns2::write(&mut out, n_hosts, &msgs).unwrap(),
    }
    let path = scratch(if format == "htsim" { "m.cm" } else { "m.ns2" });
    std::fs::write(&path, out).unwrap();
    (path, msgs)
}

/// `text` with its `[workload]` table (the last table) replaced by the matrix at `path`.
fn from_matrix(text: &str, path: &std::path::Path) -> String {
    from_file(text, path, "htsim")
}

/// `text` with its `[workload]` table (the last table) replaced by the `format` file at `path`.
fn from_file(text: &str, path: &std::path::Path, format: &str) -> String {
    let base = &text[..text.rfind("[workload]").expect("a [workload] table last")];
    format!("{base}[workload]\nkind = \"trace\"\ntrace_format = \"{format}\"\ntrace_file = \"{}\"\n", path.display())
}

/// (time, src, dst, bytes) in time order, ties by source: the order an ns-2
/// request file, written host by host, reads back in.
fn by_time_and_source(msgs: &[MessageSpec]) -> Vec<(u64, u32, u32, u64)> {
    let mut v: Vec<_> = msgs.iter().map(|m| (m.time, m.src, m.dst, m.size)).collect();
    v.sort_unstable();
    v
}

#[test]
fn ns2_request_files_read_back_exactly() {
    for text in [poisson(), core_permutation("sird", 1_000_000)] {
        let (path, msgs) = export_as(&text, "ns2");
        let (_, back) = injected_messages(&config(&from_file(&text, &path, "ns2"), &[])).unwrap();
        assert!(back.iter().all(|m| !m.incast), "the file has no incast flag");
        assert_eq!(by_time_and_source(&back), by_time_and_source(&msgs));
    }
    // Without ties between hosts the order is the injection order, and the run is the same run.
    let text = poisson()[..poisson().find("[workload.incast]").unwrap()].replace("dctcp", "sird");
    let (path, _) = export_as(&text, "ns2");
    let (a, b) = (simulate(&text, &[]), simulate(&from_file(&text, &path, "ns2"), &[]));
    assert!(a.summary.messages_completed > 100);
    let b_summary = Summary {
        offered_load: a.summary.offered_load,
        trace_messages_after_end: None,
        ..b.summary.without_wall_clock()
    };
    assert_eq!(b_summary, a.summary.without_wall_clock());
    assert_eq!(b.messages, a.messages);
}

/// 32 hosts on a 4-rack leaf-spine, Poisson WKb at 50% load with an incast
/// overlay, 2 ms: start times at arbitrary picoseconds.
fn poisson() -> String {
    experiment("kind = \"leaf_spine\"\ntors = 4\nhosts_per_tor = 8\nspines = 2", "dctcp", 2.0)
        + "[workload]\nkind = \"poisson\"\nsize_dist = \"wkb\"\nload = 0.5\n\
           [workload.incast]\nsenders = 6\nbytes = 50000\nshare = 0.1\n"
}

#[test]
fn exported_messages_read_back_exactly() {
    for text in [poisson(), core_permutation("ndp", 1_000_000)] {
        let (path, msgs) = export(&text);
        let (_, back) = injected_messages(&config(&from_matrix(&text, &path), &[])).unwrap();
        // The matrix has no incast flag: overlay messages come back as ordinary ones.
        let plain: Vec<MessageSpec> = msgs.iter().map(|m| MessageSpec { incast: false, ..*m }).collect();
        assert_eq!(back, plain, "(time in ps, src, dst, bytes), in injection order");
    }
    let (_, msgs) = export(&poisson());
    assert!(msgs.iter().any(|m| m.incast) && msgs.iter().any(|m| m.time % 1_000_000 != 0), "the case is not trivial");
}

#[test]
fn a_run_from_the_exported_matrix_is_the_same_run() {
    let star = experiment("kind = \"star\"\nhosts = 9", "eqds", 5.0);
    let incast = star + "[workload]\nkind = \"incast\"\nreceiver = 0\nsenders = 8\nbytes = 500000\nstart_us = 3.5\n";
    let no_overlay = poisson()[..poisson().find("[workload.incast]").unwrap()].to_string();
    let finite = [core_permutation("ndp", 1_000_000), core_permutation("dctcp", 1_000_000), incast];
    for (i, text) in finite.iter().chain([&no_overlay]).enumerate() {
        let (path, _) = export(text);
        let (a, b) = (simulate(text, &[]), simulate(&from_matrix(text, &path), &[]));
        assert!(a.summary.messages_completed > 0);
        if i < finite.len() {
            assert_eq!(a.summary.messages_completed, a.summary.messages_started, "{text}");
        }
        // Everything but the configured load (a Poisson key; a trace has none, so 0), which
        // `offered_gbps` replaces: the bytes actually offered; and the trace's count of messages
        // after the end of the run (0 here; absent without a trace).
        let b_summary = Summary {
            offered_load: a.summary.offered_load,
            trace_messages_after_end: None,
            ..b.summary.without_wall_clock()
        };
        assert_eq!(b_summary, a.summary.without_wall_clock(), "{text}");
        assert_eq!(b.messages, a.messages, "{text}");
    }
}

#[test]
fn closed_loop_workloads_are_not_exported() {
    let text = experiment("kind = \"star\"\nhosts = 4", "ndp", 1.0)
        + "[workload]\nkind = \"all_to_all\"\nbytes = 1000\nwindow = 1\n";
    let e = injected_messages(&config(&text, &[])).unwrap_err();
    assert_eq!(e.key, "workload.kind");
    assert!(e.message.contains("closed-loop"), "{e}");
}

#[test]
fn a_matrix_for_another_fabric_is_refused_naming_the_line() {
    let (path, _) = export(&poisson());
    let text = from_matrix(&(experiment("kind = \"star\"\nhosts = 9", "ndp", 1.0) + "[workload]\n"), &path);
    let Err(e) = fabriclab::sim::run(&config(&text, &[]), &mut |_, _| {}) else {
        panic!("a 32-host matrix ran on 9 hosts")
    };
    assert_eq!(e.key, "workload.trace_file");
    assert!(e.message.contains("m.cm:2: `Nodes 32`: the matrix is for 32 hosts, the topology has 9"), "{e}");
}
