//! Compiling and dropping a module 10,000 times does not leak, measured in
//! a process of its own (`harness = false`: no other test runs beside it,
//! so no other test's allocations can mask a leak or fake one).
//!
//! Three measures, each compared between the end of a warm-up and the end
//! of the run: live heap bytes (an instrumented global allocator), the
//! process's virtual size (compiled code lives in anonymous mappings, which
//! the heap count does not see) and its resident size. Before the real run
//! the test checks that it can fail: a short run that forgets its modules
//! instead of dropping them must be caught by the heap and mapping measures.

mod common;

use adjit_ir::Buffer;
use common::{compile, sweep_module};
use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::time::Instant;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Allowed growth per cycle after warm-up, in bytes of live heap and of
/// virtual size (a leaked module costs kilobytes of each).
const HEAP_PER_CYCLE: f64 = 64.0;
const MAPPED_PER_CYCLE: f64 = 64.0;
/// Allowed growth of the resident size over the whole run.
const RESIDENT_TOTAL: u64 = 16 << 20;

/// Live heap bytes (reallocations count in both totals already).
fn live_heap() -> i64 {
    let s = GLOBAL.stats();
    s.bytes_allocated as i64 - s.bytes_deallocated as i64
}

/// A field of /proc/self/status in bytes (`VmSize`, `VmRSS`).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
        * 1024
}

/// Memory at one moment.
#[derive(Clone, Copy)]
struct Sample {
    heap: i64,
    mapped: u64,
    resident: u64,
}

fn sample() -> Sample {
    Sample {
        heap: live_heap(),
        mapped: status_bytes("VmSize"),
        resident: status_bytes("VmRSS"),
    }
}

/// Growth between two samples.
struct Growth {
    heap_per_cycle: f64,
    mapped_per_cycle: f64,
    resident: u64,
}

/// Runs `cycles` compile cycles (dropping each module, or forgetting it
/// when `leak`); measures from the end of the first twentieth.
fn cycles(cycles: u32, leak: bool) -> Growth {
    let (m, fwd, _) = sweep_module();
    let warm_up = cycles / 20;
    let mut start = sample();
    for k in 0..cycles {
        let c = compile(&m);
        if k % 1000 == 0 {
            let mut args = vec![Buffer::I64(vec![2]), Buffer::F32(vec![1.0, 2.0])];
            c.call(fwd, &mut args).unwrap();
        }
        if leak {
            std::mem::forget(c);
        } else {
            drop(c);
        }
        if k + 1 == warm_up {
            start = sample();
        }
    }
    let end = sample();
    let measured = f64::from(cycles - warm_up);
    Growth {
        heap_per_cycle: (end.heap - start.heap) as f64 / measured,
        mapped_per_cycle: end.mapped.saturating_sub(start.mapped) as f64 / measured,
        resident: end.resident.saturating_sub(start.resident),
    }
}

fn main() {
    // The measures can fail: forgotten modules are seen.
    let leaky = cycles(200, true);
    assert!(
        leaky.heap_per_cycle > HEAP_PER_CYCLE && leaky.mapped_per_cycle > MAPPED_PER_CYCLE,
        "the leak test cannot see forgotten modules: {:.0} heap and {:.0} mapped bytes per cycle",
        leaky.heap_per_cycle,
        leaky.mapped_per_cycle
    );

    // 10,000 cycles with optimized Cranelift (release); debug builds of
    // Cranelift compile ~50x slower, so they run fewer unless asked
    // (ADJIT_COMPILE_CYCLES=10000).
    let default_cycles = if cfg!(debug_assertions) { 600 } else { 10_000 };
    let n: u32 = std::env::var("ADJIT_COMPILE_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_cycles);
    let t = Instant::now();
    let g = cycles(n, false);
    println!(
        "leak: {n} compile+drop cycles, {:?} each: {:.1} heap bytes and {:.1} mapped bytes per cycle, \
         resident growth {} KiB (a forgotten module: {:.0} heap, {:.0} mapped bytes)",
        t.elapsed() / n,
        g.heap_per_cycle,
        g.mapped_per_cycle,
        g.resident >> 10,
        leaky.heap_per_cycle,
        leaky.mapped_per_cycle
    );
    assert!(
        g.heap_per_cycle <= HEAP_PER_CYCLE,
        "live heap grew by {:.1} bytes per cycle",
        g.heap_per_cycle
    );
    assert!(
        g.mapped_per_cycle <= MAPPED_PER_CYCLE,
        "virtual size grew by {:.1} bytes per cycle",
        g.mapped_per_cycle
    );
    assert!(
        g.resident <= RESIDENT_TOTAL,
        "resident memory grew by {} bytes",
        g.resident
    );
    // The closing line of a test run, for runners that read it.
    println!("test result: ok. 1 passed; 0 failed");
}
