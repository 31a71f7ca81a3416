//! In-band network telemetry (INT, as HPCC uses it): each switch egress
//! appends one record per hop to packets that ask for it. Space for the record
//! (`hop_bytes`) is added when the packet is admitted, so buffer accounting
//! sees its true size; the record is filled when the packet starts leaving,
//! with the queue it leaves behind at that instant.

use fabriclab_engine::Time;

/// Most records a packet carries (paths have at most 7 switches).
pub const MAX_INT_HOPS: usize = 7;

/// One switch egress's record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes queued at the egress port behind the packet when it started leaving.
    pub qlen_bytes: u64,
    /// Bytes the port has started transmitting since the run began, this packet included.
    pub tx_bytes: u64,
    /// When the packet started leaving.
    pub ts: Time,
    pub rate_bps: u64,
}

/// The records of one packet, first hop first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntStack {
    n: u8,
    hops: [IntHop; MAX_INT_HOPS],
}

impl IntStack {
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }

    pub fn is_full(&self) -> bool {
        self.n as usize == MAX_INT_HOPS
    }

    pub fn push(&mut self, h: IntHop) {
        if !self.is_full() {
            self.hops[self.n as usize] = h;
            self.n += 1;
        }
    }
}

/// INT state of the network: the stacks of packets in flight (by slab slot)
/// and every port's transmitted-bytes counter.
pub struct IntState {
    pub hop_bytes: u32,
    stacks: Vec<IntStack>,
    tx_bytes: Vec<u64>,
}

impl IntState {
    pub fn new(hop_bytes: u32, n_ports: usize) -> Self {
        IntState { hop_bytes, stacks: Vec::new(), tx_bytes: vec![0; n_ports] }
    }

    /// A host sends a packet asking for INT in slab slot `idx`.
    pub fn reset(&mut self, idx: u32) {
        let i = idx as usize;
        if i >= self.stacks.len() {
            self.stacks.resize(i + 1, IntStack::default());
        }
        self.stacks[i] = IntStack::default();
    }

    /// Whether slot `idx` has room for one more record.
    pub fn has_room(&self, idx: u32) -> bool {
        !self.stacks[idx as usize].is_full()
    }

    /// Counts every byte a switch port starts sending.
    #[inline]
    pub fn count_tx(&mut self, port: u32, wire: u32) {
        self.tx_bytes[port as usize] += wire as u64;
    }

    /// Port `port` starts sending the packet in `idx`; `queued` bytes stay behind.
    pub fn stamp(&mut self, idx: u32, port: u32, queued: u64, now: Time, rate_bps: u64) {
        let tx_bytes = self.tx_bytes[port as usize];
        self.stacks[idx as usize].push(IntHop { qlen_bytes: queued, tx_bytes, ts: now, rate_bps });
    }

    pub fn stack(&self, idx: u32) -> &IntStack {
        &self.stacks[idx as usize]
    }
}
