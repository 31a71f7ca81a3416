//! The datagram format: a fixed, versioned header followed by the payload of
//! a DATA packet. Every field is big-endian; the CRC-32C covers the whole
//! datagram (header and payload) with the checksum field taken as zero.
//!
//! ```text
//!  0  u16 magic 0x51D0     2 u8 version   3 u8 kind   4 u8 flags (1 scheduled, 2 csn)
//!  5  u8  header length    6 u16 payload length       8 u32 CRC-32C
//! 12  u32 index (packet index; sched_from in CREDITREQ)
//! 16  u64 incarnation (the sender's start time in ns: a restart is larger, so
//!         datagrams of an older incarnation are recognised and refused)
//! 24  u64 token (the sender's address token for the receiver's address)
//! 32  u64 echo  (the receiver's token for the sender, as last heard; 0 = none)
//! 40  u64 msg   (the sender's id for this transmission attempt)
//! 48  u64 app   (the sender's id for the application message, shared by its attempts)
//! 56  u64 size  (message bytes)
//! 64  payload
//! ```
//!
//! Kinds: 1 DATA, 2 CREDITREQ, 3 CREDIT, 4 RESEND, 5 DONE, 6 ALIVE, 7 MTU (the
//! receiver's `mtu` in `size`, answering a DATA packet cut for another one;
//! added by issue 46 without a new version: an older build counts it
//! `malformed`, and its sender then fails as before, by silence).
//!
//! Version 2 (issue 26) widened the incarnation to an ordered u64 and added
//! `token`/`echo`, the address validation of docs/udp.md "Defences"; version 1
//! (44 bytes) datagrams are refused as `BadVersion`.

pub const MAGIC: u16 = 0x51D0;
pub const VERSION: u8 = 2;
pub const HEADER_LEN: usize = 64;
/// IPv4 (20) + UDP (8): what the kernel adds to every datagram.
pub const IP_UDP_HEADER: u32 = 28;

/// Time the virtual NIC is busy with a datagram of `len` bytes: IP, UDP and
/// Ethernet framing (header, FCS, preamble, gap) included, as in the simulator.
pub fn nic_time(len: usize, rate_bps: u64) -> fabriclab_engine::Time {
    let eth = fabriclab::net::wire::ETH_OVERHEAD as u64;
    fabriclab_engine::serialization_time(len as u64 + IP_UDP_HEADER as u64 + eth, rate_bps)
}

const FLAG_SCHEDULED: u8 = 1;
const FLAG_CSN: u8 = 2;
const CRC_AT: usize = 8;

/// Packet types: SIRD's four plus the driver's two end-to-end messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data = 1,
    CreditReq = 2,
    Credit = 3,
    Resend = 4,
    /// Receiver -> sender: application message `app` was delivered.
    Done = 5,
    /// Receiver -> sender: still receiving `app`, do not give up on it.
    Alive = 6,
    /// Receiver -> sender: a DATA packet of `app` was cut for another MTU than
    /// this receiver's, which `size` carries (both ends must use the same).
    Mtu = 7,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Data,
            2 => Kind::CreditReq,
            3 => Kind::Credit,
            4 => Kind::Resend,
            5 => Kind::Done,
            6 => Kind::Alive,
            7 => Kind::Mtu,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub scheduled: bool,
    pub csn: bool,
    pub incarnation: u64,
    /// The sender's token for the receiver's address (address validation).
    pub token: u64,
    /// The receiver's token for the sender's address, echoed back (0 = none yet).
    pub echo: u64,
    pub msg: u64,
    pub app: u64,
    pub size: u64,
    pub index: u32,
}

impl Header {
    pub fn new(kind: Kind, incarnation: u64, msg: u64, app: u64, size: u64, index: u32) -> Header {
        Header { kind, scheduled: false, csn: false, incarnation, token: 0, echo: 0, msg, app, size, index }
    }
}

/// Why a datagram was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    Truncated,
    BadMagic,
    BadVersion(u8),
    BadKind(u8),
    /// Header or payload length fields disagree with the datagram.
    BadLength,
    BadChecksum,
}

