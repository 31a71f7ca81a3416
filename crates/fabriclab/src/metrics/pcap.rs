//! Packet capture at host NICs (`output.pcap_hosts`, `output.pcap_flows`):
//! packets.pcap, a nanosecond pcap file (LINKTYPE_ETHERNET) that Wireshark,
//! tcpdump and every pcap library open.
//!
//! The simulator's packets have no bytes, so each captured packet is given
//! synthetic Ethernet/IPv4/UDP headers and a payload that carries the
//! simulator's own fields; the layout is in docs/output.md ("pcap"), where a
//! dissector author can find it. Capture draws no random numbers and schedules
//! no events: a captured run is the uncaptured run plus this file.
//!
//! - Ethernet: MAC 02:00:hh:hh:hh:hh (the host id, big-endian), type IPv4.
//! - IPv4: 10.0.0.0 + host id; DSCP = the packet's priority class (0 is the
//!   highest in fabriclab), ECN = 00 (not ECT), 10 (ECT(0)) or 11 (CE); total
//!   length = the packet's wire size (framing, preamble and gap included, so
//!   that Wireshark's byte counts add up to link occupancy); TTL 64 minus the
//!   switches crossed; a valid header checksum.
//! - UDP: both ports 40000 + the protocol's index in `fabriclab protocols`;
//!   checksum 0 (none, as IPv4 allows).
//! - Payload: [`FL_HEADER`] bytes of fixed fields, then the transport's own
//!   header as text (its `Debug` form, e.g. `Data { msg: 3, offset: 1460, .. }`),
//!   then zeros to the IP length; the frame is kept up to the snap length.

use fabriclab_engine::Time;

/// Bytes of the fixed part of the payload (docs/output.md).
pub const FL_HEADER: usize = 36;
/// Where in the IP packet the payload starts (IPv4 20 + UDP 8).
const L3L4: usize = 28;
const ETH: usize = 14;

/// Where a packet was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The source host's NIC took it from the transport.
    Sent = 0,
    /// It arrived, whole, at the destination host's NIC.
    Received = 1,
}

/// The fields of a packet the capture writes (the network's view of it).
pub struct Captured<'a> {
    pub src: u32,
    pub dst: u32,
    pub wire_bytes: u32,
    pub prio: u8,
    pub ecn: u8,
    pub flow: u32,
    pub entropy: u32,
    pub tx_time: Time,
    pub hops: u8,
    pub flags: u8,
    pub credit: bool,
    pub header: &'a str,
}

/// Which packets are captured, and the file being built.
pub struct Pcap {
    hosts: Vec<bool>,
    flows: Vec<(u32, u32)>,
    snaplen: u32,
    port: u16,
    buf: Vec<u8>,
    /// The file stops growing at this many bytes.
    max_bytes: usize,
    text: String,
    pub packets: u64,
    /// Records left out because the file reached `max_bytes`.
    pub dropped: u64,
}

