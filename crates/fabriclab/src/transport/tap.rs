//! A transport wrapper that records every packet its host receives (time,
//! source, wire size, program bits) before handing it on: how experiments and
//! tests see per-packet arrivals (link utilization over an interval, switch
//! feedback timing) without tracing inside the simulator. Use it with
//! `sim::run_tapped`.

use super::{Cx, Message, Transport};
use crate::net::Packet;
use fabriclab_engine::Time;
use std::cell::RefCell;
use std::rc::Rc;

/// One packet received by a tapped host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: Time,
    pub host: u32,
    pub src: u32,
    pub wire_bytes: u32,
    /// The packet's program bits ([`crate::net::program`]).
    pub prog: u8,
    /// When its sender's NIC sent it (for switch feedback: the reflected data timestamp).
    pub tx_time: Time,
    /// Switch feedback's stamp: Bolt's queue (bytes), a Swift notification's queueing delay (ps).
    pub prog_qlen: u32,
}

/// Arrivals shared by the tapped hosts of one run.
pub type ArrivalLog = Rc<RefCell<Vec<Arrival>>>;

pub struct Tap<T> {
    pub inner: T,
    host: u32,
    /// Where arrivals go (None: this host is not recorded).
    log: Option<ArrivalLog>,
}

impl<T> Tap<T> {
    /// Wraps `inner` (host `host`), logging its arrivals to `log` if given.
    pub fn new(inner: T, host: u32, log: Option<ArrivalLog>) -> Self {
        Tap { inner, host, log }
    }
}

impl<T: Transport> Transport for Tap<T> {
    type Header = T::Header;

    fn start_message(&mut self, cx: &mut Cx, msg: &Message) {
        self.inner.start_message(cx, msg)
    }

    fn on_packet(&mut self, cx: &mut Cx, pkt: &Packet<T::Header>) {
        if let Some(log) = &self.log {
            log.borrow_mut().push(Arrival {
                time: cx.now,
                host: self.host,
                src: pkt.src,
                wire_bytes: pkt.wire_bytes,
                prog: pkt.prog,
                tx_time: pkt.tx_time,
                prog_qlen: pkt.prog_qlen,
            });
        }
        self.inner.on_packet(cx, pkt)
    }

    fn on_timer(&mut self, cx: &mut Cx, token: u64) {
        self.inner.on_timer(cx, token)
    }

    fn poll_transmit(&mut self, cx: &mut Cx) -> Option<Packet<T::Header>> {
        self.inner.poll_transmit(cx)
    }
}

/// Fraction of a link of `rate_bps` that the arrivals in `log` with
/// `pred` kept busy between `from` and `to` (wire bytes / capacity).
pub fn utilization(log: &[Arrival], rate_bps: u64, from: Time, to: Time, pred: impl Fn(&Arrival) -> bool) -> f64 {
    let bytes: u64 = log.iter().filter(|a| a.time > from && a.time <= to && pred(a)).map(|a| a.wire_bytes as u64).sum();
    bytes as f64 * 8.0 / (rate_bps as f64 * fabriclab_engine::to_secs(to.saturating_sub(from)).max(1e-18))
}