/// Appends the datagram for `h` carrying `payload` to `out`.
pub fn encode(h: &Header, payload: &[u8], out: &mut Vec<u8>) {
    debug_assert!(payload.len() <= u16::MAX as usize);
    let start = out.len();
    out.extend_from_slice(&MAGIC.to_be_bytes());
    out.push(VERSION);
    out.push(h.kind as u8);
    out.push(if h.scheduled { FLAG_SCHEDULED } else { 0 } | if h.csn { FLAG_CSN } else { 0 });
    out.push(HEADER_LEN as u8);
    out.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&h.index.to_be_bytes());
    out.extend_from_slice(&h.incarnation.to_be_bytes());
    out.extend_from_slice(&h.token.to_be_bytes());
    out.extend_from_slice(&h.echo.to_be_bytes());
    out.extend_from_slice(&h.msg.to_be_bytes());
    out.extend_from_slice(&h.app.to_be_bytes());
    out.extend_from_slice(&h.size.to_be_bytes());
    out.extend_from_slice(payload);
    let crc = checksum(&out[start..]);
    out[start + CRC_AT..start + CRC_AT + 4].copy_from_slice(&crc.to_be_bytes());
}

/// CRC-32C of a datagram, its checksum field counted as zero.
fn checksum(d: &[u8]) -> u32 {
    let c = crc32c::crc32c(&d[..CRC_AT]);
    let c = crc32c::crc32c_append(c, &[0; 4]);
    crc32c::crc32c_append(c, &d[CRC_AT + 4..])
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Parses and checks a datagram; the payload is a slice of `d`.
pub fn decode(d: &[u8]) -> Result<(Header, &[u8]), WireError> {
    if d.len() < HEADER_LEN {
        return Err(WireError::Truncated);
    }
    if u16::from_be_bytes([d[0], d[1]]) != MAGIC {
        return Err(WireError::BadMagic);
    }
    if d[2] != VERSION {
        return Err(WireError::BadVersion(d[2]));
    }
    let kind = Kind::from_u8(d[3]).ok_or(WireError::BadKind(d[3]))?;
    let payload_len = u16::from_be_bytes([d[6], d[7]]) as usize;
    if d[5] as usize != HEADER_LEN || d.len() != HEADER_LEN + payload_len {
        return Err(if d.len() < HEADER_LEN + payload_len { WireError::Truncated } else { WireError::BadLength });
    }
    if kind != Kind::Data && payload_len != 0 {
        return Err(WireError::BadLength);
    }
    if be_u32(d, CRC_AT) != checksum(d) {
        return Err(WireError::BadChecksum);
    }
    let h = Header {
        kind,
        scheduled: d[4] & FLAG_SCHEDULED != 0,
        csn: d[4] & FLAG_CSN != 0,
        index: be_u32(d, 12),
        incarnation: be_u64(d, 16),
        token: be_u64(d, 24),
        echo: be_u64(d, 32),
        msg: be_u64(d, 40),
        app: be_u64(d, 48),
        size: be_u64(d, 56),
    };
    Ok((h, &d[HEADER_LEN..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header { scheduled: true, csn: true, token: 11, echo: 12, ..Header::new(Kind::Data, 7, 1 << 40, 3, 5000, 2) }
    }

    #[test]
    fn round_trip_keeps_every_field_and_the_payload() {
        let mut buf = Vec::new();
        encode(&sample(), b"hello", &mut buf);
        assert_eq!(buf.len(), HEADER_LEN + 5);
        let (h, p) = decode(&buf).unwrap();
        assert_eq!(h, sample());
        assert_eq!(p, b"hello");
    }

    #[test]
    fn any_flipped_bit_is_caught() {
        let mut buf = Vec::new();
        encode(&sample(), b"payload bytes", &mut buf);
        for bit in 0..buf.len() * 8 {
            let mut b = buf.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(decode(&b).is_err(), "bit {bit} flipped unnoticed");
        }
    }

    #[test]
    fn version_1_datagrams_are_refused() {
        let mut buf = Vec::new();
        encode(&sample(), b"", &mut buf);
        buf[2] = 1;
        assert_eq!(decode(&buf), Err(WireError::BadVersion(1)));
    }

    #[test]
    fn truncation_and_control_payloads_are_rejected() {
        let mut buf = Vec::new();
        encode(&sample(), b"abc", &mut buf);
        assert_eq!(decode(&buf[..buf.len() - 1]), Err(WireError::Truncated));
        assert_eq!(decode(&buf[..10]), Err(WireError::Truncated));
        let mut credit = Vec::new();
        encode(&Header::new(Kind::Credit, 1, 2, 0, 0, 4), b"x", &mut credit);
        assert_eq!(decode(&credit), Err(WireError::BadLength));
    }
}
