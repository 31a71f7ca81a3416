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

/// The fields of a packet that a switch reads or writes at every hop, kept
/// apart from the rest: at 1,024 hosts the packets in flight are megabytes,
/// and reading a whole packet slot at every hop was the event loop's
/// costliest cache miss (docs/performance.md); these slots are 16 bytes, four
/// to a cache line.
#[derive(Clone, Copy, Debug)]
pub struct Hot {
    pub dst: u32,
    pub entropy: u32,
    pub wire_bytes: u32,
    pub prio: u8,
    pub ecn: u8,
    pub hops: u8,
    /// The packet's [`Packet::flags`], with [`Packet::credit`] in the top bit
    /// (the switch-feature path reads both, and nothing else of the packet).
    bits: u8,
}

/// [`Hot::bits`]: the packet is a credit. Packet flags use the low bits only.
const HOT_CREDIT: u8 = 0x80;

const _: () = assert!(std::mem::size_of::<Hot>() == 16);
const _: () = assert!((TRIMMED | UNSCHEDULED | CONTROL | INT) & HOT_CREDIT == 0);

impl Hot {
    #[inline(always)]
    fn of<H>(p: &Packet<H>) -> Self {
        debug_assert_eq!(p.flags & HOT_CREDIT, 0, "packet flag bit 7 is reserved");
        Hot {
            dst: p.dst,
            entropy: p.entropy,
            wire_bytes: p.wire_bytes,
            prio: p.prio,
            ecn: p.ecn,
            hops: p.hops,
            bits: p.flags | if p.credit { HOT_CREDIT } else { 0 },
        }
    }

    #[inline(always)]
    fn apply<H>(&self, p: &mut Packet<H>) {
        p.dst = self.dst;
        p.entropy = self.entropy;
        p.wire_bytes = self.wire_bytes;
        p.prio = self.prio;
        p.ecn = self.ecn;
        p.hops = self.hops;
        p.flags = self.flags();
        p.credit = self.credit();
    }

    /// [`Packet::credit`].
    #[inline(always)]
    pub fn credit(&self) -> bool {
        self.bits & HOT_CREDIT != 0
    }

    /// [`Packet::flags`].
    #[inline(always)]
    pub fn flags(&self) -> u8 {
        self.bits & !HOT_CREDIT
    }

    /// Sets [`Packet::flags`].
    #[inline(always)]
    pub fn set_flags(&mut self, flags: u8) {
        debug_assert_eq!(flags & HOT_CREDIT, 0, "packet flag bit 7 is reserved");
        self.bits = (self.bits & HOT_CREDIT) | flags;
    }
}

/// Fixed-address storage for packets in flight: events carry a `u32` index,
/// freed slots are reused, so the hot path does not allocate once warm. Each
/// packet is stored in two parts: its [`Hot`] fields, which are the true
/// ones, and the whole packet, whose copies of the hot fields are stale while
/// it is in the network.
pub struct PacketSlab<H> {
    hot: Vec<Hot>,
    rest: Vec<Packet<H>>,
    free: Vec<u32>,
}

/// A packet of the slab opened for change (switch features): its hot fields
/// are copied into the whole packet for the change, and back when it ends.
pub struct PacketMut<'a, H> {
    hot: &'a mut Hot,
    pkt: &'a mut Packet<H>,
}

impl<H> std::ops::Deref for PacketMut<'_, H> {
    type Target = Packet<H>;
    fn deref(&self) -> &Packet<H> {
        self.pkt
    }
}

impl<H> std::ops::DerefMut for PacketMut<'_, H> {
    fn deref_mut(&mut self) -> &mut Packet<H> {
        self.pkt
    }
}

impl<H> Drop for PacketMut<'_, H> {
    fn drop(&mut self) {
        *self.hot = Hot::of(self.pkt);
    }
}

impl<H: Copy> PacketSlab<H> {
    pub fn new() -> Self {
        Self { hot: Vec::with_capacity(1 << 12), rest: Vec::with_capacity(1 << 12), free: Vec::new() }
    }

    #[inline]
    pub fn insert(&mut self, p: Packet<H>) -> u32 {
        if let Some(i) = self.free.pop() {
            self.hot[i as usize] = Hot::of(&p);
            self.rest[i as usize] = p;
            i
        } else {
            self.hot.push(Hot::of(&p));
            self.rest.push(p);
            (self.rest.len() - 1) as u32
        }
    }

