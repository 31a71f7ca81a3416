use super::*;

/// A resolved configuration from TOML, not validated: the estimate must cope
/// with values that validation (now or later) refuses.
fn cfg(text: &str) -> Config {
    let mut c: Config = toml::from_str(text).unwrap_or_else(|e| panic!("{text}\n{e}"));
    c.workload.fill_defaults();
    c.resolve();
    c
}

fn fat_tree(k: u32, protocol: &str) -> Config {
    cfg(&format!(
        "[topology]\nkind = \"fat_tree\"\nk = {k}\n[protocol]\nname = \"{protocol}\"\n\
         [workload]\nkind = \"permutation\"\nbytes = 2000000\n"
    ))
}

fn poisson(duration_ms: f64) -> Config {
    cfg(&format!("[workload]\nkind = \"poisson\"\nsize_dist = \"wkc\"\n[run]\nduration_ms = {duration_ms:e}\n"))
}

fn term<'a>(e: &'a Estimate, what: &str) -> &'a Term {
    e.terms.iter().find(|t| t.what == what).unwrap_or_else(|| panic!("no term {what}"))
}

#[test]
fn grows_with_the_fabric_the_duration_and_the_sizes() {
    let mut last = 0.0;
    for k in [4, 8, 16, 32, 64, 128] {
        let e = estimate(&fat_tree(k, "dctcp"));
        assert!(e.total_bytes() > last, "k = {k}");
        last = e.total_bytes();
    }
    let (mut mem, mut events) = (0.0, 0.0);
    for d in [1.0, 10.0, 100.0, 1e4, 1e13] {
        let e = estimate(&poisson(d));
        assert!(e.total_bytes() > mem && e.events > events, "duration {d} ms");
        (mem, events) = (e.total_bytes(), e.events);
    }
    let small = estimate(&cfg("[workload]\nkind = \"incast\"\nbytes = 1000000\n"));
    let big = estimate(&cfg("[workload]\nkind = \"incast\"\nbytes = 100000000\n"));
    assert!(big.total_bytes() > small.total_bytes() && big.events > 10.0 * small.events);
}

#[test]
fn a_two_tier_fat_tree_is_estimated_as_the_same_leaf_spine() {
    // k = 8 in two tiers: 8 leaves of 4 hosts under 4 spines; the same fabric
    // as a leaf-spine, with the fat tree's default rates and delays.
    let fat = cfg("[topology]\nkind = \"fat_tree\"\nk = 8\ntiers = 2\n");
    let leaf = cfg("[topology]\nkind = \"leaf_spine\"\ntors = 8\nhosts_per_tor = 4\nspines = 4\n\
                    fabric_rate_gbps = 100.0\nhost_link_delay_ns = 500.0\nfabric_link_delay_ns = 500.0\n");
    assert_eq!(estimate(&fat), estimate(&leaf));
    // An oversubscribed one (8 hosts a ToR) too.
    let fat = cfg("[topology]\nkind = \"fat_tree\"\nk = 8\ntiers = 2\nhosts_per_tor = 8\n");
    let leaf = cfg("[topology]\nkind = \"leaf_spine\"\ntors = 8\nhosts_per_tor = 8\nspines = 4\n\
                    fabric_rate_gbps = 100.0\nhost_link_delay_ns = 500.0\nfabric_link_delay_ns = 500.0\n");
    assert_eq!(estimate(&fat), estimate(&leaf));
}

#[test]
fn names_the_dominant_term() {
    // SIRD keeps a slot per peer at every host: quadratic in the hosts.
    let e = estimate(&fat_tree(64, "sird"));
    assert_eq!(e.dominant().what, "per-host transport state");
    assert!(e.dominant().bytes > 30e9, "{:?}", e.dominant());
    // DCTCP has no per-peer tables: half a million hosts sending at once
    // keep tens of millions of packets in flight.
    assert_eq!(estimate(&fat_tree(128, "dctcp")).dominant().what, "packets in flight");
    // A million spines and few hosts: the fabric's ports and routes.
    let spines = cfg("[topology]\nkind = \"leaf_spine\"\nspines = 1048576\n[protocol]\nname = \"dctcp\"\n");
    let e = estimate(&spines);
    assert_eq!(e.dominant().what, "topology and routing tables", "{e:#?}");
    // A long open-loop run: one record per message.
    assert_eq!(estimate(&poisson(1e5)).dominant().what, "message table");
    // One huge message: its packet bitmaps.
    let huge =
        estimate(&cfg("[workload]\nkind = \"incast\"\nbytes = 1e14\n".replace("1e14", "100000000000000").as_str()));
    assert_eq!(huge.dominant().what, "per-message packet bitmaps");
    // A small experiment is mostly the program itself.
    let quick = cfg("[topology]\nkind = \"leaf_spine\"\ntors = 4\nhosts_per_tor = 8\nspines = 2\n\
                     [workload]\nkind = \"poisson\"\nsize_dist = \"wkb\"\n\
                     [run]\nduration_ms = 3.0\nwarmup_ms = 0.5\n");
    assert_eq!(estimate(&quick).dominant().what, "program and event queue");
}

