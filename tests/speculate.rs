//! Strong-zero guards decided by one test per stretch
//! (`adjit::jit::opt::speculate`, `JitOptions::speculate_guards`): adjoints
//! whose sweeps the pass splits give, bit for bit, the interpreter's results (signs of zero included)
//! where partials or adjoints are zero, signed zeros, infinite, NaN or so
//! small that their products underflow (NaNs compare as NaN, whatever
//! their sign), so that the cold copy with the
//! guards runs as well as the fast one.

use adjit::ad::adjoint::AdjointOptions;
use adjit::engine::{Backend, Engine, Options, Selection};
use adjit::ir::interp::Interpreter;
use adjit::ir::{Buffer, Module, ProcId};
use adjit::jit::codegen::{CompiledModule, JitOptions};
use adjit::jit::opt::speculate::{speculate_module_in, Scope};

/// The product of seed 000 and a Bratu-like stencil with an `exp` term:
/// reverse sweeps with several guarded products per iteration.
const SOURCE: &str = "\
subroutine product(n, x, y)
  integer n
  double precision x(n), y
  integer i
  y = 1
  do i = 1, n
    y = y*x(i)
  end do
end subroutine
subroutine bratu(n, x, p, y)
  integer n
  double precision x(n), p(2), y(n)
  integer i
  double precision h
  h = 2.0d0 / (n + 1)
  do i = 2, n - 1
    y(i) = x(i-1) - 2 * x(i) * x(i+1) + h * h * p(1) / 12.0d0 * exp(x(i) / (1 + p(2) * x(i)))
  end do
end subroutine
subroutine bratu3(n, x, p, y)
  integer n
  double precision x(n), p(2), y(n)
  integer i
  double precision h
  h = 2.0d0 / (n + 1)
  y = 0
  do i = 2, n - 1
    y(i-1) = y(i-1) + x(i) + h * h * p(1) / 12.0d0 * exp(x(i) / (1 + p(2) * x(i)))
    y(i) = y(i) - 2 * x(i) + h * h * p(1) / 1.2d0 * exp(x(i) / (1 + p(2) * x(i)))
    y(i+1) = x(i) + h * h * p(1) / 12.0d0 * exp(x(i) / (1 + p(2) * x(i)))
  end do
end subroutine
";

/// The engine of [`SOURCE`] on a backend.
fn engine(backend: Backend) -> Engine {
    let options = Options {
        backend,
        ..Options::default()
    };
    Engine::from_sources(&[("speculate.f90".into(), SOURCE.into())], options)
        .expect("the source compiles")
}

fn sel(s: &str) -> Vec<Selection> {
    Selection::parse_list(s).expect("selection")
}

/// The values the inputs and seeds cycle through: ordinary numbers, signed
/// zeros, infinities, NaN and numbers whose products underflow.
const SPECIALS: [f64; 9] = [
    1.5,
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NAN,
    -2.0,
    1e-200,
    -1e-170,
    f64::NEG_INFINITY,
];

/// The arguments of `pid` (a derivative of `name`, n elements, `p` of 2,
/// the product's `y` a scalar, each set by `value(parameter name, element
/// count)`), and what the interpreter leaves in them.
fn arguments_and_interpretation(
    module: &Module,
    pid: ProcId,
    name: &str,
    n: usize,
    value: &dyn Fn(&str, usize) -> Vec<f64>,
) -> (Vec<Buffer>, Vec<Buffer>) {
    let proc = &module.procs[pid.index()];
    let args: Vec<Buffer> = proc
        .params
        .iter()
        .map(|&v| {
            let var = proc.var(v);
            if var.name == "n" {
                Buffer::I32(vec![n as i32])
            } else {
                // The primal name of a derivative parameter `x_b` / `x_d`.
                let primal = var.name.trim_end_matches("_b").trim_end_matches("_d");
                let len = match primal {
                    "p" => 2,
                    "y" if name == "product" => 1,
                    _ => n,
                };
                Buffer::F64(value(&var.name, len))
            }
        })
        .collect();
    let mut interpreted = args.clone();
    Interpreter::new(module)
        .call(pid, &mut interpreted)
        .expect("the interpreter runs");
    (args, interpreted)
}

