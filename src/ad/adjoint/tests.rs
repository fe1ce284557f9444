//! Tests of the adjoint transform, run with the reference interpreter:
//! published values (seeds 000, 001), finite differences, agreement of the
//! four option combinations, split (forward then reverse) against combined
//! use, and balanced stacks.

use std::collections::HashMap;

use adjit_ir::builder::ProcBuilder;
use adjit_ir::Buffer;
use adjit_ir::{
    BinaryOp, CallArg, CmpOp, Module, Proc, ProcId, Rounding, StackKind, Type, UnaryOp, VarId,
};

use super::{adjoint, AdjointOptions, AdjointProcs, RecordPolicy};
use crate::ad::tangent::{active_params as tangent_active_params, tangent, TangentOptions};
use crate::front::diag::SourceMap;
use crate::front::source::SourceForm;
use adjit_ir::interp::Interpreter;

/// The four combinations of recording policy and activity analysis.
fn all_options() -> Vec<AdjointOptions> {
    let mut out = Vec::new();
    for record in [RecordPolicy::Conservative, RecordPolicy::Tbr] {
        for activity in [false, true] {
            out.push(AdjointOptions {
                record,
                activity,
                ..AdjointOptions::default()
            });
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
    #[allow(dead_code)]
    tape: [usize; 3],
}

/// Builds the argument list of a generated procedure.
fn sweep_args(
    procs: &AdjointProcs,
    primal: &[Buffer],
    seeds: &HashMap<usize, Buffer>,
) -> Vec<Buffer> {
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
    if let Err(errors) = adjit_ir::verify::verify_module(&module) {
        for p in [procs.forward, procs.reverse, procs.combined] {
            eprintln!("{}", adjit_ir::print::print_proc(&module, p));
        }
        panic!("generated module does not verify: {errors:?}");
    }
    let mut interp = Interpreter::new(&module);
    // Combined.
    let mut args = sweep_args(&procs, &case.args, seeds);
    interp
        .call(procs.combined, &mut args)
        .expect("combined runs");
    for kind in [StackKind::Value, StackKind::Integer, StackKind::Control] {
        assert_eq!(
            interp.stack_len(kind),
            0,
            "{options:?}: stack {kind:?} balanced"
        );
    }
    let (primal, adjoints) = split_args(&procs, args);
    let expected = case.primal(&case.args);
    assert_eq!(
        primal, expected,
        "{options:?}: foo_b gives the primal outputs"
    );
    // Split.
    let mut args = sweep_args(&procs, &case.args, seeds);
    let mut interp = Interpreter::new(&module);
    interp
        .call(procs.forward, &mut args)
        .expect("forward sweep runs");
    let tape = [
        interp.stack_len(StackKind::Value),
        interp.stack_len(StackKind::Integer),
        interp.stack_len(StackKind::Control),
    ];
    interp
        .call(procs.reverse, &mut args)
        .expect("reverse sweep runs");
    for kind in [StackKind::Value, StackKind::Integer, StackKind::Control] {
        assert_eq!(
            interp.stack_len(kind),
            0,
            "{options:?}: split stack {kind:?}"
        );
    }
    let (_, split_adjoints) = split_args(&procs, args);
    for (i, buf) in &adjoints {
        assert_eq!(
            Some(buf),
            split_adjoints.get(i),
            "{options:?}: split == combined"
        );
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
        .map(|(&i, w)| {
            (0..w.len())
                .map(|k| w.get_f64(k) * out[i].get_f64(k))
                .sum::<f64>()
        })
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
        assert!(
            (gx - 0.07883059059881717).abs() < 1e-15,
            "{options:?}: {gx}"
        );
        assert!((gy - 1.5766118119763433).abs() < 1e-15, "{options:?}: {gy}");
    }
    check_gradient(&case, 1e-7);
    check_gradient(&naumann(-0.3, 0.9), 1e-7);
    check_gradient(&naumann(2.0, 1.0), 1e-7);
}

/// Seed 000 section 3: `if (y<x) then; y=1; end if; y=y*sin(x)`.
#[test]
fn branch_reversal_small_example() {
    for (x, y) in [(0.7, 0.2), (0.2, 0.7)] {
        let mut module = Module::default();
        let mut proc = Proc::new("g");
        let (px, py);
        {
            let mut b = ProcBuilder::new(&mut proc);
            px = b.param("x", Type::F64, vec![]);
            py = b.param("y", Type::F64, vec![]);
            let then_block = b.create_block();
            let join = b.create_block();
            let lx = b.load(px);
            let ly = b.load(py);
            let c = b.cmp(CmpOp::Lt, ly, lx);
            b.branch(c, then_block, join);
            b.switch_to_block(then_block);
            let one = b.fconst(Type::F64, 1.0);
            b.store(py, one);
            b.jump(join);
            b.switch_to_block(join);
            let ly = b.load(py);
            let lx = b.load(px);
            let s = b.unary(UnaryOp::Sin, lx);
            let m = b.binary(BinaryOp::Mul, ly, s);
            b.store(py, m);
            b.ret();
        }
        let proc = module.add_proc(proc);
        let case = Case {
            module,
            proc,
            independents: vec![px, py],
            dependents: vec![py],
            args: vec![scalar(x), scalar(y)],
        };
        let seeds: HashMap<usize, Buffer> = [(1, scalar(1.0))].into_iter().collect();
        let r = run(&case, AdjointOptions::default(), &seeds);
        let (gx, gy) = (r.adjoints[&0].get_f64(0), r.adjoints[&1].get_f64(0));
        if y < x {
            assert_eq!((gx, gy), (x.cos(), 0.0));
        } else {
            assert_eq!((gx, gy), (y * x.cos(), x.sin()));
        }
        check_gradient(&case, 1e-7);
    }
}

/// Griewank's function (seed 001 §4.1): `c = 1; d = 1; do i=1,s; c = c +
/// a(i)**2/400; d = d*cos(a(i)/sqrt(dble(i))); end do; c = c - d`.
fn griewank(n: usize) -> Case {
    let mut module = Module::default();
    let mut proc = Proc::new("griewank");
    let (ps, pa, pc);
    {
        let mut b = ProcBuilder::new(&mut proc);
        ps = b.param("s", Type::I32, vec![]);
        pa = b.param("a", Type::F64, vec![ProcBuilder::var_dim(ps)]);
        pc = b.param("c", Type::F64, vec![]);
        let i = b.local("i", Type::I32);
        let d = b.local("d", Type::F64);
        let header = b.create_block();
        let body = b.create_block();
        let exit = b.create_block();
        let one = b.fconst(Type::F64, 1.0);
        b.store(pc, one);
        let one = b.fconst(Type::F64, 1.0);
        b.store(d, one);
        let one = b.iconst(Type::I32, 1);
        b.store(i, one);
        b.jump(header);
        b.switch_to_block(header);
        let li = b.load(i);
        let ls = b.load(ps);
        let c = b.cmp(CmpOp::Le, li, ls);
        b.branch(c, body, exit);
        b.switch_to_block(body);
        let lc = b.load(pc);
        let li = b.load(i);
        let ai = b.load_elem(pa, vec![li]);
        let two = b.iconst(Type::I32, 2);
        let sq = b.binary(BinaryOp::PowI, ai, two);
        let k = b.fconst(Type::F64, 400.0);
        let q = b.binary(BinaryOp::Div, sq, k);
        let sum = b.binary(BinaryOp::Add, lc, q);
        b.store(pc, sum);
        let ld = b.load(d);
        let li = b.load(i);
        let ai = b.load_elem(pa, vec![li]);
        let di = b.convert(li, Type::F64, Rounding::Trunc);
        let r = b.unary(UnaryOp::Sqrt, di);
        let q = b.binary(BinaryOp::Div, ai, r);
        let cq = b.unary(UnaryOp::Cos, q);
        let m = b.binary(BinaryOp::Mul, ld, cq);
        b.store(d, m);
        let li = b.load(i);
        let one = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, li, one);
        b.store(i, next);
        b.jump(header);
        b.switch_to_block(exit);
        let lc = b.load(pc);
        let ld = b.load(d);
        let diff = b.binary(BinaryOp::Sub, lc, ld);
        b.store(pc, diff);
        b.ret();
    }
    let proc = module.add_proc(proc);
    Case {
        module,
        proc,
        independents: vec![pa],
        dependents: vec![pc],
        args: vec![
            Buffer::I32(vec![n as i32]),
            Buffer::F64(vec![1.0; n]),
            scalar(0.0),
        ],
    }
}

#[test]
// The digits are the seed's, as published.
#[allow(clippy::excessive_precision)]
fn griewank_reference_gradient() {
    let case = griewank(5);
    let seeds: HashMap<usize, Buffer> = [(2, scalar(1.0))].into_iter().collect();
    let expected = [
        0.4291500041640747,
        0.1695581977732323,
        0.1074226956746736,
        7.9390989486530394e-02,
        6.3416055468902388e-02,
    ];
    for options in all_options() {
        let r = run(&case, options, &seeds);
        assert!((r.primal[2].get_f64(0) - 0.7401564142777319).abs() < 1e-15);
        for (k, e) in expected.iter().enumerate() {
            let g = r.adjoints[&1].get_f64(k);
            assert!(
                (g - e).abs() <= 1e-15 * e.abs(),
                "{options:?} a_b({k}) = {g}, want {e}"
            );
        }
        // The dependent is a pure output: its adjoint comes back 0.
        assert_eq!(r.adjoints[&2].get_f64(0), 0.0);
    }
    check_gradient(&case, 1e-7);
}

/// The partial of Griewank's stored `cos(a(i)/sqrt(i))` is `-sin` of the
/// same operand: the forward sweep computes that `sin` too and pushes it
/// after the `cos` (`store::companion`), so the reverse sweep pops both and
/// calls no library function; without stored library results it
/// recomputes the `sin` (and the gradients are checked against the
/// published ones by `griewank_reference_gradient`).
#[test]
fn the_reverse_sweep_pops_the_sine_the_forward_sweep_pushed() {
    let case = griewank(5);
    let calls = |options: &AdjointOptions| {
        let (module, procs) = adjoint(
            &case.module,
            case.proc,
            &case.independents,
            &case.dependents,
            options,
        )
        .expect("adjoint generated");
        let count = |p: ProcId| {
            let proc = module.proc(p);
            let mut sin_cos = [0, 0];
            for &v in proc.blocks.iter().flat_map(|b| &b.insts) {
                match proc.inst(v).kind {
                    adjit_ir::Inst::Unary(UnaryOp::Sin, _) => sin_cos[0] += 1,
                    adjit_ir::Inst::Unary(UnaryOp::Cos, _) => sin_cos[1] += 1,
                    _ => {}
                }
            }
            sin_cos
        };
        (count(procs.forward), count(procs.reverse))
    };
    assert_eq!(calls(&AdjointOptions::default()), ([1, 1], [0, 0]));
    let recomputing = AdjointOptions {
        store_library_results: false,
        ..AdjointOptions::default()
    };
    assert_eq!(calls(&recomputing), ([0, 1], [1, 1]));
    let seeds: HashMap<usize, Buffer> = [(2, scalar(1.0))].into_iter().collect();
    let stored = run(&case, AdjointOptions::default(), &seeds);
    let recomputed = run(&case, recomputing, &seeds);
    // Two more tape words per trip (the cosine and its sine), the same bits.
    assert_eq!(stored.tape[0], recomputed.tape[0] + 5 + 5);
    let bits = |r: &AdjointRun| -> Vec<u64> {
        (0..5)
            .map(|i| r.adjoints[&1].get_f64(i).to_bits())
            .collect()
    };
    assert_eq!(bits(&stored), bits(&recomputed));
}

/// Iterative assignments (seed 004): `do k=1,3; x = x*y; f = 2*f + x; end do`.
#[test]
fn iterative_assignments() {
    let mut module = Module::default();
    let mut proc = Proc::new("iter");
    let (px, py, pf);
    {
        let mut b = ProcBuilder::new(&mut proc);
        px = b.param("x", Type::F64, vec![]);
        py = b.param("y", Type::F64, vec![]);
        pf = b.param("f", Type::F64, vec![]);
        let k = b.local("k", Type::I32);
        let header = b.create_block();
        let body = b.create_block();
        let exit = b.create_block();
        let zero = b.iconst(Type::I32, 0);
        b.store(k, zero);
        b.jump(header);
        b.switch_to_block(header);
        let lk = b.load(k);
        let three = b.iconst(Type::I32, 3);
        let c = b.cmp(CmpOp::Lt, lk, three);
        b.branch(c, body, exit);
        b.switch_to_block(body);
        let lx = b.load(px);
        let ly = b.load(py);
        let m = b.binary(BinaryOp::Mul, lx, ly);
        b.store(px, m);
        let two = b.fconst(Type::F64, 2.0);
        let lf = b.load(pf);
        let t = b.binary(BinaryOp::Mul, two, lf);
        let lx = b.load(px);
        let sum = b.binary(BinaryOp::Add, t, lx);
        b.store(pf, sum);
        let lk = b.load(k);
        let one = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, lk, one);
        b.store(k, next);
        b.jump(header);
        b.switch_to_block(exit);
        b.ret();
    }
    let proc = module.add_proc(proc);
    let case = Case {
        module,
        proc,
        independents: vec![px, py, pf],
        dependents: vec![px, pf],
        args: vec![scalar(1.3), scalar(0.7), scalar(0.4)],
    };
    // f_out = 8 f + x y (4 + 2 y + y^2) ... checked by finite differences;
    // exact: d f_out / d f = 8.
    let seeds: HashMap<usize, Buffer> = [(2, scalar(1.0))].into_iter().collect();
    let r = run(&case, AdjointOptions::default(), &seeds);
    assert_eq!(r.adjoints[&2].get_f64(0), 8.0);
    let (x, y) = (1.3f64, 0.7f64);
    let dfdx = 4.0 * y + 2.0 * y * y + y * y * y;
    assert!((r.adjoints[&0].get_f64(0) - dfdx).abs() < 1e-14);
    let _ = x;
    check_gradient(&case, 1e-7);
}

