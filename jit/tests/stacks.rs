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

/// `Runtime::mapped_bytes` is the per-stack statistics' mapped bytes plus
/// the arena's, summed.
fn assert_mapped_bytes_add_up(rt: &Runtime) {
    let stats = rt.stats();
    let stacks = stats.value.mapped_bytes + stats.integer.mapped_bytes + stats.control.mapped_bytes;
    assert_eq!(
        rt.mapped_bytes(),
        stacks + rt.arena_bytes() as u64,
        "{stats:?}"
    );
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
    assert!(rt.mapped_bytes() >= 1000 * 8);
    assert_mapped_bytes_add_up(&rt);
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
    assert_mapped_bytes_add_up(&rt);
    rt.clear();
    assert_eq!(rt.stats().value.mapped_bytes, 0);
    assert_eq!(rt.mapped_bytes(), 0);
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

/// `zigzag(n, h, y)`, one procedure that pushes and pops the Value stack
/// in loops: pushes 1..n, pops h values into y(1..h), pushes 1000+1 ..
/// 1000+h, then pops n values into y(h+1..h+n).
fn zigzag_module() -> (adjit_ir::Module, adjit_ir::ProcId) {
    use adjit_ir::builder::ProcBuilder;
    use adjit_ir::{BinaryOp, Proc, Type};
    let mut m = adjit_ir::Module::default();
    let mut proc = Proc::new("zigzag");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let h = b.param("h", Type::I64, vec![]);
    let y = b.param("y", Type::F64, vec![ProcBuilder::assumed_dim()]);
    let i = b.local("i", Type::I64);
    let k = b.local("k", Type::I64);
    let zero = b.iconst(Type::I64, 0);
    b.store(k, zero);
    let pop_into_y = |b: &mut ProcBuilder| {
        let one = b.iconst(Type::I64, 1);
        let kv = b.load(k);
        let next = b.binary(BinaryOp::Add, kv, one);
        b.store(k, next);
        let v = b.pop(StackKind::Value, Type::F64);
        b.store_elem(y, vec![next], v);
    };
    counted_loop(&mut b, i, n, &mut |b, iv| {
        let x = b.convert(iv, Type::F64, adjit_ir::Rounding::Trunc);
        b.push(StackKind::Value, x);
    });
    counted_loop(&mut b, i, h, &mut |b, _| pop_into_y(b));
    counted_loop(&mut b, i, h, &mut |b, iv| {
        let thousand = b.iconst(Type::I64, 1000);
        let w = b.binary(BinaryOp::Add, iv, thousand);
        let x = b.convert(w, Type::F64, adjit_ir::Rounding::Trunc);
        b.push(StackKind::Value, x);
    });
    counted_loop(&mut b, i, n, &mut |b, _| pop_into_y(b));
    b.ret();
    let id = m.add_proc(proc);
    (m, id)
}

/// Stacks in RAM whose segments hold 64 words each, so that short tests
/// cross segment boundaries.
fn segments_of_64_words() -> StackConfig {
    StackConfig {
        ram_budget: 1 << 30,
        initial_segment_bytes: 512,
        max_segment_bytes: 512,
        spill_dir: None,
    }
}

#[test]
fn one_procedure_pushing_and_popping_across_segments_keeps_its_limits() {
    let (m, id) = zigzag_module();
    let c = compile(&m);
    // Segments of 64 words: every loop crosses many segment boundaries,
    // pops after pushes and pushes after pops in the same procedure.
    let config = segments_of_64_words();
    for (n, h) in [(5000i64, 2500i64), (4096, 64), (130, 129), (64, 64)] {
        let mut expected: Vec<f64> = (n - h + 1..=n).rev().map(|v| v as f64).collect();
        expected.extend((1..=h).rev().map(|v| (1000 + v) as f64));
        expected.extend((1..=n - h).rev().map(|v| v as f64));
        for mut rt in [Runtime::new(), Runtime::with_config(config.clone())] {
            // Twice on one runtime: the second run finds the segments mapped.
            for _ in 0..2 {
                let mut args = vec![
                    Buffer::I64(vec![n]),
                    Buffer::I64(vec![h]),
                    Buffer::F64(vec![0.0; (n + h) as usize]),
                ];
                c.call_with(id, &mut args, &mut rt).unwrap();
                assert_eq!(args[2], Buffer::F64(expected.clone()), "n = {n}, h = {h}");
                assert_eq!(rt.depth(StackKind::Value), 0);
            }
        }
    }
}

/// `straight(n, y)`: pushes 1..100 on the Integer stack outside any loop,
/// then n values on the Value stack in a loop, then pops the hundred
/// integers back outside any loop into y(1..100) and the n values in a
/// loop into y(101..100+n). The straight-line pushes and pops keep the
/// stack's registers in the context rather than in variables.
fn straight_module() -> (adjit_ir::Module, adjit_ir::ProcId) {
    use adjit_ir::builder::ProcBuilder;
    use adjit_ir::{BinaryOp, Proc, Rounding, Type};
    let mut m = adjit_ir::Module::default();
    let mut proc = Proc::new("straight");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let y = b.param("y", Type::F64, vec![ProcBuilder::assumed_dim()]);
    let i = b.local("i", Type::I64);
    for v in 1..=100 {
        let c = b.iconst(Type::I64, v);
        b.push(StackKind::Integer, c);
    }
    counted_loop(&mut b, i, n, &mut |b, iv| {
        let x = b.convert(iv, Type::F64, Rounding::Trunc);
        b.push(StackKind::Value, x);
    });
    for at in 1..=100 {
        let w = b.pop(StackKind::Integer, Type::I64);
        let x = b.convert(w, Type::F64, Rounding::Trunc);
        let idx = b.iconst(Type::I64, at);
        b.store_elem(y, vec![idx], x);
    }
    counted_loop(&mut b, i, n, &mut |b, iv| {
        let hundred = b.iconst(Type::I64, 100);
        let idx = b.binary(BinaryOp::Add, iv, hundred);
        let v = b.pop(StackKind::Value, Type::F64);
        b.store_elem(y, vec![idx], v);
    });
    b.ret();
    let id = m.add_proc(proc);
    (m, id)
}

#[test]
fn pushes_and_pops_outside_loops_cross_segments_and_count() {
    let (m, id) = straight_module();
    let c = compile(&m);
    // Segments of 64 words: the hundred straight-line pushes and pops
    // cross a segment boundary each way.
    let config = segments_of_64_words();
    let n = 300i64;
    let mut expected: Vec<f64> = (1..=100).rev().map(|v| v as f64).collect();
    expected.extend((1..=n).rev().map(|v| v as f64));
    for mut rt in [Runtime::new(), Runtime::with_config(config)] {
        for round in 1..=2u64 {
            let mut args = vec![
                Buffer::I64(vec![n]),
                Buffer::F64(vec![0.0; (n + 100) as usize]),
            ];
            c.call_with(id, &mut args, &mut rt).unwrap();
            assert_eq!(args[1], Buffer::F64(expected.clone()));
            assert_eq!(rt.depth(StackKind::Integer), 0);
            assert_eq!(rt.depth(StackKind::Value), 0);
            let stats = rt.stats();
            assert_eq!(stats.integer.pushed, 100 * round);
            assert_eq!(stats.value.pushed, n as u64 * round);
        }
    }
}