/// Runs the adjoint `NAME_b` of `name` (outputs `of`, inputs `wrt`) with
/// the interpreter and with the JIT with the pass on, each parameter set
/// by `value(parameter name, element count)`; asserts that every argument
/// ends with the same bits and returns the JIT's derivatives of `wrt`.
fn adjoint_agrees(
    name: &str,
    of: &str,
    wrt: &str,
    n: usize,
    value: &dyn Fn(&str, usize) -> Vec<f64>,
) -> Vec<f64> {
    let engine = engine(Backend::Interpreter);
    let adjoint = engine
        .adjoint(Some(name), &sel(of), &sel(wrt), &AdjointOptions::default())
        .expect("the adjoint compiles");
    let (module, _) = adjoint.module();
    let pid = ProcId(
        module
            .procs
            .iter()
            .position(|p| p.name == format!("{name}_b"))
            .expect("the adjoint procedure") as u32,
    );
    let (args, interpreted) = arguments_and_interpretation(module, pid, name, n, value);
    let proc = &module.procs[pid.index()];
    // Every stretch split, and the default: the stretches of loop-carried
    // scalars only.
    let every = JitOptions {
        speculate_guards: true,
        ..JitOptions::default()
    };
    let mut results = Vec::new();
    for options in [every, JitOptions::default()] {
        let compiled = CompiledModule::compile(module, &options).expect("the module compiles");
        let mut native = args.clone();
        compiled.call(pid, &mut native).expect("the JIT runs");
        results.push(native);
    }
    let native = results.swap_remove(0);
    // Bits, every NaN as one (the two backends' NaNs may differ in sign
    // with or without the pass).
    let bits = |b: &Buffer| match b {
        Buffer::F64(v) => v
            .iter()
            .map(|d| if d.is_nan() { f64::NAN } else { *d }.to_bits())
            .collect::<Vec<_>>(),
        other => vec![format!("{other:?}").len() as u64],
    };
    let mut derivatives = Vec::new();
    for (k, (default, b)) in results[0].iter().zip(&interpreted).enumerate() {
        let var = proc.var(proc.params[k]);
        assert_eq!(
            bits(default),
            bits(b),
            "{name} (default): {} from {args:?}",
            var.name
        );
    }
    for (k, (a, b)) in native.iter().zip(&interpreted).enumerate() {
        let var = proc.var(proc.params[k]);
        assert_eq!(bits(a), bits(b), "{name}: {} from {args:?}", var.name);
        if let (Buffer::F64(v), true) = (a, wrt.split(',').any(|w| var.name == format!("{w}_b"))) {
            derivatives.extend(v);
        }
    }
    derivatives
}

#[test]
fn the_product_adjoint_agrees_bit_for_bit_at_special_values() {
    let n = 7;
    let m = SPECIALS.len();
    let mut cold = 0;
    for k in 0..m {
        for j in 0..m {
            let value = |var: &str, len: usize| -> Vec<f64> {
                match var {
                    "x" => (0..len)
                        .map(|i| match i {
                            2 => SPECIALS[k],
                            5 => SPECIALS[(k + j) % m],
                            i => 0.5 + 0.25 * i as f64,
                        })
                        .collect(),
                    "y_b" => vec![SPECIALS[j]],
                    _ => vec![SPECIALS[(k + 1) % m]; len],
                }
            };
            let g = adjoint_agrees("product", "y", "x", n, &value);
            cold += g.iter().filter(|d| **d == 0.0 || d.is_nan()).count();
        }
    }
    assert!(cold > 0, "some gradients take the guarded path");
}

