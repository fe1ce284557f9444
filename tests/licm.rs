//! Loop versioning in the JIT (`adjit::jit::opt::licm`): counted loops
//! whose bounds checks are hoisted to one preheader test and whose
//! invariant element loads leave the loop give, bit for bit, the results
//! of the interpreter and of the JIT without the pass; and a failing call
//! reports the same error (element, variable, line) in all three, with
//! bounds checks on and off.

use adjit::engine::{Engine, Options};
use adjit::ir::interp::Interpreter;
use adjit::ir::{Buffer, Module, ProcId, RuntimeError};
use adjit::jit::codegen::{CompiledModule, JitOptions};

/// Loops of the shapes the pass versions: neighbours `x(i-1)`, `x(i+1)`,
/// invariant elements (`p(1)`, `p(k)`), a 2-D stencil `u(i-1, j)` inside
/// an outer loop, an I64 DO variable, `k + i` subscripts, a loop of zero
/// trips, and a loop that writes the array it reads at an invariant
/// element (not hoisted).
const SOURCE: &str = "\
subroutine stencil(n, m, k, x, p, y, u, v, s)
  integer n, m, k
  double precision x(n), p(3), y(n), u(0:n, m), v(n, m), s
  integer i, j
  integer(8) l
  double precision h
  h = 1.0d0 / (n + 1)
  do i = 2, n - 1
    y(i) = x(i-1) + x(i+1) * h * h * p(1) / 12.0d0 + exp(x(i) / (1 + p(2)*x(i)))
  end do
  do j = 2, m
    do i = 1, n
      v(i, j) = u(i-1, j) - 2 * u(i, j-1) + p(k) * s
    end do
  end do
  do l = 1, n - k
    y(k + l) = y(k + l) + x(l) * p(3)
  end do
  do i = n, 1
    y(i) = -1
  end do
  do i = 1, n
    s = s + x(i) * y(1)
    y(1) = y(1) * 0.5d0
  end do
end subroutine
";

/// The module of `source` and the procedure named `name`.
/// The scalar tangent of `entry` in `source` (of `of`, with respect to
/// `wrt`) on one back end, with its engine.
fn tangent_on(
    backend: adjit::engine::Backend,
    source: &str,
    entry: &str,
    of: &str,
    wrt: &str,
) -> (Engine, adjit::engine::Tangent) {
    let sel = |s: &str| adjit::engine::Selection::parse_list(s).expect("selection");
    let options = Options {
        backend,
        ..Options::default()
    };
    let engine = Engine::from_sources(&[("licm.f90".into(), source.into())], options)
        .expect("the source compiles");
    let tangent = engine
        .tangent(Some(entry), &sel(of), &sel(wrt), 1)
        .expect("the tangent compiles");
    (engine, tangent)
}

fn module_of(source: &str, name: &str) -> (Module, ProcId) {
    let engine = Engine::from_sources(&[("licm.f90".into(), source.into())], Options::default())
        .expect("the source compiles");
    let module = engine.module().clone();
    let id = module
        .procs
        .iter()
        .position(|p| p.name == name)
        .expect("the procedure exists");
    (module, ProcId(id as u32))
}

/// Runs `proc` with the interpreter, the JIT with loop versioning and the
/// JIT without; returns the three outcomes.
fn three_ways(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
    bounds_checks: bool,
) -> [Result<Vec<Buffer>, RuntimeError>; 3] {
    let mut interp = Interpreter::new(module);
    interp.set_bounds_checks(bounds_checks);
    let mut a = args.to_vec();
    let reference = interp.call(proc, &mut a).map(|()| a);
    let jit = |version_loops| {
        let options = JitOptions {
            bounds_checks,
            version_loops,
            ..JitOptions::default()
        };
        let compiled = CompiledModule::compile(module, &options).expect("the module compiles");
        let mut a = args.to_vec();
        compiled.call(proc, &mut a).map(|()| a)
    };
    [reference, jit(true), jit(false)]
}

