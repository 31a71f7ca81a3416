//! `[protocol.sird]`: the parameters of SIRD, their defaults and sources, and their checks.

use super::Sird;
use crate::net::switch_config::EcnPorts;
use crate::net::LoadBalancing;
use crate::transport::params::{ParamDoc, ProtocolParams};
use crate::transport::HostInfo;
use fabriclab_engine::error::{ConfigError, Validate};
use fabriclab_engine::limits::{Bound, MAX_MULTIPLE};
use serde::{Deserialize, Serialize};

/// Which packets use the optional high-priority lane (seed §4.6, §5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PriorityLane {
    None,
    Control,
    ControlAndUnscheduled,
}

/// When the AIMD loops grow a bucket (docs/protocols/sird.md, "AIMD loops").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Increase {
    /// On every data packet, by one full packet squared over the bucket (the authors' simulator).
    PerPacket,
    /// By one full packet at the end of a window without marks (DCTCP's cwnd rule).
    PerWindow,
}

/// When the AIMD loops cut a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Cut {
    /// On a marked packet, at most once per `cut_min_interval_windows` (the authors' simulator).
    OnMark,
    /// At the end of each window that saw a mark (DCTCP's cwnd rule).
    PerWindow,
}

/// The receiver's SRPT order among messages it credits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SrptKey {
    /// Fewest bytes still to arrive (the authors' simulator).
    RemainingToReceive,
    /// Fewest bytes still to credit.
    RemainingToCredit,
}

/// What a byte counts: of credit (B, sb_i, the buckets, SThr: `credit_bytes`), or of a
/// message compared with UnschT (`unsch_t_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CreditBytes {
    /// Wire bytes of the data packet it allows (payload + headers + preamble and gap).
    Wire,
    /// Payload bytes only.
    Payload,
}

/// How a sender shares its uplink among the receivers it has data for (Algorithm 2, ln. 7;
/// §4.4: "part of the uplink bandwidth" goes fairly across active receivers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SenderPolicy {
    /// Two kinds of turn balanced by bytes sent: a round-robin turn across receivers for
    /// `sender_fair_share` of the bytes, an SRPT turn (smallest remaining message) for the rest.
    Turns,
    /// The authors' simulator: deficit round-robin across receivers, once per packet. Each
    /// receiver with a sendable message earns `sender_fair_share / n` (n such receivers), the one
    /// whose message has the fewest unsent bytes also earns `1 - sender_fair_share`; the largest
    /// deficit sends and pays 1; a receiver with nothing to send loses its deficit. Within a
    /// receiver, SRPT, except that a message not yet announced goes first.
    Deficit,
}

/// How the receiver checks a sender's bucket before a credit (Algorithm 1, sendCredit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SenderBucketCheck {
    /// After the credit: the credit goes only if sb_i + credit <= min(senderBkt_i, netBkt_i).
    After,
    /// The authors' simulator: before the credit, sb_i <= min(senderBkt_i, netBkt_i), and
    /// sb_i + credit <= the largest bucket (`max_sender_bucket_bdp`); a sender may so hold up to
    /// one packet's credit above its bucket.
    Before,
}