impl Pcap {
    /// Captures `hosts`' packets and those between each pair in `flows`;
    /// `protocol` is the protocol's index (its UDP port is 40000 + it).
    pub fn new(n_hosts: u32, hosts: &[u32], flows: &[[u32; 2]], snaplen: u32, max_bytes: usize, protocol: u16) -> Self {
        let mut h = vec![false; n_hosts as usize];
        hosts.iter().for_each(|&i| h[i as usize] = true);
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes()); // nanosecond timestamps
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        buf.extend_from_slice(&snaplen.to_le_bytes());
        buf.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
        Pcap {
            hosts: h,
            flows: flows.iter().map(|f| (f[0].min(f[1]), f[0].max(f[1]))).collect(),
            snaplen,
            port: 40000 + protocol,
            buf,
            max_bytes,
            text: String::new(),
            packets: 0,
            dropped: 0,
        }
    }

    /// Whether a packet from `src` to `dst`, seen at `at`'s NIC, is captured.
    pub fn wants(&self, src: u32, dst: u32, at: u32) -> bool {
        self.hosts[at as usize] || self.flows.iter().any(|&f| f == (src.min(dst), src.max(dst)))
    }

    /// The text the transport header goes into (reused).
    pub fn text(&mut self) -> &mut String {
        self.text.clear();
        &mut self.text
    }

    /// Appends one record at `now`.
    pub fn record(&mut self, now: Time, dir: Direction, p: &Captured) {
        let ip_len = p.wire_bytes.clamp((L3L4 + FL_HEADER) as u32, 65535) as usize;
        let frame_len = ETH + ip_len;
        let incl = frame_len.min(self.snaplen as usize);
        if self.buf.len() + 16 + incl > self.max_bytes {
            self.dropped += 1;
            return;
        }
        let ns = now / 1000;
        let b = &mut self.buf;
        b.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&(incl as u32).to_le_bytes());
        b.extend_from_slice(&(frame_len as u32).to_le_bytes());
        let start = b.len();
        // Ethernet.
        b.extend_from_slice(&mac(p.dst));
        b.extend_from_slice(&mac(p.src));
        b.extend_from_slice(&0x0800u16.to_be_bytes());
        // IPv4.
        let ecn = if p.ecn & crate::net::ECN_CE != 0 {
            3
        } else if p.ecn & crate::net::ECN_ECT != 0 {
            2
        } else {
            0
        };
        let ip_start = b.len();
        b.extend_from_slice(&[0x45, (p.prio & 0x3f) << 2 | ecn]);
        b.extend_from_slice(&(ip_len as u16).to_be_bytes());
        b.extend_from_slice(&((self.packets & 0xffff) as u16).to_be_bytes()); // identification
        b.extend_from_slice(&0x4000u16.to_be_bytes()); // don't fragment
        b.extend_from_slice(&[64u8.saturating_sub(p.hops), 17, 0, 0]);
        b.extend_from_slice(&ip(p.src));
        b.extend_from_slice(&ip(p.dst));
        let sum = checksum(&b[ip_start..ip_start + 20]);
        b[ip_start + 10..ip_start + 12].copy_from_slice(&sum.to_be_bytes());
        // UDP.
        b.extend_from_slice(&self.port.to_be_bytes());
        b.extend_from_slice(&self.port.to_be_bytes());
        b.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
        b.extend_from_slice(&0u16.to_be_bytes());
        // fabriclab header (docs/output.md "pcap").
        b.extend_from_slice(b"FL");
        b.push(1); // layout version
        b.push(dir as u8);
        b.push(p.flags | (p.credit as u8) << 7);
        b.push(p.prio);
        b.push(p.ecn);
        b.push(p.hops);
        b.extend_from_slice(&p.src.to_be_bytes());
        b.extend_from_slice(&p.dst.to_be_bytes());
        b.extend_from_slice(&p.flow.to_be_bytes());
        b.extend_from_slice(&p.entropy.to_be_bytes());
        b.extend_from_slice(&p.tx_time.to_be_bytes());
        b.extend_from_slice(&p.wire_bytes.to_be_bytes());
        let room = ip_len - L3L4 - FL_HEADER;
        let text = &p.header.as_bytes()[..p.header.len().min(room)];
        b.extend_from_slice(text);
        // Zeros to the snap length (the rest of the frame is not kept).
        b.resize(start + incl, 0);
        self.packets += 1;
    }

    /// The file's bytes.
    /// The file's bytes and the number of records left out (`max_bytes`).
    pub fn finish(self) -> (Vec<u8>, u64) {
        (self.buf, self.dropped)
    }
}

fn mac(h: u32) -> [u8; 6] {
    let b = h.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

fn ip(h: u32) -> [u8; 4] {
    (0x0a00_0000u32.wrapping_add(h)).to_be_bytes()
}

/// The Internet checksum (RFC 1071) of an IPv4 header whose checksum field is 0.
fn checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = hdr.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_has_the_documented_layout() {
        let mut p = Pcap::new(4, &[1], &[], 256, usize::MAX, 3);
        let c = Captured {
            src: 1,
            dst: 2,
            wire_bytes: 1538,
            prio: 2,
            ecn: crate::net::ECN_ECT | crate::net::ECN_CE,
            flow: 7,
            entropy: 9,
            tx_time: 5_000,
            hops: 3,
            flags: 0,
            credit: false,
            header: "Data { msg: 3 }",
        };
        assert!(p.wants(1, 2, 1) && !p.wants(2, 3, 2));
        p.record(1_234_567_890_123, Direction::Received, &c);
        let (b, dropped) = p.finish();
        assert_eq!(dropped, 0);
        assert_eq!(&b[..4], &0xa1b2_3c4du32.to_le_bytes());
        let r = &b[24..];
        // 1.234567890123 s: 1 s and 234,567,890 ns (picoseconds floored).
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 234_567_890);
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 256); // snapped
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 14 + 1538);
        let f = &r[16..];
        assert_eq!(f.len(), 256);
        assert_eq!(&f[0..6], &[2, 0, 0, 0, 0, 2]);
        assert_eq!(f[15], 2 << 2 | 3); // DSCP 2, CE
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 1538);
        assert_eq!(f[22], 61); // TTL 64 - 3 hops
        assert_eq!(checksum(&f[14..34]), 0); // a valid checksum sums to 0
        assert_eq!(&f[26..30], &[10, 0, 0, 1]);
        assert_eq!(u16::from_be_bytes([f[34], f[35]]), 40003);
        assert_eq!(&f[42..44], b"FL");
        assert_eq!(f[45], 1); // received
        assert_eq!(&f[42 + FL_HEADER..42 + FL_HEADER + 15], b"Data { msg: 3 }");
    }
}