/// Asserts the three outcomes are identical (buffers bit for bit, or error
/// messages character for character) and returns the interpreter's.
fn agree(
    module: &Module,
    proc: ProcId,
    args: &[Buffer],
    checks: bool,
) -> Result<Vec<Buffer>, String> {
    let [interp, versioned, plain] = three_ways(module, proc, args, checks);
    let show = |r: Result<Vec<Buffer>, RuntimeError>| {
        r.map_err(|e| format!("line {}:{}: {e}", e.span.line, e.span.col))
    };
    let (interp, versioned, plain) = (show(interp), show(versioned), show(plain));
    assert_eq!(versioned, plain, "versioned loops vs plain JIT");
    assert_eq!(versioned, interp, "versioned loops vs interpreter");
    interp
}

fn stencil_args(n: usize, m: usize, k: i32, p_len: usize) -> Vec<Buffer> {
    let x: Vec<f64> = (0..n).map(|i| 0.3 + (i % 5) as f64 * 0.17).collect();
    let u: Vec<f64> = (0..(n + 1) * m).map(|i| (i as f64 * 0.37).sin()).collect();
    vec![
        Buffer::I32(vec![n as i32]),
        Buffer::I32(vec![m as i32]),
        Buffer::I32(vec![k]),
        Buffer::F64(x),
        Buffer::F64((0..p_len).map(|i| 1.25 + i as f64).collect()),
        Buffer::F64(vec![0.0; n]),
        Buffer::F64(u),
        Buffer::F64(vec![0.0; n * m]),
        Buffer::F64(vec![0.5]),
    ]
}

#[test]
fn the_stencil_loops_are_versioned() {
    let (module, proc) = module_of(SOURCE, "stencil");
    let optimized = adjit::jit::opt::optimize_for_jit(&module, true, true);
    let versions = optimized.versions.proc(proc).expect("the procedure");
    // The first three inner loops, the zero-trip loop and the last one.
    assert_eq!(versions.guards.len(), 5, "versioned loops");
    let off = adjit::jit::opt::optimize_for_jit(&module, true, false);
    assert!(off.versions.proc(proc).is_none());
}

#[test]
fn versioned_loops_agree_bit_for_bit() {
    let (module, proc) = module_of(SOURCE, "stencil");
    for (n, m, k) in [(1, 1, 1), (2, 2, 1), (7, 3, 2), (40, 5, 3), (1, 0, 1)] {
        for checks in [true, false] {
            let out = agree(&module, proc, &stencil_args(n, m, k, 3), checks);
            assert!(out.is_ok(), "n = {n}, m = {m}, k = {k}: {out:?}");
        }
    }
}

#[test]
fn an_out_of_bounds_element_in_a_versioned_loop_is_reported_as_without_the_pass() {
    let (module, proc) = module_of(SOURCE, "stencil");
    // p(k) with k = 4 fails in the 2-D loop (p has 3 elements); k = 0
    // fails at p(0); `p` shorter than declared fails at p(1), p(2) or p(3)
    // in the first loop.
    let cases = [
        (9, 3, 4, 3, "`p`"),
        (9, 3, 0, 3, "`p`"),
        (9, 3, 1, 2, "`p`"),
        (9, 3, 1, 0, "`p`"),
    ];
    for (n, m, k, p_len, what) in cases {
        let args = stencil_args(n, m, k, p_len);
        let err = agree(&module, proc, &args, true).expect_err("the call fails");
        assert!(err.starts_with("line "), "{err}");
        assert!(err.contains(what), "{err} names {what}");
    }
    // Without bounds checks, the storage check still stops p(k) past the
    // buffer (k = 4 with 3 elements), in the same words.
    let err = agree(&module, proc, &stencil_args(9, 3, 4, 3), false);
    assert!(err.is_err(), "{err:?}");
}

/// A loop reading `x(i+1)` one element past the end, after writing the
/// elements before: the error names the last iteration's element and line,
/// and the earlier stores happened.
#[test]
fn the_first_failing_element_and_its_line_are_named() {
    let source = "\
subroutine shift(n, x, y)
  integer n, i
  double precision x(n), y(n)
  do i = 1, n
    y(i) = 2 * x(i)
    y(i) = y(i) + x(i+1)
  end do
end subroutine
";
    let (module, proc) = module_of(source, "shift");
    let args = vec![
        Buffer::I32(vec![4]),
        Buffer::F64(vec![1.0, 2.0, 3.0, 4.0]),
        Buffer::F64(vec![0.0; 4]),
    ];
    let err = agree(&module, proc, &args, true).expect_err("x(5) is out of bounds");
    assert!(err.starts_with("line 6:"), "{err}");
    assert!(err.contains("`x`"), "{err}");
    assert!(err.contains('5'), "{err}");
    // With the checks the storage check replaces: x(n+1) is outside the
    // storage of x.
    let err = agree(&module, proc, &args, false).expect_err("x(5) is outside x");
    assert!(err.starts_with("line 6:"), "{err}");
}

