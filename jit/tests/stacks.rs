//! Runtime stacks across calls (a forward and a reverse sweep sharing a
//! tape), underflow errors and spilling past the RAM budget. (Memory
//! behaviour of repeated compilation is `tests/leak.rs`, a process of its
//! own.)

mod common;

use adjit_ir::Buffer;
use adjit_ir::{RuntimeErrorKind, StackKind};
use adjit_jit::runtime::Runtime;
use adjit_jit::stack::StackConfig;
use common::*;

fn run_sweeps(rt: &mut Runtime, n: i64) {
    let (m, fwd, rev) = sweep_module();
    let c = compile(&m);
    let x: Vec<f32> = (0..n)
        .map(|i| (i as f32).sqrt() * 0.1 + 1.0 / 3.0)
        .collect();
    let mut args = vec![Buffer::I64(vec![n]), Buffer::F32(x.clone())];
    c.call_with(fwd, &mut args, rt).unwrap();
    assert_eq!(rt.depth(StackKind::Value), n as u64);
    assert_eq!(rt.depth(StackKind::Control), n as u64);
    let mut args = vec![
        Buffer::I64(vec![n]),
        Buffer::F32(vec![0.0; n as usize]),
        Buffer::I32(vec![0; n as usize]),
    ];
    c.call_with(rev, &mut args, rt).unwrap();
    assert_eq!(args[1], Buffer::F32(x), "values come back exactly");
    assert_eq!(args[2], Buffer::I32((1..=n as i32).collect()));
    assert_eq!(rt.depth(StackKind::Value), 0);
    assert_eq!(rt.depth(StackKind::Integer), 0);
}

#[test]
fn forward_and_reverse_sweeps_share_a_tape() {
    let mut rt = Runtime::new();
    run_sweeps(&mut rt, 1000);
    let stats = rt.stats();
    assert_eq!(stats.value.pushed, 1000);
    assert_eq!(stats.integer.pushed, 1000);
    assert_eq!(stats.control.peak, 1000);
    assert_eq!(stats.value.spilled_bytes, 0);
    // A second pair of sweeps on the same runtime reuses the segments.
    run_sweeps(&mut rt, 1000);
    assert_eq!(rt.stats().value.pushed, 2000);
}

#[test]
fn a_tape_larger_than_the_ram_budget_spills_to_a_file() {
    let config = StackConfig {
        ram_budget: 64 << 10,
        initial_segment_bytes: 4 << 10,
        max_segment_bytes: 32 << 10,
        spill_dir: None,
    };
    let mut rt = Runtime::with_config(config);
    run_sweeps(&mut rt, 50_000);
    let stats = rt.stats();
    assert!(stats.value.spilled_bytes > 0, "{stats:?}");
    assert_eq!(stats.value.peak, 50_000);
    assert!(stats.value.mapped_bytes >= 50_000 * 8);
    rt.clear();
    assert_eq!(rt.stats().value.mapped_bytes, 0);
}

#[test]
fn popping_an_empty_stack_is_an_error() {
    let (m, _, rev) = sweep_module();
    let c = compile(&m);
    let mut args = vec![
        Buffer::I64(vec![2]),
        Buffer::F32(vec![0.0; 2]),
        Buffer::I32(vec![0; 2]),
    ];
    let e = c.call(rev, &mut args).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::StackUnderflow);
    assert_eq!(e.detail, "pop from the empty Control stack");
}

#[test]
fn rust_and_generated_code_see_the_same_stacks() {
    let (m, _, rev) = sweep_module();
    let c = compile(&m);
    let mut rt = Runtime::new();
    for i in 1..=3i64 {
        rt.push_word(StackKind::Value, (i as f64 * 0.5).to_bits())
            .unwrap();
        rt.push_word(StackKind::Integer, (10 * i) as u64).unwrap();
        rt.push_word(StackKind::Control, (3 * i) as u64).unwrap();
    }
    let mut args = vec![
        Buffer::I64(vec![3]),
        Buffer::F32(vec![0.0; 3]),
        Buffer::I32(vec![0; 3]),
    ];
    c.call_with(rev, &mut args, &mut rt).unwrap();
    assert_eq!(args[1], Buffer::F32(vec![0.5, 1.0, 1.5]));
    assert_eq!(args[2], Buffer::I32(vec![10, 20, 30]));
    assert_eq!(rt.pop_word(StackKind::Value), None);
}