/// An irreducible loop: two blocks A and B that jump to each other, entered
/// at A or at B depending on the sign of x, left when the counter runs out.
#[test]
fn irreducible_cfg() {
    let mut module = Module::default();
    let mut proc = Proc::new("irr");
    let (px, py, pn);
    {
        let mut b = ProcBuilder::new(&mut proc);
        px = b.param("x", Type::F64, vec![]);
        py = b.param("y", Type::F64, vec![]);
        pn = b.param("n", Type::I32, vec![]);
        let k = b.local("k", Type::I32);
        let block_a = b.create_block();
        let block_b = b.create_block();
        let end = b.create_block();
        let ln = b.load(pn);
        b.store(k, ln);
        let lx = b.load(px);
        let zero = b.fconst(Type::F64, 0.0);
        let c = b.cmp(CmpOp::Gt, lx, zero);
        b.branch(c, block_a, block_b);
        for (here, other, op) in [
            (block_a, block_b, UnaryOp::Sin),
            (block_b, block_a, UnaryOp::Cos),
        ] {
            b.switch_to_block(here);
            let lx = b.load(px);
            let ly = b.load(py);
            let m = b.binary(BinaryOp::Mul, lx, ly);
            let s = b.unary(op, m);
            let sum = b.binary(BinaryOp::Add, s, lx);
            b.store(px, sum);
            let lk = b.load(k);
            let one = b.iconst(Type::I32, 1);
            let next = b.binary(BinaryOp::Sub, lk, one);
            b.store(k, next);
            let zero = b.iconst(Type::I32, 0);
            let more = b.cmp(CmpOp::Gt, next, zero);
            // Leave from A only on an even count, from B on any.
            b.branch(more, other, end);
        }
        b.switch_to_block(end);
        b.ret();
    }
    let proc = module.add_proc(proc);
    for (x, n) in [(0.6, 5), (-0.4, 4), (0.3, 1)] {
        let case = Case {
            module: module.clone(),
            proc,
            independents: vec![px, py],
            dependents: vec![px],
            args: vec![scalar(x), scalar(0.9), Buffer::I32(vec![n])],
        };
        check_gradient(&case, 1e-7);
    }
}