/// The adjoint of the stencil: its recording sweep and its reverse sweep
/// (a count-down loop over the DO variable) are versioned, and the
/// vector-Jacobian product equals the interpreter's bit for bit.
#[test]
fn versioned_adjoint_sweeps_agree_with_the_interpreter() {
    use adjit::ad::adjoint::AdjointOptions;
    use adjit::engine::{Backend, Selection};
    let sel = |s: &str| Selection::parse_list(s).expect("selection");
    let vjp = |backend| {
        let options = Options {
            backend,
            ..Options::default()
        };
        let engine = Engine::from_sources(&[("licm.f90".into(), SOURCE.into())], options)
            .expect("the source compiles");
        let adjoint = engine
            .adjoint(
                Some("stencil"),
                &sel("y,v,s"),
                &sel("x,p,u,s"),
                &AdjointOptions::default(),
            )
            .expect("the adjoint compiles");
        let mut args = engine.procedure(Some("stencil")).unwrap().args();
        args.apply_settings(&[
            "n=30",
            "m=4",
            "k=2",
            "x=0.75",
            "p=1.5,0.25,2.0",
            "u=0.5",
            "s=0.5",
        ])
        .unwrap();
        let outputs = 30 + 30 * 4 + 1;
        let seed: Vec<f64> = (0..outputs).map(|i| 1.0 + (i % 7) as f64 * 0.125).collect();
        let (values, grad) = adjoint.vjp(&args, &seed).expect("the sweep runs");
        (values, grad, adjoint)
    };
    let (jv, jg, jit) = vjp(Backend::Jit);
    let (iv, ig, _) = vjp(Backend::Interpreter);
    assert_eq!(jv, iv);
    assert_eq!(
        jg.iter().map(|g| g.to_bits()).collect::<Vec<_>>(),
        ig.iter().map(|g| g.to_bits()).collect::<Vec<_>>()
    );
    assert!(jg.iter().any(|&g| g != 0.0));
    // The reverse sweep has count-down loops the pass versions.
    let (module, _) = jit.module();
    let optimized = adjit::jit::opt::optimize_for_jit(module, true, true);
    let guards: usize = optimized
        .versions
        .procs
        .iter()
        .map(|p| p.guards.len())
        .sum();
    assert!(guards >= 8, "{guards} versioned loops in the adjoint");
}

/// A parameter given less storage than it declares (Fortran 77): the
/// versioned loop's test covers the storage, so the element past it is
/// reported by the original loop, with bounds checks on and off.
#[test]
fn the_storage_check_of_a_short_argument_still_holds() {
    let source = "\
subroutine outer(n, s)
  integer n
  double precision s, a(3)
  a = 1.5d0
  call inner(n, a, s)
end subroutine

subroutine inner(m, x, s)
  integer m, i
  double precision x(m), s
  do i = 1, m
    s = s + x(i) * 2
  end do
end subroutine
";
    let (module, proc) = module_of(source, "outer");
    let optimized = adjit::jit::opt::optimize_for_jit(&module, true, true);
    let inner = module.procs.iter().position(|p| p.name == "inner").unwrap();
    assert_eq!(optimized.versions.procs[inner].guards.len(), 1);
    for checks in [true, false] {
        let fits = agree(
            &module,
            proc,
            &[Buffer::I32(vec![3]), Buffer::F64(vec![0.0])],
            checks,
        );
        assert_eq!(fits, Ok(vec![Buffer::I32(vec![3]), Buffer::F64(vec![9.0])]));
        let args = [Buffer::I32(vec![5]), Buffer::F64(vec![0.0])];
        let err = agree(&module, proc, &args, checks).expect_err("x(4) is past the storage");
        assert!(err.starts_with("line 12:"), "{err}");
        assert!(err.contains("storage of 3 elements"), "{err}");
    }
}

