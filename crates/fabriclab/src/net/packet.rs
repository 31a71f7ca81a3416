//! Packets and the slab that stores them while they are in the network.

use fabriclab_engine::Time;

/// ECN-capable transport (ECT) codepoint set by the sender.
pub const ECN_ECT: u8 = 1;
/// Congestion experienced, set by a switch whose queue is above its threshold.
pub const ECN_CE: u8 = 2;

/// [`Packet::flags`]: the payload was cut off by a switch (trimming); only the header arrives.
pub const TRIMMED: u8 = 1;
/// [`Packet::flags`]: sent without the receiver's permission (Aeolus drops these first).
pub const UNSCHEDULED: u8 = 2;
/// [`Packet::flags`]: belongs to the rate-limited control class, when the network has one.
pub const CONTROL: u8 = 4;
/// [`Packet::flags`]: asks switches for INT records, when the network stamps them.
pub const INT: u8 = 8;

/// A packet in flight. `H` is the transport's own header (an enum of its packet
/// types); the network reads only the fields below it.
#[derive(Clone, Copy, Debug)]
pub struct Packet<H> {
    pub src: u32,
    pub dst: u32,
    /// Bytes occupying the wire, framing included (see [`super::wire`]).
    pub wire_bytes: u32,
    /// Strict-priority class, 0 = highest.
    pub prio: u8,
    /// ECN bits: [`ECN_ECT`], [`ECN_CE`].
    pub ecn: u8,
    /// Flow label chosen by the transport; the input of per-flow ECMP.
    pub flow: u32,
    /// Path-selection entropy, stamped by the sender's NIC according to the
    /// load-balancing mode.
    pub entropy: u32,
    /// When the sender NIC started serialising this packet.
    pub tx_time: Time,
    /// Switches traversed so far (Swift's hop-count scaling reads it at the receiver).
    pub hops: u8,
    /// A credit packet: shaped and queued separately at switch ports when
    /// `network.credit_shaping` is on (ExpressPass).
    pub credit: bool,
    /// Switch-feature flags: [`TRIMMED`], [`UNSCHEDULED`], [`CONTROL`], [`INT`].
    pub flags: u8,
    /// The in-band header a switch program parses and rewrites (bits of
    /// [`super::program`], e.g. Bolt's DATA/INC/DEC/LAST/FIRST/SRC).
    pub prog: u8,
    /// Queue occupancy (bytes) a switch program stamped into a feedback packet.
    pub prog_qlen: u32,
    /// Rate of the stamped queue's link, in units of 100 Mb/s.
    pub prog_rate: u16,
    pub hdr: H,
}

impl<H> Packet<H> {
    pub fn new(src: u32, dst: u32, wire_bytes: u32, prio: u8, flow: u32, hdr: H) -> Self {
        Packet {
            src,
            dst,
            wire_bytes,
            prio,
            ecn: 0,
            flow,
            entropy: 0,
            tx_time: 0,
            hops: 0,
            credit: false,
            flags: 0,
            prog: 0,
            prog_qlen: 0,
            prog_rate: 0,
            hdr,
        }
    }

    pub fn with_ect(mut self) -> Self {
        self.ecn |= ECN_ECT;
        self
    }

    #[inline]
    pub fn ce(&self) -> bool {
        self.ecn & ECN_CE != 0
    }

    pub fn with_flags(mut self, flags: u8) -> Self {
        self.flags |= flags;
        self
    }

    pub fn with_prog(mut self, bits: u8) -> Self {
        self.prog |= bits;
        self
    }

    /// Whether a switch trimmed this packet to its header.
    #[inline]
    pub fn trimmed(&self) -> bool {
        self.flags & TRIMMED != 0
    }
}

/// Fixed-address storage for packets in flight: events carry a `u32` index,
/// freed slots are reused, so the hot path does not allocate once warm.
pub struct PacketSlab<H> {
    slots: Vec<Packet<H>>,
    free: Vec<u32>,
}

impl<H: Copy> PacketSlab<H> {
    pub fn new() -> Self {
        Self { slots: Vec::with_capacity(1 << 12), free: Vec::new() }
    }

    #[inline]
    pub fn insert(&mut self, p: Packet<H>) -> u32 {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as u32
        }
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Packet<H> {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet<H> {
        &mut self.slots[i as usize]
    }

    /// Hints that slot `i` will be read soon.
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        fabriclab_engine::prefetch(&self.slots, i as usize);
    }

    /// Frees slot `i` and returns its packet.
    #[inline]
    pub fn remove(&mut self, i: u32) -> Packet<H> {
        self.free.push(i);
        self.slots[i as usize]
    }

    /// Packets currently stored (in flight).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl<H: Copy> Default for PacketSlab<H> {
    fn default() -> Self {
        Self::new()
    }
}
