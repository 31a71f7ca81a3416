//! Counters an endpoint keeps; every dropped datagram is counted by reason.

use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Stats {
    /// Messages handed to `send`, confirmed delivered, and given up.
    pub messages_sent: u64,
    pub messages_confirmed: u64,
    pub messages_failed: u64,
    /// Whole messages handed to the application, and their bytes.
    pub messages_delivered: u64,
    pub bytes_delivered: u64,
    /// New transmission attempts after a retry timeout.
    pub retries: u64,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub data_packets_sent: u64,
    pub credits_sent: u64,
    /// DATA packets sent with the csn bit (sender held more than SThr credit).
    pub csn_sent: u64,
    /// DATA packets received with CE.
    pub ce_received: u64,
    /// Dropped: undecodable (bad magic, version, kind, lengths).
    pub malformed: u64,
    /// Dropped: checksum mismatch.
    pub bad_checksum: u64,
    /// Dropped: from an address that is not a peer (and none could be added).
    pub unknown_peer: u64,
    /// Dropped: fields inconsistent with the message they name.
    pub invalid: u64,
    /// Dropped: DATA packets cut for another `mtu` than ours (each answered
    /// with an MTU datagram naming ours, within the response bucket).
    pub mtu_mismatch: u64,
    /// Dropped: for a message already delivered (answered with DONE again).
    pub duplicates: u64,
    /// Dropped: for a message older than the duplicate filter remembers.
    pub replayed: u64,
    /// Dropped: for a message this endpoint no longer knows (finished or given up).
    pub stale: u64,
    /// Dropped: a new inbound message beyond the configured memory bounds.
    pub overload: u64,
    /// Inbound messages dropped after their sender went silent.
    pub abandoned: u64,
    /// Peers that restarted (new incarnation).
    pub peer_restarts: u64,
    /// Dropped: from an older incarnation of a peer than one already heard (a replay).
    pub old_incarnation: u64,
    /// Not sent: the anti-amplification limit of an unvalidated peer (3x its bytes).
    pub amplification_limited: u64,
    /// Not sent: a RESEND or repeated DONE beyond the peer's response bucket.
    pub rate_limited: u64,
    /// Unvalidated peers evicted from a full peer table to make room for a new one.
    pub peers_evicted: u64,
}
