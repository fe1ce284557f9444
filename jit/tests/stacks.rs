//! Runtime stacks across calls (a forward and a reverse sweep sharing a
//! tape), underflow errors, spilling past the RAM budget, and memory
//! behaviour of repeated compilation.

mod common;

use adjit_ir::builder::ProcBuilder;
use adjit_ir::Buffer;
use adjit_ir::{BinaryOp, CmpOp, Module, Proc, ProcId, RuntimeErrorKind, StackKind, Type};
use adjit_jit::runtime::Runtime;
use adjit_jit::stack::StackConfig;
use common::*;

/// Emits `for i = 1..=n { body(i) }` with `i` a local I64 and `n` an I64
/// variable; leaves the builder in the exit block.
fn counted_loop(
    b: &mut ProcBuilder,
    i: adjit_ir::VarId,
    n: adjit_ir::VarId,
    body: &mut dyn FnMut(&mut ProcBuilder, adjit_ir::Value),
) {
    let one = b.iconst(Type::I64, 1);
    b.store(i, one);
    let header = b.create_block();
    let blk = b.create_block();
    let exit = b.create_block();
    b.jump(header);
    b.switch_to_block(header);
    let iv = b.load(i);
    let nv = b.load(n);
    let c = b.cmp(CmpOp::Le, iv, nv);
    b.branch(c, blk, exit);
    b.switch_to_block(blk);
    let iv = b.load(i);
    body(b, iv);
    let iv = b.load(i);
    let one = b.iconst(Type::I64, 1);
    let next = b.binary(BinaryOp::Add, iv, one);
    b.store(i, next);
    b.jump(header);
    b.switch_to_block(exit);
}

/// `forward(n, x)`: pushes x(i) (value), i (integer) and i*3 (control) for
/// i = 1..n. `reverse(n, y, k)`: pops them back into y(i) and k(i) for
/// i = n..1 (so y == x and k(i) == i).
fn sweep_module() -> (Module, ProcId, ProcId) {
    let mut m = Module::default();
    let mut proc = Proc::new("forward");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let x = b.param("x", Type::F32, vec![ProcBuilder::var_dim(n)]);
    let i = b.local("i", Type::I64);
    counted_loop(&mut b, i, n, &mut |b, iv| {
        let xv = b.load_elem(x, vec![iv]);
        b.push(StackKind::Value, xv);
        b.push(StackKind::Integer, iv);
        let three = b.iconst(Type::I64, 3);
        let c = b.binary(BinaryOp::Mul, iv, three);
        b.push(StackKind::Control, c);
    });
    b.ret();
    let fwd = m.add_proc(proc);

    let mut proc = Proc::new("reverse");
    let mut b = ProcBuilder::new(&mut proc);
    let n = b.param("n", Type::I64, vec![]);
    let y = b.param("y", Type::F32, vec![ProcBuilder::var_dim(n)]);
    let k = b.param("k", Type::I32, vec![ProcBuilder::var_dim(n)]);
    let i = b.local("i", Type::I64);
    counted_loop(&mut b, i, n, &mut |b, _| {
        let c = b.pop(StackKind::Control, Type::I64);
        let three = b.iconst(Type::I64, 3);
        let idx = b.binary(BinaryOp::Div, c, three);
        let ki = b.pop(StackKind::Integer, Type::I32);
        b.store_elem(k, vec![idx], ki);
        let v = b.pop(StackKind::Value, Type::F32);
        b.store_elem(y, vec![idx], v);
    });
    b.ret();
    let rev = m.add_proc(proc);
    (m, fwd, rev)
}

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

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn compile_and_drop_cycles_do_not_leak() {
    let (m, fwd, _) = sweep_module();
    // 10,000 cycles with optimized Cranelift (release); debug builds of
    // Cranelift compile ~50x slower, so they run fewer unless asked
    // (ADJIT_COMPILE_CYCLES=10000).
    let default_cycles = if cfg!(debug_assertions) { 600 } else { 10_000 };
    let cycles: u32 = std::env::var("ADJIT_COMPILE_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_cycles);
    let mut baseline = 0;
    let t = std::time::Instant::now();
    for k in 0..cycles {
        let c = compile(&m);
        if k % 1000 == 0 {
            let mut args = vec![Buffer::I64(vec![2]), Buffer::F32(vec![1.0, 2.0])];
            c.call(fwd, &mut args).unwrap();
        }
        drop(c);
        if k == cycles / 20 {
            baseline = resident_bytes();
        }
    }
    let grown = resident_bytes().saturating_sub(baseline);
    println!(
        "{cycles} compile+drop cycles: {:?} each, resident growth after warm-up {} KiB",
        t.elapsed() / cycles,
        grown >> 10
    );
    assert!(grown < 32 << 20, "resident memory grew by {grown} bytes");
}
