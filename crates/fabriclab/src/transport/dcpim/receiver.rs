//! The receiver's side of dcPIM: learning of messages, taking part in each
//! epoch's matching (requests out, grants in, accepts out), and the data
//! phase's paced tokens.

use super::{Cx, Dcpim, DcpimHeader, MsgId, T_PACER, T_PROMOTE, T_TICK};
use crate::net::wire::{packets_for, payload_of};
use crate::transport::toolkit::Reassembly;
use fabriclab_engine::Time;

/// Receiver-side state of an inbound message.
pub(super) struct InMsg {
    pub(super) src: u32,
    pub(super) reasm: Reassembly,
    pub(super) n_pkts: u32,
    pub(super) received: u32,
    /// First packet index not yet received.
    pub(super) until: u32,
    /// Long, or short with packets missing after its burst: matched and tokened.
    pub(super) scheduled: bool,
    /// Tokens issued (the next token's sequence number), and one past the largest sequence echoed.
    pub(super) token_count: u32,
    pub(super) seen: u32,
    pub(super) last_index: Option<u32>,
    pub(super) last_token_at: Time,
    /// Redundancy control: no tokens or requests for this message before then.
    pub(super) quiet_until: Time,
}

impl InMsg {
    pub(super) fn remaining(&self) -> u32 {
        self.n_pkts - self.received
    }
    /// Next packet to ask for after `after`, cycling over the missing ones.
    pub(super) fn missing_after(&self, after: Option<u32>) -> u32 {
        let from = after.map_or(0, |i| i as u64 + 1);
        let first = self.reasm.first_missing(from).or_else(|| self.reasm.first_missing(self.until as u64));
        first.expect("incomplete message has a missing packet") as u32
    }
}

/// A matched sender during a data phase, or a prompt pair during a matching.
pub(super) struct Link {
    pub(super) src: u32,
    pub(super) channels: u32,
    /// Started on idle channels during the matching phase; ends with it.
    pub(super) prompt: bool,
    /// No tokens from then on; they expire a little later.
    pub(super) end: Time,
    pub(super) interval: Time,
    pub(super) next_at: Time,
    pub(super) last_at: Option<Time>,
    /// No token slot is scheduled: nothing to token until kicked.
    pub(super) idle: bool,
    /// `next_at` waits for the token window's timeout; arriving data may reopen it sooner.
    pub(super) blocked: bool,
}

pub(super) struct Grant {
    pub(super) src: u32,
    pub(super) remaining: u32,
    pub(super) channels: u32,
    pub(super) prompt: u32,
    pub(super) msg: MsgId,
}

/// A receiver's matching in progress.
pub(super) struct Matching {
    pub(super) epoch: u64,
    pub(super) start: Time,
    /// The round whose requests are out and whose grants are awaited.
    pub(super) round: u32,
    pub(super) accepted: u32,
    /// Channels idle in the current data phase not yet used by prompt pairs.
    pub(super) prompt_avail: u32,
    pub(super) matched: Vec<(u32, u32)>,
    pub(super) grants: Vec<Grant>,
}

impl Dcpim {
    /// Creates the entry for an inbound message; false if it already completed.
    pub(super) fn inbound_entry(&mut self, cx: &mut Cx, msg: MsgId, src: u32, size: u64) -> bool {
        if self.completed.contains(&msg) {
            return false;
        }
        if self.inbound.contains_key(&msg) {
            return true;
        }
        let n = packets_for(size, self.info.mss) as u32;
        let short = size <= self.short_max;
        // A short message's packets all had "initial tokens": it is left alone
        // for its burst plus a resend timeout (pimflow.cpp receive_short_flow).
        let quiet = if short { cx.now + n as Time * self.t.packet + self.resend_timeout } else { 0 };
        self.inbound.insert(
            msg,
            InMsg {
                src,
                reasm: Reassembly::new(size, self.info.mss),
                n_pkts: n,
                received: 0,
                until: 0,
                scheduled: !short,
                token_count: if short { n } else { 0 },
                seen: 0,
                last_index: if short { Some(n - 1) } else { None },
                last_token_at: cx.now,
                quiet_until: quiet,
            },
        );
        let list = self.by_src.entry(src).or_default();
        if list.is_empty() {
            self.srcs.push(src);
        }
        list.push(msg);
        if short {
            cx.set_timer(quiet, T_PROMOTE | msg);
            if self.token_hold {
                self.hold = n;
            }
        } else {
            self.work += 1;
            self.join_epochs(cx);
            self.kick(cx, src);
        }
        true
    }

