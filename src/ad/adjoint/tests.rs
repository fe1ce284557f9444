//! Tests of the adjoint transform, run with the reference interpreter:
//! published values (seeds 000, 001), finite differences, agreement of the
//! four option combinations, split (forward then reverse) against combined
//! use, and balanced stacks.

use std::collections::HashMap;

use adjit_jit::builder::ProcBuilder;
use adjit_jit::ir::{
    BinaryOp, CallArg, CmpOp, Module, Proc, ProcId, Rounding, StackKind, Type, UnaryOp, VarId,
};
use adjit_jit::Buffer;

use super::{adjoint, AdjointOptions, AdjointProcs, RecordPolicy};
use crate::interp::Interpreter;

/// The four combinations of recording policy and activity analysis.
fn all_options() -> Vec<AdjointOptions> {
    let mut out = Vec::new();
    for record in [RecordPolicy::Conservative, RecordPolicy::Tbr] {
        for activity in [false, true] {
            out.push(AdjointOptions { record, activity });
        }
    }
    out
}

/// A differentiation problem: a procedure, its independents and dependents
/// (parameters) and the primal arguments.
struct Case {
    module: Module,
    proc: ProcId,
    independents: Vec<VarId>,
    dependents: Vec<VarId>,
    args: Vec<Buffer>,
}

impl Case {
    fn param_index(&self, var: VarId) -> usize {
        self.module
            .proc(self.proc)
            .params
            .iter()
            .position(|&p| p == var)
            .expect("a parameter")
    }

    fn primal(&self, args: &[Buffer]) -> Vec<Buffer> {
        let mut args = args.to_vec();
        let mut interp = Interpreter::new(&self.module);
        interp.call(self.proc, &mut args).expect("primal runs");
        args
    }
}

/// The result of one adjoint run.
struct AdjointRun {
    /// Parameters after the call (primal part).
    primal: Vec<Buffer>,
    /// Adjoint buffers after the call, by original parameter index.
    adjoints: HashMap<usize, Buffer>,
    /// Entries pushed on (Value, Integer, Control) by the forward sweep.
    tape: [usize; 3],
}

/// Builds the argument list of a generated procedure.
fn sweep_args(procs: &AdjointProcs, primal: &[Buffer], seeds: &HashMap<usize, Buffer>) -> Vec<Buffer> {
    let mut out = Vec::new();
    for (i, buf) in primal.iter().enumerate() {
        out.push(buf.clone());
        if procs.active_params[i] {
            out.push(
                seeds
                    .get(&i)
                    .cloned()
                    .unwrap_or_else(|| Buffer::zeros(buf.ty(), buf.len())),
            );
        }
    }
    out
}

/// Splits the argument list of a generated procedure back.
fn split_args(procs: &AdjointProcs, args: Vec<Buffer>) -> (Vec<Buffer>, HashMap<usize, Buffer>) {
    let mut primal = Vec::new();
    let mut adjoints = HashMap::new();
    let mut it = args.into_iter();
    for (i, &active) in procs.active_params.iter().enumerate() {
        primal.push(it.next().expect("argument"));
        if active {
            adjoints.insert(i, it.next().expect("adjoint argument"));
        }
    }
    (primal, adjoints)
}

/// Runs the adjoint of `case` with `options` and `seeds` (by parameter
/// index), combined and split; checks that both agree, that the stacks come
/// back empty and that the combined procedure gives the primal outputs.
fn run(case: &Case, options: AdjointOptions, seeds: &HashMap<usize, Buffer>) -> AdjointRun {
    let (module, procs) = adjoint(
        &case.module,
        case.proc,
        &case.independents,
        &case.dependents,
        &options,
    )
    .expect("adjoint generated");
    if let Err(errors) = adjit_jit::verify::verify_module(&module) {
        for p in [procs.forward, procs.reverse, procs.combined] {
            eprintln!("{}", adjit_jit::print::print_proc(&module, p));
        }
        panic!("generated module does not verify: {errors:?}");
    }
    let mut interp = Interpreter::new(&module);
    // Combined.
    let mut args = sweep_args(&procs, &case.args, seeds);
    interp.call(procs.combined, &mut args).expect("combined runs");
    for kind in [StackKind::Value, StackKind::Integer, StackKind::Control] {
        assert_eq!(interp.stack_len(kind), 0, "{options:?}: stack {kind:?} balanced");
    }
    let (primal, adjoints) = split_args(&procs, args);
    let expected = case.primal(&case.args);
    assert_eq!(primal, expected, "{options:?}: foo_b gives the primal outputs");
    // Split.
    let mut args = sweep_args(&procs, &case.args, seeds);
    let mut interp = Interpreter::new(&module);
    interp.call(procs.forward, &mut args).expect("forward sweep runs");
    let tape = [
        interp.stack_len(StackKind::Value),
        interp.stack_len(StackKind::Integer),
        interp.stack_len(StackKind::Control),
    ];
    interp.call(procs.reverse, &mut args).expect("reverse sweep runs");
    for kind in [StackKind::Value, StackKind::Integer, StackKind::Control] {
        assert_eq!(interp.stack_len(kind), 0, "{options:?}: split stack {kind:?}");
    }
    let (_, split_adjoints) = split_args(&procs, args);
    for (i, buf) in &adjoints {
        assert_eq!(Some(buf), split_adjoints.get(i), "{options:?}: split == combined");
    }
    AdjointRun {
        primal,
        adjoints,
        tape,
    }
}