    /// The hot fields of packet `i`.
    #[inline(always)]
    pub fn hot(&self, i: u32) -> &Hot {
        &self.hot[i as usize]
    }

    #[inline(always)]
    pub fn hot_mut(&mut self, i: u32) -> &mut Hot {
        &mut self.hot[i as usize]
    }

    /// A copy of packet `i`, whole.
    #[inline]
    pub fn get(&self, i: u32) -> Packet<H> {
        let mut p = self.rest[i as usize];
        self.hot[i as usize].apply(&mut p);
        p
    }

    /// Packet `i`, whole, for changes to any of its fields.
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> PacketMut<'_, H> {
        let (hot, pkt) = (&mut self.hot[i as usize], &mut self.rest[i as usize]);
        hot.apply(pkt);
        PacketMut { hot, pkt }
    }

    /// Hints that the hot fields of packet `i` will be read soon.
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        fabriclab_engine::prefetch(&self.hot, i as usize);
    }

    /// Hints that packet `i` will be read whole soon if `whole` (it reaches a
    /// host). Branch-free: when not `whole`, the hint names its hot slot again.
    #[inline(always)]
    pub fn prefetch_whole_if(&self, i: u32, whole: bool) {
        let rest = self.rest.as_ptr().wrapping_add(i as usize) as *const u8;
        let hot = self.hot.as_ptr().wrapping_add(i as usize) as *const u8;
        fabriclab_engine::prefetch_span(if whole { rest } else { hot }, std::mem::size_of::<Packet<H>>());
    }

    /// Frees slot `i` and returns its packet, whole.
    #[inline]
    pub fn remove(&mut self, i: u32) -> Packet<H> {
        self.free.push(i);
        self.get(i)
    }

    /// Packets currently stored (in flight).
    pub fn live(&self) -> usize {
        self.rest.len() - self.free.len()
    }
}

impl<H: Copy> Default for PacketSlab<H> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_fields_changed_on_either_side_are_seen_whole() {
        let mut slab = PacketSlab::new();
        let i = slab.insert(Packet::new(1, 2, 1538, 3, 7, 42u64).with_ect());
        slab.hot_mut(i).ecn |= ECN_CE;
        slab.hot_mut(i).hops += 1;
        {
            let mut p = slab.get_mut(i);
            assert!(p.ce());
            p.wire_bytes = 84;
            p.flags |= TRIMMED;
            p.prio = 0;
        }
        assert_eq!((slab.hot(i).wire_bytes, slab.hot(i).prio, slab.hot(i).hops), (84, 0, 1));
        assert_eq!((slab.hot(i).flags(), slab.hot(i).credit()), (TRIMMED, false));
        slab.hot_mut(i).set_flags(TRIMMED | INT);
        let j = slab.insert(Packet::new(5, 6, 100, 1, 1, 0u64));
        let p = slab.remove(i);
        assert_eq!((p.src, p.dst, p.wire_bytes, p.prio, p.ecn, p.hops, p.flags, p.hdr), (1, 2, 84, 0, 3, 1, 9, 42));
        assert_eq!(slab.live(), 1);
        assert_eq!(slab.insert(Packet::new(8, 9, 64, 0, 0, 0u64)), i, "a freed slot is reused");
        assert_eq!(slab.get(j).dst, 6);
    }

    #[test]
    fn credit_and_flags_share_the_hot_slot_without_mixing() {
        let mut slab = PacketSlab::new();
        let mut credit = Packet::new(3, 4, 84, 0, 1, 0u64).with_flags(CONTROL);
        credit.credit = true;
        let i = slab.insert(credit);
        assert_eq!((slab.hot(i).credit(), slab.hot(i).flags()), (true, CONTROL));
        slab.hot_mut(i).set_flags(TRIMMED);
        assert_eq!((slab.hot(i).credit(), slab.hot(i).flags()), (true, TRIMMED));
        let p = slab.remove(i);
        assert_eq!((p.credit, p.flags), (true, TRIMMED));
        let j = slab.insert(Packet::new(3, 4, 84, 0, 1, 0u64).with_flags(UNSCHEDULED | INT));
        assert_eq!((slab.hot(j).credit(), slab.hot(j).flags()), (false, UNSCHEDULED | INT));
    }
}
