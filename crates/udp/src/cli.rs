//! `fabriclab udp serve|send|bench|probe`: the command-line front end.

use crate::bench::{self, Load, Plan, Report};
use crate::check::{self, Verdict};
use crate::config::UdpConfig;
use crate::endpoint::{Endpoint, Event};
use fabriclab_engine::{from_us, stream, Stream, Time, MS, S};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Options every subcommand takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Common {
    /// Local address to bind (port 0 = any free port).
    #[arg(long, default_value = "0.0.0.0:0")]
    pub bind: SocketAddr,
    /// TOML file with endpoint settings (see docs/udp.md); defaults otherwise.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override a setting: --set link_rate_gbps=1 --set sird.sthr_bdp=inf (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(clap::Subcommand, Debug)]
pub enum UdpCmd {
    /// Receive messages (and echo small ones back with --echo); prints JSON reports.
    Serve {
        #[command(flatten)]
        common: Common,
        /// Send every received message of at most this many bytes back to its sender.
        #[arg(long)]
        echo: Option<u64>,
        /// Check every message end to end (the pattern of `bench`, `probe` and `send --size`, or the
        /// SHA-256 that `send --file` carries); prints a line per file and per corrupt message.
        #[arg(long)]
        verify: bool,
        /// Stop after this many seconds (default: run until killed).
        #[arg(long)]
        duration: Option<f64>,
        /// Stop after receiving this many messages.
        #[arg(long)]
        messages: Option<u64>,
        /// Print a JSON line with the goodput of the last interval every this many seconds.
        #[arg(long, default_value_t = 1.0)]
        report_every: f64,
    },
    /// Send messages of --size bytes (or one file) and wait for their confirmation.
    Send {
        #[command(flatten)]
        common: Common,
        #[arg(long, value_parser = peer)]
        to: SocketAddr,
        /// Bytes per message (an integer, or exact notation such as 1e6); at most max_message_bytes.
        #[arg(long, default_value = "1000", value_parser = whole_number)]
        size: u64,
        /// Messages to send (generated one at a time as the window allows).
        #[arg(long, default_value = "1", value_parser = whole_number)]
        count: u64,
        /// Send this file's bytes as one message instead, after its SHA-256 (40 bytes more), so that
        /// `serve --verify` can check it.
        #[arg(long)]
        file: Option<PathBuf>,
    },
    /// Offer a message load to one or more receivers and report goodput and latency.
    Bench {
        #[command(flatten)]
        common: Common,
        /// Receiver (repeatable; messages go round-robin).
        #[arg(long, required = true, value_parser = peer)]
        to: Vec<SocketAddr>,
        /// Sizes: wka, wkb, wkc, fixed:BYTES, or a CDF file.
        #[arg(long, default_value = "wka")]
        dist: String,
        /// Open loop: Poisson arrivals at this payload rate in total.
        #[arg(long, conflicts_with = "window")]
        load_gbps: Option<f64>,
        /// Closed loop: keep this many messages in flight (default 8 when no --load-gbps).
        #[arg(long)]
        window: Option<u32>,
        /// Offer at most this many messages (then wait for them, up to --duration).
        #[arg(long)]
        count: Option<u64>,
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Seconds at the start that are not measured.
        #[arg(long, default_value_t = 0.0)]
        warmup: f64,
        /// Print only the JSON report.
        #[arg(long)]
        json: bool,
    },
    /// Round-trip latency of tiny messages (DATA there, DONE back), e.g. under load.
    Probe {
        #[command(flatten)]
        common: Common,
        #[arg(long, value_parser = peer)]
        to: SocketAddr,
        #[arg(long, default_value_t = 8)]
        size: u64,
        /// Microseconds between probes.
        #[arg(long, default_value_t = 1000.0)]
        interval_us: f64,
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        #[arg(long)]
        json: bool,
    },
}

/// A non-negative integer, also written as `1e12` or `1.5e3` when that is exact.
fn whole_number(s: &str) -> Result<u64, String> {
    if let Ok(n) = s.parse::<u64>() {
        return Ok(n);
    }
    match s.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 => Ok(v as u64),
        _ => Err(format!("got {s}, expected a whole number such as 1000 or 1e6")),
    }
}

fn config(c: &Common) -> Result<UdpConfig, String> {
    UdpConfig::load(c.config.as_deref(), &c.set).map_err(|e| e.to_string())
}

fn open_with(c: &Common, cfg: UdpConfig) -> Result<Endpoint, String> {
    Endpoint::bind(c.bind, cfg).map_err(|e| format!("cannot open a UDP endpoint on {}: {e}", c.bind))
}

