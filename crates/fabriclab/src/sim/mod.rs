//! The simulation loop: builds the fabric and hosts from a [`Config`], feeds
//! the workload in, moves packets through ports and switches, and collects
//! metrics. Generic over the transport, so each protocol gets its own
//! monomorphised loop with no dynamic dispatch on the hot path.

mod build;
mod event;
mod features;
mod links;
mod program;
mod stats;
mod switch_features;
mod tapped;

pub use build::{base_rtts, injected_messages, run, run_custom, run_stoppable};
pub use tapped::run_tapped;

use crate::metrics::occupancy::Occupancy;
use crate::metrics::MessageRecord;
use crate::net::switch_config::QueueAccounting;
use crate::net::{Fabric, LoadBalancing, Offer, PacketSlab, Pick, ECN_CE, ECN_ECT, INT};
use crate::transport::{AppEvent, Cx, HostInfo, Message, Transport};
use crate::workload::{MessageSpec, Workload};
use event::{Ev, Kind, Timers};
use fabriclab_engine::{mix64, EventQueue, SimRng, Time};
use rand::RngCore;
use stats::Counters;
use std::ops::ControlFlow;

/// What a run produced.
pub struct RunOutput {
    pub summary: crate::metrics::Summary,
    pub messages: Vec<MessageRecord>,
    /// Occupancy of every switch port over the measurement window.
    pub ports: Vec<crate::metrics::PortRecord>,
    /// Transport time series (traces.csv), in time order; empty unless `output.traces` is set.
    pub traces: Vec<crate::metrics::trace::TraceRecord>,
    /// The queue level distributions (queue_cdf.csv); empty unless `output.queue_percentiles` is set.
    pub queue_cdf: Vec<crate::metrics::histogram::CdfRow>,
    /// The names of `output.queue_ports` (`tor0->host3`), in the order given.
    pub queue_ports: Vec<String>,
    /// Their levels over time (queue_series.csv); empty unless `output.queue_ports` is set.
    pub queue_series: Vec<crate::metrics::occupancy::QueueSample>,
    /// packets.pcap's bytes; empty unless `output.pcap_hosts` or `output.pcap_flows` is set.
    pub pcap: Vec<u8>,
    /// Packets not written to packets.pcap because it reached `output.pcap_max_mb`.
    pub pcap_dropped: u64,
    /// A GOAL run's ops (ops.csv), in file order; empty for other workloads or with `output.ops = false`.
    pub ops: Vec<fabriclab_workload::goal::OpRow>,
    /// What the user should hear about the run that is no error: a trace's
    /// messages left out after the end of the run (`fabriclab run` prints each
    /// on stderr after "warning: ").
    pub warnings: Vec<String>,
}

pub(crate) struct Sim<T: Transport> {
    q: EventQueue<Ev>,
    fabric: Fabric,
    slab: PacketSlab<T::Header>,
    hosts: Vec<T>,
    host_rng: Vec<SimRng>,
    entropy_rng: Vec<SimRng>,
    lb: LoadBalancing,
    workload: Workload,
    next_msg: Option<MessageSpec>,
    messages: Vec<MessageRecord>,
    /// Room for the ideal-latency computation of sprayed messages (reused).
    ideal_scratch: Vec<Time>,
    /// `output.ideal`.
    pub(crate) ideal: crate::config::IdealLatency,
    /// `network.queue_accounting`.
    pub(crate) accounting: QueueAccounting,
    /// Fold switch ports' transmission ends (under `UntilFirstBit`, without
    /// switch features): when nothing waits behind a packet, its end changes
    /// no count, so no event marks it; `tx_end` keeps it instead, read when
    /// the next packet reaches the port.
    fold: bool,
    tx_end: Vec<Time>,
    occupancy: Occupancy,
    counters: Counters,
    timers: Vec<(Time, u64)>,
    /// The (host, token) of every pending timer event.
    pending_timers: Timers,
    app: Vec<AppEvent>,
    info: HostInfo,
    warmup: Time,
    end: Time,
    /// Optional switch features; None keeps the lean path.
    feat: Option<Box<crate::net::features::Features>>,
    /// Transport traces (`output.traces`); None when off.
    tracer: Option<Box<crate::metrics::trace::Tracer>>,
    /// Packet capture at host NICs (`output.pcap_*`); None when off.
    pcap: Option<Box<crate::metrics::pcap::Pcap>>,
}