/// Runs `check` on the stencil's arguments at pairs of special values:
/// `x(3)`, `x(6)` and `p` special, the other `x` regular, every third
/// element of the derivative seed `seed` (`y_b` or `x_d`) one more than its
/// index and the rest special.
fn bratu_at_special_values(seed: &str, check: impl Fn(&dyn Fn(&str, usize) -> Vec<f64>)) {
    let m = SPECIALS.len();
    for k in 0..m {
        for j in 0..m {
            let value = |var: &str, len: usize| -> Vec<f64> {
                (0..len)
                    .map(|i| match (var, i) {
                        ("x", 3) => SPECIALS[k],
                        ("x", 6) => SPECIALS[(k + j) % m],
                        ("x", i) => 0.25 + 0.125 * i as f64,
                        ("p", 0) => SPECIALS[j],
                        ("p", _) => SPECIALS[(j + 3) % m],
                        (v, i) if v == seed && (i + k) % 3 == 0 => 1.0 + i as f64,
                        (_, i) => SPECIALS[(i + j + k) % m],
                    })
                    .collect()
            };
            check(&value);
        }
    }
}

#[test]
fn the_bratu_adjoint_agrees_bit_for_bit_at_special_values() {
    bratu_at_special_values("y_b", |value| {
        adjoint_agrees("bratu", "y", "x,p", 8, value);
    });
}

/// The pass finds the stretches: both reverse sweeps have iterations with
/// at least two guarded products and get a joint test; by default
/// ([`Scope::Carried`]) only the product's, whose guards multiply the
/// running adjoint `y_b` the loop carries, not the stencil's, whose guards
/// multiply elements of `y_b` (mostly zero when one output is seeded).
#[test]
fn the_reverse_sweeps_get_joint_tests() {
    for (name, of, wrt, carried) in [("product", "y", "x", 1), ("bratu", "y", "x,p", 0)] {
        let engine = engine(Backend::Jit);
        let adjoint = engine
            .adjoint(Some(name), &sel(of), &sel(wrt), &AdjointOptions::default())
            .expect("the adjoint compiles");
        let (module, _) = adjoint.module();
        let (optimized, origins) = adjit::jit::opt::optimize_with(module, false);
        let (mut default, mut default_origins) = (optimized.clone(), origins.clone());
        let stretches =
            speculate_module_in(&mut default, &mut default_origins, Scope::Carried, None);
        assert_eq!(stretches, carried, "{name}: {stretches} carried stretches");
        let (mut every, mut every_origins) = (optimized, origins);
        let stretches = speculate_module_in(&mut every, &mut every_origins, Scope::All, None);
        assert!(stretches >= 1, "{name}: {stretches} stretches");
    }
}

/// Runs the scalar tangent of `name` (outputs `of`, inputs `wrt`) with the
/// interpreter and with the JIT as the engine compiles tangent code (a
/// branch on each guarded product, one joint test for the guards of
/// carried scalars: [`Scope::CarriedGuards`]) and with every stretch split;
/// parameters are set by `value(parameter name, element count)`. Asserts
/// that every argument ends with the same bits (every NaN as one) and
/// returns the JIT's arguments.
fn tangent_agrees(
    name: &str,
    of: &str,
    wrt: &str,
    n: usize,
    value: &dyn Fn(&str, usize) -> Vec<f64>,
) -> Vec<Buffer> {
    let engine = engine(Backend::Interpreter);
    let tangent = engine
        .tangent(Some(name), &sel(of), &sel(wrt), 1)
        .expect("the tangent compiles");
    let (module, pid) = tangent.module();
    let (args, interpreted) = arguments_and_interpretation(module, pid, name, n, value);
    let proc = &module.procs[pid.index()];
    let tangent_code = JitOptions {
        branch_on_zero_products: true,
        ..JitOptions::default()
    };
    let every = JitOptions {
        speculate_guards: true,
        ..tangent_code.clone()
    };
    let bits = |b: &Buffer| match b {
        Buffer::F64(v) => v
            .iter()
            .map(|d| if d.is_nan() { f64::NAN } else { *d }.to_bits())
            .collect::<Vec<_>>(),
        other => vec![format!("{other:?}").len() as u64],
    };
    let mut first = None;
    for options in [tangent_code, every] {
        let compiled = CompiledModule::compile(module, &options).expect("the module compiles");
        let mut native = args.clone();
        compiled.call(pid, &mut native).expect("the JIT runs");
        for (k, (a, b)) in native.iter().zip(&interpreted).enumerate() {
            let var = proc.var(proc.params[k]);
            assert_eq!(bits(a), bits(b), "{name}: {} from {args:?}", var.name);
        }
        first.get_or_insert(native);
    }
    first.expect("two runs")
}

