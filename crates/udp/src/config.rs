//! `UdpConfig`: the endpoint's settings. SIRD's own parameters keep the
//! simulator's names and defaults (`[sird]` = `[protocol.sird]`); the rest
//! describes the virtual NIC and bounds the endpoint's memory.

use crate::faults::Faults;
use fabriclab::transport::sird::SirdParams;
use fabriclab_engine::error::{check_range, ConfigError, Validate};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct UdpConfig {
    /// Rate of the virtual NIC that the pacer emulates (and that credit pacing assumes).
    pub link_rate_gbps: f64,
    /// Unloaded round-trip time; with the link rate it gives the BDP unless `bdp_bytes` is set.
    pub base_rtt_us: f64,
    /// The BDP the `x BDP` parameters refer to (0 = link rate x base RTT).
    pub bdp_bytes: u64,
    /// IP MTU: each datagram (IP + UDP + SIRD header + payload) fits in it.
    pub mtu: u32,
    /// Mark outgoing packets ECT(0) and read CE on incoming ones.
    pub ecn: bool,
    /// Release packets at the virtual NIC's rate; off = as fast as the socket takes them.
    pub nic_pacing: bool,
    /// How far the virtual NIC may fall behind real time and then catch up in a
    /// burst, so that OS scheduling delays do not cut the rate below the link's.
    pub nic_catch_up_us: f64,
    /// Send runs of equal-size datagrams to one peer as one UDP GSO send (the
    /// kernel segments them), where the kernel offers it; off = plain
    /// `sendmmsg` batches of single datagrams.
    pub gso: bool,
    /// Ask the kernel for coalesced receives (UDP GRO), where it offers them;
    /// off = one datagram per receive slot.
    pub gro: bool,
    /// Spin on the non-blocking socket this long before sleeping in `ppoll`
    /// (0 = sleep at once): lower wake-up latency for a core's worth of CPU.
    pub busy_poll_us: f64,
    /// A message with no sign of life from its receiver for this long is sent again...
    pub retry_timeout_ms: f64,
    /// ...at most this many times, then reported failed.
    pub max_retries: u32,
    /// Peers beyond this many are unknown peers (their packets are dropped).
    pub max_peers: u32,
    /// Packets from an address not added with `add_peer` create a peer (serve mode).
    pub accept_unknown_peers: bool,
    /// Largest message accepted in either direction.
    pub max_message_bytes: u64,
    /// Messages being received from one peer at once.
    pub max_inbound_per_peer: u32,
    /// Total bytes of reassembly buffers.
    pub max_inbound_bytes: u64,
    /// Messages accepted by `send` and not yet delivered or failed.
    pub max_outbound_messages: u32,
    /// Delivered message ids remembered per peer to drop duplicates.
    pub dedup_window: u32,
    /// Responses that do not advance a message (RESENDs, DONEs repeated for
    /// duplicates) per second and peer: the refill rate of its token bucket.
    pub response_rate_per_s: f64,
    /// ...and the bucket's depth (the burst allowed after a quiet period).
    pub response_burst: u32,
    /// Seed of the endpoint's random stream (SIRD's and the fault injector's).
    pub seed: u64,
    pub sird: SirdParams,
    /// Fault injection in the socket layer (testing and soak runs).
    pub faults: Faults,
}

impl Default for UdpConfig {
    fn default() -> Self {
        UdpConfig {
            link_rate_gbps: 10.0,
            base_rtt_us: 50.0,
            bdp_bytes: 0,
            mtu: 1500,
            ecn: true,
            nic_pacing: true,
            nic_catch_up_us: 20.0,
            gso: true,
            gro: true,
            busy_poll_us: 0.0,
            retry_timeout_ms: 100.0,
            max_retries: 5,
            max_peers: 64,
            accept_unknown_peers: false,
            max_message_bytes: 64 << 20,
            max_inbound_per_peer: 256,
            max_inbound_bytes: 512 << 20,
            max_outbound_messages: 4096,
            dedup_window: 4096,
            response_rate_per_s: 2000.0,
            response_burst: 128,
            seed: 1,
            sird: udp_sird_defaults(),
            faults: Faults::default(),
        }
    }
}

/// SIRD Table 2 defaults, except the loss-recovery timeout: the simulator's
/// 100 us suits a fabric with microsecond RTTs, but a process on a busy host
/// is routinely descheduled for longer, and every such pause would trigger
/// spurious RESENDs.
pub fn udp_sird_defaults() -> SirdParams {
    SirdParams { timeout_us: 2_000.0, ..SirdParams::default() }
}

impl UdpConfig {
    pub fn link_rate_bps(&self) -> u64 {
        (self.link_rate_gbps * 1e9).round() as u64
    }

    /// The BDP in bytes: given, or link rate x base RTT.
    pub fn bdp(&self) -> u64 {
        if self.bdp_bytes > 0 {
            self.bdp_bytes
        } else {
            (self.link_rate_gbps * 1e9 / 8.0 * self.base_rtt_us * 1e-6).round().max(1.0) as u64
        }
    }

    /// Payload bytes per DATA packet.
    pub fn mss(&self) -> u32 {
        self.mtu - crate::wire::IP_UDP_HEADER - crate::wire::HEADER_LEN as u32
    }