impl<T: Transport> Sim<T> {
    pub(crate) fn new(
        fabric: Fabric,
        hosts: Vec<T>,
        host_rng: Vec<SimRng>,
        entropy_rng: Vec<SimRng>,
        lb: LoadBalancing,
        workload: Workload,
        info: HostInfo,
        warmup: Time,
        end: Time,
    ) -> Self {
        let n_hosts = fabric.topo.n_hosts;
        let tor: Vec<bool> = (n_hosts..fabric.topo.nodes.len() as u32).map(|n| fabric.topo.is_tor(n)).collect();
        Sim {
            q: EventQueue::new(),
            slab: PacketSlab::new(),
            occupancy: Occupancy::new(n_hosts, &tor),
            fabric,
            hosts,
            host_rng,
            entropy_rng,
            lb,
            workload,
            next_msg: None,
            messages: Vec::new(),
            ideal_scratch: Vec::new(),
            ideal: crate::config::IdealLatency::StoreAndForward,
            accounting: QueueAccounting::UntilLastBit,
            fold: false,
            tx_end: Vec::new(),
            counters: Counters::default(),
            timers: Vec::new(),
            pending_timers: Timers::default(),
            app: Vec::new(),
            info,
            warmup,
            end,
            feat: None,
            tracer: None,
            pcap: None,
        }
    }

    /// Folds transmission ends where that changes nothing: under
    /// `UntilFirstBit` a packet's end changes no count, and without switch
    /// features (PFC, pools, INT, programs) nothing else watches it.
    pub(crate) fn set_fold(&mut self) {
        self.fold = self.accounting == QueueAccounting::UntilFirstBit && self.feat.is_none();
        self.tx_end = if self.fold { vec![0; self.fabric.ports.len()] } else { Vec::new() };
    }

    /// Runs to the end time (or until a finite workload has completed).
    /// `progress(now)` is called every few hundred thousand events; returning
    /// `Break` stops the run there (the result is then `Break`).
    pub(crate) fn run(&mut self, progress: &mut dyn FnMut(Time) -> ControlFlow<()>) -> ControlFlow<()> {
        self.next_msg = self.workload.next();
        if let Some(m) = self.next_msg {
            self.q.schedule(m.time, Ev::Inject);
        }
        wake_workload_later(&mut self.workload, &mut self.q);
        if self.warmup > 0 {
            self.q.schedule(self.warmup, Ev::Warmup);
        }
        self.q.schedule(self.warmup + (self.end - self.warmup) / 2, Ev::Midpoint);
        if self.feat.is_some() {
            self.schedule_link_events();
        }
        while let Some((now, ev)) = self.q.pop() {
            if now > self.end {
                break;
            }
            // Overlap the memory wait of the next event with this one: its
            // packet (an arrival) or its port (a transmission end). Both are
            // asked for whatever the kind (a wrong guess costs one useless
            // prefetch; a branch on the kind was mispredicted about every
            // other event), and a packet about to reach a host is asked for whole.
            if let Some(next) = self.q.peek_next() {
                self.slab.prefetch(next.id);
                fabriclab_engine::prefetch(&self.fabric.ports, next.id as usize);
                self.slab.prefetch_whole_if(next.id, self.fabric.is_host(next.arrival_node()));
            }
            let id = ev.id;
            match ev.kind {
                Kind::Arrive => {
                    let node = ev.aux;
                    if self.fabric.is_host(node) {
                        self.host_receive(node, id);
                    } else {
                        self.switch_forward(node, id);
                    }
                }
                Kind::TxDone => self.tx_done(id),
                Kind::Timer => {
                    let (host, token) = self.pending_timers.take(id);
                    let mut cx = Cx::new(now, &mut self.host_rng[host as usize], &mut self.timers, &mut self.app)
                        .traced(self.tracer.as_deref_mut(), host);
                    self.hosts[host as usize].on_timer(&mut cx, token);
                    self.after_host_call(host);
                }
                Kind::Inject => self.inject(),
                Kind::Warmup => {
                    self.occupancy.reset(now, &mut self.fabric.ports);
                    self.counters.start_window(now);
                }
                Kind::Midpoint => self.counters.mark_midpoint(now),
                Kind::PortWake => {
                    let p = &mut self.fabric.ports[id as usize];
                    if let Some(w) = p.wake_flag() {
                        *w = false;
                    }
                    if !p.busy {
                        self.service(id);
                    }
                }
                Kind::Pfc => {
                    let (class, pause) = ev.pfc();
                    self.pfc_frame_arrived(id, class, pause);
                }
                Kind::Link => self.link_event(id),
                Kind::Reroute => self.reroute(),
            }
            if self.q.events_processed() & 0x3_FFFF == 0 {
                progress(now)?;
            }
            if self.next_msg.is_none()
                && self.counters.messages_completed == self.messages.len() as u64
                && self.workload.idle()
            {
                break; // finite workload done
            }
        }
        ControlFlow::Continue(())
    }

