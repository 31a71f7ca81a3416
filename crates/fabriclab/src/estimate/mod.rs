//! What a run will cost before it starts: its peak memory, term by term, and
//! its events, in closed form from the configuration.
//!
//! Why a module of its own: `fabriclab run` and `sweep` refuse work that
//! cannot fit the machine ([`check`]), `validate` prints the figures, and
//! both must answer at once even for absurd sizes (a k = 128 fat tree, a
//! million spines, 1e14-byte messages, a run of 1e13 ms). So nothing here
//! builds the topology, the routes or the workload: every count is a
//! formula of the configuration's values, in `f64` so that no product wraps.
//! The one file read is a trace's (its rows are the workload), at most
//! [`TRACE_SCAN_BYTES`] of it.
//!
//! The constants are the sizes of the simulator's own records
//! (`size_of`), so the estimate follows them when they change, plus
//! per-record allowances calibrated against measured peak resident memory
//! (docs/performance.md, "Memory estimate").

use crate::config::{BufferLimit, Config, ProtocolName, ProtocolParams, ProtocolVisitor};
use crate::metrics::MessageRecord;
use crate::net::topology::Link;
use crate::net::topology_config::TopologyConfig;
use crate::net::{wire, Packet, Port};
use crate::transport::Transport;
use crate::workload::{LoadReference, MessageSpec, TraceFormat, WorkloadConfig};
use std::io::BufRead;
use std::mem::size_of;

/// One part of the peak memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// What it is, in the project's words ("message table").
    pub what: &'static str,
    pub bytes: f64,
    /// The count behind it ("4,600,000 messages x 160 B").
    pub detail: String,
    /// Which keys make it smaller.
    pub reduce: &'static str,
}

/// The estimate of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Every term, in a fixed order.
    pub terms: Vec<Term>,
    /// Messages the run starts.
    pub messages: f64,
    /// Packets serialised onto links (data and control).
    pub packet_hops: f64,
    /// Events the loop processes.
    pub events: f64,
}

impl Estimate {
    pub fn total_bytes(&self) -> f64 {
        self.terms.iter().map(|t| t.bytes).sum()
    }

    /// The largest term.
    pub fn dominant(&self) -> &Term {
        self.terms.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes)).expect("an estimate has terms")
    }

    /// The wall time the run would take at [`EVENTS_PER_S`], seconds.
    pub fn wall_seconds(&self) -> f64 {
        self.events / EVENTS_PER_S
    }

    /// A warning for a run estimated above [`LONG_RUN_S`] of wall time,
    /// which `fabriclab run` prints even with --quiet: a run of hours should
    /// not start without a word (a k = 48 fat tree for 100 ms is 5e11 events).
    pub fn long_run_warning(&self) -> Option<String> {
        let s = self.wall_seconds();
        (s > LONG_RUN_S).then(|| {
            format!(
                "this run is estimated at {} events, about {} of wall time at {} M events/s (docs/performance.md); \
                 a shorter run.duration_ms or a smaller fabric takes proportionally less",
                count(self.events),
                duration(s),
                EVENTS_PER_S / 1e6
            )
        })
    }

    /// One line for `fabriclab validate`.
    pub fn summary_line(&self) -> String {
        let d = self.dominant();
        format!(
            "estimated peak memory {} (largest: {}, {}), events {} ({} packet-hops, {} messages)",
            bytes(self.total_bytes()),
            d.what,
            bytes(d.bytes),
            count(self.events),
            count(self.packet_hops),
            count(self.messages)
        )
    }
}