/// What `v` computes, written out through its operands, so that two
/// instructions computing the same thing from the same loads and
/// constants have the same text.
fn shape(proc: &adjit::ir::Proc, v: adjit::ir::Value) -> String {
    let kind = &proc.inst(v).kind;
    let mut operands = Vec::new();
    kind.for_each_operand(|x| operands.push(shape(proc, x)));
    let head = format!("{:?}", kind.map_operands(|_| adjit::ir::Value(0)));
    format!("{head}[{}]", operands.join(", "))
}

#[test]
fn a_preheader_test_computes_each_bound_and_checks_each_range_once() {
    // `f(i-1)`, `f(i)` and `f(i+1)` are each read and written, `x(i)` is
    // read three times: the range test lists every element range once and
    // computes no comparison twice.
    let source = "\
subroutine sweep(n, x, p, f)
  integer n
  double precision x(n), p(2), f(n)
  integer i
  do i = 2, n - 1
    f(i-1) = f(i-1) + x(i) + p(1) * exp(x(i) / (1 + p(2) * x(i)))
    f(i) = f(i) - 2 * x(i) + p(1) * x(i)
    f(i+1) = x(i) + p(2)
  end do
end subroutine
";
    let (module, proc) = module_of(source, "sweep");
    let optimized = adjit::jit::opt::optimize_for_jit(&module, true, true);
    let versions = optimized.versions.proc(proc).expect("the procedure");
    assert_eq!(versions.guards.len(), 1, "one versioned loop");
    let ir = &optimized.module.procs[proc.index()];
    for (&guard, loop_guard) in &versions.guards {
        let accesses = &loop_guard.accesses;
        for (k, a) in accesses.iter().enumerate() {
            assert!(!accesses[..k].contains(a), "range listed twice: {a:?}");
        }
        // f(i-1), f(i), f(i+1), x(i), p(1), p(2).
        assert_eq!(accesses.len(), 6, "{accesses:?}");
        let block = ir
            .blocks
            .iter()
            .find(|b| b.insts.contains(&guard))
            .expect("the guard's block");
        let mut seen = std::collections::HashSet::new();
        for &v in &block.insts {
            if matches!(ir.inst(v).kind, adjit::ir::Inst::Cmp(..)) {
                let s = shape(ir, v);
                assert!(seen.insert(s.clone()), "computed twice: {s}");
            }
        }
    }
    let n = 9;
    let args = vec![
        Buffer::I32(vec![n as i32]),
        Buffer::F64((0..n).map(|i| 0.2 + i as f64 * 0.1).collect()),
        Buffer::F64(vec![1.5, 0.25]),
        Buffer::F64(vec![0.0; n]),
    ];
    let out = agree(&module, proc, &args, true).expect("the loop runs");
    let Buffer::F64(f) = &out[3] else {
        panic!("f is real")
    };
    // f(n) is written by the last trip only: x(n-1) + p(2).
    assert_eq!(f[n - 1], 0.2 + (n - 2) as f64 * 0.1 + 0.25);
}

/// A reference with two subscripts the pass leaves checked (`k*k` is not
/// affine): when one or both dimensions fail, or only the storage check
/// (bounds checks off), the JIT names the first failing dimension, the
/// subscript and the bounds in the interpreter's words.
#[test]
fn the_first_failing_dimension_of_a_checked_reference_is_named() {
    let source = "\
subroutine pick(a, b, u, s)
  integer a, b
  double precision u(2, 3), s
  s = u(a*a, b*b)
end subroutine
";
    let (module, proc) = module_of(source, "pick");
    let args = |a: i32, b: i32| {
        vec![
            Buffer::I32(vec![a]),
            Buffer::I32(vec![b]),
            Buffer::F64((0..6).map(f64::from).collect()),
            Buffer::F64(vec![0.0]),
        ]
    };
    // In bounds: u(1, 1) and u(1, 1) from negative subscripts.
    for (a, b) in [(1, 1), (-1, -1)] {
        let out = agree(&module, proc, &args(a, b), true).expect("in bounds");
        assert_eq!(out[3], Buffer::F64(vec![0.0]));
    }
    for (a, b, what) in [
        (2, 1, "index 4 outside 1:2 in dimension 1"),
        (1, 2, "index 4 outside 1:3 in dimension 2"),
        (3, 3, "index 9 outside 1:2 in dimension 1"),
        (0, 0, "index 0 outside 1:2 in dimension 1"),
        (1, 0, "index 0 outside 1:3 in dimension 2"),
    ] {
        let err = agree(&module, proc, &args(a, b), true).expect_err("out of bounds");
        assert!(err.contains(what), "{err} says {what}");
    }
    // Without bounds checks, u(4, 1) is the 4th of 6 elements (no error),
    // u(3, 3) is past the storage.
    let out = agree(&module, proc, &args(2, 1), false).expect("inside the storage");
    assert_eq!(out[3], Buffer::F64(vec![3.0]));
    agree(&module, proc, &args(3, 3), false).expect_err("past the storage");
}

