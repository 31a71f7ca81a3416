//! End-to-end checks of whole messages: how the command-line senders make
//! messages that `udp serve --verify` can check, and the check itself.
//!
//! The transport delivers a message's bytes as they were sent (a CRC-32C per
//! datagram, reassembly by offset); the check covers what the checksum cannot:
//! a driver bug that puts the right datagram at the wrong offset, or bytes
//! changed before or after the socket. The receiver needs no side channel and
//! the wire format is untouched: each message says, in its own bytes, how it is
//! checked. There are two kinds (docs/udp.md, "Verifying messages"):
//!
//! - **Pattern** (`bench`, `probe`, `send --size`): byte `i` of message `id` is
//!   `s[i % 8] ^ (i / 8) as u8`, with `s` the little-endian bytes of
//!   `mix64(id)`; `id` is the sender's message id, which the receiver's
//!   [`Event::Received`](crate::Event::Received) names. It costs no byte, so
//!   message sizes stay what the workload asked for.
//! - **Digest** (`send --file`): the 8 bytes `FLSHA256`, the SHA-256 of the
//!   body (32 bytes), then the body (the file). 40 bytes more than the file;
//!   the receiver reports the digest, which `sha256sum FILE` prints too.
//!
//! A message that is neither a digest message whose digest matches nor its
//! id's pattern is corrupt.

use sha2::{Digest as _, Sha256};

/// The first bytes of a digest message.
pub const DIGEST_MAGIC: &[u8; 8] = b"FLSHA256";
/// Bytes a digest message adds before its body: the magic and the SHA-256.
pub const DIGEST_PREFIX: usize = DIGEST_MAGIC.len() + 32;

/// The pattern's period: 8 bytes of seed times 256 values of the word index's low byte.
const PATTERN_PERIOD: usize = 2048;

/// One period (or all, if shorter) of message `id`'s pattern.
fn pattern_period(id: u64, len: usize) -> Vec<u8> {
    let seed = fabriclab_engine::mix64(id).to_le_bytes();
    (0..PATTERN_PERIOD.min(len)).map(|i| seed[i % 8] ^ (i / 8) as u8).collect()
}

/// The bytes of pattern message `id` of `len` bytes.
pub fn pattern(id: u64, len: usize) -> Vec<u8> {
    // The pattern repeats every 2,048 bytes, so one period is built and copied.
    // Byte by byte, 1 MB messages cost the sender 42% of its CPU in a profile at 2.5 Gbps.
    let period = pattern_period(id, len);
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let n = (len - out.len()).min(period.len());
        out.extend_from_slice(&period[..n]);
    }
    out
}

/// A digest message carrying `body`.
pub fn with_digest(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(DIGEST_PREFIX + body.len());
    out.extend_from_slice(DIGEST_MAGIC);
    out.extend_from_slice(&Sha256::digest(body));
    out.extend_from_slice(body);
    out
}

/// What the check of one received message found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Message `id`'s pattern, byte for byte.
    Pattern,
    /// A digest message whose body has the digest it carries: the body's SHA-256.
    Digest { sha256: [u8; 32], body_bytes: u64 },
    /// Neither.
    Corrupt,
}

impl Verdict {
    pub fn verified(&self) -> bool {
        *self != Verdict::Corrupt
    }
}

/// Checks message `id` as received. A digest message is recognised by its
/// magic; anything else must be `id`'s pattern (a pattern whose first 8 bytes
/// spell the magic, one id in 2^64, still verifies as a pattern).
pub fn check(id: u64, data: &[u8]) -> Verdict {
    if data.len() >= DIGEST_PREFIX && data.starts_with(DIGEST_MAGIC) {
        let body = &data[DIGEST_PREFIX..];
        let sum: [u8; 32] = Sha256::digest(body).into();
        if data[DIGEST_MAGIC.len()..DIGEST_PREFIX] == sum {
            return Verdict::Digest { sha256: sum, body_bytes: body.len() as u64 };
        }
    }
    let period = pattern_period(id, data.len());
    match data.chunks(PATTERN_PERIOD).all(|c| *c == period[..c.len()]) {
        true => Verdict::Pattern,
        false => Verdict::Corrupt,
    }
}

/// Lower-case hexadecimal, as `sha256sum` prints a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_is_the_documented_byte_formula() {
        for (id, len) in [(0, 0), (1, 1), (7, 13), (99, 4096 + 5), (3, 2048), (5, 10_000)] {
            let seed = fabriclab_engine::mix64(id);
            let slow: Vec<u8> = (0..len).map(|i| (seed >> ((i % 8) * 8)) as u8 ^ (i / 8) as u8).collect();
            assert_eq!(pattern(id, len), slow, "id {id}, len {len}");
        }
    }

    #[test]
    fn patterns_verify_under_their_own_id_only_and_any_changed_byte_is_corrupt() {
        for len in [1, 9, 2048, 2049, 100_000] {
            let m = pattern(42, len);
            assert_eq!(check(42, &m), Verdict::Pattern, "len {len}");
            if len > 8 {
                assert_eq!(check(43, &m), Verdict::Corrupt, "len {len} under another id");
            }
            for at in [0, len / 2, len - 1] {
                let mut bad = m.clone();
                bad[at] ^= 0x10;
                assert_eq!(check(42, &bad), Verdict::Corrupt, "len {len}, byte {at}");
            }
        }
        // What `udp send` sent before it sent patterns: one byte repeated.
        assert_eq!(check(0, &[0x5A; 1000]), Verdict::Corrupt);
    }

    #[test]
    fn digest_messages_carry_the_bodys_sha256_and_any_changed_byte_is_corrupt() {
        let body = b"the quick brown fox jumps over the lazy dog".repeat(100);
        let m = with_digest(&body);
        assert_eq!(m.len(), body.len() + DIGEST_PREFIX);
        assert!(m.starts_with(b"FLSHA256"));
        // sha256sum of the same bytes (computed independently of `with_digest`).
        let want: [u8; 32] = Sha256::digest(&body).into();
        assert_eq!(check(7, &m), Verdict::Digest { sha256: want, body_bytes: body.len() as u64 });
        assert_eq!(hex(&want).len(), 64);
        for at in [0, 8, 39, 40, m.len() - 1] {
            let mut bad = m.clone();
            bad[at] ^= 1;
            assert_eq!(check(7, &bad), Verdict::Corrupt, "byte {at}");
        }
        // An empty file is a 40-byte message whose digest is SHA-256 of nothing.
        assert!(check(0, &with_digest(b"")).verified());
        assert_eq!(hex(&Sha256::digest(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