/// A multi-way branch (computed GO TO / SELECT CASE) joining again.
#[test]
fn switch_and_join() {
    let mut module = Module::default();
    let mut proc = Proc::new("sel");
    let (px, py, ps);
    {
        let mut b = ProcBuilder::new(&mut proc);
        px = b.param("x", Type::F64, vec![]);
        py = b.param("y", Type::F64, vec![]);
        ps = b.param("s", Type::I32, vec![]);
        let c1 = b.create_block();
        let c2 = b.create_block();
        let other = b.create_block();
        let join = b.create_block();
        let ls = b.load(ps);
        b.switch(ls, vec![(1, c1), (2, c2), (3, c1)], other);
        b.switch_to_block(c1);
        let lx = b.load(px);
        let m = b.binary(BinaryOp::Mul, lx, lx);
        b.store(px, m);
        b.jump(join);
        b.switch_to_block(c2);
        let lx = b.load(px);
        let ly = b.load(py);
        let e = b.unary(UnaryOp::Exp, ly);
        let m = b.binary(BinaryOp::Mul, e, lx);
        b.store(px, m);
        b.jump(join);
        b.switch_to_block(other);
        let lx = b.load(px);
        let ly = b.load(py);
        let m = b.binary(BinaryOp::Max, lx, ly);
        b.store(px, m);
        b.jump(join);
        b.switch_to_block(join);
        let lx = b.load(px);
        let ly = b.load(py);
        let m = b.binary(BinaryOp::Div, lx, ly);
        b.store(py, m);
        b.ret();
    }
    let proc = module.add_proc(proc);
    for s in 0..4 {
        let case = Case {
            module: module.clone(),
            proc,
            independents: vec![px, py],
            dependents: vec![px, py],
            args: vec![scalar(0.8), scalar(1.1), Buffer::I32(vec![s])],
        };
        check_gradient(&case, 1e-7);
    }
}

/// Array elements whose subscripts are computed from integers that are
/// overwritten later, including a store whose subscript reads the array it
/// stores into: `k = 1; a(k) = a(k)*x; k = 2; a(k) = a(k)*a(1);
/// ia(1) = 3; a(ia(1)) = sin(a(ia(1))) * a(k); ia(ia(2)) = 1;
/// a(ia(1)) = a(ia(1)) * a(ia(3)) + x; ia(1) = 2`.
#[test]
fn overwritten_subscripts() {
    let mut module = Module::default();
    let mut proc = Proc::new("subs");
    let (pa, px, pia);
    {
        let mut b = ProcBuilder::new(&mut proc);
        pa = b.param("a", Type::F64, vec![ProcBuilder::const_dim(1, 3)]);
        px = b.param("x", Type::F64, vec![]);
        pia = b.param("ia", Type::I32, vec![ProcBuilder::const_dim(1, 3)]);
        let k = b.local("k", Type::I64);
        let i = |b: &mut ProcBuilder, v| b.iconst(Type::I64, v);
        let one = i(&mut b, 1);
        b.store(k, one);
        let lk = b.load(k);
        let ak = b.load_elem(pa, vec![lk]);
        let lx = b.load(px);
        let m = b.binary(BinaryOp::Mul, ak, lx);
        b.store_elem(pa, vec![lk], m);
        let two = i(&mut b, 2);
        b.store(k, two);
        let lk = b.load(k);
        let ak = b.load_elem(pa, vec![lk]);
        let one = i(&mut b, 1);
        let a1 = b.load_elem(pa, vec![one]);
        let m = b.binary(BinaryOp::Mul, ak, a1);
        b.store_elem(pa, vec![lk], m);
        let one = i(&mut b, 1);
        let three = b.iconst(Type::I32, 3);
        b.store_elem(pia, vec![one], three);
        let one = i(&mut b, 1);
        let j = b.load_elem(pia, vec![one]);
        let aj = b.load_elem(pa, vec![j]);
        let s = b.unary(UnaryOp::Sin, aj);
        let lk = b.load(k);
        let ak = b.load_elem(pa, vec![lk]);
        let m = b.binary(BinaryOp::Mul, s, ak);
        b.store_elem(pa, vec![j], m);
        // ia(ia(2)) = 1: the subscript reads the array stored into.
        let two = i(&mut b, 2);
        let j = b.load_elem(pia, vec![two]);
        let one = b.iconst(Type::I32, 1);
        b.store_elem(pia, vec![j], one);
        let one = i(&mut b, 1);
        let j1 = b.load_elem(pia, vec![one]);
        let three = i(&mut b, 3);
        let j3 = b.load_elem(pia, vec![three]);
        let a1 = b.load_elem(pa, vec![j1]);
        let a3 = b.load_elem(pa, vec![j3]);
        let m = b.binary(BinaryOp::Mul, a1, a3);
        let lx = b.load(px);
        let sum = b.binary(BinaryOp::Add, m, lx);
        b.store_elem(pa, vec![j1], sum);
        let one = i(&mut b, 1);
        let two = b.iconst(Type::I32, 2);
        b.store_elem(pia, vec![one], two);
        b.ret();
    }
    let proc = module.add_proc(proc);
    let case = Case {
        module,
        proc,
        independents: vec![pa, px],
        dependents: vec![pa],
        args: vec![
            Buffer::F64(vec![0.5, 1.5, -0.7]),
            scalar(1.2),
            Buffer::I32(vec![0, 3, 2]),
        ],
    };
    check_gradient(&case, 1e-7);
}