    fn inject(&mut self) {
        let now = self.q.now();
        if self.workload.is_closed_loop() {
            self.wake_workload(now);
        }
        while let Some(m) = self.next_msg.filter(|m| m.time <= now) {
            let id = self.messages.len() as u64;
            let (hops, n) =
                self.fabric.path(m.src, m.dst, matches!(self.lb, LoadBalancing::Spray | LoadBalancing::Sender));
            let ideal = match self.ideal {
                crate::config::IdealLatency::StoreAndForward => {
                    crate::metrics::ideal::ideal_latency(m.size, self.info.mss, &hops[..n], &mut self.ideal_scratch)
                }
                crate::config::IdealLatency::PayloadAndPropagation => {
                    crate::metrics::ideal::payload_and_propagation(m.size, &hops[..n])
                }
            };
            self.messages.push(MessageRecord {
                id,
                src: m.src,
                dst: m.dst,
                size: m.size,
                start_ps: now,
                end_ps: None,
                ideal_ps: ideal,
                incast: m.incast,
                delivered: 0,
            });
            self.counters.offered(now, m.size);
            let msg = Message { id, src: m.src, dst: m.dst, size: m.size, start: now };
            let mut cx = Cx::new(now, &mut self.host_rng[m.src as usize], &mut self.timers, &mut self.app)
                .traced(self.tracer.as_deref_mut(), m.src);
            self.hosts[m.src as usize].start_message(&mut cx, &msg);
            self.after_host_call(m.src);
            self.next_msg = self.workload.next();
        }
        if let Some(m) = self.next_msg {
            self.q.schedule(m.time.max(now), Ev::Inject);
        }
    }

    /// A closed-loop workload handles its own events due by `now` (a GOAL
    /// calc ending), which may release messages. Out of line: open-loop runs
    /// never call it.
    #[inline(never)]
    fn wake_workload(&mut self, now: Time) {
        self.workload.advance(now);
        if self.next_msg.is_none() {
            self.next_msg = self.workload.next();
        }
        wake_workload_later(&mut self.workload, &mut self.q);
    }

    /// Applies what a transport call asked for, then lets the NIC pull.
    fn after_host_call(&mut self, host: u32) {
        self.schedule_timers(host);
        if !self.app.is_empty() {
            self.report_to_app(); // most calls have nothing to report; an empty drain still costs
        }
        self.host_pull(host);
    }