    pub(super) fn on_data(&mut self, cx: &mut Cx, src: u32, msg: MsgId, size: u64, index: u32, seq: u32) {
        if !self.inbound_entry(cx, msg, src, size) {
            return;
        }
        let payload = payload_of(size, self.info.mss, index as u64);
        let m = self.inbound.get_mut(&msg).expect("entry");
        if !m.reasm.insert(index as u64, payload) {
            return;
        }
        m.received += 1;
        m.seen = m.seen.max(seq + 1);
        while m.until < m.n_pkts && m.reasm.has(m.until as u64) {
            m.until += 1;
        }
        cx.deliver(msg, payload);
        if m.reasm.is_complete() {
            let scheduled = m.scheduled;
            self.inbound.remove(&msg);
            let list = self.by_src.get_mut(&src).expect("listed");
            list.retain(|&id| id != msg);
            if list.is_empty() {
                self.by_src.remove(&src);
                self.srcs.retain(|&s| s != src);
            }
            self.work -= scheduled as u32;
            self.completed.insert(msg);
            cx.complete(msg);
            self.send_control(src, msg, DcpimHeader::Ack { msg });
        } else if (m.token_count - m.seen) as f64 <= self.window_pkts {
            // The window may have reopened (pimflow.cpp receive).
            self.kick(cx, src);
        }
    }

    /// A short message still incomplete after its burst is matched like a long one.
    pub(super) fn on_promote(&mut self, cx: &mut Cx, msg: MsgId) {
        let Some(m) = self.inbound.get_mut(&msg) else {
            return;
        };
        if m.scheduled {
            return;
        }
        m.scheduled = true;
        let src = m.src;
        self.work += 1;
        self.join_epochs(cx);
        self.kick(cx, src);
    }

    /// Joins the next epoch boundary if this host is not already taking part.
    pub(super) fn join_epochs(&mut self, cx: &mut Cx) {
        if self.next_tick == Time::MAX {
            let at = cx.now.div_ceil(self.t.epoch) * self.t.epoch;
            self.next_tick = at;
            cx.set_timer(at, T_TICK);
        }
    }

    /// Round boundaries: accept the round's grants, send the next requests,
    /// end the matching (start its data phase), and start epochs.
    pub(super) fn on_tick(&mut self, cx: &mut Cx) {
        if cx.now != self.next_tick {
            return;
        }
        let now = cx.now;
        let t = self.t;
        if let Some(m) = &self.matching {
            if now == m.start + m.round as Time * t.round {
                self.accept_grants(cx);
                let m = self.matching.as_mut().expect("matching");
                if m.round == self.rounds {
                    self.end_matching(cx);
                } else {
                    m.round += 1;
                    self.send_requests(cx);
                }
            }
        }
        if self.matching.is_none() && now.is_multiple_of(t.epoch) && self.work > 0 {
            let epoch = now / t.epoch;
            let busy: u32 = self.links.iter().filter(|l| l.end > now).map(|l| l.channels).sum();
            let prompt_avail = if self.prompt { self.k.saturating_sub(busy) } else { 0 };
            let (matched, grants) = (Vec::new(), Vec::new());
            self.matching = Some(Matching { epoch, start: now, round: 1, accepted: 0, prompt_avail, matched, grants });
            self.send_requests(cx);
        }
        let next = match &self.matching {
            Some(m) => m.start + m.round as Time * t.round,
            None if self.work > 0 => (now / t.epoch + 1) * t.epoch,
            None => Time::MAX,
        };
        self.next_tick = next;
        if next != Time::MAX {
            cx.set_timer(next, T_TICK);
        }
    }

    /// Channels to `src` already set: this data phase's link and this matching's.
    pub(super) fn channels_to(&self, now: Time, src: u32) -> u32 {
        let live: u32 =
            self.links.iter().filter(|l| l.src == src && !l.prompt && l.end > now).map(|l| l.channels).sum();
        let m = self.matching.as_ref().expect("matching");
        live + m.matched.iter().find(|&&(s, _)| s == src).map_or(0, |&(_, c)| c)
    }

    /// One request per sender, for its message with the fewest packets left
    /// (pimhost.cpp send_all_req), asking for as many channels as that message
    /// needs to finish in one data phase, beyond those it already has.
    pub(super) fn send_requests(&mut self, cx: &mut Cx) {
        let m = self.matching.as_ref().expect("matching");
        let avail = self.k - m.accepted;
        if avail == 0 {
            return;
        }
        let (epoch, round) = (m.epoch as u32, m.round as u8);
        for si in 0..self.srcs.len() {
            let src = self.srcs[si];
            let Some((remaining, msg)) = self.best_from(cx.now, src) else {
                continue;
            };
            let have = self.channels_to(cx.now, src);
            if have * self.link_pkts >= remaining {
                continue;
            }
            let need = (remaining.div_ceil(self.link_pkts) - have).min(avail);
            let prompt = need.min(self.matching.as_ref().expect("matching").prompt_avail) as u8;
            self.stats.requests += 1;
            let channels = need as u8;
            self.send_control(src, msg, DcpimHeader::Request { msg, epoch, round, channels, prompt, remaining });
        }
    }

