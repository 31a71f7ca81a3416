//! The namespace testbed (scripts/netns-testbed.sh) in quick mode: a loss
//! soak whose every message must arrive intact, and the 6-to-1 incast with a
//! probe host, paced and unpaced. Needs root, `ip netns` and tc's tbf; without
//! them the test prints why and passes (the loopback tests in crates/udp
//! cover the transport itself). No timing assertions: the numbers depend on
//! the machine; only delivery is checked.

use std::path::Path;
use std::process::Command;

fn skip_reason() -> Option<String> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc_getuid() } != 0 {
        return Some("not running as root".into());
    }
    for tool in ["ip", "tc", "python3", "awk"] {
        let found =
            Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().is_ok_and(|o| o.status.success());
        if !found {
            return Some(format!("`{tool}` is not installed"));
        }
    }
    let ns = format!("flprobe{}", std::process::id());
    let ok = Command::new("ip").args(["netns", "add", &ns]).status().is_ok_and(|s| s.success());
    if !ok {
        return Some("`ip netns add` does not work here".into());
    }
    let tbf = Command::new("ip")
        .args(["netns", "exec", &ns, "tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1gbit"])
        .args(["burst", "16kb", "limit", "100000"])
        .status()
        .is_ok_and(|s| s.success());
    let _ = Command::new("ip").args(["netns", "del", &ns]).status();
    (!tbf).then(|| "tc qdisc tbf is not available".into())
}

extern "C" {
    #[link_name = "getuid"]
    fn libc_getuid() -> u32;
}

fn run(what: &str) -> Vec<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/netns-testbed.sh");
    let out = Command::new("bash")
        .arg(script)
        .args(["--quick", what])
        .env("FABRICLAB", env!("CARGO_BIN_EXE_fabriclab"))
        .env("DUR", "1")
        .env("SOAK_N", "200")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{what} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    print!("{stdout}");
    stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect()
}

#[test]
fn namespace_testbed_soak_and_incast() {
    if let Some(why) = skip_reason() {
        println!("SKIPPED namespace testbed: {why}");
        return;
    }
    let soak = &run("soak")[0];
    assert_eq!(soak["failed"], 0, "{soak}");
    assert_eq!(soak["corrupt"], 0, "{soak}");
    assert_eq!(soak["verified"], 200, "every message delivered intact: {soak}");
    assert_eq!(soak["confirmed"], 200, "{soak}");
    for r in run("incast") {
        assert_eq!(r["probe_failed"], 0, "{r}");
        assert!(r["probe_count"].as_u64().unwrap() > 0, "{r}");
        assert!(r["incast_goodput_gbps"].as_f64().unwrap() > 0.0, "{r}");
    }
}