/// The process itself, the event queue's wheel and the small tables every run has.
const BASELINE_BYTES: f64 = 6e6;
/// Heap a host's transport holds besides its struct and per-peer tables:
/// queues, maps and timers of a few active flows.
const HOST_HEAP_BYTES: f64 = 1500.0;
/// Heap behind one started message besides its record: the receiver's entry
/// in the completed-message set (a hash set of u64: 9 B a slot, at least
/// 8/7 slots an entry) and, at the end, its slowdown samples (f64 in up to
/// three vectors). Measured: 96-105 B a message in all (docs/performance.md).
const MESSAGE_HEAP_BYTES: f64 = 16.0 + 24.0;
/// The message records' vector grows by doubling: between 1 and 2 times
/// its length, 1.5 on average.
const RECORD_SLACK: f64 = 1.5;
/// SIRD allocates a peer record (credit, its cap and two buckets: 144 B) for
/// each host it has received from, plus allocator overhead.
const SIRD_PEER_BYTES: f64 = 160.0;
/// Peak over steady size of the fabric's tables while they are built
/// (measured with a million spines: 5.25 GB peak, 4.0 GB once built).
const BUILD_TRANSIENT: f64 = 1.3;
/// Bytes in flight per sending host, in BDPs (data and the queues it
/// builds; calibrated on permutations and Poisson runs, docs/performance.md).
const IN_FLIGHT_BDP: f64 = 2.5;
/// Events a second the loop processes, for the wall-time estimate: the low
/// end of the release build's rate on one core of a 2-core machine
/// (10-17 M events/s, docs/performance.md), so that the estimate errs long.
pub const EVENTS_PER_S: f64 = 1e7;
/// Estimated wall time above which a run warns before it starts, seconds.
pub const LONG_RUN_S: f64 = 600.0;
/// Bytes of a trace read in full; beyond this the rest is extrapolated.
pub const TRACE_SCAN_BYTES: u64 = 16 << 20;

/// The fabric's counts, from the topology keys alone.
struct Shape {
    hosts: f64,
    switches: f64,
    links: f64,
    /// Switches hosts hang off (the routing table's columns).
    edges: f64,
    /// Links a packet crosses one way, averaged over uniform host pairs.
    mean_hops: f64,
    host_rate_bps: f64,
    /// Core capacity over host capacity of a rack (<= 1), and the share of
    /// receivers outside a host's rack: for `load_reference = "core"`.
    core_ratio: f64,
    f_cross: f64,
}

/// The share of a host's peers (uniform over the other `n - 1` hosts) that
/// sit in its group of `group` hosts.
fn pair_share(n: f64, group: f64) -> f64 {
    if n > 1.0 {
        (group - 1.0).max(0.0) / (n - 1.0)
    } else {
        1.0
    }
}

impl Shape {
    /// A two-tier Clos: `tors` ToRs of `hpt` hosts, each ToR linked once to
    /// each of `spines` spines. A leaf-spine is one, and so is a 2-tier fat
    /// tree (k leaves, k/2 spines); only their core ratios are worked out apart.
    fn two_tier(tors: f64, hpt: f64, spines: f64, host_rate_gbps: f64, core_ratio: f64) -> Shape {
        let hosts = tors * hpt;
        let same = pair_share(hosts, hpt);
        Shape {
            hosts,
            switches: tors + spines,
            links: hosts + tors * spines,
            edges: tors,
            mean_hops: 2.0 * same + 4.0 * (1.0 - same),
            host_rate_bps: host_rate_gbps * 1e9,
            core_ratio,
            f_cross: 1.0 - same,
        }
    }
}

fn shape(t: &TopologyConfig) -> Shape {
    match t {
        TopologyConfig::LeafSpine(l) => {
            let (tors, hpt, spines) = (l.tors as f64, l.hosts_per_tor as f64, l.spines as f64);
            let core = if tors > 1.0 { (spines * l.fabric_rate_gbps / (hpt * l.host_rate_gbps)).min(1.0) } else { 1.0 };
            Shape::two_tier(tors, hpt, spines, l.host_rate_gbps, core)
        }
        TopologyConfig::FatTree(f) => {
            let k = f.k as f64;
            let half = k / 2.0;
            let hpt = f.hosts_per_tor.map_or(half, f64::from);
            let core = (half * f.fabric_rate_gbps / (hpt * f.host_rate_gbps)).min(1.0);
            if f.tiers == 2 {
                Shape::two_tier(k, hpt, half, f.host_rate_gbps, core)
            } else {
                let tors = k * half;
                let hosts = tors * hpt;
                let (same_tor, same_pod) = (pair_share(hosts, hpt), pair_share(hosts, hpt * half));
                Shape {
                    hosts,
                    switches: tors + k * half + half * half,
                    links: hosts + 2.0 * k * half * half,
                    edges: tors,
                    mean_hops: 2.0 * same_tor + 4.0 * (same_pod - same_tor) + 6.0 * (1.0 - same_pod),
                    host_rate_bps: f.host_rate_gbps * 1e9,
                    core_ratio: core,
                    f_cross: 1.0 - same_tor,
                }
            }
        }
        TopologyConfig::Dumbbell(d) => {
            let (l, r) = (d.hosts_left as f64, d.hosts_right as f64);
            let hosts = l + r;
            let cross = if hosts > 1.0 { 2.0 * l * r / (hosts * (hosts - 1.0)) } else { 0.0 };
            Shape {
                hosts,
                switches: 2.0,
                links: hosts + 1.0,
                edges: 2.0,
                mean_hops: 2.0 + cross,
                host_rate_bps: d.host_rate_gbps * 1e9,
                core_ratio: (d.bottleneck_rate_gbps / (l.max(r) * d.host_rate_gbps)).min(1.0),
                f_cross: cross,
            }
        }
        TopologyConfig::Star(s) => Shape {
            hosts: s.hosts as f64,
            switches: 1.0,
            links: s.hosts as f64,
            edges: 1.0,
            mean_hops: 2.0,
            host_rate_bps: s.host_rate_gbps * 1e9,
            core_ratio: 1.0,
            f_cross: 0.0,
        },
    }
}

