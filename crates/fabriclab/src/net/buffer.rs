//! Switch buffer admission beyond the per-port limit: a pool shared by a
//! switch's ports under dynamic thresholds, and static per-queue partitions.

/// Byte accounting for the shared pools and the per-queue partitions.
pub struct Buffers {
    n_hosts: u32,
    classes: usize,
    /// Shared pool per switch: capacity, and alpha in 1/65536 units.
    pool: Option<(u64, u64)>,
    used: Vec<u64>,
    /// Largest number of bytes any switch's pool held (PayDebt's "maximum buffer occupancy").
    pub max_used: u64,
    /// Per-queue partition: limit, and bytes per (port, class).
    queue_limit: Option<u64>,
    class_bytes: Vec<u64>,
    /// Class of the packet each port is serialising (`NOT_POOLED` when it is
    /// outside the pools: a control-class packet or a PFC frame).
    serving: Vec<u8>,
}

pub const NOT_POOLED: u8 = u8::MAX;

impl Buffers {
    /// `ports_node[p]` is the node owning port p.
    pub fn new(
        n_hosts: u32,
        n_switches: usize,
        n_ports: usize,
        classes: u8,
        pool: Option<(u64, f64)>,
        queue_limit: Option<u64>,
    ) -> Self {
        let classes = classes.max(1) as usize;
        Buffers {
            n_hosts,
            classes,
            pool: pool.map(|(b, alpha)| (b, (alpha * 65536.0).round() as u64)),
            used: vec![0; n_switches],
            max_used: 0,
            queue_limit,
            class_bytes: if queue_limit.is_some() { vec![0; n_ports * classes] } else { Vec::new() },
            serving: vec![NOT_POOLED; n_ports],
        }
    }

    /// Whether switch `node`'s port `port`, holding `port_bytes`, may take
    /// `wire` more bytes in `class`. Dynamic threshold: the port must hold less
    /// than alpha x the free pool before the packet, and the pool must fit it.
    #[inline]
    pub fn admit(&self, node: u32, port: u32, class: u8, port_bytes: u64, wire: u32) -> bool {
        if let Some(limit) = self.queue_limit {
            if self.class_bytes[port as usize * self.classes + class as usize] + wire as u64 > limit {
                return false;
            }
        }
        if let Some((cap, alpha)) = self.pool {
            let used = self.used[(node - self.n_hosts) as usize];
            if used + wire as u64 > cap {
                return false;
            }
            let threshold = (((cap - used) as u128 * alpha as u128) >> 16) as u64;
            if port_bytes >= threshold {
                return false;
            }
        }
        true
    }

    #[inline]
    pub fn add(&mut self, node: u32, port: u32, class: u8, wire: u32) {
        if self.queue_limit.is_some() {
            self.class_bytes[port as usize * self.classes + class as usize] += wire as u64;
        }
        if self.pool.is_some() {
            let u = &mut self.used[(node - self.n_hosts) as usize];
            *u += wire as u64;
            self.max_used = self.max_used.max(*u);
        }
    }

    /// The port starts serialising a packet of `class` (or [`NOT_POOLED`]).
    #[inline]
    pub fn start_serving(&mut self, port: u32, class: u8) {
        self.serving[port as usize] = class;
    }

    /// The port finished serialising `wire` bytes: they leave the buffer.
    #[inline]
    pub fn release(&mut self, node: u32, port: u32, wire: u32) {
        let class = std::mem::replace(&mut self.serving[port as usize], NOT_POOLED);
        if class == NOT_POOLED {
            return;
        }
        if self.queue_limit.is_some() {
            self.class_bytes[port as usize * self.classes + class as usize] -= wire as u64;
        }
        if self.pool.is_some() {
            self.used[(node - self.n_hosts) as usize] -= wire as u64;
        }
    }

    /// Bytes held in switch `node`'s shared pool.
    pub fn pool_used(&self, node: u32) -> u64 {
        self.used.get((node - self.n_hosts) as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_threshold_limits_one_port_to_alpha_of_the_free_pool() {
        // One switch (node 1), pool 3000 B, alpha = 1: a lone port stops at
        // half the pool (it may hold q while q < B - q).
        let mut b = Buffers::new(1, 1, 4, 1, Some((3000, 1.0)), None);
        let mut q = 0;
        while b.admit(1, 0, 0, q, 100) {
            b.add(1, 0, 0, 100);
            q += 100;
        }
        assert_eq!(q, 1500);
        // A second port gets alpha x what is left: (3000 - 1500 - q2) > q2.
        let mut q2 = 0;
        while b.admit(1, 1, 0, q2, 100) {
            b.add(1, 1, 0, 100);
            q2 += 100;
        }
        assert_eq!(q2, 800);
        assert_eq!(b.pool_used(1), 2300);
        b.start_serving(0, 0);
        b.release(1, 0, 100);
        assert_eq!(b.pool_used(1), 2200);
    }

    #[test]
    fn partitions_are_per_queue() {
        let mut b = Buffers::new(1, 1, 2, 2, None, Some(250));
        assert!(b.admit(1, 0, 1, 0, 200));
        b.add(1, 0, 1, 200);
        assert!(!b.admit(1, 0, 1, 200, 100));
        assert!(b.admit(1, 0, 0, 200, 200));
        assert!(b.admit(1, 1, 1, 0, 250));
    }
}