    /// The scheduled message from `src` with the fewest packets left, not resting.
    pub(super) fn best_from(&self, now: Time, src: u32) -> Option<(u32, MsgId)> {
        let list = self.by_src.get(&src)?;
        list.iter()
            .filter_map(|id| {
                let m = &self.inbound[id];
                (m.scheduled && m.quiet_until <= now).then(|| (m.remaining(), *id))
            })
            .min()
    }

    pub(super) fn on_grant(&mut self, src: u32, msg: MsgId, epoch: u32, round: u8, c: (u8, u8), remaining: u32) {
        if let Some(m) = self.matching.as_mut().filter(|m| m.epoch as u32 == epoch && m.round == round as u32) {
            m.grants.push(Grant { src, remaining, channels: c.0 as u32, prompt: c.1 as u32, msg });
        }
    }

    pub(super) fn accept_grants(&mut self, cx: &mut Cx) {
        let m = self.matching.as_mut().expect("matching");
        let mut grants = std::mem::take(&mut m.grants);
        let (round, epoch) = (m.round, m.epoch as u32);
        self.order(cx, round, &mut grants, |g| (g.remaining, g.msg));
        let m = self.matching.as_mut().expect("matching");
        let mut out = Vec::new();
        for g in grants.drain(..) {
            let avail = self.k - m.accepted;
            if avail == 0 {
                break;
            }
            let c = g.channels.min(avail);
            let p = g.prompt.min(c).min(m.prompt_avail);
            m.accepted += c;
            m.prompt_avail -= p;
            match m.matched.iter_mut().find(|(s, _)| *s == g.src) {
                Some(e) => e.1 += c,
                None => m.matched.push((g.src, c)),
            }
            out.push((g.src, g.msg, c, p));
        }
        debug_assert!(m.accepted <= self.k);
        m.grants = grants;
        let end = m.start + self.t.matching;
        for (src, msg, c, p) in out {
            self.stats.accepts += 1;
            self.send_control(src, msg, DcpimHeader::Accept { msg, epoch, channels: c as u8, prompt: p as u8 });
            if p > 0 {
                // Prompt pair: tokens on the idle channels until the matching ends
                // (pimhost.cpp handle_all_grants).
                match self.links.iter().position(|l| l.src == src && l.prompt) {
                    Some(i) => self.set_channels(i, self.links[i].channels + p),
                    None => self.links.push(self.new_link(cx.now, src, p, true, end)),
                }
                self.count_live_channels(cx.now);
            }
        }
        self.arm_pacer(cx);
    }

    /// The matching's pairs replace the previous data phase's.
    pub(super) fn end_matching(&mut self, cx: &mut Cx) {
        let m = self.matching.take().expect("matching");
        let now = cx.now;
        if !m.matched.is_empty() {
            self.stats.matchings += 1;
            self.stats.max_rx_channels = self.stats.max_rx_channels.max(m.accepted);
            self.stats.max_rx_senders = self.stats.max_rx_senders.max(m.matched.len() as u32);
        }
        // Prompt pairs end here too (pimhost.cpp schedule_receiver_iter_evt).
        self.links.clear();
        let end = now + self.t.epoch;
        for &(src, channels) in &m.matched {
            self.links.push(self.new_link(now, src, channels, false, end));
        }
        self.links_epoch = m.epoch;
        self.count_live_channels(now);
        self.arm_pacer(cx);
    }

    pub(super) fn new_link(&self, now: Time, src: u32, channels: u32, prompt: bool, end: Time) -> Link {
        let interval = self.token_interval(channels);
        Link { src, channels, prompt, end, interval, next_at: now, last_at: None, idle: false, blocked: false }
    }

    /// Tokens for c of k channels: one per k/c full-packet times.
    fn token_interval(&self, channels: u32) -> Time {
        (self.k as Time * self.t.packet).div_ceil(channels as Time)
    }

    fn set_channels(&mut self, i: usize, channels: u32) {
        if channels == 0 {
            self.links.remove(i);
        } else {
            self.links[i].channels = channels;
            self.links[i].interval = self.token_interval(channels);
        }
    }

