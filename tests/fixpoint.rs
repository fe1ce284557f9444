//! Skipping the repeating trips of counted loops in the JIT
//! (`adjit::jit::opt::fixpoint`): loops that converge, that never repeat,
//! that alternate between two states, whose `+0` / `-0` states repeat
//! only under `==`, with a NaN state, in COMMON storage, and loops the
//! pass must leave alone (index use, element stores, a step other than 1,
//! a count-down loop) give, bit for bit, the interpreter's results and the
//! JIT's without the pass, the DO variable after the loop included.

use adjit::engine::{Engine, Options};
use adjit::ir::interp::Interpreter;
use adjit::ir::{Buffer, Module, ProcId, RuntimeError};
use adjit::jit::codegen::{CompiledModule, JitOptions};

/// Every case takes `(n, x, y, k, last)` and leaves the DO variable's
/// final value in `last`.
const SOURCE: &str = "\
subroutine newton(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  do i = 1, n
    y = x*x - 2.0d0
    x = x - y / (2.0d0*x)
  end do
  last = i
end subroutine

subroutine newton4(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  real s, t
  s = real(x)
  t = 0
  do i = 1, n
    t = s*s - 2.0
    s = s - t / (2.0*s)
  end do
  x = s
  y = t
  last = i
end subroutine

subroutine grows(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  do i = 1, n
    k = k + 3
    x = x + 1.0d0
  end do
  last = i
end subroutine

subroutine flips(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  do i = 1, n
    x = 1.0d0 - x
    k = 5 - k
  end do
  last = i
end subroutine

subroutine zeros(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y, t
  do i = 1, n
    t = x
    x = y
    y = -t
  end do
  last = i
end subroutine

subroutine nans(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  do i = 1, n
    x = x * y
  end do
  last = i
end subroutine

subroutine index_use(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  do i = 1, n
    x = x * 0.0d0 + min(i, 3)
  end do
  last = i
end subroutine

subroutine elements(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y, a(3)
  a = 0
  do i = 1, n
    a(k) = a(k) + x
    x = x * 0.5d0
  end do
  y = a(k)
  last = i
end subroutine

subroutine strided(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  do i = 1, n, 2
    x = 1.0d0 - x
  end do
  last = i
end subroutine

subroutine down(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y
  do i = n, 1, -1
    x = 1.0d0 - x
  end do
  last = i
end subroutine

subroutine common_store(n, x, y, k, last)
  integer n, k, last, i
  double precision x, y, g, h
  common /c/ g, h
  g = x
  h = y
  do i = 1, n
    g = 1.0d0 - g
  end do
  x = g
  last = i
end subroutine

subroutine nested(n, x, y, k, last)
  integer n, k, last, i, j
  double precision x, y, z
  y = 0
  do j = 1, 3
    z = x + j
    do i = 1, n
      z = z - (z*z - 2.0d0) / (2.0d0*z)
    end do
    y = y + z
  end do
  last = i + j
end subroutine
";

/// The cases and how many loops of each the pass rewrites.
const CASES: &[(&str, usize)] = &[
    ("newton", 1),
    ("newton4", 1),
    ("grows", 1),
    ("flips", 1),
    ("zeros", 1),
    ("nans", 1),
    ("index_use", 0),
    ("elements", 0),
    ("strided", 0),
    ("down", 0),
    ("common_store", 1),
    ("nested", 1),
];

fn module() -> Module {
    let engine = Engine::from_sources(
        &[("fixpoint.f90".into(), SOURCE.into())],
        Options::default(),
    )
    .expect("the source compiles");
    engine.module().clone()
}

fn proc_id(module: &Module, name: &str) -> ProcId {
    let id = module
        .procs
        .iter()
        .position(|p| p.name == name)
        .expect("the procedure exists");
    ProcId(id as u32)
}

fn args(n: i32, x: f64, y: f64, k: i32) -> Vec<Buffer> {
    vec![
        Buffer::I32(vec![n]),
        Buffer::F64(vec![x]),
        Buffer::F64(vec![y]),
        Buffer::I32(vec![k]),
        Buffer::I32(vec![0]),
    ]
}

fn jit(module: &Module, fixed_point_exits: bool) -> CompiledModule {
    let options = JitOptions {
        fixed_point_exits,
        ..JitOptions::default()
    };
    CompiledModule::compile(module, &options).expect("the module compiles")
}

/// The buffers as bit patterns, so that NaN payloads and signed zeros
/// compare exactly.
fn bits(r: Result<Vec<Buffer>, RuntimeError>) -> Result<Vec<Vec<u64>>, String> {
    r.map(|bs| {
        bs.iter()
            .map(|b| match b {
                Buffer::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
                Buffer::I32(v) => v.iter().map(|&x| x as u32 as u64).collect(),
                other => panic!("unexpected buffer {other:?}"),
            })
            .collect()
    })
    .map_err(|e| e.to_string())
}

#[test]
fn the_pass_rewrites_exactly_the_qualifying_loops() {
    let module = module();
    let optimized = adjit::jit::opt::optimize_for_jit(&module, true, true);
    for &(name, loops) in CASES {
        let id = proc_id(&module, name);
        assert_eq!(
            optimized.fixed_point_exits[id.index()],
            loops,
            "loops rewritten in {name}"
        );
    }
    let off = adjit::jit::opt::optimize_for_jit_with(&module, true, true, false);
    assert!(off.fixed_point_exits.is_empty());
}

#[test]
fn skipped_loops_agree_bit_for_bit_with_the_interpreter() {
    let module = module();
    let (on, off) = (jit(&module, true), jit(&module, false));
    let inputs = [
        (1.0, 0.0, 0),
        (1.5, 0.25, 1),
        (0.25, 0.0, 2),
        (0.0, 0.0, 3),
        (-0.0, 0.0, 1),
        (0.0, -0.0, 2),
        (f64::NAN, 1.0, 1),
        (3.0, f64::NAN, 3),
        (1e300, 10.0, 2),
    ];
    for &(name, _) in CASES {
        let id = proc_id(&module, name);
        for n in [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 100, 101, 1000, 1001] {
            for &(x, y, k) in &inputs {
                let a = args(n, x, y, k);
                let mut interp = Interpreter::new(&module);
                let mut b = a.clone();
                let reference = bits(interp.call(id, &mut b).map(|()| b));
                let run = |c: &CompiledModule| {
                    let mut b = a.clone();
                    bits(c.call(id, &mut b).map(|()| b))
                };
                let what = format!("{name}(n = {n}, x = {x}, y = {y}, k = {k})");
                assert_eq!(run(&on), reference, "{what}: JIT with the pass");
                assert_eq!(run(&off), reference, "{what}: JIT without the pass");
            }
        }
    }
}

#[test]
fn the_do_variable_ends_as_after_every_trip() {
    let module = module();
    let on = jit(&module, true);
    let id = proc_id(&module, "newton");
    let mut short = args(1001, 1.0, 0.0, 0);
    on.call(id, &mut short).expect("runs");
    // 2^31 - 1 trips: the DO variable wraps past the last one, as it
    // does trip by trip; the iterate ends where an odd number of trips
    // leaves it (it alternates between two neighbours of sqrt(2)).
    let mut long = args(i32::MAX, 1.0, 0.0, 0);
    on.call(id, &mut long).expect("runs");
    assert_eq!(short[4], Buffer::I32(vec![1002]));
    assert_eq!(long[4], Buffer::I32(vec![i32::MIN]));
    let (long, short) = (bits(Ok(long)).unwrap(), bits(Ok(short)).unwrap());
    assert_eq!(long[1..4], short[1..4], "x, y and k as after 1001 trips");
    assert!((f64::from_bits(long[1][0]) - 2f64.sqrt()).abs() < 1e-15);
}