/// Nested loops with EXIT and CYCLE and a data-dependent DO WHILE:
/// ```text
/// do i = 1, n
///   do j = 1, n
///     if (a(j) > 0.5) cycle
///     if (j > i) exit
///     s = s + a(i)*a(j)*x
///   end do
/// end do
/// do while (s < 10); s = s*1.5 + x*x; end do
/// ```
#[test]
fn nested_loops_exit_cycle_and_while() {
    let mut module = Module::default();
    let mut proc = Proc::new("loops");
    let (pn, pa, px, ps);
    {
        let mut b = ProcBuilder::new(&mut proc);
        pn = b.param("n", Type::I32, vec![]);
        pa = b.param("a", Type::F64, vec![ProcBuilder::var_dim(pn)]);
        px = b.param("x", Type::F64, vec![]);
        ps = b.param("s", Type::F64, vec![]);
        let i = b.local("i", Type::I32);
        let j = b.local("j", Type::I32);
        let outer_head = b.create_block();
        let outer_body = b.create_block();
        let inner_head = b.create_block();
        let inner_body = b.create_block();
        let not_cycled = b.create_block();
        let accumulate = b.create_block();
        let inner_latch = b.create_block();
        let outer_latch = b.create_block();
        let while_head = b.create_block();
        let while_body = b.create_block();
        let end = b.create_block();
        let one = b.iconst(Type::I32, 1);
        b.store(i, one);
        b.jump(outer_head);
        b.switch_to_block(outer_head);
        let li = b.load(i);
        let ln = b.load(pn);
        let c = b.cmp(CmpOp::Le, li, ln);
        b.branch(c, outer_body, while_head);
        b.switch_to_block(outer_body);
        let one = b.iconst(Type::I32, 1);
        b.store(j, one);
        b.jump(inner_head);
        b.switch_to_block(inner_head);
        let lj = b.load(j);
        let ln = b.load(pn);
        let c = b.cmp(CmpOp::Le, lj, ln);
        b.branch(c, inner_body, outer_latch);
        b.switch_to_block(inner_body);
        let lj = b.load(j);
        let aj = b.load_elem(pa, vec![lj]);
        let half = b.fconst(Type::F64, 0.5);
        let c = b.cmp(CmpOp::Gt, aj, half);
        b.branch(c, inner_latch, not_cycled);
        b.switch_to_block(not_cycled);
        let lj = b.load(j);
        let li = b.load(i);
        let c = b.cmp(CmpOp::Gt, lj, li);
        b.branch(c, outer_latch, accumulate);
        b.switch_to_block(accumulate);
        let ls = b.load(ps);
        let li = b.load(i);
        let ai = b.load_elem(pa, vec![li]);
        let lj = b.load(j);
        let aj = b.load_elem(pa, vec![lj]);
        let m = b.binary(BinaryOp::Mul, ai, aj);
        let lx = b.load(px);
        let m = b.binary(BinaryOp::Mul, m, lx);
        let sum = b.binary(BinaryOp::Add, ls, m);
        b.store(ps, sum);
        b.jump(inner_latch);
        b.switch_to_block(inner_latch);
        let lj = b.load(j);
        let one = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, lj, one);
        b.store(j, next);
        b.jump(inner_head);
        b.switch_to_block(outer_latch);
        let li = b.load(i);
        let one = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, li, one);
        b.store(i, next);
        b.jump(outer_head);
        b.switch_to_block(while_head);
        let ls = b.load(ps);
        let ten = b.fconst(Type::F64, 10.0);
        let c = b.cmp(CmpOp::Lt, ls, ten);
        b.branch(c, while_body, end);
        b.switch_to_block(while_body);
        let ls = b.load(ps);
        let k = b.fconst(Type::F64, 1.5);
        let m = b.binary(BinaryOp::Mul, ls, k);
        let lx = b.load(px);
        let sq = b.binary(BinaryOp::Mul, lx, lx);
        let sum = b.binary(BinaryOp::Add, m, sq);
        b.store(ps, sum);
        b.jump(while_head);
        b.switch_to_block(end);
        b.ret();
    }
    let proc = module.add_proc(proc);
    let case = Case {
        module,
        proc,
        independents: vec![pa, px, ps],
        dependents: vec![ps],
        args: vec![
            Buffer::I32(vec![4]),
            Buffer::F64(vec![0.3, 0.9, 0.2, 0.45]),
            scalar(1.1),
            scalar(0.25),
        ],
    };
    check_gradient(&case, 1e-6);
}

/// Calls: a subroutine receiving an array element (sequence association)
/// that overwrites its arguments, and a FUNCTION called with an expression
/// argument.
/// ```text
/// subroutine sq(v, n, s)        ! v(*)
///   do i = 1, n; v(i) = v(i)*v(i)*s; end do; s = s*1.1
/// function cube(t) result(r); r = t*t*t
/// subroutine main(a, x, y)      ! a(4)
///   call sq(a(2), 2, x)
///   y = a(1) + a(2)*a(3) + a(4)
///   z = cube(x*2)
///   y = y*z + x
/// ```
#[test]
fn calls_with_sequence_association() {
    let mut module = Module::default();
    let sq = {
        let mut proc = Proc::new("sq");
        let mut b = ProcBuilder::new(&mut proc);
        let v = b.param("v", Type::F64, vec![ProcBuilder::assumed_dim()]);
        let n = b.param("n", Type::I32, vec![]);
        let s = b.param("s", Type::F64, vec![]);
        let i = b.local("i", Type::I32);
        let head = b.create_block();
        let body = b.create_block();
        let end = b.create_block();
        let one = b.iconst(Type::I32, 1);
        b.store(i, one);
        b.jump(head);
        b.switch_to_block(head);
        let li = b.load(i);
        let ln = b.load(n);
        let c = b.cmp(CmpOp::Le, li, ln);
        b.branch(c, body, end);
        b.switch_to_block(body);
        let li = b.load(i);
        let vi = b.load_elem(v, vec![li]);
        let ls = b.load(s);
        let m = b.binary(BinaryOp::Mul, vi, vi);
        let m = b.binary(BinaryOp::Mul, m, ls);
        b.store_elem(v, vec![li], m);
        let li = b.load(i);
        let one = b.iconst(Type::I32, 1);
        let next = b.binary(BinaryOp::Add, li, one);
        b.store(i, next);
        b.jump(head);
        b.switch_to_block(end);
        let ls = b.load(s);
        let k = b.fconst(Type::F64, 1.1);
        let m = b.binary(BinaryOp::Mul, ls, k);
        b.store(s, m);
        b.ret();
        module.add_proc(proc)
    };
    let cube = {
        let mut proc = Proc::new("cube");
        let mut b = ProcBuilder::new(&mut proc);
        let t = b.param("t", Type::F64, vec![]);
        let r = b.result_param("r", Type::F64);
        let lt = b.load(t);
        let m = b.binary(BinaryOp::Mul, lt, lt);
        let m = b.binary(BinaryOp::Mul, m, lt);
        b.store(r, m);
        b.ret();
        module.add_proc(proc)
    };
    let mut proc = Proc::new("main");
    let (pa, px, py);
    {
        let mut b = ProcBuilder::new(&mut proc);
        pa = b.param("a", Type::F64, vec![ProcBuilder::const_dim(1, 4)]);
        px = b.param("x", Type::F64, vec![]);
        py = b.param("y", Type::F64, vec![]);
        let z = b.local("z", Type::F64);
        let two = b.iconst(Type::I64, 2);
        let n = b.iconst(Type::I32, 2);
        b.call(
            sq,
            vec![
                CallArg::Elem(pa, vec![two]),
                CallArg::Value(n),
                CallArg::Var(px),
            ],
        );
        let e = |b: &mut ProcBuilder, k| {
            let k = b.iconst(Type::I64, k);
            b.load_elem(pa, vec![k])
        };
        let a1 = e(&mut b, 1);
        let a2 = e(&mut b, 2);
        let a3 = e(&mut b, 3);
        let a4 = e(&mut b, 4);
        let m = b.binary(BinaryOp::Mul, a2, a3);
        let s = b.binary(BinaryOp::Add, a1, m);
        let s = b.binary(BinaryOp::Add, s, a4);
        b.store(py, s);
        let lx = b.load(px);
        let two = b.fconst(Type::F64, 2.0);
        let t = b.binary(BinaryOp::Mul, lx, two);
        b.call(cube, vec![CallArg::Value(t), CallArg::Var(z)]);
        let ly = b.load(py);
        let lz = b.load(z);
        let lx = b.load(px);
        let m = b.binary(BinaryOp::Mul, ly, lz);
        let s = b.binary(BinaryOp::Add, m, lx);
        b.store(py, s);
        b.ret();
    }
    let proc = module.add_proc(proc);
    let case = Case {
        module,
        proc,
        independents: vec![pa, px],
        dependents: vec![py, pa, px],
        args: vec![
            Buffer::F64(vec![0.5, 1.2, -0.8, 0.3]),
            scalar(0.9),
            scalar(0.0),
        ],
    };
    check_gradient(&case, 1e-6);
}

