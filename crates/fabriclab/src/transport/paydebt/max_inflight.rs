//! PayDebt's token congestion control (Liu et al., TPDS 2022, Algorithm 1):
//! a per-flow cap on the data that tokens in flight may release, cut when
//! the sender echoes a token ECN mark and pulled back toward one BDP when it
//! does not. Updated at most once per base RTT to avoid over-reacting.

use fabriclab_engine::Time;

#[derive(Clone, Debug)]
pub struct MaxInflight {
    /// The weight w (0 < w <= w_max): near 0, heavy token congestion.
    pub w: f64,
    /// maxInflight, in bytes of data the tokens in flight release.
    pub bytes: f64,
    last_update: Option<Time>,
    /// A token-ECN echo arrived since the last update.
    marked: bool,
}

/// Algorithm 1's constants, shared by every flow of a host.
#[derive(Clone, Copy, Debug)]
pub struct MaxInflightParams {
    pub w_min: f64,
    pub w_max: f64,
    pub bdp: f64,
    pub period: Time,
}

impl MaxInflight {
    pub fn new(w_init: f64, bdp: f64) -> Self {
        MaxInflight { w: w_init, bytes: bdp, last_update: None, marked: false }
    }

    /// A scheduled packet arrived, carrying (or not) the token-ECN echo.
    /// Marks seen between updates are remembered, so none is lost to the
    /// once-per-RTT pacing of the update (our reading of lines 6-7).
    pub fn on_scheduled(&mut self, p: &MaxInflightParams, now: Time, token_ce: bool) {
        self.marked |= token_ce;
        if self.last_update.is_some_and(|t| now < t + p.period) {
            return;
        }
        self.last_update = Some(now);
        if std::mem::take(&mut self.marked) {
            self.w = (self.w / 2.0).max(p.w_min);
            self.bytes *= self.w + 0.5;
        } else {
            self.w = (self.w + p.w_max) / 2.0;
            self.bytes = (1.0 - self.w) * self.bytes + self.w * p.bdp;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: MaxInflightParams = MaxInflightParams { w_min: 0.1, w_max: 0.5, bdp: 12_500.0, period: 10 };

    #[test]
    fn first_mark_halves_w_and_cuts_by_three_quarters() {
        let mut m = MaxInflight::new(0.5, P.bdp);
        m.on_scheduled(&P, 0, true);
        assert_eq!(m.w, 0.25);
        assert_eq!(m.bytes, 0.75 * 12_500.0);
        // Within the period nothing changes, but the mark is remembered.
        m.on_scheduled(&P, 5, true);
        assert_eq!(m.bytes, 0.75 * 12_500.0);
        m.on_scheduled(&P, 10, false);
        assert_eq!(m.w, 0.125);
        assert_eq!(m.bytes, 0.75 * 0.625 * 12_500.0);
    }

    #[test]
    fn w_floors_at_w_min_and_recovery_approaches_bdp() {
        let mut m = MaxInflight::new(0.5, P.bdp);
        for t in 0..10 {
            m.on_scheduled(&P, t * 10, true);
        }
        assert_eq!(m.w, 0.1);
        let low = m.bytes;
        assert!(low < 0.01 * P.bdp);
        for t in 10..60 {
            m.on_scheduled(&P, t * 10, false);
            assert!(m.bytes <= P.bdp);
        }
        assert!(m.w > 0.49 && m.bytes > 0.999 * P.bdp, "{m:?}");
    }
}