/// `[protocol.sird]`, in the paper's units (multiples of BDP). Defaults: SIRD Table 2,
/// else the authors' ns-2 simulator (docs/protocols/sird.md gives each source).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SirdParams {
    /// B: global credit bucket (total outstanding credit per receiver).
    pub b_bdp: f64,
    /// UnschT: messages up to this size send their first BDP without credit.
    pub unsch_t_bdp: f64,
    /// SThr: accumulated-credit threshold above which senders set csn. `inf` disables the loop.
    pub sthr_bdp: f64,
    /// NThr: switch ECN marking threshold.
    pub nthr_bdp: f64,
    /// Largest per-sender bucket.
    pub max_sender_bucket_bdp: f64,
    /// EWMA gain of both AIMD loops (DCTCP's g).
    pub g: f64,
    /// Initial alpha of both AIMD loops.
    pub alpha_init: f64,
    /// Smallest senderBkt.
    pub sender_bucket_floor_bdp: f64,
    /// Smallest netBkt.
    pub net_bucket_floor_bdp: f64,
    /// Additive-increase rule of both loops.
    pub increase: Increase,
    /// Multiplicative-decrease rule of both loops.
    pub cut: Cut,
    /// With `cut = "on_mark"`: windows of packets between two cuts of one bucket.
    pub cut_min_interval_windows: f64,
    /// Senders set csn only while they have at least this many outbound messages in progress.
    pub csn_min_messages: u32,
    /// With `csn_counts_unsched`, the unscheduled prefix not yet sent counts as held credit for csn.
    pub csn_counts_unsched: bool,
    /// A message counts as in progress for `csn_min_messages` from its start, while its scheduled
    /// part still waits for credit too (the authors' simulator), not only once it holds credit.
    pub csn_counts_waiting: bool,
    /// Receiver SRPT order.
    pub srpt_key: SrptKey,
    /// Unit of credit.
    pub credit_bytes: CreditBytes,
    /// Charge the unscheduled prefix to B and sb_i when the receiver learns of the message.
    pub account_unsched: bool,
    /// Share of the sender uplink scheduled round-robin across receivers; the rest is SRPT.
    pub sender_fair_share: f64,
    /// How that share is enforced: alternating turns, or the artifact's deficit round-robin.
    pub sender_policy: SenderPolicy,
    /// What UnschT is compared with: the message's payload, or its bytes on the wire.
    pub unsch_t_bytes: CreditBytes,
    /// Cut a new message's unscheduled prefix to what the credit the sender already holds
    /// for that receiver leaves below 1 BDP (whole packets, at least one).
    pub unsch_capped_by_held_credit: bool,
    /// How a sender's bucket is checked: after the credit (ours), or before it (the artifact).
    pub sender_bucket_check: SenderBucketCheck,
    /// The AIMD loops count every packet from a sender (CREDITREQ, CREDIT and RESEND too, as
    /// unmarked by csn), and control packets are ECN-capable, as in the authors' simulator.
    pub loops_see_control: bool,
    /// Pace credits at the downlink rate of the data they allow.
    pub credit_pacing: bool,
    /// With `credit_pacing`: how far ahead of the pace a credit may go, in wire bytes of the
    /// downlink (the authors' simulator: 1.5 poll loops of 30 ns at 100 Gbps, 562.5 B).
    pub credit_pacing_slack_bytes: f64,
    pub priority_lane: PriorityLane,
    /// Loss-recovery timeout (receiver RESEND, sender CREDITREQ retry).
    pub timeout_us: f64,
}

impl Default for SirdParams {
    fn default() -> Self {
        SirdParams {
            b_bdp: 1.5,
            unsch_t_bdp: 1.0,
            sthr_bdp: 0.5,
            nthr_bdp: 1.25,
            max_sender_bucket_bdp: 1.0,
            g: 0.08,
            alpha_init: 0.0,
            sender_bucket_floor_bdp: 0.1,
            net_bucket_floor_bdp: 0.03,
            increase: Increase::PerPacket,
            cut: Cut::OnMark,
            cut_min_interval_windows: 1.5,
            csn_min_messages: 2,
            csn_counts_unsched: true,
            csn_counts_waiting: false,
            srpt_key: SrptKey::RemainingToReceive,
            credit_bytes: CreditBytes::Wire,
            account_unsched: true,
            sender_fair_share: 0.5,
            sender_policy: SenderPolicy::Turns,
            unsch_t_bytes: CreditBytes::Wire,
            unsch_capped_by_held_credit: false,
            sender_bucket_check: SenderBucketCheck::After,
            loops_see_control: false,
            credit_pacing: true,
            credit_pacing_slack_bytes: 0.0,
            priority_lane: PriorityLane::ControlAndUnscheduled,
            timeout_us: 100.0,
        }
    }
}

impl Validate for SirdParams {
    /// The rules between keys; each key's own range is in [`SirdParams::bounds`].
    fn validate(&self) -> Result<(), ConfigError> {
        let max = self.max_sender_bucket_bdp;
        for (key, floor) in [
            ("sender_bucket_floor_bdp", self.sender_bucket_floor_bdp),
            ("net_bucket_floor_bdp", self.net_bucket_floor_bdp),
        ] {
            if floor > max {
                let allowed = format!("at most max_sender_bucket_bdp ({max})");
                return Err(ConfigError::value(&format!("protocol.sird.{key}"), floor, &allowed));
            }
        }
        Ok(())
    }
}

impl ProtocolParams for SirdParams {
    type Host = Sird;
    const PAPER: &'static str = "SIRD: sender-informed receiver-driven transport (Prasopoulos, Bugnion, Kogias, 2024)";
    const LOAD_BALANCING: LoadBalancing = LoadBalancing::Spray;
    /// NThr measures core congestion (§4.3); the authors' simulator marks only
    /// ToR-spine links (`r2p2_ecn_at_core_l = 1`, config/nsdi25/large-scale-common.default;
    /// sim-scripts/r2p2cc/simulation.tcl gives RED to core links alone).
    const ECN_PORTS: EcnPorts = EcnPorts::Fabric;

