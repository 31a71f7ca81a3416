//! SIRD as a real transport over UDP.
//!
//! One implementation, two drivers: the simulator and this crate both run the
//! sans-IO [`fabriclab::transport::sird::Sird`] state machine. An [`Endpoint`]
//! owns a UDP socket and feeds SIRD real datagrams, real-time timers and pulls
//! from a virtual NIC paced at the configured link rate; see docs/udp.md.
//!
//! ```no_run
//! use fabriclab_udp::{Endpoint, Event, UdpConfig};
//! let mut ep = Endpoint::bind("127.0.0.1:0".parse().unwrap(), UdpConfig::default()).unwrap();
//! let peer = ep.add_peer("127.0.0.1:7000".parse().unwrap()).unwrap();
//! ep.send(peer, b"hello".to_vec()).unwrap();
//! while let Some(ev) = ep.poll(std::time::Duration::from_secs(1)) {
//!     if let Event::Confirmed { .. } | Event::Failed { .. } = ev { break; }
//! }
//! ```

pub mod bench;
pub mod check;
pub mod cli;
pub mod config;
pub mod endpoint;
pub mod faults;
pub mod io;
pub mod mem;
pub mod peers;
pub mod stats;
pub mod wire;

pub use config::UdpConfig;
pub use endpoint::{Endpoint, Event, MtuMismatch, PeerMtu, SendError};
pub use peers::PeerId;
pub use stats::Stats;