    pub(super) fn on_revoke(&mut self, cx: &mut Cx, src: u32, epoch: u32, channels: u8, prompt: u8) {
        let (c, p) = (channels as u32, prompt as u32);
        if let Some(m) = self.matching.as_mut().filter(|m| m.epoch as u32 == epoch) {
            if let Some(i) = m.matched.iter().position(|&(s, _)| s == src) {
                let cut = m.matched[i].1.min(c);
                m.matched[i].1 -= cut;
                m.accepted -= cut;
                if m.matched[i].1 == 0 {
                    m.matched.remove(i);
                }
            }
            if let Some(i) = self.links.iter().position(|l| l.src == src && l.prompt) {
                self.set_channels(i, self.links[i].channels.saturating_sub(p));
            }
        } else if self.links_epoch as u32 == epoch {
            if let Some(i) = self.links.iter().position(|l| l.src == src && !l.prompt && l.end > cx.now) {
                self.set_channels(i, self.links[i].channels.saturating_sub(c));
            }
        }
    }

    /// Wakes the links to `src` that sleep or wait for a window's timeout.
    pub(super) fn kick(&mut self, cx: &mut Cx, src: u32) {
        let now = cx.now;
        let mut woke = false;
        for l in self.links.iter_mut().filter(|l| l.src == src && (l.idle || l.blocked)) {
            l.idle = false;
            l.blocked = false;
            l.next_at = l.last_at.map_or(now, |t| (t + l.interval).max(now));
            woke = true;
        }
        if woke {
            self.arm_pacer(cx);
        }
    }

    fn count_live_channels(&mut self, now: Time) {
        let live: u32 = self.links.iter().filter(|l| l.end > now).map(|l| l.channels).sum();
        self.stats.max_live_channels = self.stats.max_live_channels.max(live);
        debug_assert!(live <= self.k, "{live} channels in use");
    }

    pub(super) fn arm_pacer(&mut self, cx: &mut Cx) {
        let live = self.links.iter().filter(|l| !l.idle && l.next_at < l.end);
        let next = live.map(|l| l.next_at).min().unwrap_or(Time::MAX);
        if next < self.pacer_at {
            self.pacer_at = next.max(cx.now);
            cx.set_timer(self.pacer_at, T_PACER);
        }
    }

    pub(super) fn on_pacer(&mut self, cx: &mut Cx) {
        if cx.now >= self.pacer_at {
            self.pacer_at = Time::MAX;
        }
        for i in 0..self.links.len() {
            if !self.links[i].idle && self.links[i].next_at <= cx.now {
                self.token_slot(cx, i);
            }
        }
        self.arm_pacer(cx);
    }

    /// One token slot of link `li` (pimhost.cpp PIM_Vlink::send_token).
    pub(super) fn token_slot(&mut self, cx: &mut Cx, li: usize) {
        let now = cx.now;
        if now >= self.links[li].end {
            self.links[li].idle = true;
            return;
        }
        self.links[li].blocked = false;
        let (src, channels, interval) = (self.links[li].src, self.links[li].channels, self.links[li].interval);
        if self.token_hold && self.hold > 0 {
            // Leave this slot of the downlink to a short message's burst.
            self.hold -= 1;
            self.links[li].next_at = now + interval;
            return;
        }
        let Some((_, id)) = self.best_from(now, src) else {
            // Wait for a resting message, or sleep until kicked.
            let wake = self.by_src.get(&src).and_then(|l| {
                l.iter().map(|id| &self.inbound[id]).filter(|m| m.scheduled).map(|m| m.quiet_until).min()
            });
            let l = &mut self.links[li];
            match wake {
                Some(t) => l.next_at = t.max(now + 1),
                None => l.idle = true,
            }
            return;
        };
        let window = self.window_pkts * channels as f64 / self.k as f64;
        let (window_timeout, resend_timeout) = (self.window_timeout, self.resend_timeout);
        let m = self.inbound.get_mut(&id).expect("listed");
        if (m.token_count - m.seen) as f64 > window {
            if now < m.last_token_at + window_timeout {
                self.links[li].next_at = m.last_token_at + window_timeout;
                self.links[li].blocked = true;
                return;
            }
            // The window's tokens or data are presumed lost.
            m.seen = m.token_count - (window as u32).min(m.token_count);
        }
        let index = m.missing_after(m.last_index);
        let seq = m.token_count;
        m.token_count += 1;
        m.last_index = Some(index);
        m.last_token_at = now;
        if m.missing_after(Some(index)) <= index {
            // Every missing packet has a token out: rest before asking again.
            m.quiet_until = now + resend_timeout;
        }
        let expires = self.links[li].end + self.expiry_margin;
        self.stats.tokens += 1;
        self.send_control(src, id, DcpimHeader::Token { msg: id, index, seq, expires });
        let l = &mut self.links[li];
        l.last_at = Some(now);
        l.next_at = now + interval;
        l.blocked = false;
    }
}