/// The product's tangent, whose loop carries `y` and `y_d` and whose two
/// guards get one joint test: inputs, directions and the starting values
/// at special values in various positions (the first trip multiplies the
/// zero starting tangent, so its guard fires on every call).
#[test]
fn the_product_tangent_agrees_bit_for_bit_at_special_values() {
    let n = 7;
    let m = SPECIALS.len();
    let mut cold = 0;
    for k in 0..m {
        for j in 0..m {
            let value = |var: &str, len: usize| -> Vec<f64> {
                (0..len)
                    .map(|i| match (var, i) {
                        ("x", 2) => SPECIALS[k],
                        ("x", 5) => SPECIALS[(k + j) % m],
                        ("x", i) => 0.5 + 0.25 * i as f64,
                        ("x_d", i) if (i + j) % 3 == 0 => SPECIALS[(i + k) % m],
                        ("x_d", i) => 1.0 - 0.125 * i as f64,
                        (_, _) => SPECIALS[(j + 1) % m],
                    })
                    .collect()
            };
            let out = tangent_agrees("product", "y", "x", n, &value);
            if let Some(Buffer::F64(yd)) = out.last() {
                cold += yd.iter().filter(|d| **d == 0.0 || d.is_nan()).count();
            }
        }
    }
    assert!(cold > 0, "some tangents take the guarded path");
}

/// Random inputs and directions (some zero, some of extreme size): the
/// product's tangent agrees with the interpreter bit for bit.
#[test]
fn the_product_tangent_agrees_with_the_interpreter_on_random_values() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..200 {
        let n = 1 + (next() % 12) as usize;
        let draws: Vec<f64> = (0..2 * n + 2)
            .map(|_| match next() % 8 {
                0 => 0.0,
                1 => -0.0,
                2 => SPECIALS[(next() % SPECIALS.len() as u64) as usize],
                3 => (next() % 2000) as f64 * 1e-160,
                _ => (next() % 4001) as f64 / 1000.0 - 2.0,
            })
            .collect();
        let value = |var: &str, len: usize| -> Vec<f64> {
            let at = match var {
                "x" => 0,
                "x_d" => n,
                "y" => 2 * n,
                _ => 2 * n + 1,
            };
            draws[at..at + len].to_vec()
        };
        tangent_agrees("product", "y", "x", n, &value);
    }
}

/// The tangents of the stencil: its guards multiply elements of arrays,
/// not carried scalars (no joint test by default; every stretch with
/// `speculate_guards`).
#[test]
fn the_bratu_tangent_agrees_bit_for_bit_at_special_values() {
    bratu_at_special_values("x_d", |value| {
        tangent_agrees("bratu", "y", "x,p", 8, value);
    });
}

/// The loop of `examples/bratu.f` (three statements on one `exp`, whose
/// guarded products multiply loop-invariant partials such as
/// `h*h*p(1)/12`, built in the cold blocks from the product): special
/// values of `x` and `x_d` at the first, a middle and the last element,
/// and of `p` and `p_d`, agree bit for bit with the interpreter.
#[test]
fn the_three_term_bratu_tangent_agrees_at_specials_at_the_ends() {
    let n = 7;
    for (at, special) in [0, n / 2, n - 1]
        .into_iter()
        .flat_map(|at| SPECIALS.iter().map(move |&s| (at, s)))
    {
        for (pj, &ps) in SPECIALS.iter().enumerate() {
            let value = |var: &str, len: usize| -> Vec<f64> {
                (0..len)
                    .map(|i| match (var, i) {
                        ("x" | "x_d", i) if i == at => special,
                        ("x", i) => 0.25 + 0.125 * i as f64,
                        ("x_d", i) => 1.0 + i as f64,
                        ("p", 0) => 1.3,
                        ("p", _) => ps,
                        ("p_d", 0) => SPECIALS[(pj + 1) % SPECIALS.len()],
                        ("p_d", _) => ps,
                        (_, i) => i as f64,
                    })
                    .collect()
            };
            tangent_agrees("bratu3", "y", "x,p", n, &value);
        }
    }
}