/// What the workload offers: messages, bytes, and how they arrive.
struct Offer {
    /// Messages started over the run.
    messages: f64,
    /// Payload bytes offered over the run.
    bytes: f64,
    /// Largest message.
    max_size: f64,
    /// Hosts that send at once (at most).
    senders: f64,
    /// Whether every message is known (and its record made) at the start.
    finite: bool,
    /// Bytes of workload input held for the whole run (a trace's text and list).
    input_bytes: f64,
    /// Which keys make the message table smaller.
    reduce: &'static str,
}

fn offer(cfg: &Config, s: &Shape) -> Offer {
    let secs = cfg.run.duration_ms / 1e3;
    match &cfg.workload {
        WorkloadConfig::Poisson(p) => {
            let dist = p.size_distribution().ok();
            let (mean, max) = dist.as_ref().map_or((1.0, 1.0), |d| (d.mean().max(1.0), d.max() as f64));
            // As the generator offers it (`per_host_bytes_per_s` x senders), without the fabric.
            let count = |l: &Option<Vec<u32>>| l.as_ref().map_or(s.hosts, |v| v.len() as f64);
            let senders = count(&p.senders);
            let mut rate = p.load * s.host_rate_bps / 8.0 * senders;
            match p.load_reference {
                LoadReference::Core if s.f_cross > 0.0 => rate *= s.core_ratio / s.f_cross,
                LoadReference::Receivers => rate *= count(&p.receivers) / senders,
                _ => {}
            }
            let bytes = rate * secs;
            let messages = match &p.incast {
                Some(o) => bytes * (1.0 - o.share) / mean + bytes * o.share / o.bytes as f64,
                None => bytes / mean,
            };
            let max_size = p.incast.as_ref().map_or(max, |o| max.max(o.bytes as f64));
            Offer {
                messages,
                bytes,
                max_size,
                senders,
                finite: false,
                input_bytes: 0.0,
                reduce: "run.duration_ms, workload.load or the number of hosts",
            }
        }
        WorkloadConfig::Incast(i) => {
            let n = i.n_senders() as f64;
            let b = i.bytes as f64;
            Offer {
                messages: n,
                bytes: n * b,
                max_size: b,
                senders: n,
                finite: true,
                input_bytes: n * size_of::<MessageSpec>() as f64,
                reduce: "workload.bytes or workload.senders",
            }
        }
        WorkloadConfig::Permutation(p) => {
            let n = s.hosts * p.count as f64;
            let large = p.large_bytes.map_or(0.0, |l| l as f64 - p.bytes as f64);
            Offer {
                messages: n,
                bytes: n * p.bytes as f64 + large,
                max_size: (p.bytes as f64).max(p.large_bytes.unwrap_or(0) as f64),
                senders: s.hosts,
                finite: true,
                input_bytes: n * size_of::<MessageSpec>() as f64,
                reduce: "workload.bytes, workload.count or the number of hosts",
            }
        }
        WorkloadConfig::Trace(t) => {
            let (rows, bytes, max) =
                t.path().ok().and_then(|p| scan_trace(p, t.trace_format).ok()).unwrap_or((0.0, 0.0, 0.0));
            let file = t.path().ok().and_then(|p| std::fs::metadata(p).ok()).map_or(0.0, |m| m.len() as f64);
            Offer {
                messages: rows,
                bytes,
                max_size: max,
                senders: rows,
                finite: true,
                input_bytes: file + rows * size_of::<MessageSpec>() as f64,
                reduce: "the trace's rows or sizes (workload.trace_file)",
            }
        }
        WorkloadConfig::AllToAll(a) => {
            let n = s.hosts * (s.hosts - 1.0);
            Offer {
                messages: n,
                bytes: n * a.bytes as f64,
                max_size: a.bytes as f64,
                senders: s.hosts,
                finite: true,
                input_bytes: 0.0,
                reduce: "the number of hosts or workload.bytes",
            }
        }
        WorkloadConfig::Goal(g) => {
            let path = g.goal_file.as_deref();
            let scan = path.and_then(|p| fabriclab_workload::goal::scan(p, TRACE_SCAN_BYTES).ok()).unwrap_or_default();
            let file = path.and_then(|p| std::fs::metadata(p).ok()).map_or(0.0, |m| m.len() as f64);
            Offer {
                messages: scan.sends,
                bytes: scan.bytes,
                max_size: scan.max_bytes,
                senders: scan.ranks.min(s.hosts),
                finite: true,
                input_bytes: file + scan.ops * fabriclab_workload::goal::OP_BYTES,
                reduce: "the schedule's ops or sizes (workload.goal_file)",
            }
        }
        WorkloadConfig::RingAllreduce(r) => {
            let ranks = r.ranks.map_or(s.hosts, f64::from);
            let n = 2.0 * (ranks - 1.0) * ranks;
            Offer {
                messages: n,
                bytes: 2.0 * (ranks - 1.0) * r.bytes as f64,
                max_size: (r.bytes as f64 / ranks).ceil(),
                senders: ranks,
                finite: true,
                input_bytes: 0.0,
                reduce: "workload.ranks or workload.bytes",
            }
        }
    }
}

