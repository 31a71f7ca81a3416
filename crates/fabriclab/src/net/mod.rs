//! The network model: packets and their wire sizes, topologies, routing and
//! load balancing, and output-queued switch ports.

pub mod bolt_switch;
pub mod buffer;
pub mod control;
pub mod fabric;
pub mod fat_tree;
pub mod features;
pub mod fifo;
pub mod int;
pub mod level;
pub mod link_events;
pub mod names;
pub mod overrides;
mod packet;
pub mod pfc;
pub mod port;
pub mod program;
pub mod red;
pub mod routing;
pub mod swift_notify;
pub mod switch_config;
pub mod topology;
pub mod topology_config;
pub mod wire;

pub use fabric::{Fabric, Hop};
pub use packet::{Packet, PacketSlab, CONTROL, ECN_CE, ECN_ECT, INT, TRIMMED, UNSCHEDULED};
pub use port::{CreditShaper, Enqueue, Offer, Pick, Port};
pub use routing::Routes;
pub use topology::{NodeKind, SwitchRole, Topology};

use serde::{Deserialize, Serialize};

/// How switches spread packets over equal-cost next hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancing {
    /// Every packet takes an independently random equal-cost path (the sender
    /// randomises the entropy field, like SIRD's per-packet UDP source port).
    Spray,
    /// All packets of a flow take the same path (5-tuple hash per flow).
    Ecmp,
    /// Per-flow ECMP whose hash is symmetric in source and destination and the
    /// same at every switch, so a flow's packets in both directions cross the
    /// same links (ExpressPass: data retraces its credits' path). Exact on
    /// topologies where every switch lists its equal-cost ports in the same
    /// order, as our leaf-spine does.
    SymmetricEcmp,
    /// The transport stamps each packet's entropy itself from its own feedback
    /// (REPS, PLB: `transport::lb`); only for protocols that do.
    Sender,
}