    /// Records the deliveries and completions a transport reported.
    fn report_to_app(&mut self) {
        let now = self.q.now();
        for ev in self.app.drain(..) {
            match ev {
                AppEvent::Delivered { msg, bytes } => {
                    self.messages[msg as usize].delivered += bytes as u64;
                    self.counters.delivered(now, bytes as u64);
                }
                AppEvent::Completed { msg } => {
                    let rec = &mut self.messages[msg as usize];
                    debug_assert!(rec.end_ps.is_none(), "message {msg} completed twice");
                    if rec.end_ps.is_none() {
                        rec.end_ps = Some(now);
                        self.counters.messages_completed += 1;
                        if self.workload.is_closed_loop() {
                            release_on_completion(&mut self.workload, &mut self.next_msg, &mut self.q, msg, now);
                        }
                    }
                }
            }
        }
    }

    /// Schedules the timers `host`'s transport just set.
    #[inline(always)]
    fn schedule_timers(&mut self, host: u32) {
        // Most calls set none: checked inline, so that they pay neither a
        // call nor an empty drain's setup and drop.
        if !self.timers.is_empty() {
            self.drain_timers(host);
        }
    }

    /// The out-of-line part of [`Sim::schedule_timers`].
    #[inline(never)]
    fn drain_timers(&mut self, host: u32) {
        for (at, token) in self.timers.drain(..) {
            self.q.schedule(at, Ev::Timer { timer: self.pending_timers.add(host, token) });
        }
    }

    /// An idle NIC asks its transport for the next packet.
    #[inline(always)]
    fn host_pull(&mut self, host: u32) {
        let port = self.fabric.host_port[host as usize];
        if self.fabric.ports[port as usize].busy || (self.feat.is_some() && self.release_held(host, port)) {
            return;
        }
        let now = self.q.now();
        let mut cx = Cx::new(now, &mut self.host_rng[host as usize], &mut self.timers, &mut self.app)
            .traced(self.tracer.as_deref_mut(), host);
        let pkt = self.hosts[host as usize].poll_transmit(&mut cx);
        self.schedule_timers(host); // poll_transmit may set timers, with or without a packet
        let Some(mut pkt) = pkt else {
            return;
        };
        debug_assert!(self.app.is_empty(), "poll_transmit must not report to the application");
        debug_assert_eq!(pkt.src, host);
        pkt.entropy = match self.lb {
            LoadBalancing::Spray => self.entropy_rng[host as usize].next_u32(),
            LoadBalancing::Ecmp => mix64(((pkt.src as u64) << 40) ^ ((pkt.dst as u64) << 20) ^ pkt.flow as u64) as u32,
            LoadBalancing::SymmetricEcmp => {
                let (a, b) = (pkt.src.min(pkt.dst) as u64, pkt.src.max(pkt.dst) as u64);
                mix64((a << 40) ^ (b << 20) ^ pkt.flow as u64) as u32
            }
            LoadBalancing::Sender => pkt.entropy,
        };
        pkt.tx_time = now;
        if self.pcap.is_some() {
            self.capture(&pkt, host, crate::metrics::pcap::Direction::Sent);
        }
        self.counters.packets_sent += 1;
        self.counters.data_packets_sent += (pkt.wire_bytes > crate::net::wire::CONTROL_WIRE) as u64;
        let idx = self.slab.insert(pkt);
        if self.feat.is_some() {
            self.on_host_send(idx);
            if self.hold_if_paused(host, port, idx) {
                return;
            }
        }
        self.start_tx(port, idx);
    }