/// (rows, total bytes, largest size) of a trace file, reading at most
/// [`TRACE_SCAN_BYTES`] and scaling the counts by the file's length beyond
/// that. Malformed rows are skipped: the trace's own parser reports them.
fn scan_trace(path: &std::path::Path, format: TraceFormat) -> std::io::Result<(f64, f64, f64)> {
    let len = std::fs::metadata(path)?.len();
    let mut r = std::io::BufReader::new(std::fs::File::open(path)?);
    let (mut read, mut rows, mut sum, mut max) = (0u64, 0.0, 0.0, 0.0f64);
    let mut line = String::new();
    while read < TRACE_SCAN_BYTES {
        line.clear();
        let n = r.read_line(&mut line)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        let sizes: Vec<&str> = match format {
            TraceFormat::Csv => line.trim().rsplit(',').take(1).collect(),
            // `SRC->DST ... size BYTES ...`
            TraceFormat::Htsim => line.split_whitespace().skip_while(|&t| t != "size").skip(1).take(1).collect(),
            // `HOST,INTERVAL|DST|SIZE,...`: many messages a line.
            TraceFormat::Ns2 => line.trim().split(',').skip(1).filter_map(|t| t.rsplit('|').next()).collect(),
        };
        for b in sizes.iter().filter_map(|f| f.trim().parse::<f64>().ok()) {
            rows += 1.0;
            sum += b;
            max = max.max(b);
        }
    }
    let scale = if read > 0 && read < len { len as f64 / read as f64 } else { 1.0 };
    Ok((rows * scale, sum * scale, max))
}

/// Sizes that depend on the protocol's types.
struct ProtocolSizes {
    host: usize,
    packet: usize,
}

struct Sizes;

impl ProtocolVisitor for Sizes {
    type Output = ProtocolSizes;
    fn visit<P: ProtocolParams>(self, _: &P) -> ProtocolSizes {
        type Header<P> = <<P as ProtocolParams>::Host as Transport>::Header;
        ProtocolSizes { host: size_of::<P::Host>(), packet: size_of::<Packet<Header<P>>>() }
    }
}

