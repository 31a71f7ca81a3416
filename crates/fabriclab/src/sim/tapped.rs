//! A run with every host's transport tapped ([`crate::transport::tap`]): the
//! run's output and every packet arrival at every host, for measures that need
//! packet-level timing (Bolt's link reclaim, PayDebt's fairness bins).

use super::{run_custom, RunOutput};
use crate::config::Config;
use crate::transport::params::{ProtocolParams, ProtocolVisitor};
use crate::transport::tap::{Arrival, ArrivalLog, Tap};
use fabriclab_engine::error::ConfigError;

/// Runs `cfg` (validated) with every host of its protocol tapped: the run and
/// every packet arrival at every host, in time order.
pub fn run_tapped(cfg: &Config) -> Result<(RunOutput, Vec<Arrival>), ConfigError> {
    struct Tapped<'a>(&'a Config, ArrivalLog);
    impl ProtocolVisitor for Tapped<'_> {
        type Output = Result<RunOutput, ConfigError>;
        fn visit<P: ProtocolParams>(self, p: &P) -> Self::Output {
            let log = self.1;
            run_custom(self.0, |i| Tap::new(p.host(i), i.id, Some(log.clone())))
        }
    }
    let log = ArrivalLog::default();
    let out = cfg.protocol.visit(Tapped(cfg, log.clone()))?;
    let arrivals = log.borrow().clone();
    Ok((out, arrivals))
}