    #[inline(always)]
    fn start_tx(&mut self, port: u32, idx: u32) {
        if self.feat.is_some() && self.on_start_tx(port, idx) {
            return self.start_lost(port, idx);
        }
        let now = self.q.now();
        let wire = self.slab.hot(idx).wire_bytes;
        let held = self.held_in_service(wire);
        let n_hosts = self.fabric.topo.n_hosts;
        let p = &mut self.fabric.ports[port as usize];
        p.busy = true;
        p.in_service = held;
        let ser = p.serialization_time(wire);
        let peer = p.peer;
        let arrive = now + ser + p.delay;
        if self.fold && p.node >= n_hosts && !p.has_queued() && !p.is_shaped() {
            p.folded = true;
            self.tx_end[port as usize] = now + ser;
        } else {
            self.q.schedule(now + ser, Ev::TxDone { port });
        }
        self.q.schedule(arrive, Ev::Arrive { node: peer, pkt: idx });
        self.counters.packet_hops += 1;
    }

    /// The bytes a port still holds while it serialises a `wire`-byte packet:
    /// all of them until the last bit has left, none once the first has.
    #[inline(always)]
    fn held_in_service(&self, wire: u32) -> u32 {
        match self.accounting {
            QueueAccounting::UntilLastBit => wire,
            QueueAccounting::UntilFirstBit => 0,
        }
    }

    fn tx_done(&mut self, port: u32) {
        let now = self.q.now();
        let n_hosts = self.fabric.topo.n_hosts;
        let p = &mut self.fabric.ports[port as usize];
        p.busy = false;
        let node = p.node;
        if node < n_hosts {
            self.host_pull(node);
            return;
        }
        let wire = std::mem::take(&mut p.in_service);
        if wire > 0 {
            let old = p.bytes;
            p.bytes -= wire as u64;
            self.occupancy.update(now, p, old);
            if self.feat.is_some() {
                self.on_tx_done(node, port, wire);
            }
        }
        self.service(port);
    }

    /// An idle switch port starts its next packet, or waits for a shaped credit.
    #[inline(always)]
    fn service(&mut self, port: u32) {
        if self.feat.is_some() && self.send_pfc_frame(port) {
            return;
        }
        let now = self.q.now();
        let p = &mut self.fabric.ports[port as usize];
        match p.pick(&mut self.fabric.fifos, now) {
            Pick::Send(idx) => {
                if self.accounting == QueueAccounting::UntilFirstBit {
                    let wire = self.slab.hot(idx).wire_bytes;
                    let old = p.bytes;
                    p.bytes -= wire as u64;
                    self.occupancy.update(now, p, old);
                }
                if self.feat.is_some() {
                    self.dequeue_featured(port, idx);
                }
                self.start_tx(port, idx)
            }
            Pick::WaitUntil(t) => {
                let w = p.wake_flag().expect("only shaped queues wait");
                if !*w {
                    *w = true;
                    self.q.schedule(t, Ev::PortWake { port });
                }
            }
            Pick::Idle => {}
        }
    }

    fn switch_forward(&mut self, node: u32, idx: u32) {
        let now = self.q.now();
        let (dst, entropy, wire, prio, ect, credit) = {
            let p = self.slab.hot_mut(idx);
            p.hops += 1;
            (p.dst, p.entropy, p.wire_bytes, p.prio, p.ecn & ECN_ECT != 0, p.credit())
        };
        let port = self.fabric.routes.select(node, dst, entropy, self.lb == LoadBalancing::SymmetricEcmp);
        if self.feat.is_some() {
            self.run_program(node, idx, port);
            return self.forward_featured(node, idx, port);
        }
        let p = &mut self.fabric.ports[port as usize];
        if p.folded {
            // The packet in transmission has ended by now (the port is idle), or
            // this one may wait behind it: then its end needs its event after all.
            p.folded = false;
            let end = self.tx_end[port as usize];
            if end <= now {
                p.busy = false;
            } else {
                self.q.schedule(end, Ev::TxDone { port });
            }
        }
        let old = p.bytes;
        let shaped = credit && p.shaper().is_some();
        let verdict =
            if shaped { p.enqueue_credit(idx, wire).into() } else { p.offer(&mut self.fabric.fifos, idx, wire, prio) };
        match verdict {
            Offer::Dropped => {
                self.slab.remove(idx);
                if shaped {
                    self.counters.credit_drops += 1;
                } else {
                    self.counters.drops += 1;
                }
            }
            Offer::Queued { mark_ce } | Offer::SendNow { mark_ce } => {
                let idle = !p.busy;
                if mark_ce && ect {
                    self.slab.hot_mut(idx).ecn |= ECN_CE;
                }
                let now_on_wire = matches!(verdict, Offer::SendNow { .. });
                if now_on_wire && self.accounting == QueueAccounting::UntilFirstBit {
                    p.bytes = old; // straight onto the wire: it never joined the queue
                }
                self.occupancy.update(now, p, old);
                if now_on_wire {
                    self.start_tx(port, idx);
                } else if idle {
                    self.service(port);
                }
            }
        }
    }

