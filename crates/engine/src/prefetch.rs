//! A cache hint for the event loop: at 1,024 hosts most of a packet event's
//! time is spent waiting for the packet's slab slot and its port to come from
//! memory; asking for them one event ahead overlaps that wait with the work of
//! the current event.

/// Asks the CPU to bring the cache line holding `slice[i]` into L1. Any `i`
/// is allowed: the address is only computed, never dereferenced, and a
/// prefetch of an address outside the slice (or of no mapped memory at all)
/// does nothing, so callers may guess without a bounds check or a branch.
/// A no-op on targets without a prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults and changes no
    // memory; the pointer is formed with wrapping arithmetic and not read.
    unsafe {
        std::arch::x86_64::_mm_prefetch(slice.as_ptr().wrapping_add(i) as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

/// Asks for every cache line of the `size` bytes at `p` (which, as in
/// [`prefetch`], need not point at anything).
#[inline(always)]
pub fn prefetch_span(p: *const u8, size: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        // A fixed count (the lines of `size` bytes, plus one for a start
        // within a line), so that a constant `size` unrolls to straight code.
        for k in 0..=size.div_ceil(64) {
            // SAFETY: as in `prefetch`: a hint, never a read.
            unsafe {
                std::arch::x86_64::_mm_prefetch(p.wrapping_add(64 * k) as *const i8, std::arch::x86_64::_MM_HINT_T0)
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, size);
}