/// A tangent loop whose strong-zero products have loop-invariant factors
/// (`h * h * p(1)`, `p(2)` and their tangents): the versioned copy computes
/// the invariant products and their guards once, before the first
/// iteration, and gives the interpreter's bits, the sign of zero included,
/// where the invariant factors or their tangents are zero, signed zeros,
/// infinite or NaN.
#[test]
fn tangents_with_lifted_invariant_guards_agree_bit_for_bit() {
    use adjit::engine::Backend;
    const BRATU_LIKE: &str = "\
subroutine f(n, x, p, y)
  integer n
  double precision x(n), p(2), y(n)
  integer i
  double precision h
  h = 2.0d0 / (n + 1)
  do i = 2, n - 1
    y(i) = x(i-1) - 2 * x(i) + h * h * p(1) / 12.0d0 * exp(x(i) / (1 + p(2) * x(i)))
  end do
end subroutine
";
    let tangent_of = |backend| tangent_on(backend, BRATU_LIKE, "f", "y", "x,p");
    let (jit_engine, jit) = tangent_of(Backend::Jit);
    let (_, interp) = tangent_of(Backend::Interpreter);
    let n = 9;
    let specials = [1.5, 0.0, -0.0, f64::INFINITY, f64::NAN, -2.0];
    let mut nonzero = 0;
    for (k, &p1) in specials.iter().enumerate() {
        for &dp in &specials {
            let mut args = jit_engine.procedure(Some("f")).unwrap().args();
            args.set_scalar("n", n as f64).unwrap();
            let x: Vec<f64> = (0..n).map(|i| 0.25 + 0.125 * i as f64).collect();
            args.set_array("x", &x).unwrap();
            args.set_array("p", &[p1, specials[(k + 2) % specials.len()]])
                .unwrap();
            let seed: Vec<f64> = (0..n + 2)
                .map(|i| match i {
                    i if i == n => dp,
                    i if i == n + 1 => -dp,
                    i => [1.0, 0.0, -0.0, 0.5][i % 4],
                })
                .collect();
            let from_jit = jit.directional(&args, &seed).expect("the JIT tangent runs");
            let from_interp = interp
                .directional(&args, &seed)
                .expect("the interpreted tangent runs");
            let bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&from_jit),
                bits(&from_interp),
                "p(1) = {p1}, dp = {dp}"
            );
            nonzero += from_jit.iter().filter(|&&d| d != 0.0).count();
        }
    }
    assert!(nonzero > 0, "every tangent was zero");
    // The versioned copy of the tangent's loop lifts the invariant guards:
    // it holds fewer selects than the original loop.
    let (module, _) = jit.module();
    let optimized = adjit::jit::opt::optimize_for_jit(module, true, true);
    let selects = |proc: &adjit::ir::Proc| {
        proc.blocks
            .iter()
            .map(|b| {
                b.insts
                    .iter()
                    .filter(|&&v| matches!(proc.inst(v).kind, adjit::ir::Inst::Select(..)))
                    .count()
            })
            .collect::<Vec<_>>()
    };
    let lifted = optimized.module.procs.iter().any(|proc| {
        let per_block = selects(proc);
        let most = per_block.iter().copied().max().unwrap_or(0);
        // The original body and its fast copy: the copy's body has fewer.
        per_block.iter().any(|&c| c > 0 && c < most)
            && optimized
                .versions
                .procs
                .iter()
                .any(|p| !p.guards.is_empty())
    });
    assert!(
        lifted,
        "no versioned tangent loop lifted its invariant guards"
    );
}

