//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015, §3.1), in the form of
//! Mellanox's NICs as the HPCC ns-3 simulator models it (rdma-hw.cc, read
//! for behaviour): alpha and rate-decrease timers start at the first CNP;
//! a CNP sets flags that the next alpha tick (every `t_alpha`) and the next
//! rate-decrease tick (every `t_dec`) consume; a rate-increase timer (every
//! `t_inc`, reset by each decrease) runs fast recovery, then additive, then
//! hyper increase.
//!
//! Alpha ticks are applied lazily (a tick without a CNP is a pure decay), so
//! an idle or uncongested flow costs no events.

use fabriclab_engine::Time;

#[derive(Clone, Copy, Debug)]
pub struct RpParams {
    pub g: f64,
    pub t_alpha: Time,
    pub t_dec: Time,
    pub t_inc: Time,
    pub fast_recovery_times: u32,
    pub rai_bps: f64,
    pub rhai_bps: f64,
    pub min_rate_bps: f64,
    pub line_rate_bps: f64,
}

#[derive(Clone, Debug)]
pub struct ReactionPoint {
    /// Current rate Rc and target rate Rt.
    pub rate: f64,
    pub target: f64,
    pub alpha: f64,
    /// Increase events since the last decrease.
    pub stage: u32,
    /// Set at the first CNP: the origin of the alpha and decrease tick grids.
    origin: Option<Time>,
    /// Alpha ticks applied so far (tick k at origin + k t_alpha, k >= 1).
    alpha_ticks: u64,
    alpha_cnp: bool,
    decrease_cnp: bool,
    /// The rate-increase timer's next expiry (its generation invalidates stale timers).
    pub inc_due: Option<Time>,
}

impl ReactionPoint {
    pub fn new(line_rate_bps: f64) -> Self {
        ReactionPoint {
            rate: line_rate_bps,
            target: line_rate_bps,
            alpha: 1.0,
            stage: 0,
            origin: None,
            alpha_ticks: 0,
            alpha_cnp: false,
            decrease_cnp: false,
            inc_due: None,
        }
    }

    /// Applies the alpha ticks due by `now`.
    fn catch_up_alpha(&mut self, p: &RpParams, now: Time) {
        let Some(origin) = self.origin else {
            return;
        };
        let due = now.saturating_sub(origin) / p.t_alpha;
        if due <= self.alpha_ticks {
            return;
        }
        let mut k = due - self.alpha_ticks;
        if std::mem::take(&mut self.alpha_cnp) {
            self.alpha = (1.0 - p.g) * self.alpha + p.g;
            k -= 1;
        }
        self.alpha *= (1.0 - p.g).powi(k.min(i32::MAX as u64) as i32);
        self.alpha_ticks = due;
    }

    /// A CNP arrived. Returns when the next rate-decrease tick is due (the
    /// caller runs [`Self::decrease_tick`] then), if one must be scheduled.
    pub fn on_cnp(&mut self, p: &RpParams, now: Time) -> Option<Time> {
        self.catch_up_alpha(p, now);
        let origin = match self.origin {
            Some(o) => o,
            None => {
                // First CNP: alpha = 1, timers start (the rate stays: RateOnFirstCnp = 1).
                self.origin = Some(now);
                self.alpha = 1.0;
                self.target = self.rate;
                return self.first_decrease(p, now);
            }
        };
        self.alpha_cnp = true;
        if std::mem::replace(&mut self.decrease_cnp, true) {
            return None; // a tick is already pending
        }
        // The decrease grid sits 1 ns after the alpha grid (HPCC ns-3), so a
        // decrease sees the alpha update of the same instant.
        let k = (now.saturating_sub(origin + 1_000)) / p.t_dec + 1;
        Some(origin + 1_000 + k * p.t_dec)
    }

    fn first_decrease(&mut self, p: &RpParams, now: Time) -> Option<Time> {
        self.decrease_cnp = true;
        Some(now + 1_000 + p.t_dec)
    }

    /// A rate-decrease tick with a CNP since the last one: cut the rate.
    /// Returns the new rate-increase timer expiry.
    pub fn decrease_tick(&mut self, p: &RpParams, now: Time) -> Time {
        self.catch_up_alpha(p, now);
        self.decrease_cnp = false;
        // CLAMP_TARGET_RATE = 0: the target follows the rate unless the last
        // decrease came before any increase.
        if self.stage != 0 {
            self.target = self.rate;
        }
        self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(p.min_rate_bps);
        self.stage = 0;
        let due = now + p.t_inc;
        self.inc_due = Some(due);
        due
    }

    /// The rate-increase timer fired: fast recovery, additive, then hyper
    /// increase. Returns its next expiry.
    pub fn increase_tick(&mut self, p: &RpParams, now: Time) -> Time {
        if self.stage > p.fast_recovery_times {
            self.target = (self.target + p.rhai_bps).min(p.line_rate_bps);
        } else if self.stage == p.fast_recovery_times {
            self.target = (self.target + p.rai_bps).min(p.line_rate_bps);
        }
        self.rate = (self.rate + self.target) / 2.0;
        self.stage += 1;
        let due = now + p.t_inc;
        self.inc_due = Some(due);
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000_000;
    fn params() -> RpParams {
        RpParams {
            g: 1.0 / 256.0,
            t_alpha: US,
            t_dec: 4 * US,
            t_inc: 300 * US,
            fast_recovery_times: 1,
            rai_bps: 2e6,
            rhai_bps: 20e6,
            min_rate_bps: 1e9,
            line_rate_bps: 10e9,
        }
    }

    #[test]
    fn first_cnp_cuts_by_half_at_the_first_decrease_tick() {
        let p = params();
        let mut rp = ReactionPoint::new(10e9);
        let due = rp.on_cnp(&p, 0).unwrap();
        assert_eq!(due, 4 * US + 1_000);
        let inc = rp.decrease_tick(&p, due);
        // alpha = 1 decayed over 4 CNP-free ticks, then rate *= 1 - alpha/2.
        let alpha = (1.0 - p.g).powi(4);
        assert!((rp.alpha - alpha).abs() < 1e-12);
        assert!((rp.rate - 10e9 * (1.0 - alpha / 2.0)).abs() < 1.0);
        assert_eq!(rp.target, 10e9);
        assert_eq!(inc, due + 300 * US);
    }

    #[test]
    fn increase_stages_recover_then_add() {
        let p = params();
        let mut rp = ReactionPoint::new(10e9);
        let due = rp.on_cnp(&p, 0).unwrap();
        let t = rp.decrease_tick(&p, due);
        let cut = rp.rate;
        // Stage 0: fast recovery halfway to the target.
        rp.increase_tick(&p, t);
        assert!((rp.rate - (cut + 10e9) / 2.0).abs() < 1.0);
        assert_eq!(rp.target, 10e9);
        // Further ticks: target capped at line rate, rate converges to it.
        for _ in 0..40 {
            rp.increase_tick(&p, t);
        }
        assert!((rp.rate - 10e9).abs() < 1e3);
    }

    #[test]
    fn rate_never_drops_below_min_rate() {
        let p = params();
        let mut rp = ReactionPoint::new(10e9);
        let mut now = 0;
        for _ in 0..200 {
            if let Some(d) = rp.on_cnp(&p, now) {
                rp.decrease_tick(&p, d);
                now = d;
            }
            now += US;
        }
        assert_eq!(rp.rate, 1e9);
    }
}
