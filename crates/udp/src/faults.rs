//! Fault injection in the driver's socket layer: losses, duplicates,
//! reordering, corruption and ECN marks, drawn from the endpoint's seeded stream.

use crate::io::{Io, IoStats, RxBatch, TxBatch};
use fabriclab_engine::error::{check_range, ConfigError, Validate};
use fabriclab_engine::{SimRng, Time, MS};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// Probabilities per outgoing datagram (`ce`: per incoming one). All zero by default.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    pub loss: f64,
    pub duplicate: f64,
    /// Held back and sent after the next few datagrams (or 1 ms).
    pub reorder: f64,
    /// One random bit flipped.
    pub corrupt: f64,
    /// Incoming datagram reported as CE-marked.
    pub ce: f64,
}

impl Faults {
    pub fn any(&self) -> bool {
        self.loss + self.duplicate + self.reorder + self.corrupt + self.ce > 0.0
    }
}

impl Validate for Faults {
    fn validate(&self) -> Result<(), ConfigError> {
        for (k, v) in [
            ("faults.loss", self.loss),
            ("faults.duplicate", self.duplicate),
            ("faults.reorder", self.reorder),
            ("faults.corrupt", self.corrupt),
            ("faults.ce", self.ce),
        ] {
            check_range(k, v, 0.0, 0.9)?;
        }
        Ok(())
    }
}

/// Datagrams held back this many sends, or this long, at most.
const HOLD_SENDS: u32 = 3;
const HOLD_TIME: Time = MS;

struct Held {
    data: Vec<u8>,
    to: SocketAddr,
    sends_left: u32,
    since: Time,
}

/// An [`Io`] that misbehaves on purpose.
pub struct FaultyIo<I> {
    inner: I,
    f: Faults,
    rng: SimRng,
    held: Vec<Held>,
}

impl<I: Io> FaultyIo<I> {
    pub fn new(inner: I, f: Faults, rng: SimRng) -> Self {
        FaultyIo { inner, f, rng, held: Vec::new() }
    }

    fn release(&mut self, force_age: bool) -> std::io::Result<()> {
        let now = self.inner.now();
        let mut i = 0;
        while i < self.held.len() {
            let h = &self.held[i];
            if h.sends_left == 0 || (force_age && now >= h.since + HOLD_TIME) {
                let h = self.held.swap_remove(i);
                self.inner.send(&h.data, h.to)?;
            } else {
                i += 1;
            }
        }
        Ok(())
    }
}

impl<I: Io> Io for FaultyIo<I> {
    fn now(&self) -> Time {
        self.inner.now()
    }

    fn send(&mut self, buf: &[u8], to: SocketAddr) -> std::io::Result<()> {
        for h in &mut self.held {
            h.sends_left = h.sends_left.saturating_sub(1);
        }
        self.release(true)?;
        if self.rng.gen_bool(self.f.loss) {
            return Ok(());
        }
        let mut data = buf.to_vec();
        if self.rng.gen_bool(self.f.corrupt) {
            let bit = self.rng.gen_range(0..data.len() * 8);
            data[bit / 8] ^= 1 << (bit % 8);
        }
        if self.rng.gen_bool(self.f.duplicate) {
            self.inner.send(&data, to)?;
        }
        if self.rng.gen_bool(self.f.reorder) {
            let since = self.inner.now();
            self.held.push(Held { data, to, sends_left: HOLD_SENDS, since });
            return Ok(());
        }
        self.inner.send(&data, to)
    }

    fn recv(&mut self, buf: &mut [u8]) -> std::io::Result<Option<(usize, SocketAddr, bool)>> {
        self.release(true)?;
        Ok(self.inner.recv(buf)?.map(|(n, from, ce)| (n, from, ce || self.rng.gen_bool(self.f.ce))))
    }

    fn send_batch(&mut self, batch: &TxBatch) -> std::io::Result<()> {
        // Without faults the batch goes through untouched (one copy fewer, and
        // the socket keeps its batching); with them, datagram by datagram.
        if !self.f.any() && self.held.is_empty() {
            return self.inner.send_batch(batch);
        }
        for (d, to) in batch.iter() {
            self.send(d, to)?;
        }
        Ok(())
    }

    fn recv_batch(&mut self, batch: &mut RxBatch) -> std::io::Result<()> {
        self.release(true)?;
        self.inner.recv_batch(batch)?;
        if self.f.any() {
            for i in 0..batch.len() {
                if self.rng.gen_bool(self.f.ce) {
                    batch.set_ce(i);
                }
            }
        }
        Ok(())
    }

    fn io_stats(&self) -> IoStats {
        self.inner.io_stats()
    }

    fn wait_until(&mut self, at: Time) {
        // Wake in time to release held datagrams.
        let first = self.held.iter().map(|h| h.since + HOLD_TIME).min().unwrap_or(Time::MAX);
        self.inner.wait_until(at.min(first));
    }

    fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    fn set_ecn(&mut self, on: bool) -> std::io::Result<()> {
        self.inner.set_ecn(on)
    }
}