/// Estimates `cfg`'s peak memory and events. `cfg` should be validated (a
/// value out of range gives a meaningless, but finite or infinite, estimate;
/// never a panic).
pub fn estimate(cfg: &Config) -> Estimate {
    let s = shape(&cfg.topology);
    let o = offer(cfg, &s);
    let net = &cfg.network;
    let mss = wire::mss(net.mtu.clamp(576, 9216)) as f64;
    let sizes = cfg.protocol.visit(Sizes);
    let fabric_keys = "the number of hosts and switches (topology.k, tors, hosts_per_tor, spines, hosts)";
    let mut terms = Vec::new();

    // Topology, ports and routes: two ports per link (with their class queue
    // heads), the (switch, edge switch) routing table, the per-node port
    // lists used while building it, and the occupancy records; times the
    // transient of the build (growing tables, per-node lists).
    let ports = 2.0 * s.links;
    let nodes = s.hosts + s.switches;
    let topo = BUILD_TRANSIENT
        * (s.links * size_of::<Link>() as f64
            + ports * (size_of::<Port>() as f64 + 8.0 * net.priorities as f64 + 8.0)
            + s.switches * s.edges * 8.0
            + nodes * (24.0 + 16.0)
            + s.hosts * 32.0);
    terms.push(Term {
        what: "topology and routing tables",
        bytes: topo,
        detail: format!(
            "{} nodes, {} ports, {} x {} routing entries",
            count(nodes),
            count(ports),
            count(s.switches),
            count(s.edges)
        ),
        reduce: fabric_keys,
    });

    // Hosts: each host's transport, its two random streams, and the tables
    // some protocols keep per peer at every host.
    let per_peer = match cfg.protocol.name {
        ProtocolName::Sird => 8.0,
        ProtocolName::Paydebt => 12.0,
        _ => 0.0,
    };
    let pairs = s.hosts * (s.hosts - 1.0).max(0.0);
    let contacted = if cfg.protocol.name == ProtocolName::Sird { pairs.min(o.messages) * SIRD_PEER_BYTES } else { 0.0 };
    let hosts = s.hosts * (sizes.host as f64 + HOST_HEAP_BYTES + 2.0 * 40.0) + s.hosts * s.hosts * per_peer + contacted;
    terms.push(Term {
        what: "per-host transport state",
        bytes: hosts,
        detail: if per_peer > 0.0 {
            format!(
                "{} hosts, {} keeps {per_peer} B per peer at every host ({}^2 pairs)",
                count(s.hosts),
                cfg.protocol.name.as_str(),
                count(s.hosts)
            )
        } else {
            format!("{} hosts x {} B", count(s.hosts), count(sizes.host as f64 + HOST_HEAP_BYTES))
        },
        reduce: fabric_keys,
    });

    // Packets in flight: what the transports keep out (measured: about 2.5
    // BDP per sending host, counting the queues they build), never more than
    // the bytes offered, nor, with finite buffers, than the switch buffers
    // plus the links' pipes. Each packet is a slab slot (the packet plus its
    // hot copy) and up to two queued events; the slab keeps its peak size.
    let outstanding = s.hosts.min(o.senders) * IN_FLIGHT_BDP * net.bdp_bytes as f64;
    let cap = match net.buffer_bytes {
        BufferLimit::Bytes(b) => (ports - 2.0 * s.hosts) * b as f64 + 2.0 * s.hosts * net.bdp_bytes as f64,
        BufferLimit::Infinite => f64::INFINITY,
    };
    let in_flight = outstanding.min(cap).min(o.bytes.max(mss));
    let packets = in_flight / mss * 2.0; // data packets and their control packets
    terms.push(Term {
        what: "packets in flight",
        bytes: packets * (sizes.packet as f64 + 32.0 + 4.0 + 2.0 * 24.0),
        detail: format!("{} packets", count(packets)),
        reduce: "network.buffer_bytes, network.bdp_bytes or the number of hosts",
    });

    // Message table: a record per started message, the state behind it,
    // and the workload's own list.
    let per_msg = RECORD_SLACK * size_of::<MessageRecord>() as f64 + MESSAGE_HEAP_BYTES;
    terms.push(Term {
        what: "message table",
        bytes: o.messages * per_msg + o.input_bytes,
        detail: format!("{} messages x {} B", count(o.messages), count(per_msg)),
        reduce: o.reduce,
    });

    // Reassembly bitmaps (a bit per packet at the receiver, and as much at
    // the sender): for a finite workload every message is open at once; for
    // an open-loop one, at most the largest message at each host.
    let open_bytes = if o.finite { o.bytes } else { o.bytes.min(s.hosts * o.max_size) };
    terms.push(Term {
        what: "per-message packet bitmaps",
        bytes: 2.0 * open_bytes / mss / 8.0,
        detail: format!("{} bytes open at once, largest message {}", count(open_bytes), bytes(o.max_size)),
        reduce: "the message sizes (workload.bytes, size_bytes, the trace's sizes)",
    });

    // Data packets and their acknowledgement or credit, each crossing
    // mean_hops links; the run ends at run.duration_ms whatever is offered.
    let sent = o.bytes.min(s.host_rate_bps / 8.0 * s.hosts * cfg.run.duration_ms / 1e3 * 1.5);
    let data_packets = sent / mss;
    let packet_hops = 2.0 * data_packets * s.mean_hops;

    if !cfg.output.traces.is_empty() {
        // A row per window change or RTT sample (per acknowledgement at most),
        // thinned to one per flow and interval.
        let traced =
            if cfg.output.trace_hosts.is_empty() { 1.0 } else { cfg.output.trace_hosts.len() as f64 / s.hosts };
        let mut rows = data_packets * traced * cfg.output.traces.len() as f64;
        if cfg.output.trace_interval_us > 0.0 {
            let flows = o.messages.min(s.hosts * 8.0) * traced;
            rows = rows.min(flows * cfg.run.duration_ms * 1e3 / cfg.output.trace_interval_us);
        }
        let per_row = 2.0 * size_of::<crate::metrics::trace::TraceRecord>() as f64;
        terms.push(Term {
            what: "transport traces",
            bytes: rows * per_row,
            detail: format!("{} rows", count(rows)),
            reduce: "output.traces, output.trace_hosts or output.trace_interval_us",
        });
    }
    terms.push(Term {
        what: "program and event queue",
        bytes: BASELINE_BYTES,
        detail: "fixed".into(),
        reduce: "nothing",
    });

    Estimate { terms, messages: o.messages, packet_hops, events: 2.0 * packet_hops + 4.0 * o.messages }
}

