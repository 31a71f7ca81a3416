//! A cache hint for the event loop: at 1,024 hosts most of a packet event's
//! time is spent waiting for the packet's slab slot and its port to come from
//! memory; asking for them one event ahead overlaps that wait with the work of
//! the current event.

/// Asks the CPU to bring the cache line holding `slice[i]` into L1 (a no-op
/// if `i` is out of bounds, or on targets without a prefetch instruction).
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = slice.get(i) {
        // SAFETY: a prefetch is only a hint: it never faults and changes no
        // memory, and the pointer comes from a live reference.
        unsafe { std::arch::x86_64::_mm_prefetch(x as *const T as *const i8, std::arch::x86_64::_MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

/// Like [`prefetch`], for every cache line that `slice[i]` spans.
#[inline(always)]
pub fn prefetch_bytes<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = slice.get(i) {
        let p = x as *const T as *const i8;
        let size = std::mem::size_of::<T>();
        let mut off = 0;
        while off < size + (p as usize % 64) {
            // SAFETY: as in `prefetch`; every line asked for holds part of `x`.
            unsafe { std::arch::x86_64::_mm_prefetch(p.wrapping_add(off), std::arch::x86_64::_MM_HINT_T0) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}