    /// TOML text plus `dotted.key=value` overrides, checked.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<UdpConfig, ConfigError> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| ConfigError::new("", format!("invalid TOML: {}", e.message())))?;
        for o in overrides {
            fabriclab::config::apply_override(&mut table, o)?;
        }
        // serde fills a partial [sird] table from SirdParams::default(); keep the UDP timeout.
        if let Some(toml::Value::Table(t)) = table.get_mut("sird") {
            t.entry("timeout_us").or_insert(toml::Value::Float(udp_sird_defaults().timeout_us));
        }
        let cfg: UdpConfig = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let path = e.path().to_string();
            ConfigError::new(if path == "." { "" } else { &path }, e.inner().to_string())
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Reads a config file (None = defaults) and applies overrides.
    pub fn load(path: Option<&Path>, overrides: &[String]) -> Result<UdpConfig, ConfigError> {
        let text = match path {
            Some(p) => std::fs::read_to_string(p)
                .map_err(|e| ConfigError::new("", format!("cannot read {}: {e}", p.display())))?,
            None => String::new(),
        };
        Self::from_toml(&text, overrides)
    }
}

impl Validate for UdpConfig {
    fn validate(&self) -> Result<(), ConfigError> {
        check_range("link_rate_gbps", self.link_rate_gbps, 1e-3, 1e4)?;
        check_range("base_rtt_us", self.base_rtt_us, 0.01, 1e6)?;
        let min_mtu = crate::wire::IP_UDP_HEADER + crate::wire::HEADER_LEN as u32 + 1;
        if !(min_mtu..=65_507).contains(&self.mtu) {
            return Err(ConfigError::value("mtu", self.mtu, &format!("{min_mtu}..=65507 bytes")));
        }
        check_range("nic_catch_up_us", self.nic_catch_up_us, 0.0, 1e6)?;
        check_range("busy_poll_us", self.busy_poll_us, 0.0, 10_000.0)?;
        check_range("retry_timeout_ms", self.retry_timeout_ms, 0.001, 1e6)?;
        check_range("response_rate_per_s", self.response_rate_per_s, 1.0, 1e9)?;
        for (key, v, lo, hi) in [
            ("max_peers", self.max_peers as u64, 1, 65_535),
            ("max_message_bytes", self.max_message_bytes, 1, 1 << 40),
            ("max_inbound_per_peer", self.max_inbound_per_peer as u64, 1, 1 << 20),
            ("max_inbound_bytes", self.max_inbound_bytes, 1, 1 << 44),
            ("max_outbound_messages", self.max_outbound_messages as u64, 1, 1 << 24),
            ("dedup_window", self.dedup_window as u64, 1, 1 << 24),
            ("response_burst", self.response_burst as u64, 1, 1 << 20),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(ConfigError::value(key, v, &format!("an integer in {lo}..={hi}")));
            }
        }
        if self.retry_timeout_ms * 1e3 < 4.0 * self.sird.timeout_us {
            let allowed = format!(
                "at least 4 x sird.timeout_us = {} ms, so SIRD's own recovery runs first",
                4e-3 * self.sird.timeout_us
            );
            return Err(ConfigError::value("retry_timeout_ms", self.retry_timeout_ms, &allowed));
        }
        // SirdParams names its keys as in an experiment file; here they live under `sird.`.
        // Each key's bound first (the table the simulator checks), then the rules between keys.
        fabriclab::config::limits::check_table("protocol.sird", &self.sird)
            .and_then(|()| self.sird.validate())
            .map_err(|e| ConfigError::new(&e.key.replacen("protocol.sird", "sird", 1), e.message))?;
        self.faults.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_keep_udp_defaults_and_errors_name_the_key() {
        let c = UdpConfig::from_toml("", &["sird.sthr_bdp=inf".into(), "link_rate_gbps=1".into()]).unwrap();
        assert_eq!(c.sird.sthr_bdp, f64::INFINITY);
        assert_eq!(c.sird.timeout_us, udp_sird_defaults().timeout_us);
        assert_eq!(c.bdp(), 6250);
        let e = UdpConfig::from_toml("", &["mtu=50".into()]).unwrap_err();
        assert!(e.to_string().contains("`mtu`") && e.to_string().contains("50"), "{e}");
        let e = UdpConfig::from_toml("bogus = 1", &[]).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = UdpConfig::from_toml("", &["sird.g=7".into()]).unwrap_err();
        assert!(e.to_string().contains("`sird.g`"), "{e}");
        let e = UdpConfig::from_toml("", &["retry_timeout_ms=1".into()]).unwrap_err();
        assert!(e.to_string().contains("`retry_timeout_ms`"), "{e}");
        let e = UdpConfig::from_toml("", &["response_rate_per_s=0".into()]).unwrap_err();
        assert!(e.to_string().contains("`response_rate_per_s`") && e.to_string().contains('0'), "{e}");
        let e = UdpConfig::from_toml("", &["response_burst=0".into()]).unwrap_err();
        assert!(e.to_string().contains("`response_burst`") && e.to_string().contains("1..="), "{e}");
        let e = UdpConfig::from_toml("", &["busy_poll_us=-1".into()]).unwrap_err();
        assert!(e.to_string().contains("`busy_poll_us`") && e.to_string().contains("-1"), "{e}");
        let e = UdpConfig::from_toml("", &["busy_poll_us=1e5".into()]).unwrap_err();
        assert!(e.to_string().contains("`busy_poll_us`") && e.to_string().contains("10000"), "{e}");
        let e = UdpConfig::from_toml("", &["gso=2".into()]).unwrap_err();
        assert!(e.to_string().contains("gso"), "{e}");
        let e = UdpConfig::from_toml("gro = \"no\"", &[]).unwrap_err();
        assert!(e.to_string().contains("gro"), "{e}");
        let e = UdpConfig::from_toml("", &["faults.loss=2".into()]).unwrap_err();
        assert!(e.to_string().contains("`faults.loss`"), "{e}");
    }
}