    fn host_receive(&mut self, host: u32, idx: u32) {
        let now = self.q.now();
        let pkt = self.slab.remove(idx);
        debug_assert_eq!(pkt.dst, host);
        if self.pcap.is_some() {
            self.capture(&pkt, host, crate::metrics::pcap::Direction::Received);
        }
        self.counters.packets_received += 1;
        let mut cx = Cx::new(now, &mut self.host_rng[host as usize], &mut self.timers, &mut self.app)
            .traced(self.tracer.as_deref_mut(), host);
        if let Some(int) = self.feat.as_deref().and_then(|f| f.int.as_ref()).filter(|_| pkt.flags & INT != 0) {
            cx = cx.with_int(int.stack(idx));
        }
        self.hosts[host as usize].on_packet(&mut cx, &pkt);
        self.after_host_call(host);
    }
}

impl<T: Transport> Sim<T> {
    /// Writes `pkt`, seen at `host`'s NIC, to the capture if it is one of those asked for.
    #[cold]
    #[inline(never)]
    fn capture(&mut self, pkt: &crate::net::Packet<T::Header>, host: u32, dir: crate::metrics::pcap::Direction) {
        use std::fmt::Write as _;
        let Some(cap) = self.pcap.as_deref_mut() else { return };
        if !cap.wants(pkt.src, pkt.dst, host) {
            return;
        }
        let mut text = std::mem::take(cap.text());
        let _ = write!(text, "{:?}", pkt.hdr);
        let c = crate::metrics::pcap::Captured {
            src: pkt.src,
            dst: pkt.dst,
            wire_bytes: pkt.wire_bytes,
            prio: pkt.prio,
            ecn: pkt.ecn,
            flow: pkt.flow,
            entropy: pkt.entropy,
            tx_time: pkt.tx_time,
            hops: pkt.hops,
            flags: pkt.flags,
            credit: pkt.credit,
            header: &text,
        };
        cap.record(self.q.now(), dir, &c);
        *cap.text() = text;
    }
}

/// A closed-loop workload learns that message `msg` completed; what it
/// releases is injected at once. (Free-standing: it runs while the host's
/// application events are being drained; out of line, so that the event
/// loop of open-loop runs is not made bigger by it.)
#[inline(never)]
fn release_on_completion(
    workload: &mut Workload,
    next_msg: &mut Option<MessageSpec>,
    q: &mut EventQueue<Ev>,
    msg: u64,
    now: Time,
) {
    workload.on_complete(msg, now);
    if next_msg.is_none() {
        *next_msg = workload.next();
        if next_msg.is_some() {
            q.schedule(now, Ev::Inject);
        }
    }
    wake_workload_later(workload, q);
}

/// If a closed-loop workload has an event of its own to handle later (a GOAL
/// calc ending) that no injection is scheduled for yet, schedules one then
/// ([`Workload::take_wake`]); the injection calls `Workload::advance`.
fn wake_workload_later(workload: &mut Workload, q: &mut EventQueue<Ev>) {
    if let Some(t) = workload.take_wake() {
        q.schedule(t.max(q.now()), Ev::Inject);
    }
}