    fn ecn_threshold_bdp(&self) -> Option<f64> {
        Some(self.nthr_bdp)
    }

    fn host(&self, info: &HostInfo) -> Sird {
        Sird::new(self, info)
    }

    fn bounds() -> Vec<(&'static str, Bound)> {
        let positive = Bound::new("a multiple", 0.0, MAX_MULTIPLE).above();
        vec![
            ("b_bdp", positive),
            ("sthr_bdp", Bound::new("a multiple", 0.0, MAX_MULTIPLE).or_inf()),
            ("nthr_bdp", positive),
            ("max_sender_bucket_bdp", positive),
            ("g", Bound::new("a gain", 1e-6, 1.0)),
            ("alpha_init", Bound::new("a fraction", 0.0, 1.0)),
            ("sender_bucket_floor_bdp", Bound::new("a multiple", 1e-4, MAX_MULTIPLE)),
            ("net_bucket_floor_bdp", Bound::new("a multiple", 1e-4, MAX_MULTIPLE)),
            ("cut_min_interval_windows", Bound::new("a number of windows", 0.0, 1e3)),
            ("sender_fair_share", Bound::new("a fraction", 0.0, 1.0)),
            ("credit_pacing_slack_bytes", Bound::new("a number of bytes", 0.0, 1e6)),
        ]
    }