fn open(c: &Common) -> Result<Endpoint, String> {
    open_with(c, config(c)?)
}

fn secs(key: &str, v: f64) -> Result<Time, String> {
    if v.is_finite() && (0.0..1e6).contains(&v) {
        Ok((v * S as f64) as Time)
    } else {
        Err(format!("{key}: got {v}, expected a number of seconds in 0..1e6"))
    }
}

/// Runs a `fabriclab udp` subcommand.
pub fn run(cmd: UdpCmd) -> Result<(), String> {
    match cmd {
        UdpCmd::Serve { common, echo, verify, duration, messages, report_every } => {
            serve(&common, echo, verify, (duration, messages), report_every)
        }
        UdpCmd::Send { common, to, size, count, file } => send(&common, to, size, count, file),
        UdpCmd::Bench { common, to, dist, load_gbps, window, count, duration, warmup, json } => {
            let load = match (load_gbps, window) {
                (Some(g), _) if !(g > 0.0 && g.is_finite()) => {
                    return Err(format!("--load-gbps: got {g}, expected > 0"))
                }
                (Some(gbps), _) => Load::Open { gbps },
                (None, Some(0)) => return Err("--window: got 0, expected at least 1".into()),
                (None, w) => Load::Closed { window: w.unwrap_or(8) },
            };
            let sizes = bench::parse_dist(&dist).map_err(|e| e.to_string())?;
            let duration = secs("--duration", duration)?;
            let warmup = secs("--warmup", warmup)?.min(duration);
            let drain = duration / 4 + 100 * MS;
            let p = Plan { peers: Vec::new(), sizes, load, duration, drain, warmup, count };
            load_run(&common, &to, p, json)
        }
        UdpCmd::Probe { common, to, size, interval_us, duration, json } => {
            if !(interval_us > 0.0 && interval_us < 1e9) {
                return Err(format!("--interval-us: got {interval_us}, expected a positive number of microseconds"));
            }
            let sizes = fabriclab_workload::SizeDist::fixed(size).map_err(|e| format!("--size: {e}"))?;
            let d = secs("--duration", duration)?;
            let p = Plan {
                peers: Vec::new(),
                sizes,
                load: Load::Periodic { interval: from_us(interval_us) },
                duration: d,
                drain: 100 * MS,
                warmup: 0,
                count: None,
            };
            load_run(&common, &[to], p, json)
        }
    }
}

/// A peer as `host:port` or `address:port`: a host name is resolved here, once
/// (its first address; the endpoint speaks to one address per peer).
fn peer(s: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if !s.contains(':') {
        return Err(format!("{s:?} has no port: give HOST:PORT, e.g. localhost:7000"));
    }
    let mut addrs = s.to_socket_addrs().map_err(|e| format!("cannot resolve {s:?}: {e}"))?;
    addrs.next().ok_or_else(|| format!("{s:?} resolves to no address"))
}

fn load_run(common: &Common, to: &[SocketAddr], mut plan: Plan, json: bool) -> Result<(), String> {
    let mut ep = open(common)?;
    for a in to {
        plan.peers.push(ep.add_peer(*a).ok_or("more receivers than max_peers")?);
    }
    let mut rng = stream(ep.config().seed, Stream::Workload, 0);
    let r = bench::run(&mut ep, &plan, &mut rng);
    print_report(&r, json);
    let s = &r.stats;
    if let Some((a, theirs)) = plan.peers.iter().find_map(|&p| Some((ep.peer_addr(p)?, ep.peer_mtu(p)?))) {
        eprintln!("warning: messages failed: {}", mtu_reason(a, theirs, ep.config().mtu));
    }
    if s.messages_sent > 0 && s.messages_confirmed == 0 {
        let to: Vec<String> = to.iter().map(|a| a.to_string()).collect();
        return Err(format!(
            "none of {} messages was confirmed ({} failed): no DONE from {} within max_retries = {} retries of \
             retry_timeout_ms = {} (is a receiver running there?)",
            s.messages_sent,
            s.messages_failed,
            to.join(", "),
            ep.config().max_retries,
            ep.config().retry_timeout_ms
        ));
    }
    Ok(())
}

fn print_report(r: &Report, json: bool) {
    let text = serde_json::to_string_pretty(r).unwrap_or_default();
    if json {
        println!("{text}");
        return;
    }
    let l = &r.latency_us;
    println!(
        "{} messages confirmed ({} failed) in {:.2} s: goodput {:.3} Gbps; latency us p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
        r.messages_confirmed, r.messages_failed, r.duration_s, r.goodput_gbps, l.p50, l.p99, l.p999, l.max
    );
    println!("{text}");
}