/// Deterministic pseudo-random numbers in [-1, 1].
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// Random seeds on the dependents.
fn random_seeds(case: &Case, rng: &mut Lcg) -> HashMap<usize, Buffer> {
    let mut seeds = HashMap::new();
    for &d in &case.dependents {
        let i = case.param_index(d);
        let mut buf = Buffer::zeros(case.args[i].ty(), case.args[i].len());
        for k in 0..buf.len() {
            buf.set_f64(k, rng.next());
        }
        seeds.insert(i, buf);
    }
    seeds
}

/// `<w, F(args)>` over the dependents.
fn weighted_output(case: &Case, args: &[Buffer], seeds: &HashMap<usize, Buffer>) -> f64 {
    let out = case.primal(args);
    seeds
        .iter()
        .map(|(&i, w)| (0..w.len()).map(|k| w.get_f64(k) * out[i].get_f64(k)).sum::<f64>())
        .sum()
}

/// Checks every option combination against central finite differences and
/// against each other; returns the runs.
fn check_gradient(case: &Case, fd_tolerance: f64) -> Vec<AdjointRun> {
    let mut rng = Lcg(12345);
    let seeds = random_seeds(case, &mut rng);
    let runs: Vec<AdjointRun> = all_options()
        .into_iter()
        .map(|o| run(case, o, &seeds))
        .collect();
    for &x in &case.independents {
        let i = case.param_index(x);
        for k in 0..case.args[i].len() {
            let x0 = case.args[i].get_f64(k);
            let h = 1e-6 * x0.abs().max(1.0);
            let mut plus = case.args.clone();
            plus[i].set_f64(k, x0 + h);
            let mut minus = case.args.clone();
            minus[i].set_f64(k, x0 - h);
            let fd = (weighted_output(case, &plus, &seeds) - weighted_output(case, &minus, &seeds))
                / (2.0 * h);
            // The adjoint of an independent that is not a dependent starts
            // at 0 and is incremented.
            let reference = runs[0].adjoints[&i].get_f64(k);
            assert!(
                (reference - fd).abs() <= fd_tolerance * fd.abs().max(1.0),
                "d/d{}({k}): adjoint {reference} vs finite difference {fd}",
                case.module.proc(case.proc).var(x).name
            );
            for r in &runs[1..] {
                let other = r.adjoints[&i].get_f64(k);
                assert!(
                    (other - reference).abs() <= 1e-13 * reference.abs().max(1e-300),
                    "options disagree: {other} vs {reference}"
                );
            }
        }
    }
    runs
}

fn scalar(x: f64) -> Buffer {
    Buffer::F64(vec![x])
}

/// Seed 000, section 4: `if (x<y) then; x=x*y; do while (y<x); x=sin(x*y)`.
fn naumann(x: f64, y: f64) -> Case {
    let mut module = Module::default();
    let mut proc = Proc::new("f");
    let (px, py);
    {
        let mut b = ProcBuilder::new(&mut proc);
        px = b.param("x", Type::F64, vec![]);
        py = b.param("y", Type::F64, vec![]);
        let then_block = b.create_block();
        let header = b.create_block();
        let body = b.create_block();
        let done = b.create_block();
        let lx = b.load(px);
        let ly = b.load(py);
        let c = b.cmp(CmpOp::Lt, lx, ly);
        b.branch(c, then_block, done);
        b.switch_to_block(then_block);
        let lx = b.load(px);
        let ly = b.load(py);
        let m = b.binary(BinaryOp::Mul, lx, ly);
        b.store(px, m);
        b.jump(header);
        b.switch_to_block(header);
        let ly = b.load(py);
        let lx = b.load(px);
        let c = b.cmp(CmpOp::Lt, ly, lx);
        b.branch(c, body, done);
        b.switch_to_block(body);
        let lx = b.load(px);
        let ly = b.load(py);
        let m = b.binary(BinaryOp::Mul, lx, ly);
        let s = b.unary(UnaryOp::Sin, m);
        b.store(px, s);
        b.jump(header);
        b.switch_to_block(done);
        b.ret();
    }
    let id = module.add_proc(proc);
    Case {
        module,
        proc: id,
        independents: vec![px, py],
        dependents: vec![px],
        args: vec![scalar(x), scalar(y)],
    }
}

#[test]
fn naumann_reference_gradient() {
    let case = naumann(-5.0, -0.5);
    let seeds: HashMap<usize, Buffer> = [(0, scalar(1.0))].into_iter().collect();
    for options in all_options() {
        let r = run(&case, options, &seeds);
        assert_eq!(r.primal[0].get_f64(0), -0.9489846193555862);
        let gx = r.adjoints[&0].get_f64(0);
        let gy = r.adjoints[&1].get_f64(0);
        assert!((gx - 0.07883059059881717).abs() < 1e-15, "{options:?}: {gx}");
        assert!((gy - 1.5766118119763433).abs() < 1e-15, "{options:?}: {gy}");
    }
    check_gradient(&case, 1e-7);
    check_gradient(&naumann(-0.3, 0.9), 1e-7);
    check_gradient(&naumann(2.0, 1.0), 1e-7);
}