#[test]
fn absurd_sizes_give_finite_estimates_beyond_any_machine() {
    for c in [
        fat_tree(128, "sird"),
        poisson(1e13),
        cfg("[topology]\nkind = \"leaf_spine\"\nhost_rate_gbps = 1e12\n"),
        cfg("[workload]\nkind = \"all_to_all\"\n[topology]\nkind = \"fat_tree\"\nk = 128\n"),
    ] {
        let e = estimate(&c);
        assert!(e.total_bytes().is_finite() && e.events.is_finite(), "{:?}", e);
        assert!(e.total_bytes() > 1e12, "{}", e.summary_line());
    }
    // A million spines: large, but within what a big machine has.
    let e = estimate(&cfg("[topology]\nkind = \"leaf_spine\"\nspines = 1048576\n"));
    assert!(e.total_bytes() > 1e9 && e.total_bytes() < 1e11, "{}", e.summary_line());
}

#[test]
fn traces_and_trace_files_are_counted() {
    let base = "[output]\ntraces = [\"cwnd\"]\n";
    let with = estimate(&cfg(base));
    assert!(term(&with, "transport traces").bytes > 0.0);
    assert!(estimate(&poisson(10.0)).terms.iter().all(|t| t.what != "transport traces"));

    let dir = std::env::temp_dir().join(format!("fabriclab-estimate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.csv");
    std::fs::write(&path, "time_us,src,dst,bytes\n0,1,0,100000000000000\n1,2,0,5\n").unwrap();
    let text = format!("[workload]\nkind = \"trace\"\ntrace_file = \"{}\"\n", path.display());
    let e = estimate(&cfg(&text));
    assert_eq!(e.messages, 2.0);
    assert_eq!(e.dominant().what, "per-message packet bitmaps");
    let path = dir.join("m.cm");
    std::fs::write(&path, "Nodes 144\nConnections 2\n1->0 start 0 size 100000000000000\n2->0 id 2 start 1 size 5\n")
        .unwrap();
    let text = format!("{text}trace_format = \"htsim\"\n").replace("t.csv", "m.cm");
    let e = estimate(&cfg(&text));
    assert_eq!(e.messages, 2.0, "an htsim connection matrix: one message per connection line");
    assert_eq!(e.dominant().what, "per-message packet bitmaps");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_refuses_with_the_term_its_size_and_the_way_out() {
    let e = estimate(&fat_tree(64, "sird"));
    assert!(check(&e, u64::MAX, "this run").is_ok());
    let msg = check(&e, 8_000_000_000, "this run").unwrap_err();
    for want in ["this run needs an estimated", "8.0 GB", "per-host transport state", "topology.k", "--force"] {
        assert!(msg.contains(want), "{want} not in: {msg}");
    }
    assert!(msg.contains(&bytes(e.dominant().bytes)), "{msg}");
}

#[test]
fn reads_mem_available() {
    let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   22000000 kB\n";
    assert_eq!(mem_available(text), Some(22_000_000 * 1024));
    assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
    assert_eq!(bytes(1.5e9), "1.5 GB");
    assert_eq!(bytes(999.0), "999 B");
}

/// An N-to-1 Poisson workload offers what its senders send, not what every
/// host would: 80% of one 100 Gb/s downlink, 10 kB messages, 10 ms.
#[test]
fn sender_and_receiver_lists_set_the_offered_messages() {
    let senders: Vec<String> = (1..64).map(|h| h.to_string()).collect();
    let text = format!(
        "[topology]\nkind = \"star\"\nhosts = 64\n[workload]\nkind = \"poisson\"\nsize_bytes = 10000\nload = 0.8\n\
         load_reference = \"receivers\"\nreceivers = [0]\nsenders = [{}]\n[run]\nduration_ms = 10.0\n",
        senders.join(", ")
    );
    let e = estimate(&cfg(&text));
    let want = 0.8 * 100e9 / 8.0 * 0.01 / 10_000.0;
    assert!((e.messages - want).abs() < 1e-6 * want, "{} messages, want {want}", e.messages);
    let all_to_all = estimate(&cfg(&text.replace("load_reference = \"receivers\"\nreceivers = [0]\n", "")));
    assert!((all_to_all.messages - 63.0 * want).abs() < 1e-6 * want, "the 63 senders at 80% of their own links");
}

#[test]
fn a_run_of_hours_is_announced() {
    // A k = 48 fat tree, Poisson WKc for 100 ms (issue 46: 5e11 events, hours).
    let big = cfg("[topology]\nkind = \"fat_tree\"\nk = 48\n[workload]\nkind = \"poisson\"\nsize_dist = \"wkc\"\n\
                   [run]\nduration_ms = 100\n");
    let e = estimate(&big);
    assert!(e.events > 1e11 && e.wall_seconds() > 3600.0, "{} events", e.events);
    let w = e.long_run_warning().expect("hours of wall time");
    assert!(w.contains("estimated at") && w.contains(" h of wall time") && w.contains("10 M events/s"), "{w}");
    // A quickstart-sized run says nothing.
    assert_eq!(estimate(&poisson(3.0)).long_run_warning(), None);
    assert_eq!(duration(90.0 * 60.0), "1.5 h");
    assert_eq!(duration(1e6), "11.6 days");
}