/// The tangent zeroes the derivatives of its active outputs at entry, one
/// loop per dimension: loops of the shape loop versioning recognises, so
/// that the fill runs without a bounds check per element (each array's
/// innermost fill loop is versioned), and the tangent agrees with the
/// interpreter's bit for bit.
#[test]
fn the_zero_fills_of_a_tangent_are_versioned() {
    use adjit::engine::Backend;
    const FILLED: &str = "\
subroutine spread(n, m, x, y, v)
  integer n, m
  double precision x(n), y(n), v(n, m)
  y(1) = x(1) * 2
  v(n, m) = x(n) * y(1)
end subroutine
";
    let tangent_of = |backend| tangent_on(backend, FILLED, "spread", "y,v", "x");
    let (jit_engine, jit) = tangent_of(Backend::Jit);
    let (_, interp) = tangent_of(Backend::Interpreter);
    let (module, root) = jit.module();
    let optimized = adjit::jit::opt::optimize_for_jit(module, true, true);
    let versions = optimized.versions.proc(root).expect("the tangent");
    // The fill of y_d and the inner (first-dimension) fill of v_d.
    assert_eq!(versions.guards.len(), 2, "versioned zero fills");
    for (n, m) in [(1, 1), (3, 2), (6, 4)] {
        let mut args = jit_engine.procedure(Some("spread")).unwrap().args();
        args.set_scalar("n", n as f64).unwrap();
        args.set_scalar("m", m as f64).unwrap();
        let x: Vec<f64> = (0..n).map(|i| 1.5 - i as f64).collect();
        args.set_array("x", &x).unwrap();
        let seed: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
        let from_jit = jit.directional(&args, &seed).expect("the JIT tangent runs");
        let from_interp = interp
            .directional(&args, &seed)
            .expect("the interpreted tangent runs");
        let bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&from_jit), bits(&from_interp), "n = {n}, m = {m}");
        // dy(1) = 2 dx(1); dv(n, m) = dx(n) y(1) + x(n) dy(1); the rest 0.
        let mut expected = vec![0.0; n + n * m];
        expected[0] = 2.0 * seed[0];
        expected[n + n * m - 1] = seed[n - 1] * (2.0 * x[0]) + x[n - 1] * (2.0 * seed[0]);
        assert_eq!(from_jit, expected, "n = {n}, m = {m}");
    }
}

/// A caller of `stencil` and a procedure nothing calls.
const CALLER: &str = "\
subroutine caller(n, x, p, y, u, v, s)
  integer n
  double precision x(n), p(3), y(n), u(0:n, 2), v(n, 2), s
  call stencil(n, 2, 1, x, p, y, u, v, s)
end subroutine
subroutine unused(n, y)
  integer n
  double precision y(n)
  integer i
  do i = 2, n - 1
    y(i) = y(i-1) + y(i+1)
  end do
end subroutine
";

/// Optimizing only the procedures compiled (a root and its callees) leaves
/// the others as they were, and optimizes the wanted ones exactly as
/// optimizing the whole module does.
#[test]
fn only_the_wanted_procedures_are_optimized() {
    let source = format!("{SOURCE}{CALLER}");
    let (module, caller) = module_of(&source, "caller");
    let (_, stencil) = module_of(&source, "stencil");
    let (_, unused) = module_of(&source, "unused");
    let mut wanted = vec![false; module.procs.len()];
    wanted[caller.index()] = true;
    wanted[stencil.index()] = true;
    let all = adjit::jit::opt::optimize_for_jit(&module, true, true);
    let some = adjit::jit::opt::optimize_procs_for_jit(&module, true, true, true, Some(&wanted));
    let shown = |m: &Module, p: ProcId| format!("{:?}", m.proc(p));
    for p in [caller, stencil] {
        assert_eq!(shown(&some.module, p), shown(&all.module, p));
        let (a, b) = (
            all.versions.proc(p).unwrap(),
            some.versions.proc(p).unwrap(),
        );
        assert_eq!(a.unchecked, b.unchecked);
        assert_eq!(a.guards, b.guards);
    }
    assert_ne!(shown(&all.module, unused), shown(&module, unused));
    assert_eq!(shown(&some.module, unused), shown(&module, unused));
    let none = some.versions.proc(unused).expect("an entry per procedure");
    assert!(none.guards.is_empty() && none.unchecked.is_empty());
}