/// Single-precision variables: `x = 3*x*x` in f32, `y = y*dble(x)`.
#[test]
fn single_precision() {
    let mut module = Module::default();
    let mut proc = Proc::new("sp");
    let (px, py);
    {
        let mut b = ProcBuilder::new(&mut proc);
        px = b.param("x", Type::F32, vec![]);
        py = b.param("y", Type::F64, vec![]);
        let lx = b.load(px);
        let three = b.fconst(Type::F32, 3.0);
        let m = b.binary(BinaryOp::Mul, three, lx);
        let m = b.binary(BinaryOp::Mul, m, lx);
        b.store(px, m);
        let ly = b.load(py);
        let lx = b.load(px);
        let w = b.convert(lx, Type::F64, Rounding::Trunc);
        let m = b.binary(BinaryOp::Mul, ly, w);
        b.store(py, m);
        b.ret();
    }
    let proc = module.add_proc(proc);
    let case = Case {
        module,
        proc,
        independents: vec![px, py],
        dependents: vec![py],
        args: vec![Buffer::F32(vec![0.7]), scalar(1.3)],
    };
    let seeds: HashMap<usize, Buffer> = [(1, scalar(1.0))].into_iter().collect();
    for options in all_options() {
        let r = run(&case, options, &seeds);
        let x = 0.7f32;
        let dx = r.adjoints[&0].get_f64(0);
        let dy = r.adjoints[&1].get_f64(0);
        assert!(matches!(r.adjoints[&0], Buffer::F32(_)));
        assert!((dx - 1.3 * 6.0 * x as f64).abs() < 1e-6, "{dx}");
        assert_eq!(dy, (3.0f32 * x * x) as f64);
    }
}

/// Compiles Fortran source with the front end.
fn compile_fortran(src: &str, form: SourceForm) -> Module {
    let mut map = SourceMap::new();
    let file = map.add("test.f", src);
    let (ast, diags) = crate::front::parser::parse_file(&map, file, form);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    match crate::front::sema::compile(&map, &[ast]) {
        Ok(c) => c.module,
        Err(e) => panic!("{e:?}"),
    }
}

/// A case from a compiled module: procedure, independents and dependents by
/// name, arguments in parameter order.
fn fortran_case(
    module: Module,
    proc: &str,
    indep: &[&str],
    dep: &[&str],
    args: Vec<Buffer>,
) -> Case {
    let id = module.find_proc(proc).expect("procedure");
    let var = |name: &str| module.proc(id).find_var(name).expect("variable");
    let independents = indep.iter().map(|n| var(n)).collect();
    let dependents = dep.iter().map(|n| var(n)).collect();
    Case {
        module,
        proc: id,
        independents,
        dependents,
        args,
    }
}

/// The dot-product identity `<y_d, y_b> = <x_d, x_b>` between the tangent
/// (random directions on the independents) and every adjoint variant
/// (random seeds on the dependents).
fn check_dot_product(case: &Case, tolerance: f64) {
    let mut rng = Lcg(987654321);
    let (tmod, tproc) = tangent(
        &case.module,
        case.proc,
        &case.independents,
        &case.dependents,
        &TangentOptions::default(),
    )
    .expect("tangent generated");
    let active = tangent_active_params(
        &case.module,
        case.proc,
        &case.independents,
        &case.dependents,
    );
    let params = case.module.proc(case.proc).params.clone();
    let mut directions: HashMap<usize, Buffer> = HashMap::new();
    let mut targs = Vec::new();
    let mut slot_of = HashMap::new();
    for (i, &p) in params.iter().enumerate() {
        targs.push(case.args[i].clone());
        if active.contains(&p) {
            let mut d = Buffer::zeros(case.args[i].ty(), case.args[i].len());
            if case.independents.contains(&p) {
                for k in 0..d.len() {
                    d.set_f64(k, rng.next());
                }
                directions.insert(i, d.clone());
            }
            slot_of.insert(i, targs.len());
            targs.push(d);
        }
    }
    let mut interp = Interpreter::new(&tmod);
    interp.call(tproc, &mut targs).expect("tangent runs");
    let seeds = random_seeds(case, &mut rng);
    let lhs: f64 = seeds
        .iter()
        .map(|(i, w)| {
            let yd = &targs[slot_of[i]];
            (0..w.len())
                .map(|k| w.get_f64(k) * yd.get_f64(k))
                .sum::<f64>()
        })
        .sum();
    for options in all_options() {
        let r = run(case, options, &seeds);
        let rhs: f64 = directions
            .iter()
            .map(|(i, d)| {
                let xb = &r.adjoints[i];
                (0..d.len())
                    .map(|k| d.get_f64(k) * xb.get_f64(k))
                    .sum::<f64>()
            })
            .sum();
        assert!(
            (lhs - rhs).abs() <= tolerance * lhs.abs().max(rhs.abs()),
            "{options:?}: <y_d, y_b> = {lhs} but <x_d, x_b> = {rhs}"
        );
    }
}

/// The Bratu subroutine of seed 003 appendix A (front end test data),
/// inputs as REFERENCE_CASES.md §3 (single-precision literals widened).
fn bratu(dim: usize) -> Case {
    let module = compile_fortran(
        include_str!("../../front/testdata/bratu.f"),
        SourceForm::Fixed,
    );
    let x0 = [1.72f32, 3.45, 4.16, 4.87, 4.16, 3.45, 1.72];
    let x: Vec<f64> = (0..dim).map(|k| x0[k % 7] as f64).collect();
    fortran_case(
        module,
        "bratu",
        &["x", "prm"],
        &["f"],
        vec![
            Buffer::I32(vec![dim as i32]),
            Buffer::I32(vec![2]),
            Buffer::F64(x),
            Buffer::F64(vec![1.3f32 as f64, 0.245828f32 as f64]),
            Buffer::F64(vec![0.0; dim]),
        ],
    )
}

/// The 7x9 Bratu Jacobian by 7 reverse sweeps (seed 001 §4.2).
#[test]
fn bratu_jacobian_by_reverse_sweeps() {
    let case = bratu(7);
    let published: [[f64; 9]; 7] = [
        [-1.89, 1.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.21, -0.48],
        [1.01, -1.87, 1.01, 0.0, 0.0, 0.0, 0.0, 0.40, -1.78],
        [0.0, 1.01, -1.87, 1.01, 0.0, 0.0, 0.0, 0.49, -2.70],
        [0.0, 0.0, 1.01, -1.87, 1.01, 0.0, 0.0, 0.56, -3.50],
        [0.0, 0.0, 0.0, 1.01, -1.87, 1.01, 0.0, 0.49, -2.70],
        [0.0, 0.0, 0.0, 0.0, 1.01, -1.87, 1.01, 0.40, -1.78],
        [0.0, 0.0, 0.0, 0.0, 0.0, 1.01, -1.89, 0.21, -0.48],
    ];
    for options in all_options() {
        for row in 0..7 {
            let mut seed = vec![0.0; 7];
            seed[row] = 1.0;
            let seeds: HashMap<usize, Buffer> = [(4, Buffer::F64(seed))].into_iter().collect();
            let r = run(&case, options, &seeds);
            let mut jac_row: Vec<f64> = (0..7).map(|k| r.adjoints[&2].get_f64(k)).collect();
            jac_row.extend((0..2).map(|k| r.adjoints[&3].get_f64(k)));
            for (col, (&got, &want)) in jac_row.iter().zip(published[row].iter()).enumerate() {
                assert!(
                    (got - want).abs() <= 0.005 + 1e-12,
                    "{options:?} J({},{}) = {got}, published {want}",
                    row + 1,
                    col + 1
                );
            }
            if row == 0 {
                assert!(
                    (jac_row[0] - -1.8879679375574547).abs() < 1e-14,
                    "{}",
                    jac_row[0]
                );
            }
            if row == 1 {
                assert!(
                    (jac_row[0] - 1.0112032062442544).abs() < 1e-14,
                    "{}",
                    jac_row[0]
                );
            }
        }
    }
    check_gradient(&case, 1e-6);
}