    fn docs() -> Vec<ParamDoc> {
        let d = SirdParams::default();
        let t2 = "SIRD Table 2";
        vec![
            ParamDoc {
                key: "b_bdp",
                default: d.b_bdp.to_string(),
                meaning: "B, global credit bucket (x BDP)",
                source: t2,
            },
            ParamDoc {
                key: "unsch_t_bdp",
                default: d.unsch_t_bdp.to_string(),
                meaning: "UnschT, largest message with an unscheduled BDP prefix (x BDP)",
                source: t2,
            },
            ParamDoc {
                key: "sthr_bdp",
                default: d.sthr_bdp.to_string(),
                meaning: "SThr, sender accumulated-credit threshold for csn (x BDP; inf = off)",
                source: t2,
            },
            ParamDoc {
                key: "nthr_bdp",
                default: d.nthr_bdp.to_string(),
                meaning: "NThr, switch ECN threshold (x BDP)",
                source: t2,
            },
            ParamDoc {
                key: "max_sender_bucket_bdp",
                default: d.max_sender_bucket_bdp.to_string(),
                meaning: "largest per-sender bucket (x BDP)",
                source: "SIRD §4.2",
            },
            ParamDoc {
                key: "g",
                default: d.g.to_string(),
                meaning: "EWMA gain of the AIMD loops",
                source: "SIRD Table 2 (DCTCP g) and the authors' simulator (r2p2_ce_new_weight)",
            },
            ParamDoc {
                key: "alpha_init",
                default: d.alpha_init.to_string(),
                meaning: "initial alpha of the AIMD loops",
                source: "authors' simulator (SenderState marked ratios start at 0)",
            },
            ParamDoc {
                key: "sender_bucket_floor_bdp",
                default: d.sender_bucket_floor_bdp.to_string(),
                meaning: "smallest senderBkt (x BDP)",
                source: "authors' simulator (r2p2_ecn_min_mul)",
            },
            ParamDoc {
                key: "net_bucket_floor_bdp",
                default: d.net_bucket_floor_bdp.to_string(),
                meaning: "smallest netBkt (x BDP)",
                source: "authors' simulator (r2p2_ecn_min_mul_nw)",
            },
            ParamDoc {
                key: "increase",
                default: "\"per_packet\"".into(),
                meaning: "per_packet (MSS^2/bucket each packet) | per_window (1 MSS per unmarked window)",
                source: "authors' simulator (update_nw_state, update_sn_state)",
            },
            ParamDoc {
                key: "cut",
                default: "\"on_mark\"".into(),
                meaning: "on_mark (marked packet, rate-limited) | per_window (end of a marked window)",
                source: "authors' simulator (update_nw_state, update_sn_state)",
            },
            ParamDoc {
                key: "cut_min_interval_windows",
                default: d.cut_min_interval_windows.to_string(),
                meaning: "with cut = on_mark: windows between two cuts of a bucket",
                source: "authors' simulator (update_nw_state, update_sn_state)",
            },
            ParamDoc {
                key: "csn_min_messages",
                default: d.csn_min_messages.to_string(),
                meaning: "senders set csn only with at least this many outbound messages",
                source: "authors' simulator (get_granted_bytes_queue_len)",
            },
            ParamDoc {
                key: "csn_counts_unsched",
                default: d.csn_counts_unsched.to_string(),
                meaning: "unsent unscheduled prefixes count as held credit for csn",
                source: "authors' simulator (send_data self-allocates credit)",
            },
            ParamDoc {
                key: "csn_counts_waiting",
                default: d.csn_counts_waiting.to_string(),
                meaning: "a message counts for csn_min_messages from its start, while waiting for credit too",
                source: "false: ours; true: authors' simulator (r2p2-cc-hybrid.cc, send_data activates every announced message)",
            },
            ParamDoc {
                key: "srpt_key",
                default: "\"remaining_to_receive\"".into(),
                meaning: "receiver SRPT order: remaining_to_receive | remaining_to_credit",
                source: "authors' simulator (send_grants_srpt_msg)",
            },
            ParamDoc {
                key: "credit_bytes",
                default: "\"wire\"".into(),
                meaning: "unit of B, buckets, SThr: wire | payload",
                source: "authors' simulator (send_credit_policy_common)",
            },
            ParamDoc {
                key: "account_unsched",
                default: d.account_unsched.to_string(),
                meaning: "charge unscheduled prefixes to B and sb_i",
                source: "authors' simulator (r2p2_elet_account_unsched = 1)",
            },
            ParamDoc {
                key: "sender_fair_share",
                default: d.sender_fair_share.to_string(),
                meaning: "uplink share scheduled round-robin across receivers",
                source: "SIRD §5.4",
            },
            ParamDoc {
                key: "sender_policy",
                default: "\"turns\"".into(),
                meaning: "how the fair share is kept: turns (round-robin and SRPT turns by bytes) | deficit (deficit round-robin per packet)",
                source: "turns: ours; deficit: authors' simulator (r2p2-hybrid-support.cc, update_policy_state, select_msg_to_send)",
            },
            ParamDoc {
                key: "unsch_t_bytes",
                default: "\"wire\"".into(),
                meaning: "what UnschT compares: payload | wire (the message's data packets on the wire)",
                source: "payload: ours; wire: authors' simulator (r2p2-cc-hybrid.cc, send_data, add_header_overhead)",
            },
            ParamDoc {
                key: "unsch_capped_by_held_credit",
                default: d.unsch_capped_by_held_credit.to_string(),
                meaning: "cut a new unscheduled prefix to what the sender's held credit for that receiver leaves below 1 BDP",
                source: "authors' simulator (r2p2-cc-hybrid.cc, send_data, available_backlog_space)",
            },
            ParamDoc {
                key: "sender_bucket_check",
                default: "\"after\"".into(),
                meaning: "a sender's bucket checked after the credit (sb + credit <= bucket) | before (sb <= bucket, sb + credit <= largest bucket)",
                source: "after: ours (Algorithm 1); before: authors' simulator (r2p2-cc-hybrid.cc, send_credit_policy_common)",
            },
            ParamDoc {
                key: "loops_see_control",
                default: d.loops_see_control.to_string(),
                meaning: "the AIMD loops count every packet from a sender, control packets included (ECN-capable)",
                source: "false: ours (Algorithm 1, onDataPacket); true: authors' simulator (r2p2-cc-hybrid.cc, recv calls update_sender_state first)",
            },
            ParamDoc {
                key: "credit_pacing",
                default: d.credit_pacing.to_string(),
                meaning: "pace credits at the downlink data rate",
                source: "SIRD §4.5",
            },
            ParamDoc {
                key: "credit_pacing_slack_bytes",
                default: d.credit_pacing_slack_bytes.to_string(),
                meaning: "how far ahead of the pace a credit may go (downlink wire bytes)",
                source: "0: ours; 562.5: authors' simulator (r2p2-cc-hybrid.cc, send_grants_srpt_msg, grant_pacer_backlog_)",
            },
            ParamDoc {
                key: "priority_lane",
                default: "\"control_and_unscheduled\"".into(),
                meaning: "none | control | control_and_unscheduled",
                source: t2,
            },
            ParamDoc {
                key: "timeout_us",
                default: d.timeout_us.to_string(),
                meaning: "loss-recovery timeout",
                source: "not stated in SIRD (Homa-style timeouts, §4.6); our choice",
            },
        ]
    }
}