/// The product's adjoint records one value per iteration and pops it back
/// in a count-down loop: both loops are versioned with a test that the
/// tape's current segment has room for (holds) every word, and their fast
/// copies push and pop without the per-word segment test. With segments
/// of a few words the test fails and the original loops switch segments;
/// both ways give the interpreter's result bit for bit.
#[test]
fn tape_pushes_and_pops_of_versioned_loops_agree_across_segment_switches() {
    use adjit::ad::adjoint::AdjointOptions;
    use adjit::engine::Selection;
    use adjit::jit::opt::licm::StackRoom;
    use adjit::jit::runtime::Runtime;
    use adjit::jit::stack::StackConfig;
    let source = "\
subroutine product(n, x, y)
  integer n
  double precision x(n), y
  integer i
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
end subroutine
";
    let engine = Engine::from_sources(&[("licm.f90".into(), source.into())], Options::default())
        .expect("the source compiles");
    let sel = |s: &str| Selection::parse_list(s).expect("selection");
    let adjoint = engine
        .adjoint(None, &sel("y"), &sel("x"), &AdjointOptions::default())
        .expect("the adjoint compiles");
    let (module, procs) = adjoint.module();
    let optimized = adjit::jit::opt::optimize_for_jit(module, true, true);
    let rooms: Vec<StackRoom> = [procs.forward, procs.reverse]
        .iter()
        .filter_map(|&p| optimized.versions.proc(p))
        .flat_map(|p| p.guards.values())
        .flat_map(|g| g.stacks.iter().cloned())
        .collect();
    assert!(rooms.iter().any(|r| !r.pops), "a recording loop: {rooms:?}");
    assert!(rooms.iter().any(|r| r.pops), "a reverse loop: {rooms:?}");
    let n = 100;
    let args = vec![
        Buffer::I32(vec![n as i32]),
        Buffer::F64((0..n).map(|i| 1.0 + 1e-3 * (i % 13) as f64).collect()),
        Buffer::F64(vec![0.0; n]),
        Buffer::F64(vec![0.0]),
        Buffer::F64(vec![1.0]),
    ];
    let mut reference = args.clone();
    Interpreter::new(module)
        .call(procs.combined, &mut reference)
        .expect("the interpreter runs the adjoint");
    let compiled =
        CompiledModule::compile(module, &JitOptions::default()).expect("the module compiles");
    for segment_bytes in [1 << 16, 64] {
        let mut rt = Runtime::with_config(StackConfig {
            initial_segment_bytes: segment_bytes,
            max_segment_bytes: segment_bytes,
            ..StackConfig::default()
        });
        let mut got = args.clone();
        compiled
            .call_with(procs.combined, &mut got, &mut rt)
            .expect("the JIT runs the adjoint");
        assert_eq!(got, reference, "segments of {segment_bytes} bytes");
    }
    let Buffer::F64(grad) = &reference[2] else {
        panic!("x_b is F64");
    };
    assert!(grad.iter().all(|&g| g > 0.9), "{grad:?}");
}

/// A loop whose body branches: an IF/ELSE diamond with an IF inside its
/// THEN part, each arm referencing other elements, and a statement after
/// the join.
const BRANCHES: &str = "\
subroutine clip(n, m, x, y, lo, s)
  integer n, m, i
  double precision x(n), y(m), lo, s
  do i = 2, n - 1
    if (x(i) > lo) then
      y(i-1) = y(i-1) + x(i)
      if (x(i+1) > x(i)) s = s + x(i+1)
    else
      y(i+1) = x(i) - lo
    end if
    y(i) = y(i) * 0.5d0
  end do
end subroutine
";