/// Tape sizes of the Bratu adjoint (dim = 1000) with and without TBR and
/// activity analysis; TBR must not record the overwritten `F` elements.
#[test]
fn bratu_tape_sizes() {
    let case = bratu(1000);
    let mut seed = vec![0.0; 1000];
    seed[500] = 1.0;
    let seeds: HashMap<usize, Buffer> = [(4, Buffer::F64(seed))].into_iter().collect();
    let mut sizes = Vec::new();
    for options in all_options() {
        let r = run(&case, options, &seeds);
        eprintln!(
            "bratu dim=1000 {:?} activity={}: value stack {} entries, integer stack {}, control stack {}",
            options.record, options.activity, r.tape[0], r.tape[1], r.tape[2]
        );
        sizes.push(r.tape);
    }
    // Copy-on-def records the old F(i-1), F(i), F(i+1) of every iteration
    // (plus the 5 stores outside the loop and h); TBR records none of them.
    assert!(sizes[0][0] >= 3 * 998 + 5);
    assert!(sizes[2][0] < sizes[0][0]);
    // Only the local `h` is handed over from the forward to the reverse
    // sweep, besides the exp results (stored rather than recomputed by the
    // reverse sweep): equal calls of one block push once
    // (`store::shared_results`), so one per point for the 3 statements of
    // an iteration and 2 for the 4 statements outside the loop.
    assert_eq!(sizes[2][0], 1 + 998 + 2, "TBR records no element of F");
    // The loop records one iteration count, not one id per iteration.
    assert!(sizes.iter().all(|s| s[2] == 1));
}

/// Data-dependent DO WHILE with iterative assignments.
const WHILE_LOOP: &str = "
subroutine w(x, y, n)
  double precision x, y
  integer n
  n = 0
  do while (x < 10.0d0)
    x = x*1.5d0 + y*y
    y = y*0.9d0 + sin(x)
    n = n + 1
  end do
end subroutine
";

/// Nested loops with EXIT and CYCLE.
const NESTED_LOOPS: &str = "
subroutine nl(n, a, x, s)
  integer n, i, j
  double precision a(n), x, s
  do i = 1, n
    do j = 1, n
      if (a(j) > 0.5d0) cycle
      if (j > i) exit
      s = s + a(i)*a(j)*x
      a(i) = a(i)*cos(s)
    end do
  end do
end subroutine
";

/// GO TO loops whose CFG is irreducible (the loop is entered at 10 or 20).
const GOTO_LOOPS: &str = "
subroutine gt(x, y, n)
  double precision x, y
  integer n, k
  k = n
  if (x > 0) goto 20
10 x = sin(x*y) + x
  k = k - 1
  if (k <= 0) goto 30
20 x = cos(x*y) * x
  k = k - 1
  if (k > 0) goto 10
30 y = x*y
end subroutine
";

/// SELECT CASE in a loop.
const SELECT_CASE: &str = "
subroutine sc(x, y, k)
  double precision x, y
  integer k, i
  do i = 1, 4
    select case (mod(k+i, 3))
    case (0)
      x = x*y
    case (1)
      x = exp(-x) + y
    case default
      y = y*x + 1
    end select
  end do
end subroutine
";

/// Subscripts computed from an integer overwritten every iteration.
const OVERWRITTEN_INDEX: &str = "
subroutine ix(a, n, x)
  integer n, k, m
  double precision a(n), x
  k = 1
  do m = 1, n-1
    k = mod(k*3, n) + 1
    a(k) = a(k)*a(m) + x
    x = x*a(k)
  end do
end subroutine
";

/// Calls: sequence association, an overwritten scalar argument, a
/// FUNCTION with an expression argument.
const CALLS: &str = "
subroutine scale(v, m, s)
  integer m, i
  double precision v(*), s
  do i = 1, m
    v(i) = v(i)*s + v(i)**2
  end do
  s = s*1.1d0
end subroutine
double precision function sq(t)
  double precision t
  sq = t*t*3
end function
subroutine caller(a, x, y)
  double precision a(6), x, y, sq
  external sq
  call scale(a(3), 3, x)
  y = sq(x*2) + a(4)*a(5)
  call scale(a, 2, y)
end subroutine
";

/// Single precision.
const SINGLE: &str = "
subroutine sp(x, y)
  real x
  double precision y
  x = 3*x*x + sin(x)
  y = y*x
end subroutine
";

#[test]
fn dot_product_while_loop() {
    let m = compile_fortran(WHILE_LOOP, SourceForm::Free);
    let case = fortran_case(
        m,
        "w",
        &["x", "y"],
        &["x", "y"],
        vec![scalar(0.7), scalar(0.6), Buffer::I32(vec![0])],
    );
    check_dot_product(&case, 1e-13);
    check_gradient(&case, 1e-6);
}

#[test]
fn dot_product_nested_loops() {
    let m = compile_fortran(NESTED_LOOPS, SourceForm::Free);
    let case = fortran_case(
        m,
        "nl",
        &["a", "x", "s"],
        &["a", "s"],
        vec![
            Buffer::I32(vec![5]),
            Buffer::F64(vec![0.3, 0.9, 0.2, 0.45, 0.1]),
            scalar(1.1),
            scalar(0.25),
        ],
    );
    check_dot_product(&case, 1e-13);
    check_gradient(&case, 1e-6);
}

#[test]
fn dot_product_goto_irreducible() {
    let m = compile_fortran(GOTO_LOOPS, SourceForm::Free);
    for (x, n) in [(0.5, 5), (-0.5, 6), (0.2, 1)] {
        let case = fortran_case(
            m.clone(),
            "gt",
            &["x", "y"],
            &["y"],
            vec![scalar(x), scalar(0.8), Buffer::I32(vec![n])],
        );
        check_dot_product(&case, 1e-13);
        check_gradient(&case, 1e-6);
    }
}

#[test]
fn dot_product_select_case() {
    let m = compile_fortran(SELECT_CASE, SourceForm::Free);
    for k in 0..3 {
        let case = fortran_case(
            m.clone(),
            "sc",
            &["x", "y"],
            &["x", "y"],
            vec![scalar(0.4), scalar(0.7), Buffer::I32(vec![k])],
        );
        check_dot_product(&case, 1e-13);
        check_gradient(&case, 1e-6);
    }
}

#[test]
fn dot_product_overwritten_index() {
    let m = compile_fortran(OVERWRITTEN_INDEX, SourceForm::Free);
    let case = fortran_case(
        m,
        "ix",
        &["a", "x"],
        &["a", "x"],
        vec![
            Buffer::F64(vec![0.9, 1.1, 0.8, 1.2, 0.7, 1.05, 0.95]),
            Buffer::I32(vec![7]),
            scalar(0.3),
        ],
    );
    check_dot_product(&case, 1e-13);
    check_gradient(&case, 1e-6);
}