/// The engine's tangent code of the product gives its loop one joint test
/// ([`Scope::CarriedGuards`]), ending before the sum that reads the guards.
#[test]
fn the_product_tangent_gets_one_joint_test() {
    let engine = engine(Backend::Jit);
    let tangent = engine
        .tangent(Some("product"), &sel("y"), &sel("x"), 1)
        .expect("the tangent compiles");
    let (module, pid) = tangent.module();
    let (optimized, origins) = adjit::jit::opt::optimize_with(module, false);
    let (mut guards, mut guards_origins) = (optimized.clone(), origins.clone());
    let wanted: Vec<bool> = (0..module.procs.len()).map(|i| i == pid.index()).collect();
    let stretches = speculate_module_in(
        &mut guards,
        &mut guards_origins,
        Scope::CarriedGuards,
        Some(&wanted),
    );
    assert_eq!(stretches, 1, "{stretches} stretches");
    // The cold block recomputes the two guards and no sum.
    let proc = &guards.procs[pid.index()];
    let cold = proc
        .blocks
        .iter()
        .find(|b| {
            b.insts
                .iter()
                .filter(|&&v| matches!(proc.inst(v).kind, adjit::ir::Inst::Select(..)))
                .count()
                == 2
        })
        .expect("a cold block with the two guards");
    assert!(!cold.insts.iter().any(|&v| matches!(
        proc.inst(v).kind,
        adjit::ir::Inst::Binary(adjit::ir::BinaryOp::Add, ..)
    )));
}

/// The product's adjoint at special values of the first, a middle and the
/// last element, and of the seed, with a negative tiny element whose
/// products underflow to `-0.0`: the joint test's fast path and the
/// guarded copy agree with the interpreter bit for bit (the reverse
/// sweep's `y_b = 0; y_b = y_b + t` gives `+0.0` where `t` is `-0.0`).
#[test]
fn the_product_adjoint_agrees_with_specials_at_the_ends() {
    let n = 6;
    for (at, special) in [0, n / 2, n - 1]
        .into_iter()
        .flat_map(|at| SPECIALS.iter().map(move |&s| (at, s)))
    {
        for seed in [1.0, -0.0, 1e-200, f64::NAN] {
            let value = |var: &str, len: usize| -> Vec<f64> {
                match var {
                    "x" => (0..len)
                        .map(|i| match i {
                            i if i == at => special,
                            1 => -1e-170,
                            i => 0.5 + 0.25 * i as f64,
                        })
                        .collect(),
                    "y_b" => vec![seed],
                    _ => vec![0.0; len],
                }
            };
            adjoint_agrees("product", "y", "x", n, &value);
        }
    }
}