fn clip_args(n: usize, y_len: usize, lo: f64) -> Vec<Buffer> {
    vec![
        Buffer::I32(vec![n as i32]),
        Buffer::I32(vec![y_len as i32]),
        Buffer::F64((0..n).map(|i| ((i * 7) % 5) as f64 * 0.3).collect()),
        Buffer::F64((0..y_len).map(|i| 1.0 + i as f64 * 0.1).collect()),
        Buffer::F64(vec![lo]),
        Buffer::F64(vec![0.25]),
    ]
}

#[test]
fn a_loop_with_inner_ifs_is_versioned_and_agrees_bit_for_bit() {
    let (module, proc) = module_of(BRANCHES, "clip");
    let optimized = adjit::jit::opt::optimize_for_jit(&module, true, true);
    let versions = optimized.versions.proc(proc).expect("the procedure");
    assert_eq!(versions.guards.len(), 1, "the loop is versioned");
    for n in [1, 2, 3, 8, 41] {
        for lo in [-1.0, 0.5, 2.0] {
            for checks in [true, false] {
                let out = agree(&module, proc, &clip_args(n, n, lo), checks);
                assert!(out.is_ok(), "n = {n}, lo = {lo}: {out:?}");
            }
        }
    }
}

/// `y` one element short (`m = n - 1`): the ELSE arm's `y(i+1)` at the
/// last iteration is outside its bounds (and its storage), so the call
/// fails there, on line 9 naming `y`, when that arm runs, and succeeds
/// when the THEN arm runs instead (the preheader test fails: the
/// original loop runs).
#[test]
fn an_out_of_range_element_in_an_inner_if_fails_only_when_its_arm_runs() {
    let (module, proc) = module_of(BRANCHES, "clip");
    let n = 8;
    // x(7) = 0.3 * ((6 * 7) % 5) = 0.6: below lo = 2 (ELSE), above lo = 0.5 (THEN).
    for checks in [true, false] {
        let err = agree(&module, proc, &clip_args(n, n - 1, 2.0), checks)
            .expect_err("y(8) is outside y(7)");
        assert!(err.starts_with("line 9:"), "{err}");
        assert!(err.contains("`y`"), "{err}");
        let out = agree(&module, proc, &clip_args(n, n - 1, 0.5), checks);
        assert!(out.is_ok(), "{out:?}");
    }
}

/// In the versioned copy of the stencil's first loop, whose element
/// references cannot fail, the load of `x(i-1)` (which `exp` does not
/// need) follows the `exp` call, so that it does not live across the call
/// (`adjit::jit::opt::sink`); in the checked copy it stays before the
/// load of `x(i)` the call needs, so a failing reference is reported in
/// source order. Both agree with the interpreter ([`versioned_loops_agree_bit_for_bit`]).
#[test]
fn element_loads_the_exp_does_not_need_follow_it_in_the_versioned_copy() {
    use adjit::ir::{Inst, UnaryOp};
    let (module, stencil) = module_of(SOURCE, "stencil");
    let optimized = adjit::jit::opt::optimize_for_jit(&module, true, true);
    let proc = optimized.module.proc(stencil);
    let unchecked = &optimized.versions.proc(stencil).unwrap().unchecked;
    let (mut after, mut before) = (0, 0);
    for block in &proc.blocks {
        let kind = |v: &adjit::ir::Value| &proc.insts[v.index()].kind;
        let Some(at) = block
            .insts
            .iter()
            .position(|v| matches!(kind(v), Inst::Unary(UnaryOp::Exp, _)))
        else {
            continue;
        };
        // The element loads of the block the exp does not read (x(i-1), x(i+1), p(1)).
        let Inst::Unary(_, arg) = kind(&block.insts[at]) else {
            unreachable!()
        };
        let mut needed = vec![*arg];
        let mut i = 0;
        while i < needed.len() {
            proc.insts[needed[i].index()]
                .kind
                .for_each_operand(|o| needed.push(o));
            i += 1;
        }
        for (p, v) in block.insts.iter().enumerate() {
            if matches!(kind(v), Inst::LoadElem(..)) && !needed.contains(v) {
                if p > at {
                    assert!(unchecked.contains(v), "only unchecked loads move");
                    after += 1;
                } else {
                    before += 1;
                }
            }
        }
    }
    assert!(
        after >= 2,
        "x(i-1) and x(i+1) follow the versioned exp: {after}"
    );
    assert!(before >= 1, "the checked copy keeps its order: {before}");
}
