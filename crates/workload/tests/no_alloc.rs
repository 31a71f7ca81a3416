//! `Workload::next` must not allocate: it runs once per message in simulations
//! with millions of messages. Counted with a wrapping global allocator (this
//! file holds a single test so that no other test allocates concurrently).

use fabriclab_engine::MS;
use fabriclab_workload::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn next_does_not_allocate() {
    let env = WorkloadEnv {
        n_hosts: 144,
        host_rate_bps: 100_000_000_000,
        rack_of: (0..144).map(|h| h / 16).collect(),
        core_ratio: 1.0,
        racks_per_pod: 1,
        mss: 1460,
        seed: 1,
        end: 10 * MS,
    };
    let cfg = WorkloadConfig::Poisson(Poisson {
        size_dist: Some(BuiltinDist::Wka),
        incast: Some(IncastOverlay::default()),
        ..Poisson::default()
    });
    let mut w = Workload::build(&cfg, &env).unwrap();
    let before = allocs();
    let mut n = 0u64;
    let mut incast = 0u64;
    while let Some(m) = w.next() {
        n += 1;
        incast += m.incast as u64;
    }
    let after = allocs();
    assert!(n > 100_000 && incast > 0, "{n} messages, {incast} incast");
    assert_eq!(after - before, 0, "allocations while drawing {n} messages");
}