/// Receives until `stop` = (seconds, messages), whichever comes first.
fn serve(
    common: &Common,
    echo: Option<u64>,
    verify: bool,
    stop: (Option<f64>, Option<u64>),
    every: f64,
) -> Result<(), String> {
    let (duration, max_messages) = stop;
    let mut c = common.clone();
    c.set.insert(0, "accept_unknown_peers=true".into());
    // Every argument is checked before the socket is bound and "serving on" printed.
    let duration = duration.map(|d| secs("--duration", d)).transpose()?;
    let every = secs("--report-every", every)?.max(MS);
    if max_messages == Some(0) {
        return Err("--messages: got 0, expected at least 1".into());
    }
    if echo == Some(0) {
        return Err("--echo: got 0, expected a size of at least 1 byte".into());
    }
    let cfg = config(&c)?;
    let stop_signal = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_usize(sig, stop_signal.clone(), sig as usize)
            .map_err(|e| format!("cannot install the SIGINT/SIGTERM handler: {e}"))?;
    }
    let mut ep = open_with(&c, cfg)?;
    eprintln!("serving on {}", ep.local_addr());
    let end = duration.map(|d| ep.now() + d);
    let (mut last, mut last_bytes) = (ep.now(), 0u64);
    let (mut total, mut verified, mut corrupt) = (0u64, 0u64, 0u64);
    // After the last message, keep answering until the senders fall silent: a
    // lost DONE makes its sender retry, and only a live receiver confirms the
    // retry (a receiver that left would turn a delivered message into a
    // failure at the sender). Silent = no datagram for three retry periods.
    let quiet = 3 * ((ep.config().retry_timeout_ms * 1e9).round() as Time);
    let mut linger: Option<(u64, Time)> = None;
    // Senders whose DATA did not fit our mtu, warned about once each.
    let mut mtu_warned: Vec<SocketAddr> = Vec::new();
    loop {
        if let Some(Event::Received { peer, id, data }) = ep.poll(Duration::from_millis(50)) {
            total += data.len() as u64;
            if verify {
                let from = ep.peer_addr(peer).map_or("?".into(), |a| a.to_string());
                match check::check(id, &data) {
                    Verdict::Pattern => verified += 1,
                    Verdict::Digest { sha256, body_bytes } => {
                        verified += 1;
                        let line = serde_json::json!({ "message": id, "from": from, "bytes": body_bytes,
                            "sha256": check::hex(&sha256), "verified": true });
                        println!("{line}");
                    }
                    Verdict::Corrupt => {
                        corrupt += 1;
                        let line =
                            serde_json::json!({ "message": id, "from": from, "bytes": data.len(), "verified": false });
                        println!("{line}");
                    }
                }
            }
            if echo.is_some_and(|max| data.len() as u64 <= max) {
                let _ = ep.send(peer, data);
            }
        }
        if ep.stats().mtu_mismatch > 0 {
            if let Some(m) = ep.mtu_mismatch().filter(|m| !mtu_warned.contains(&m.addr)) {
                eprintln!("warning: {m}");
                mtu_warned.push(m.addr);
            }
        }
        let now = ep.now();
        if now >= last + every {
            let gbps = (total - last_bytes) as f64 * 8.0 / ((now - last) as f64 / S as f64) / 1e9;
            println!("{{\"t_s\": {:.3}, \"goodput_gbps\": {gbps:.4}, \"bytes\": {total}}}", now as f64 / S as f64);
            (last, last_bytes) = (now, total);
        }
        if linger.is_none() && max_messages.is_some_and(|m| ep.stats().messages_delivered >= m) {
            linger = Some((ep.stats().datagrams_received, now));
        }
        if let Some((seen, since)) = linger {
            let heard = ep.stats().datagrams_received;
            linger = Some(if heard == seen { (seen, since) } else { (heard, now) });
        }
        let settled = linger.is_some_and(|(_, since)| now >= since + quiet);
        let signal = stop_signal.load(std::sync::atomic::Ordering::Relaxed);
        if signal != 0 {
            let name = if signal == signal_hook::consts::SIGINT as usize { "SIGINT" } else { "SIGTERM" };
            eprintln!("stopped by {name}");
        }
        if end.is_some_and(|e| now >= e) || settled || signal != 0 {
            let summary = serde_json::json!({ "verified": verified, "corrupt": corrupt, "stats": ep.stats() });
            println!("{summary}");
            // A stop (signal, --duration, --messages) is a normal end; a message that
            // failed --verify is an error, reported after the counters.
            return match corrupt {
                0 => Ok(()),
                _ => Err(format!("{corrupt} of {} messages corrupt", verified + corrupt)),
            };
        }
    }
}