#[test]
fn dot_product_calls() {
    let m = compile_fortran(CALLS, SourceForm::Free);
    let case = fortran_case(
        m,
        "caller",
        &["a", "x"],
        &["a", "y"],
        vec![
            Buffer::F64(vec![0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
            scalar(0.4),
            scalar(0.0),
        ],
    );
    check_dot_product(&case, 1e-13);
    check_gradient(&case, 1e-6);
}

#[test]
fn dot_product_single_precision() {
    let m = compile_fortran(SINGLE, SourceForm::Free);
    let case = fortran_case(
        m,
        "sp",
        &["x", "y"],
        &["x", "y"],
        vec![Buffer::F32(vec![0.7]), scalar(1.3)],
    );
    check_dot_product(&case, 1e-6);
}

#[test]
fn dot_product_bratu() {
    check_dot_product(&bratu(7), 1e-13);
}

/// Bad requests give errors, not panics.
#[test]
fn bad_requests_are_errors() {
    let case = naumann(1.0, 2.0);
    let options = AdjointOptions::default();
    assert!(adjoint(&case.module, ProcId(7), &[], &[], &options).is_err());
    assert!(adjoint(&case.module, case.proc, &[VarId(99)], &[], &options).is_err());
    let mut broken = case.module.clone();
    broken.procs[0].blocks[0].term = adjit_ir::Terminator::Jump(adjit_ir::BlockId(42));
    assert!(adjoint(
        &broken,
        case.proc,
        &case.independents,
        &case.dependents,
        &options
    )
    .is_err());
}

/// RETURN from inside a loop (the loop's count is pushed on that exit too).
const RETURN_IN_LOOP: &str = "
subroutine rl(x, n)
  double precision x
  integer n, i
  do i = 1, n
    x = x*sin(x) + 1
    if (x > 2.5d0) return
  end do
  x = x*x
end subroutine
";

#[test]
fn dot_product_return_in_loop() {
    let m = compile_fortran(RETURN_IN_LOOP, SourceForm::Free);
    for (x, n) in [(0.5, 3), (1.9, 6), (0.1, 0)] {
        let case = fortran_case(
            m.clone(),
            "rl",
            &["x"],
            &["x"],
            vec![scalar(x), Buffer::I32(vec![n])],
        );
        check_dot_product(&case, 1e-13);
        check_gradient(&case, 1e-6);
    }
}

/// The generated procedures compiled by the JIT give the interpreter's
/// results bit for bit, combined and split (forward then reverse on one
/// runtime).
#[test]
fn compiled_adjoints_agree_with_the_interpreter() {
    use adjit_jit::codegen::{CompiledModule, JitOptions};
    use adjit_jit::runtime::Runtime;
    let fortran = |src: &str, name: &str, indep: &[&str], dep: &[&str], args: Vec<Buffer>| {
        fortran_case(
            compile_fortran(src, SourceForm::Free),
            name,
            indep,
            dep,
            args,
        )
    };
    let cases = vec![
        naumann(-5.0, -0.5),
        griewank(5),
        bratu(7),
        fortran(
            CALLS,
            "caller",
            &["a", "x"],
            &["a", "y"],
            vec![
                Buffer::F64(vec![0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
                scalar(0.4),
                scalar(0.0),
            ],
        ),
        fortran(
            GOTO_LOOPS,
            "gt",
            &["x", "y"],
            &["y"],
            vec![scalar(-0.5), scalar(0.8), Buffer::I32(vec![6])],
        ),
        fortran(
            NESTED_LOOPS,
            "nl",
            &["a", "x", "s"],
            &["a", "s"],
            vec![
                Buffer::I32(vec![5]),
                Buffer::F64(vec![0.3, 0.9, 0.2, 0.45, 0.1]),
                scalar(1.1),
                scalar(0.25),
            ],
        ),
        fortran(
            SINGLE,
            "sp",
            &["x", "y"],
            &["x", "y"],
            vec![Buffer::F32(vec![0.7]), scalar(1.3)],
        ),
    ];
    let mut rng = Lcg(4242);
    for case in &cases {
        let seeds = random_seeds(case, &mut rng);
        for options in all_options() {
            let (module, procs) = adjoint(
                &case.module,
                case.proc,
                &case.independents,
                &case.dependents,
                &options,
            )
            .expect("adjoint");
            let compiled =
                CompiledModule::compile(&module, &JitOptions::default()).expect("compiles");
            let args = sweep_args(&procs, &case.args, &seeds);
            let mut by_interp = args.clone();
            Interpreter::new(&module)
                .call(procs.combined, &mut by_interp)
                .expect("interpreter runs");
            let mut by_jit = args.clone();
            compiled
                .call(procs.combined, &mut by_jit)
                .expect("JIT runs");
            assert_eq!(by_jit, by_interp, "{options:?}");
            let mut split = args;
            let mut rt = Runtime::new();
            compiled
                .call_with(procs.forward, &mut split, &mut rt)
                .expect("forward");
            compiled
                .call_with(procs.reverse, &mut split, &mut rt)
                .expect("reverse");
            let (_, split_adjoints) = split_args(&procs, split);
            let (_, adjoints) = split_args(&procs, by_interp);
            assert_eq!(split_adjoints, adjoints, "{options:?}: split");
        }
    }
}

/// A module variable (a global) written by the caller, read and
/// overwritten by the callee.
const GLOBAL_VARIABLE: &str = "
module blk
  double precision c
end module
subroutine g2(y)
  use blk
  double precision y
  y = y*c + sin(c)
  c = c*y
end subroutine
subroutine g1(x, y)
  use blk
  double precision x, y
  c = x*x
  call g2(y)
  y = y + c*x
end subroutine
";

#[test]
fn dot_product_global_variable() {
    let m = compile_fortran(GLOBAL_VARIABLE, SourceForm::Free);
    let case = fortran_case(m, "g1", &["x", "y"], &["y"], vec![scalar(0.7), scalar(1.2)]);
    check_dot_product(&case, 1e-13);
    check_gradient(&case, 1e-6);
}

/// A module variable read before it is written: its entry value is an
/// input the adjoint differentiates through (`s_b`).
const READ_BEFORE_WRITE_GLOBAL: &str = "
module st
  double precision s
end module
subroutine acc(x, y)
  use st
  double precision x, y
  s = s + x
  y = s*s
end subroutine
";

/// Joint reversal (`foo_b`) called twice from the same state gives the same
/// adjoint, in the interpreter and compiled: the adjoint of an active
/// global left by the first call does not leak into the second.
#[test]
fn joint_reversal_starts_global_adjoints_at_zero() {
    use adjit_ir::GlobalId;
    use adjit_jit::codegen::{CompiledModule, JitOptions};
    let m = compile_fortran(READ_BEFORE_WRITE_GLOBAL, SourceForm::Free);
    let case = fortran_case(m, "acc", &["x"], &["y"], vec![scalar(0.7), scalar(0.0)]);
    let s = case.module.globals.iter().position(|g| g.name == "st::s");
    let s = GlobalId(s.expect("global s") as u32);
    let mut seeds = HashMap::new();
    seeds.insert(1usize, scalar(1.0));
    // y = (s0 + x)^2: dy/dx = 2 (s0 + x) at s0 = 0.5, x = 0.7.
    let expected = 2.0 * (0.5 + 0.7);
    for options in all_options() {
        let (module, procs) = adjoint(
            &case.module,
            case.proc,
            &case.independents,
            &case.dependents,
            &options,
        )
        .expect("adjoint");
        let mut interp = Interpreter::new(&module);
        let compiled = CompiledModule::compile(&module, &JitOptions::default()).expect("compiles");
        for call in 0..2 {
            interp.set_global(s, &scalar(0.5)).expect("set s");
            let mut args = sweep_args(&procs, &case.args, &seeds);
            interp.call(procs.combined, &mut args).expect("runs");
            let (primal, adjoints) = split_args(&procs, args);
            assert_eq!(adjoints[&0], scalar(expected), "{options:?}: call {call}");
            assert_eq!(primal[1], scalar(1.44), "{options:?}: call {call}");
            compiled.set_global(s, &scalar(0.5)).expect("set s");
            let mut args = sweep_args(&procs, &case.args, &seeds);
            compiled.call(procs.combined, &mut args).expect("runs");
            let (_, adjoints) = split_args(&procs, args);
            assert_eq!(
                adjoints[&0],
                scalar(expected),
                "{options:?}: JIT call {call}"
            );
        }
    }
}

/// A global both independent and dependent (the module variable `c` of
/// [`GLOBAL_VARIABLE`], written by the caller and read and overwritten by
/// the callee): joint and split reversal satisfy the dot-product identity
/// with the tangent, where the global's seed and direction travel in its
/// adjoint and tangent globals; two reverse sweeps over one tape (globals
/// and stacks restored in between) give the same adjoints.
#[test]
fn a_global_as_independent_and_dependent() {
    use adjit_ir::GlobalId;
    let m = compile_fortran(GLOBAL_VARIABLE, SourceForm::Free);
    let case = fortran_case(
        m,
        "g1",
        &["x", "c"],
        &["y", "c"],
        vec![scalar(0.7), scalar(1.2)],
    );
    let named = |module: &Module, name: &str| {
        let i = module.globals.iter().position(|g| g.name == name);
        GlobalId(i.unwrap_or_else(|| panic!("global {name}")) as u32)
    };
    let c = named(&case.module, "blk::c");
    let (c0, dx, dc, yb, cb) = (0.3, 0.8, -0.6, 0.9, 0.45);
    // Tangent: directions on x and c; y_d and the final c_d out.
    let (tmod, tproc) = tangent(
        &case.module,
        case.proc,
        &case.independents,
        &case.dependents,
        &TangentOptions::default(),
    )
    .expect("tangent");
    let c_d = named(&tmod, "blk::c_d");
    let mut interp = Interpreter::new(&tmod);
    interp.set_global(c, &scalar(c0)).unwrap();
    interp.set_global(c_d, &scalar(dc)).unwrap();
    let mut targs = vec![scalar(0.7), scalar(dx), scalar(1.2), scalar(0.0)];
    interp.call(tproc, &mut targs).expect("tangent runs");
    let lhs = targs[3].get_f64(0) * yb + interp.global(c_d).unwrap().get_f64(0) * cb;
    let mut seeds = HashMap::new();
    seeds.insert(1usize, scalar(yb));
    for options in all_options() {
        let (module, procs) = adjoint(
            &case.module,
            case.proc,
            &case.independents,
            &case.dependents,
            &options,
        )
        .expect("adjoint");
        let c_b = named(&module, "blk::c_b");
        let rhs_of = |interp: &Interpreter<'_>, args: Vec<Buffer>| {
            let (_, adjoints) = split_args(&procs, args);
            dx * adjoints[&0].get_f64(0) + dc * interp.global(c_b).unwrap().get_f64(0)
        };
        // Joint: the seed of c in c_b on entry.
        let mut interp = Interpreter::new(&module);
        interp.set_global(c, &scalar(c0)).unwrap();
        interp.set_global(c_b, &scalar(cb)).unwrap();
        let mut args = sweep_args(&procs, &case.args, &seeds);
        interp.call(procs.combined, &mut args).expect("joint");
        let joint = rhs_of(&interp, args);
        assert!(
            (joint - lhs).abs() <= 1e-13 * lhs.abs(),
            "{options:?}: joint {joint} vs tangent {lhs}"
        );
        // Split, two reverse sweeps over one tape.
        let mut interp = Interpreter::new(&module);
        interp.set_global(c, &scalar(c0)).unwrap();
        let mut fwd = sweep_args(&procs, &case.args, &seeds);
        interp.call(procs.forward, &mut fwd).expect("forward");
        let (tape, c_end) = (interp.save_stacks(), interp.global(c).unwrap().clone());
        for sweep in 0..2 {
            interp.restore_stacks(&tape);
            interp.set_global(c, &c_end).unwrap();
            interp.set_global(c_b, &scalar(cb)).unwrap();
            let mut args = fwd.clone();
            interp.call(procs.reverse, &mut args).expect("reverse");
            let split = rhs_of(&interp, args);
            assert!(
                (split - lhs).abs() <= 1e-13 * lhs.abs(),
                "{options:?}: split sweep {sweep}: {split} vs tangent {lhs}"
            );
        }
    }
}

/// A module variable written in one call, read nonlinearly in later ones
/// and overwritten after its use, and a SAVE local of a callee (the corpus
/// program `globals_across_calls.f90`): joint and split reversal agree with
/// the tangent and with finite differences under every option.
#[test]
fn dot_product_globals_across_calls() {
    let src = include_str!("../../../tests/corpus/globals_across_calls.f90");
    let m = compile_fortran(src, SourceForm::Free);
    for x in [[0.7, 1.3], [-0.4, 0.9]] {
        let case = fortran_case(
            m.clone(),
            "top",
            &["x"],
            &["y"],
            vec![Buffer::F64(x.to_vec()), Buffer::F64(vec![0.0; 4])],
        );
        check_dot_product(&case, 1e-13);
        check_gradient(&case, 1e-6);
    }
}

/// A module variable written two calls down (`sub2`) from a value that is
/// active in the intermediate procedure (`sub3`), which never names it;
/// the entry reads it afterwards.
const NESTED_GLOBAL_WRITE: &str = "
module m
  double precision :: g = 0d0
contains
  subroutine sub2(v)
    double precision, intent(inout) :: v
    g = tanh(v)
  end subroutine
  subroutine sub3(a)
    double precision, intent(in) :: a
    double precision :: t
    t = sin(a)
    call sub2(t)
  end subroutine
  subroutine top(x, r)
    double precision, intent(in) :: x
    double precision, intent(out) :: r
    call sub3(x)
    r = g*x
  end subroutine
end module
";

/// Joint reversal (`foo_b`, interpreter and JIT) and split reversal carry
/// the adjoint of a global written two calls down back through the
/// intermediate procedure that never names it, with every option.
#[test]
fn global_adjoint_flows_through_a_callee_that_does_not_name_it() {
    use adjit_jit::codegen::{CompiledModule, JitOptions};
    let m = compile_fortran(NESTED_GLOBAL_WRITE, SourceForm::Free);
    let x: f64 = 0.3;
    let case = fortran_case(m, "top", &["x"], &["r"], vec![scalar(x), scalar(0.0)]);
    let mut seeds = HashMap::new();
    seeds.insert(1usize, scalar(1.0));
    // r = tanh(sin x) x.
    let th = x.sin().tanh();
    let expected = th + x * (1.0 - th * th) * x.cos();
    for options in all_options() {
        // Joint and split with the interpreter (`run` checks they agree).
        let got = run(&case, options, &seeds).adjoints[&0].get_f64(0);
        assert!(
            (got - expected).abs() <= 1e-14,
            "{options:?}: {got} instead of {expected}"
        );
        let (module, procs) = adjoint(
            &case.module,
            case.proc,
            &case.independents,
            &case.dependents,
            &options,
        )
        .expect("adjoint");
        let compiled = CompiledModule::compile(&module, &JitOptions::default()).expect("compiles");
        let mut args = sweep_args(&procs, &case.args, &seeds);
        compiled.call(procs.combined, &mut args).expect("runs");
        let (_, adjoints) = split_args(&procs, args);
        let got = adjoints[&0].get_f64(0);
        assert!(
            (got - expected).abs() <= 1e-14,
            "{options:?}: JIT {got} instead of {expected}"
        );
    }
}

mod speed;