/// The forward sweep of the product's adjoint counts its loop's trips in
/// `_ad_trips` to push the count at the exit; the versioned loop's fast
/// copy no longer steps it (the copy's exit stores the count, from the
/// 64-bit counter), while the checked original still does.
#[test]
fn the_product_forward_copy_steps_no_trip_counter() {
    let engine = engine(Backend::Jit);
    let adjoint = engine
        .adjoint(
            Some("product"),
            &sel("y"),
            &sel("x"),
            &AdjointOptions::default(),
        )
        .expect("the adjoint compiles");
    let (module, _) = adjoint.module();
    let optimized = adjit::jit::opt::optimize_for_jit(module, false, true).module;
    let proc = optimized
        .procs
        .iter()
        .find(|p| p.name == "product_fwd")
        .expect("the forward sweep");
    let named = |prefix: &str| -> Vec<adjit::ir::VarId> {
        (0..proc.vars.len() as u32)
            .map(adjit::ir::VarId)
            .filter(|&v| proc.var(v).name.starts_with(prefix))
            .collect()
    };
    let last = named("_wide_last");
    let wide: Vec<_> = named("_wide")
        .into_iter()
        .filter(|v| !last.contains(v))
        .collect();
    let trips = named("_ad_trips");
    assert_eq!(
        (trips.len(), wide.len()),
        (1, 1),
        "one counted, versioned loop"
    );
    let stores = |b: &adjit::ir::Block, var| {
        b.insts
            .iter()
            .any(|&v| matches!(proc.inst(v).kind, adjit::ir::Inst::Store(w, _) if w == var))
    };
    // The loop blocks: those that step the element loop's counter.
    let stepping: Vec<_> = proc
        .blocks
        .iter()
        .filter(|b| {
            b.insts.iter().any(|&v| {
                matches!(
                    proc.inst(v).kind,
                    adjit::ir::Inst::Push(adjit::ir::StackKind::Value, _)
                )
            })
        })
        .collect();
    assert_eq!(stepping.len(), 2, "the checked loop and its fast copy");
    let fast: Vec<_> = stepping.iter().filter(|b| stores(b, wide[0])).collect();
    assert_eq!(fast.len(), 1, "one fast copy");
    assert!(
        !stores(fast[0], trips[0]),
        "the fast copy steps no trip counter"
    );
    assert!(
        stepping
            .iter()
            .any(|b| !stores(b, wide[0]) && stores(b, trips[0])),
        "the checked loop still counts"
    );
}

/// With FMA contraction ([`Scope::CarriedFused`]) the product tangent's
/// stretch takes in the sum `y_d*x + y*x_d`: the fast path adds the plain
/// products, and contraction fuses the recurrence product `y_d*x` there
/// (the joint test reads it too, unfused); the cold copy rebuilds that
/// guard from its factors, so contraction fuses it there too, guarded.
#[test]
fn the_fused_product_tangent_keeps_its_sum_on_the_fast_path() {
    use adjit::ir::{BinaryOp, Inst};
    let engine = engine(Backend::Jit);
    let tangent = engine
        .tangent(Some("product"), &sel("y"), &sel("x"), 1)
        .expect("the tangent compiles");
    let (module, pid) = tangent.module();
    let (mut optimized, mut origins) = adjit::jit::opt::optimize_with(module, false);
    let wanted: Vec<bool> = (0..module.procs.len()).map(|i| i == pid.index()).collect();
    let stretches = speculate_module_in(
        &mut optimized,
        &mut origins,
        Scope::CarriedFused,
        Some(&wanted),
    );
    assert_eq!(stretches, 1, "{stretches} stretches");
    let proc = &optimized.procs[pid.index()];
    let text = adjit::ir::print::print_proc(&optimized, pid);
    let plan = adjit::jit::opt::fma::plan(proc, true);
    let block_of = |v| proc.blocks.iter().position(|b| b.insts.contains(&v));
    let mut fused: Vec<_> = plan.contractions.iter().collect();
    fused.sort_by_key(|(v, _)| v.index());
    // One sum per path of the loop's two copies (checked and versioned).
    let (fast, cold): (Vec<_>, Vec<_>) = fused.iter().partition(|(_, c)| c.guard.is_none());
    assert!(!fast.is_empty(), "{text}");
    assert_eq!(fast.len(), cold.len(), "{text}");
    for (v, c) in fast.iter().chain(&cold) {
        assert!(matches!(
            proc.inst(**v).kind,
            Inst::Binary(BinaryOp::Add, ..)
        ));
        // The fused product is y_d*x: one factor is the loop's running
        // tangent, a load of `y_d` or of a temporary.
        let Inst::Binary(BinaryOp::Mul, p, d) = proc.inst(c.product).kind else {
            panic!("{} is not a product", c.product)
        };
        let loaded = |x: adjit::ir::Value| match proc.inst(x).kind {
            Inst::Load(var) => Some(proc.var(var).name.clone()),
            _ => None,
        };
        let names: Vec<_> = [p, d].into_iter().filter_map(loaded).collect();
        assert!(
            names
                .iter()
                .any(|n| n.contains("y_d") || n.starts_with("_spec")),
            "{names:?} in {text}"
        );
        assert_eq!(block_of(**v), block_of(c.product));
    }
}
