//! Wire sizes. Every packet's `wire_bytes` counts everything that occupies the
//! link: Ethernet header (14) + FCS (4) + preamble/SFD (8) + inter-frame gap (12),
//! plus the IP packet. See docs/model.md.

/// Ethernet framing that occupies the wire but not the IP MTU: 14 + 4 + 8 + 12.
pub const ETH_OVERHEAD: u32 = 38;
/// IPv4 (20) + transport header (20: TCP without options, or UDP 8 + 12-byte protocol header).
pub const L3L4_HEADER: u32 = 40;
/// Control packets (ACK, CREDIT, CREDITREQ, ...) are minimum Ethernet frames:
/// 64 B frame + 8 B preamble + 12 B gap.
pub const CONTROL_WIRE: u32 = 84;

/// Largest payload per packet for an IP MTU.
pub const fn mss(mtu: u32) -> u32 {
    mtu - L3L4_HEADER
}

/// Wire size of a data packet carrying `payload` bytes (never below a minimum frame).
#[inline]
pub const fn data_wire(payload: u32) -> u32 {
    let w = payload + L3L4_HEADER + ETH_OVERHEAD;
    if w < CONTROL_WIRE {
        CONTROL_WIRE
    } else {
        w
    }
}

/// Number of packets a message of `size` bytes is cut into.
#[inline]
pub fn packets_for(size: u64, mss: u32) -> u64 {
    size.div_ceil(mss as u64).max(1)
}

/// Payload of packet `i` (0-based) of a message of `size` bytes.
#[inline]
pub fn payload_of(size: u64, mss: u32, i: u64) -> u32 {
    let off = i * mss as u64;
    (size - off).min(mss as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_packet_is_1538_bytes_on_the_wire() {
        assert_eq!(mss(1500), 1460);
        assert_eq!(data_wire(1460), 1538);
        assert_eq!(data_wire(1), CONTROL_WIRE);
    }

    #[test]
    fn segmentation_covers_the_message_exactly() {
        for size in [1u64, 1459, 1460, 1461, 100_000, 2_920] {
            let n = packets_for(size, 1460);
            let total: u64 = (0..n).map(|i| payload_of(size, 1460, i) as u64).sum();
            assert_eq!(total, size);
            assert!((0..n).all(|i| payload_of(size, 1460, i) > 0));
        }
    }
}