/// The memory this machine can still give, in bytes: `MemAvailable` of
/// /proc/meminfo (Linux). `None` elsewhere, or if it cannot be read.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&text)
}

fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The environment variable that skips the memory check: `--force` sets it
/// (before any thread starts) so that a forced sweep's points, which are
/// `fabriclab run` processes, are forced too; Python's `force=True` likewise.
pub const FORCE_VAR: &str = "FABRICLAB_FORCE";

/// Whether [`FORCE_VAR`] is set (to anything but empty or "0").
pub fn forced() -> bool {
    std::env::var_os(FORCE_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Before a run: refuses `cfg` if its estimate exceeds the memory available,
/// unless forced or where the available memory is unknown (not Linux).
pub fn check_run(cfg: &Config) -> Result<(), String> {
    if forced() {
        return Ok(());
    }
    match available_memory() {
        Some(avail) => check(&estimate(cfg), avail, "this run"),
        None => Ok(()),
    }
}

/// Refuses an estimate larger than `available` bytes, with a message that
/// names the largest term, its size and what to change. `what` says what is
/// refused ("this run", "point 3f2a... of the sweep").
pub fn check(est: &Estimate, available: u64, what: &str) -> Result<(), String> {
    let total = est.total_bytes();
    if total <= available as f64 {
        return Ok(());
    }
    let d = est.dominant();
    Err(format!(
        "{what} needs an estimated {} of memory, more than the {} this machine has available; \
         the largest part is the {} ({}: {}). Reduce {}, or pass --force to run anyway",
        bytes(total),
        bytes(available as f64),
        d.what,
        bytes(d.bytes),
        d.detail,
        d.reduce
    ))
}

/// "12.3 GB", decimal units.
pub fn bytes(b: f64) -> String {
    if !b.is_finite() {
        return "more than can be counted".into();
    }
    const UNITS: [(&str, f64); 6] = [("EB", 1e18), ("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    if b >= 1e21 {
        return format!("{b:.1e} B");
    }
    UNITS.iter().find(|(_, u)| b >= *u).map_or(format!("{b:.0} B"), |(n, u)| format!("{:.1} {n}", b / u))
}

/// A wall time as a person reads it: "45 min", "13.9 h", "3.2 days".
fn duration(s: f64) -> String {
    if !s.is_finite() {
        "more time than can be counted".into()
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 48.0 * 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} days", s / 86400.0)
    }
}

/// A count: exact up to a million, then "4.6e9".
fn count(x: f64) -> String {
    if !x.is_finite() {
        "more than can be counted".into()
    } else if x < 1e6 {
        format!("{}", x.round() as u64)
    } else {
        format!("{x:.2e}")
    }
}

#[cfg(test)]
mod tests;