/// Why messages to `to` failed when it announced another `mtu` than ours.
fn mtu_reason(to: SocketAddr, theirs: u32, ours: u32) -> String {
    format!(
        "the receiver {to} has mtu = {theirs} and this sender mtu = {ours}, and both ends must use the same: \
         run with --set mtu={theirs} (or give the receiver --set mtu={ours})"
    )
}

fn send(common: &Common, to: SocketAddr, size: u64, count: u64, file: Option<PathBuf>) -> Result<(), String> {
    let cfg = config(common)?;
    let max = cfg.max_message_bytes;
    // Sizes are checked before anything is allocated or bound.
    let (size, n) = match &file {
        Some(f) => {
            let len = std::fs::metadata(f).map_err(|e| format!("--file {}: {e}", f.display()))?.len();
            if len + check::DIGEST_PREFIX as u64 > max {
                return Err(format!(
                    "--file {}: {len} bytes and the {}-byte digest before them are more than max_message_bytes = {max} \
                     (raise it with --set on both ends)",
                    f.display(),
                    check::DIGEST_PREFIX
                ));
            }
            (len, 1)
        }
        None => (size, count),
    };
    if file.is_none() && size == 0 {
        return Err("--size: got 0 bytes, expected at least 1 byte".into());
    }
    if size > max {
        return Err(format!("--size: got {size} bytes, more than max_message_bytes = {max} (raise it with --set)"));
    }
    if n == 0 {
        return Err("--count: got 0, expected at least 1".into());
    }
    let mut reason = format!(
        "no DONE from {to} within max_retries = {} retries of retry_timeout_ms = {}",
        cfg.max_retries, cfg.retry_timeout_ms
    );
    let mut ep = open_with(common, cfg)?;
    let peer = ep.add_peer(to).ok_or("max_peers is 0")?;
    // Messages are made one at a time, as the endpoint accepts them (max_outbound_messages).
    // Every message can be checked by `serve --verify` (docs/udp.md, "Verifying messages").
    let make = |file: &Option<PathBuf>, id: u64| -> Result<Vec<u8>, String> {
        match file {
            Some(f) => {
                let body = std::fs::read(f).map_err(|e| format!("--file {}: {e}", f.display()))?;
                let m = check::with_digest(&body);
                println!(
                    "sending {} ({} bytes, sha256 {})",
                    f.display(),
                    body.len(),
                    check::hex(&m[check::DIGEST_MAGIC.len()..check::DIGEST_PREFIX])
                );
                Ok(m)
            }
            None => Ok(check::pattern(id, size as usize)),
        }
    };
    let (mut offered, mut ok, mut failed) = (0u64, 0u64, 0u64);
    let window = ep.config().max_outbound_messages as usize;
    let mut idle = std::time::Instant::now();
    while ok + failed < n {
        while offered < n && ep.in_flight() < window {
            ep.send(peer, make(&file, ep.next_message_id())?).map_err(|e| e.to_string())?;
            offered += 1;
        }
        match ep.poll(Duration::from_millis(100)) {
            Some(Event::Confirmed { id, latency_ps, .. }) => {
                ok += 1;
                idle = std::time::Instant::now();
                println!("message {id} confirmed after {:.1} us", latency_ps as f64 / 1e6);
            }
            Some(Event::Failed { id, .. }) => {
                failed += 1;
                idle = std::time::Instant::now();
                if let Some(theirs) = ep.peer_mtu(peer) {
                    reason = mtu_reason(to, theirs, ep.config().mtu);
                }
                println!("message {id} failed: {reason}");
            }
            Some(Event::Received { .. }) => {}
            None if idle.elapsed() > Duration::from_secs(60) => return Err("no progress for 60 s".into()),
            None => {}
        }
    }
    if failed > 0 {
        return Err(format!("{failed} of {n} messages failed: {reason}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::peer;

    #[test]
    fn a_peer_is_an_address_or_a_host_name_with_a_port() {
        assert_eq!(peer("127.0.0.1:7000").unwrap().to_string(), "127.0.0.1:7000");
        let local = peer("localhost:7000").unwrap();
        assert!(local.ip().is_loopback() && local.port() == 7000, "{local}");
        assert!(peer("localhost").unwrap_err().contains("has no port"));
        assert!(peer("no-such-host.invalid:7000").unwrap_err().contains("cannot resolve"));
    }
}
