//! Derived types as numerical modules use them, against analytic
//! derivatives (the corpus programs are also checked against gfortran,
//! and differentiated by tests/derivatives.rs with the dot-product and
//! finite-difference checks): component references taking whole parts of
//! arrays of structures, operator and assignment interfaces, WHERE over
//! structure components, sections of arrays of structures given to
//! procedures and to ELEMENTAL functions, array constructors and PACK of
//! structures.

mod common;

use adjit::engine::{Backend, Engine, Options};

/// The Jacobian of `of` with respect to `wrt` of `entry` in the corpus
/// program `file` at `(s, t)`, tangent and adjoint, against `expected`
/// (row-major).
fn check(file: &str, entry: &str, (s, t): (f64, f64), of: &str, wrt: &str, expected: &[f64]) {
    check_at(file, entry, &[("s", s), ("t", t)], of, wrt, expected);
}

/// [`check`] at the scalar arguments `settings`.
fn check_at(
    file: &str,
    entry: &str,
    settings: &[(&str, f64)],
    of: &str,
    wrt: &str,
    expected: &[f64],
) {
    check_on(Backend::Jit, file, entry, settings, of, wrt, expected);
}

/// [`check_at`] running on `backend`.
fn check_on(
    backend: Backend,
    file: &str,
    entry: &str,
    settings: &[(&str, f64)],
    of: &str,
    wrt: &str,
    expected: &[f64],
) {
    let path = common::corpus::corpus_dir().join(file);
    let options = Options {
        backend,
        ..Default::default()
    };
    let engine = Engine::from_files(&[&path], options).unwrap();
    let f = engine.procedure(Some(entry)).unwrap();
    let mut args = f.args();
    for &(name, value) in settings {
        args.set_scalar(name, value).unwrap();
    }
    let bad =
        common::check::both_modes_against(&engine, Some(entry), &args, of, wrt, expected, 1e-13);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// [`check_on`] on the JIT and on the interpreter.
fn check_both(
    file: &str,
    entry: &str,
    settings: &[(&str, f64)],
    of: &str,
    wrt: &str,
    expected: &[f64],
) {
    for backend in [Backend::Jit, Backend::Interpreter] {
        check_on(backend, file, entry, settings, of, wrt, expected);
    }
}

/// `r` of `entry` in the corpus program `file` at `settings`, worked by
/// hand on [`Dual`] numbers (`by_hand`): its values against the gfortran
/// golden values `golden` first, then its Jacobian with respect to `s, t`
/// in both modes on both back ends against the hand's derivatives.
fn check_by_hand(
    file: &str,
    entry: &str,
    settings: &[(&str, f64)],
    by_hand: &[Dual],
    golden: &[f64],
) {
    assert_eq!(by_hand.len(), golden.len());
    for (x, g) in by_hand.iter().zip(golden) {
        assert!((x.0 - g).abs() < 1e-12, "{} against {g}", x.0);
    }
    let expected: Vec<f64> = by_hand.iter().flat_map(|x| [x.1, x.2]).collect();
    check_both(file, entry, settings, "r", "s,t", &expected);
}

/// tests/corpus/derived_parts.f90: `r1 = sum(a(3)%v)` with
/// `a(3)%v = (3s, t + 3, st - 3)`, and `first = a%v(1)`, the first
/// component of each structure's array: `(s, 2s^2 + t, 3s, 4st)` (the
/// last scaled by `t` through `call scale3(a(4)%v, t)`).
#[test]
fn whole_parts_of_arrays_of_structures_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    check(
        "derived_parts.f90",
        "parts",
        (s, t),
        "r1",
        "s,t",
        &[3.0 + t, 1.0 + s],
    );
    check(
        "derived_parts.f90",
        "parts",
        (s, t),
        "first",
        "s,t",
        &[1.0, 0.0, 4.0 * s, 1.0, 3.0, 0.0, 4.0 * t, 4.0 * s],
    );
}

/// tests/corpus/derived_operators.f90: with `a = (s, t, 1)`, `b = s`
/// (the defined assignment: `(s, 2s, 3s)`), `r = a + b*t - (-a)` and
/// `q = t * (a .cross. b) + r`, `c = q` is
/// `(3t^2 s - ts + 2s, 3ts - 3ts^2 + 2t, 2ts^2 - t^2 s + 2 + 3ts)`;
/// `w` after `r = 2*t` is `(2t, 4t, 6t)`.
#[test]
fn operator_interfaces_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    check(
        "derived_operators.f90",
        "vecops",
        (s, t),
        "c",
        "s,t",
        &[
            3.0 * t * t - t + 2.0,
            6.0 * t * s - s,
            3.0 * t - 6.0 * t * s,
            3.0 * s - 3.0 * s * s + 2.0,
            4.0 * t * s - t * t + 3.0 * t,
            2.0 * s * s - 2.0 * t * s + 3.0 * s,
        ],
    );
    check(
        "derived_operators.f90",
        "vecops",
        (s, t),
        "w",
        "s,t",
        &[0.0, 2.0, 0.0, 4.0, 0.0, 6.0],
    );
}

/// tests/corpus/derived_extends.f90 (type extension): with
/// `a = point3(s, t, st)` lifted by `t` (`a%z = st^2 + s`, `a%y = 2t`),
/// `r = (3s - 2t + st^2, ts^2 + t, 2s + t + 2st + st^2, 6st + t + 3s)`
/// (inherited components, the parent component assigned and passed whole,
/// two levels of extension, an array of an extended type and a module
/// variable), and `q = (s, 2t, 2st + t)` at `n = 2`.
#[test]
fn extended_types_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    let at = [("s", s), ("t", t), ("n", 2.0)];
    check_at(
        "derived_extends.f90",
        "extend",
        &at,
        "r",
        "s,t",
        &[
            3.0 + t * t,
            -2.0 + 2.0 * s * t,
            2.0 * s * t,
            s * s + 1.0,
            2.0 + 2.0 * t + t * t,
            1.0 + 2.0 * s + 2.0 * s * t,
            6.0 * t + 3.0,
            6.0 * s + 1.0,
        ],
    );
    check_at(
        "derived_extends.f90",
        "extend",
        &at,
        "q",
        "s,t",
        &[1.0, 0.0, 0.0, 2.0, 2.0 * t, 2.0 * s + 1.0],
    );
}

/// The message of the compile-time error of `source` (a file `e.f90`).
fn compile_error(source: &str) -> String {
    match Engine::from_sources(
        &[("e.f90".to_string(), source.to_string())],
        Default::default(),
    ) {
        Ok(_) => panic!("compiled: {source}"),
        Err(e) => e.to_string(),
    }
}

/// Each case's `line`, put after `head` and before `y = b(1)%x`, is a
/// compile-time error at `at` whose message contains `what`.
fn assert_located_errors(head: &str, cases: &[(&str, &str, &str)]) {
    for (line, at, what) in cases {
        let m = compile_error(&format!("{head}{line}  y = b(1)%x\nend subroutine\n"));
        assert!(m.contains(at) && m.contains(what), "{m}");
    }
}

/// What type extension leaves out (polymorphism: CLASS, type-bound
/// procedures, ABSTRACT types) and bad extensions are located errors
/// naming the construct.
#[test]
fn polymorphism_and_bad_extensions_are_located_errors() {
    let head = "module m\n  type :: base\n    real :: x\n";
    let cases = [
        (
            format!(
                "{head}  end type\n  type, extends(base) :: child\n    real :: y\n  end type\n\
                 contains\n  subroutine s(b)\n    class(base) :: b\n    b%x = 1\n  end subroutine\n\
                 end module\n"
            ),
            "e.f90:10:5",
            "CLASS (polymorphic entities)",
        ),
        (
            format!("{head}  contains\n    procedure :: f\n  end type\nend module\n"),
            "e.f90:4:3",
            "type-bound procedures",
        ),
        (
            "module m\n  type, abstract :: base\n    real :: x\n  end type\nend module\n".into(),
            "e.f90:2:3",
            "ABSTRACT type",
        ),
        (
            "module m\n  type, extends(nothing) :: child\n    real :: y\n  end type\nend module\n"
                .into(),
            "e.f90:2:17",
            "unknown parent type `nothing` of type `child`",
        ),
        (
            format!(
                "{head}  end type\n  type, extends(base) :: c2\n    real :: base\n  end type\n\
                 end module\n"
            ),
            "e.f90:6:13",
            "component `base` of type `c2` has the name of its parent component",
        ),
        (
            format!(
                "{head}  end type\n  type, extends(base) :: child\n    real :: y\n  end type\n\
                 contains\n  subroutine s(b, c)\n    type(base) :: b\n    type(child) :: c\n\
                 c = child(base=b, y=1.0)\n  end subroutine\nend module\n"
            ),
            "e.f90:12:11",
            "the parent component `base` as a keyword",
        ),
    ];
    for (source, at, what) in cases {
        let m = compile_error(&source);
        assert!(m.contains(at) && m.contains(what), "{m}");
    }
}

/// tests/corpus/derived_assumed.f90 (assumed-size arrays of structures):
/// after `relax(g, 3, t)`, `g(i, j)%u = t(si + tj) + ti` and
/// `g(i, j)%v(1) = s + ijt`, so `q = (9st + 12t^2 + 9t, s + 6t, 3t)`;
/// `r` sums `u v(1) + id` over the first three of `line` (`s/i (t + i) + i`),
/// the first four of `g` (column order) and two of `line` from its second.
#[test]
fn assumed_size_arrays_of_structures_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    // (A, dA/ds, dA/dt, B, dB/ds, dB/dt) of the products u*v(1) of g.
    let g = [
        (s * t + t * t + t, t, s + 2.0 * t + 1.0, s + t, 1.0, 1.0),
        (
            2.0 * s * t + t * t + 2.0 * t,
            2.0 * t,
            2.0 * s + 2.0 * t + 2.0,
            s + 2.0 * t,
            1.0,
            2.0,
        ),
        (
            s * t + 2.0 * t * t + t,
            t,
            s + 4.0 * t + 1.0,
            s + 2.0 * t,
            1.0,
            2.0,
        ),
        (
            2.0 * s * t + 2.0 * t * t + 2.0 * t,
            2.0 * t,
            2.0 * s + 4.0 * t + 2.0,
            s + 4.0 * t,
            1.0,
            4.0,
        ),
    ];
    let (mut rs, mut rt) = (
        11.0 * t / 6.0 + 3.0 + 5.0 * t / 6.0 + 2.0,
        11.0 * s / 6.0 + 5.0 * s / 6.0,
    );
    for (a, a_s, a_t, b, b_s, b_t) in g {
        rs += a_s * b + a * b_s;
        rt += a_t * b + a * b_t;
    }
    check("derived_assumed.f90", "grid", (s, t), "r", "s,t", &[rs, rt]);
    check(
        "derived_assumed.f90",
        "grid",
        (s, t),
        "q",
        "s,t",
        &[9.0 * t, 9.0 * s + 24.0 * t + 9.0, 1.0, 6.0, 0.0, 3.0],
    );
}

/// tests/corpus/derived_alloc.f90 (ALLOCATABLE components): `make`
/// allocates `f%v = (s, 2s, 3s)`, `f%w = (t, t^2)` by reallocation, the
/// deep copy `g = f` gets `g%v(2) = t`, is scaled by `t` and grown by
/// `st`, and `h = field([s, t], [1])`: `q = (6s + t^2, 5st + t^2,
/// 4t + s + t)`, on the JIT and the interpreter.
#[test]
fn allocatable_components_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    check_both(
        "derived_alloc.f90",
        "alloc_parts",
        &[("s", s), ("t", t)],
        "q",
        "s,t",
        &[6.0, 2.0 * t, 5.0 * t, 5.0 * s + 2.0 * t, 1.0, 5.0],
    );
}

/// tests/corpus/derived_alloc.f90, `fem` at `n = 4` (`h = 2/5`,
/// `x_i = ih`, `u_i = a x_i + a^2`, `k(:, 2) = x`): the residual of the
/// interior point `r_2 = (2u_2 - u_1 - u_3)/h^2 + c u_2^3 x_2 - sin x_2`
/// has `dr_2/da = 3c u_2^2 (x_2 + 2a) x_2` (the second difference of a
/// linear field is zero) and `dr_2/dc = u_2^3 x_2`.
#[test]
fn residual_of_allocatable_fields_has_its_derivatives() {
    let (a, c) = (1.5, 0.5);
    let (h, n) = (2.0 / 5.0, 4);
    let x = |i: f64| i * h;
    let u = |i: f64| a * x(i) + a * a;
    let mut expected = Vec::new();
    for i in 1..=n {
        let i = i as f64;
        let (ul, ur) = (
            if i > 1.0 { x(i - 1.0) + 2.0 * a } else { 0.0 },
            if i < n as f64 {
                x(i + 1.0) + 2.0 * a
            } else {
                0.0
            },
        );
        let du = x(i) + 2.0 * a;
        expected.push((2.0 * du - ul - ur) / (h * h) + 3.0 * c * u(i).powi(2) * du * x(i));
        expected.push(u(i).powi(3) * x(i));
    }
    check_both(
        "derived_alloc.f90",
        "fem",
        &[("n", n as f64), ("a", a), ("c", c)],
        "r",
        "a,c",
        &expected,
    );
}

/// ALLOCATABLE components that stay unsupported are located errors naming
/// the construct: CHARACTER scalars and arrays, explicit bounds.
#[test]
fn unsupported_allocatable_components_are_located_errors() {
    let ty = |comp: &str| {
        format!(
            "subroutine s(x)\n  type :: t\n    {comp}\n  end type\n  type(t) :: a\n  real(8) :: x\n  x = 1\nend subroutine\n"
        )
    };
    let cases = [(
        ty("real(8), allocatable :: w(3)"),
        "e.f90:3:29",
        "ALLOCATABLE component `w` must have a deferred shape",
    )];
    for (source, at, what) in cases {
        let m = compile_error(&source);
        assert!(m.contains(at) && m.contains(what), "{m}");
    }
}

/// tests/corpus/derived_assumed2.f90 (rank-2 assumed-shape arrays of
/// structures): `g(i, j) = pt(si, t + j)` relaxed by `t` gives
/// `x = sit + (t + j)i`, `y = t + j + x/10`, and
/// `r(1) = sum(x y) + sum_j x(2, j) + 12 + 4`, on the JIT and the
/// interpreter.
#[test]
fn rank_two_assumed_shape_arrays_of_structures_have_their_derivatives() {
    let (s, t) = (1.5, 0.5);
    let (mut ds, mut dt) = (0.0, 0.0);
    for j in 1..=4 {
        for i in 1..=3 {
            let (i, j) = (i as f64, j as f64);
            let x = s * i * t + (t + j) * i;
            let y = t + j + 0.1 * x;
            let (xs, xt) = (i * t, s * i + i);
            let (ys, yt) = (0.1 * xs, 1.0 + 0.1 * xt);
            ds += xs * y + x * ys;
            dt += xt * y + x * yt;
            if i == 2.0 {
                ds += xs;
                dt += xt;
            }
        }
    }
    check_both(
        "derived_assumed2.f90",
        "assumed2",
        &[("s", s), ("t", t)],
        "r(1)",
        "s,t",
        &[ds, dt],
    );
}

/// tests/corpus/derived_where.f90 at `x = 0.5`, `y = 1.25`, where every
/// mask element is known (`u = [x, -y, xy, 2 - x]`): `p%v(1:3:2)` becomes
/// `[2x + y, 2xy + y]`, `q(1)%v = [., -xy - y, -x^2 y - y, y^2 - x]`, and the
/// nested WHERE leaves `q(2)%v` alone, so `s = [x + 1, -y - 1,
/// 2(2xy + y) + 1, 2(2 - x) - 1]`, `w = [y, -xy - 2y - x^2 y + y^2 - x]`.
#[test]
fn where_over_structure_components_has_its_derivatives() {
    let (x, y) = (0.5, 1.25);
    for backend in [Backend::Jit, Backend::Interpreter] {
        let at = [("x", x), ("y", y)];
        check_on(
            backend,
            "derived_where.f90",
            "dwhere",
            &at,
            "s",
            "x,y",
            &[1.0, 0.0, 0.0, -1.0, 4.0 * y, 4.0 * x + 2.0, -2.0, 0.0],
        );
        check_on(
            backend,
            "derived_where.f90",
            "dwhere",
            &at,
            "w",
            "x,y",
            &[0.0, 1.0, -y - 2.0 * x * y - 1.0, -x - 2.0 - x * x + 2.0 * y],
        );
    }
}

/// tests/corpus/derived_alloc_blocks.f90, `patches` (ALLOCATABLE
/// components of a 2-D array of structures and of a module array of
/// structures reallocated by a routine): `q = (4s + 3, s^3 + 3s^2, 23s +
/// 26, 12s^2 + 6s)`, on the JIT and the interpreter.
#[test]
fn allocatable_components_of_arrays_of_structures_have_their_derivatives() {
    for s in [1.5, -0.25] {
        check_both(
            "derived_alloc_blocks.f90",
            "patches",
            &[("s", s)],
            "q",
            "s",
            &[4.0, 3.0 * s * s + 6.0 * s, 23.0, 24.0 * s + 6.0],
        );
    }
}

/// tests/corpus/derived_alloc_blocks.f90, `mesh` at `nb = 3`: block `k`
/// has `n = 2 + k` points, `h = 2/(n + 1)`, `x_i = ih` and `u_i = a x_i +
/// a^2/k`, so the energy `e(1) = sum_k h/2 sum_i u_i^2` has `de(1)/da =
/// sum_k h sum_i u_i (x_i + 2a/k)` and does not depend on `c`.
#[test]
fn energy_of_blocks_with_allocatable_fields_has_its_derivatives() {
    let (a, c) = (1.5, 0.5);
    let mut de = 0.0;
    for k in 1..=3 {
        let n = 2 + k;
        let h = 2.0 / (n as f64 + 1.0);
        for i in 1..=n {
            let x = i as f64 * h;
            let u = a * x + a * a / k as f64;
            de += h * u * (x + 2.0 * a / k as f64);
        }
    }
    check_both(
        "derived_alloc_blocks.f90",
        "mesh",
        &[("nb", 3.0), ("a", a), ("c", c)],
        "e(1)",
        "a,c",
        &[de, 0.0],
    );
}

/// What stays refused for ALLOCATABLE components of arrays of structures
/// is a located error naming the construct.
#[test]
fn unsupported_uses_of_allocatable_components_of_arrays_of_structures_are_located_errors() {
    let program = |body: &str| {
        format!(
            "subroutine s(x)\n  type :: t\n    real(8), allocatable :: u(:)\n  end type\n  \
             type(t) :: a(4), b\n  real(8) :: x\n  integer :: i\n{body}\nend subroutine\n"
        )
    };
    let cases = [
        (
            "  x = sum(a%u)",
            "e.f90:8:11",
            "`a%u` is an ALLOCATABLE component of the array of structures `a`: reference it through one element",
        ),
        (
            "  allocate(a(2)%u(3), stat=i)",
            "e.f90:8:28",
            "STAT=, ERRMSG=, SOURCE= or MOLD= in the ALLOCATE of a component of an element of an array of structures",
        ),
    ];
    for (body, at, what) in cases {
        let m = compile_error(&program(body));
        assert!(m.contains(at) && m.contains(what), "{m}");
    }
}

/// A number with its derivatives with respect to `s` and `t` (forward
/// mode by hand, for the analytic values of [`sections_of_arrays_of_structures_have_their_derivatives`]).
#[derive(Clone, Copy)]
struct Dual(f64, f64, f64);

impl std::ops::Add for Dual {
    type Output = Dual;
    fn add(self, b: Dual) -> Dual {
        Dual(self.0 + b.0, self.1 + b.1, self.2 + b.2)
    }
}

impl std::ops::Mul for Dual {
    type Output = Dual;
    fn mul(self, b: Dual) -> Dual {
        Dual(
            self.0 * b.0,
            self.1 * b.0 + self.0 * b.1,
            self.2 * b.0 + self.0 * b.2,
        )
    }
}

/// A constant.
fn c(x: f64) -> Dual {
    Dual(x, 0.0, 0.0)
}

/// tests/corpus/derived_sections.f90, its statements followed by hand on
/// [`Dual`] numbers: a cell is `[q1, q2, q3, w]`; `bump`, `scale_e` and
/// `grid_add` act on the cells the sections select, in their order.
fn sections_by_hand(s: f64, t: f64) -> [Dual; 4] {
    let (s, t) = (Dual(s, 1.0, 0.0), Dual(t, 0.0, 1.0));
    let bump = |cells: &mut [&mut [Dual; 4]]| {
        for (i, cell) in cells.iter_mut().enumerate() {
            cell[3] = cell[3] * t + c(i as f64 + 1.0);
            cell[1] = cell[1] + t * cell[3];
        }
    };
    let scale = |cells: &mut [&mut [Dual; 4]]| {
        for (i, cell) in cells.iter_mut().enumerate() {
            cell[0] = cell[0] * t * c(i as f64 + 1.0);
        }
    };
    let mut a: Vec<[Dual; 4]> = (1..=6)
        .map(|i| {
            let i = c(i as f64);
            [s * i, s + i, t * i, s * i]
        })
        .collect();
    // g(i, j), column order: index (i - 1) + 2 (j - 1).
    let mut g: Vec<[Dual; 4]> = (0..6)
        .map(|k| {
            let (i, j) = (c((k % 2 + 1) as f64), c((k / 2 + 1) as f64));
            [s + i, t * j, s * t, i + j * s]
        })
        .collect();
    fn pick<'a>(v: &'a mut [[Dual; 4]], at: &[usize]) -> Vec<&'a mut [Dual; 4]> {
        let mut all: Vec<Option<&mut [Dual; 4]>> = v.iter_mut().map(Some).collect();
        at.iter()
            .map(|&k| all[k].take().expect("distinct"))
            .collect()
    }
    bump(&mut pick(&mut a, &[1, 2, 3, 4]));
    bump(&mut pick(&mut a, &[0, 2, 4]));
    scale(&mut pick(&mut a, &[5, 3, 1]));
    for (k, cell) in g.iter_mut().enumerate() {
        let (i, j) = ((k % 2 + 1) as f64, (k / 2 + 1) as f64);
        cell[2] = cell[2] + t * c(i * j);
        cell[3] = cell[3] * cell[0];
    }
    bump(&mut pick(&mut g, &[2, 3]));
    scale(&mut pick(&mut g, &[1, 3, 5]));
    let total = |v: &[[Dual; 4]], k: usize| v.iter().fold(c(0.0), |acc, x| acc + x[k]);
    [
        total(&a, 3),
        total(&a, 0) + total(&a, 1),
        total(&g, 3),
        total(&g, 2) + total(&g, 0) + g[5][1],
    ]
}

/// tests/corpus/derived_sections.f90 (sections of arrays of structures
/// given to assumed-shape and explicit-shape structure dummies, in place
/// and through copies; a rank-2 array of structures of assumed shape with
/// an array component): the Jacobian of `r` in both modes, on both back
/// ends, against [`sections_by_hand`], whose values are checked against
/// the gfortran golden values first.
#[test]
fn sections_of_arrays_of_structures_have_their_derivatives() {
    for (s, t) in [(1.5, 0.5), (-0.25, 2.0)] {
        let golden = if s > 0.0 {
            [30.25, 75.125, 71.75, 33.0]
        } else {
            [9.0, 32.25, 15.0, 62.25]
        };
        let r = sections_by_hand(s, t);
        check_by_hand(
            "derived_sections.f90",
            "sections",
            &[("s", s), ("t", t)],
            &r,
            &golden,
        );
    }
}

/// tests/corpus/derived_elemental_ops.f90 followed by hand on [`Dual`]
/// numbers: `add(a, b) = (a.x + b.x, a.y b.y)`, `scal(s, a) = (s a.x,
/// s + a.y)`, applied element by element.
fn elemental_ops_by_hand(s: f64, t: f64) -> [Dual; 4] {
    let (s, t) = (Dual(s, 1.0, 0.0), Dual(t, 0.0, 1.0));
    let add = |a: (Dual, Dual), b: (Dual, Dual)| (a.0 + b.0, a.1 * b.1);
    let scal = |k: Dual, a: (Dual, Dual)| (k * a.0, k + a.1);
    let mut a: Vec<(Dual, Dual)> = (1..=3).map(|i| (s * c(i as f64), t)).collect();
    let b: Vec<(Dual, Dual)> = (1..=3).map(|i| (t + c(i as f64), s * t)).collect();
    let c1: Vec<_> = a.iter().zip(&b).map(|(&x, &y)| add(x, y)).collect();
    let c2: Vec<_> = c1
        .iter()
        .zip(&a)
        .map(|(&x, &y)| add(scal(t, x), y))
        .collect();
    a = c2.iter().zip(&b).map(|(&x, &y)| add(x, y)).collect();
    let mut g = Vec::new();
    for j in 1..=2 {
        for i in 1..=2 {
            let (i, j) = (c(i as f64), c(j as f64));
            let gij = (s + i, t * j);
            let hij = (s * t, t + i * j);
            g.push(add(gij, scal(s, hij)));
        }
    }
    let total = |v: &[(Dual, Dual)], f: &dyn Fn(&(Dual, Dual)) -> Dual| {
        v.iter().fold(c(0.0), |acc, x| acc + f(x))
    };
    [
        total(&c2, &|x| x.0 + x.1),
        total(&a, &|x| x.0 + x.1),
        total(&g, &|x| x.0),
        total(&g, &|x| x.1),
    ]
}

/// tests/corpus/derived_elemental_ops.f90 (operator interfaces on
/// ELEMENTAL functions of structures applied to whole arrays of
/// structures): the Jacobian of `r` in both modes, on both back ends,
/// against [`elemental_ops_by_hand`], whose values are checked against
/// the gfortran golden values first.
#[test]
fn elemental_operators_on_arrays_of_structures_have_their_derivatives() {
    for ((s, t), golden) in [
        ((1.5, 0.5), [18.5625, 25.734375, 16.5, 13.5]),
        ((-0.75, 1.25), [2.35546875, 11.537841796875, 5.8125, 22.5]),
    ] {
        let r = elemental_ops_by_hand(s, t);
        check_by_hand(
            "derived_elemental_ops.f90",
            "elemental_ops",
            &[("s", s), ("t", t)],
            &r,
            &golden,
        );
    }
}

/// tests/corpus/derived_elemental_sections.f90 followed by hand on [`Dual`]
/// numbers at `n` cells: `relax(c) = (c.u/2 + c.w, c.w c.u)`, `k * c =
/// (k c.u, k + c.w)`, `energy(c) = c.u^2 + c.w`, applied to the elements
/// the sections select, position by position.
fn elemental_sections_by_hand(s: f64, t: f64, n: usize) -> [Dual; 5] {
    type Cell = (Dual, Dual);
    let (s, t) = (Dual(s, 1.0, 0.0), Dual(t, 0.0, 1.0));
    let relax = |x: Cell| (c(0.5) * x.0 + x.1, x.1 * x.0);
    let scal = |k: Dual, x: Cell| (k * x.0, k + x.1);
    let energy = |x: Cell| x.0 * x.0 + x.1;
    // cells(i) at [i - 1], b(i) at [i], g(i, j) at [i - 1][j - 1].
    let mut cells: Vec<Cell> = (1..=n)
        .map(|i| (s * c(i as f64), t + c(i as f64)))
        .collect();
    let mut b: Vec<Cell> = (0..8).map(|i| (t * c(i as f64), s)).collect();
    let mut g: Vec<Vec<Cell>> = (1..=3)
        .map(|i| {
            (1..=4)
                .map(|j| (s + c((i * j) as f64), t * c(j as f64)))
                .collect()
        })
        .collect();
    for cell in &mut cells[1..n - 1] {
        *cell = relax(*cell);
    }
    for (k, i) in [1, 3, 5].into_iter().enumerate() {
        b[i] = scal(t, cells[n - 1 - 2 * k]);
    }
    for j in 0..4 {
        b[4 + j] = relax(g[1][j]);
    }
    let e: Vec<Dual> = cells[1..].iter().map(|&x| energy(x)).collect();
    let x: Vec<Dual> = (0..3).map(|i| energy(g[i][2])).collect();
    for row in &mut g {
        row[1] = scal(s, row[1]);
    }
    let sum = |v: &mut dyn Iterator<Item = Dual>| v.fold(c(0.0), |a, x| a + x);
    [
        sum(&mut cells.iter().map(|x| x.0 + x.1)),
        sum(&mut b.iter().map(|x| x.0 + x.1)),
        sum(&mut e.into_iter()),
        sum(&mut x.into_iter()),
        sum(&mut g.iter().flatten().map(|x| x.0 * x.1)),
    ]
}

/// tests/corpus/derived_elemental_sections.f90 (ELEMENTAL functions of
/// structures, directly and through an operator interface, given sections
/// of arrays of structures and assigned to sections and to arrays of
/// reals): the Jacobian of `r` in both modes, on both back ends, against
/// [`elemental_sections_by_hand`], whose values are checked against the
/// gfortran golden values first.
#[test]
fn elemental_functions_of_sections_of_arrays_of_structures_have_their_derivatives() {
    for ((s, t, n), golden) in [
        ((1.5, 0.5, 6), [136.5, 102.25, 369.875, 191.25, 157.875]),
        (
            (-0.75, 1.25, 5),
            [-16.8125, 86.03125, 20.203125, 111.9375, 159.703125],
        ),
    ] {
        let r = elemental_sections_by_hand(s, t, n);
        check_by_hand(
            "derived_elemental_sections.f90",
            "elemental_sections",
            &[("s", s), ("t", t), ("n", n as f64)],
            &r,
            &golden,
        );
    }
}

/// tests/corpus/derived_array_values.f90 followed by hand on [`Dual`]
/// numbers: a point is `(x, v1, v2)`; the constructors and PACKs fill their
/// targets in array element order.
fn array_values_by_hand(s: f64, t: f64) -> [Dual; 3] {
    type Pt = (Dual, Dual, Dual);
    let (s, t) = (Dual(s, 1.0, 0.0), Dual(t, 0.0, 1.0));
    let pt_c = (s * t, s, t);
    let b: Vec<Pt> = (0..4)
        .map(|i| (t + c(i as f64), s * c(i as f64), c(1.0)))
        .collect();
    let mut a: Vec<Pt> = vec![pt_c, b[3], b[1]];
    a.extend((1..=2).map(|i| (s * c(i as f64), t, s + c(i as f64))));
    let wt: Vec<Dual> = (1..=5).map(|i| c(i as f64) * t).collect();
    let zero = (c(0.0), c(0.0), c(0.0));
    let mut sel: Vec<Pt> = vec![zero; 6];
    let picked: Vec<Pt> = a.iter().copied().filter(|p| p.0 .0 > 2.0 * t.0).collect();
    let m = picked.len();
    sel[1..=m].copy_from_slice(&picked);
    let sum = |v: &mut dyn Iterator<Item = Dual>| v.fold(c(0.0), |acc, x| acc + x);
    let r1 = sum(&mut a.iter().map(|p| p.0 * p.2)) + sum(&mut wt.iter().copied());
    let r2 = sum(&mut sel.iter().map(|p| p.0 + p.1 * p.2)) + c(m as f64);
    let picked: Vec<Pt> = (1..5)
        .filter(|&k| wt[k].0 > 3.0 * t.0)
        .map(|k| a[k])
        .collect();
    sel[..2].copy_from_slice(&picked);
    sel[4] = pt_c;
    sel[5] = b[0];
    let r3 = sum(&mut sel.iter().map(|p| p.0 * p.1));
    [r1, r2, r3]
}

/// tests/corpus/derived_array_values.f90 (array constructors and PACK of
/// structures with an array component): the Jacobian of `r` in both
/// modes, on both back ends, against [`array_values_by_hand`], whose
/// values are checked against the gfortran golden values first.
#[test]
fn constructors_and_pack_of_structures_have_their_derivatives() {
    for ((s, t), golden) in [
        ((1.5, 0.5), [27.125, 22.5, 6.375]),
        ((-0.75, 1.25), [22.015625, 3.0, -2.109375]),
    ] {
        let r = array_values_by_hand(s, t);
        check_by_hand(
            "derived_array_values.f90",
            "array_values",
            &[("s", s), ("t", t)],
            &r,
            &golden,
        );
    }
}

/// tests/corpus/derived_array_shifts.f90 followed by hand on [`Dual`]
/// numbers: a particle is `(m, q1, q2)`, arrays of particles are vectors
/// by position (from 0); CSHIFT, EOSHIFT, SPREAD, RESHAPE and TRANSPOSE
/// move whole particles.
fn ring_shifts_by_hand(s: f64, t: f64) -> [Dual; 12] {
    type Particle = [Dual; 3];
    let (s, t) = (Dual(s, 1.0, 0.0), Dual(t, 0.0, 1.0));
    let sub = |a: Dual, b: Dual| a + c(-1.0) * b;
    let sum = |v: &mut dyn Iterator<Item = Dual>| v.fold(c(0.0), |acc, x| acc + x);
    let energy = |ring: &[Particle]| {
        let n = ring.len();
        sum(&mut (0..n).map(|i| {
            let (p, q) = (ring[i], ring[(i + 1) % n]);
            let d1 = sub(p[1], q[1]);
            let d2 = sub(p[2], q[2]);
            p[0] * q[0] * (d1 * d1 + d2 * d2)
        }))
    };
    let cshift = |a: &[Particle], shift: i64| -> Vec<Particle> {
        let n = a.len() as i64;
        (0..n)
            .map(|k| a[(k + shift).rem_euclid(n) as usize])
            .collect()
    };
    let eoshift = |a: &[Particle], shift: i64, edge: Particle| -> Vec<Particle> {
        let n = a.len() as i64;
        (0..n)
            .map(|k| match k + shift {
                j if (0..n).contains(&j) => a[j as usize],
                _ => edge,
            })
            .collect()
    };
    let edge = [t * t, s, c(-1.0) * t];
    let mut ring = vec![[c(0.0); 3]; 6];
    ring[1..5].fill(edge);
    for (i, p) in ring.iter_mut().enumerate() {
        let i = i as f64;
        p[0] = p[0] + s * c(i);
        p[2] = p[2] + t * c(i * i);
    }
    let r1 = energy(&ring);
    let moved = cshift(&ring, -2);
    let r2 = moved[0][0] * moved[2][1] + moved[5][2];
    let ring = cshift(&ring, 1);
    let r3 = sub(ring[0][0], ring[5][2] * ring[2][0]);
    let moved = eoshift(&ring, 2, edge);
    let r4 = sum(&mut moved.iter().map(|p| p[0])) + moved[5][1] * moved[4][2] + moved[0][2];
    let moved = eoshift(&ring, -1, [s, t, c(1.0)]);
    let r5 = moved[0][0] + moved[1][2] * s;
    // rows(i, j) = ring(j - 1)
    let r6 = ring[2][0] * ring[3][2];
    // grid(i, j) = moved(2 (j - 1) + i), flip(i, j) = grid(j, i); from 1.
    let grid = |i: usize, j: usize| moved[2 * (j - 1) + i - 1];
    let r7 = grid(1, 3)[0] * grid(2, 2)[2] + grid(2, 1)[1];
    let r8 = c(6323.0);
    let r9 = c(11.0);
    let r10 = energy(&moved) * t;
    let mut g: Vec<Vec<Particle>> = (1..=2)
        .map(|i| (1..=3).map(|j| grid(i, j)).collect())
        .collect();
    g[0] = (0..3).map(|j| g[1][(j + 1) % 3]).collect();
    let r11 = g[0][0][0] + g[0][2][2] * g[0][1][1] + g[1][1][0];
    let all_m = sum(&mut g.iter().flatten().map(|p| p[0]));
    let first_row_m = sum(&mut g[0].iter().map(|p| p[0]));
    let r12 = all_m * first_row_m + g[0][1][2] * g[1][2][1];
    [r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12]
}

/// tests/corpus/derived_array_shifts.f90 (array intrinsics of arrays of
/// structures with an array component, a broadcast structure, inquiries):
/// the Jacobian of `r` in both modes, on both back ends, against
/// [`ring_shifts_by_hand`], whose values are checked against the
/// gfortran golden values first.
#[test]
fn array_intrinsics_of_structures_move_their_derivatives() {
    for ((s, t), golden) in [
        (
            (1.5, 0.5),
            [
                1750.296875,
                4.0,
                1.75,
                22.25,
                1.5,
                35.625,
                26.5,
                6323.0,
                11.0,
                1623.0859375,
                9.5,
                392.0,
            ],
        ),
        (
            (-0.75, 1.25),
            [
                920.018310546875,
                10.0,
                0.8125,
                8.1875,
                -0.75,
                -12.890625,
                -15.125,
                6323.0,
                11.0,
                4368.724060058594,
                -1.375,
                26.28125,
            ],
        ),
    ] {
        let r = ring_shifts_by_hand(s, t);
        check_by_hand(
            "derived_array_shifts.f90",
            "ring_shifts",
            &[("s", s), ("t", t)],
            &r,
            &golden,
        );
    }
}

/// What stays unsupported of array values of structures is a located
/// error naming the construct: EOSHIFT without BOUNDARY=, PACK of a type
/// with array components, a mask reading the target, a constructor
/// reading its target, a target of rank 2.
#[test]
fn unsupported_array_values_of_structures_are_located_errors() {
    let head = "module m\n  type :: v\n    real(8) :: x\n  end type\n  type :: w\n    real(8) :: q(2)\n  end type\nend module\n\
                subroutine s(y)\n  use m\n  real(8) :: y\n  type(v) :: a(3), b(3), g(2, 2)\n  type(w) :: p(3)\n  a%x = y\n";
    let cases = [
        (
            "  b = eoshift(a, 1)\n",
            "e.f90:15:7",
            "`eoshift` of arrays of structures takes a BOUNDARY=",
        ),
        (
            "  p = pack(p(3:1:-1), [.true., .false., .true.], p)\n",
            "e.f90:15:7",
            "the arrays of `pack` of arrays of structures with an array component (`p%q`)",
        ),
        (
            "  a = pack(b, a%x > 0, b)\n",
            "e.f90:15:15",
            "the `mask` of `pack` reading its target `a`",
        ),
        (
            "  a = [a(3), a(1:2)]\n",
            "e.f90:15:8",
            "an array constructor of structures reading its target `a`",
        ),
        (
            "  g = [a(1), a(2), a(3), a(1)]\n",
            "e.f90:15:3",
            "an array constructor of structures assigned to an array of rank other than 1",
        ),
    ];
    assert_located_errors(head, &cases);
}

/// What stays unsupported of arrays of structures given to procedures is
/// a located error naming the construct: an array of structures for a
/// scalar structure dummy of a procedure that is not ELEMENTAL, an
/// ELEMENTAL reference of arrays of structures whose value reads its
/// target at other positions or whose target is a scalar, a section with
/// the wrong number of subscripts, a section of an array of structures
/// with ALLOCATABLE components as an actual argument.
#[test]
fn unsupported_elemental_uses_of_arrays_of_structures_are_located_errors() {
    let head = "module m\n  type :: v\n    real(8) :: x\n  end type\ncontains\n\
                elemental function e(a) result(c)\n    type(v), intent(in) :: a\n    type(v) :: c\n\
                c%x = 2 * a%x\n  end function\n\
                function f(a) result(c)\n    type(v), intent(in) :: a\n    type(v) :: c\n\
                c%x = 2 * a%x\n  end function\nend module\n\
                subroutine s(y)\n  use m\n  real(8) :: y\n  type(v) :: a(3), b(3)\n  a%x = y\n";
    let cases = [
        ("  b = f(a)\n", "e.f90:22:9", "rank mismatch in argument 1 of `f`: array of structures"),
        (
            "  b(2:3) = e(b(1:2))\n",
            "e.f90:22:14",
            "`b` is read at other positions than the ELEMENTAL assignment of structures writes",
        ),
        (
            "  b(2) = e(a)\n",
            "e.f90:22:3",
            "ELEMENTAL function of structures applied to arrays of structures, assigned to a scalar",
        ),
        (
            "  b(1:3) = e(a(1:2, 1))\n",
            "e.f90:22:14",
            "`a` has 1 dimension(s) but 2 subscript(s) are given",
        ),
    ];
    assert_located_errors(head, &cases);
}

/// tests/corpus/derived_merge.f90 at `s = 1.5 > t = 0.5`: `w = merge(p,
/// q, s > t)` is `p = (s, [t, st])`, so `r1 = s + s t^2`; the second MERGE
/// takes `arr(2) = q = (t^2, [s + 1, 2t])`, so `r2 = 2 t^3`; the actual
/// `merge(p, q, t > s)` is `q`, so `r3 = t^2 (s + 1) + 2t`.
#[test]
fn merge_of_structures_has_its_derivatives() {
    let (s, t) = (1.5, 0.5);
    let expected = [
        1.0 + t * t,
        2.0 * s * t,
        0.0,
        6.0 * t * t,
        t * t,
        2.0 * t * (s + 1.0) + 2.0,
    ];
    check_both(
        "derived_merge.f90",
        "merges",
        &[("s", s), ("t", t)],
        "r",
        "s,t",
        &expected,
    );
}

/// tests/corpus/procedure_specific.f90 (`procedure(name)` naming a
/// specific procedure): `y(i) = a i^2 + i`, `s` the trapezoidal rule
/// with four intervals of `ab x^2 + x` on [0, 1] (`0.34375 ab + 0.5`), and
/// `r = b a^3`.
#[test]
fn procedure_declarations_naming_specific_procedures_have_their_derivatives() {
    let (a, b) = (1.25, -0.75);
    let at = [("a", a), ("b", b)];
    let file = "procedure_specific.f90";
    check_at(
        file,
        "fit",
        &at,
        "y",
        "a,b",
        &[1.0, 0.0, 4.0, 0.0, 9.0, 0.0],
    );
    check_at(file, "fit", &at, "s", "a,b", &[0.34375 * b, 0.34375 * a]);
    check_at(file, "fit", &at, "r", "a,b", &[3.0 * a * a * b, a * a * a]);
}

/// A procedure passed for a `procedure(name)` dummy is checked against
/// `name`'s interface, and `procedure(v)` naming something that is
/// neither an interface nor a procedure with an explicit one is refused;
/// both with their location.
#[test]
fn procedure_declarations_naming_specific_procedures_check_what_they_name() {
    let module = "module m\n  implicit none\ncontains\n  real(8) function sq(x)\n    real(8), intent(in) :: x\n    sq = x * x\n  end function sq\n  real(8) function twice(f, x)\n    procedure(sq) :: f\n    real(8), intent(in) :: x\n    twice = 2 * f(x)\n  end function twice\n  real(8) function two(x, y)\n    real(8), intent(in) :: x, y\n    two = x + y\n  end function two\n";
    let cases = [
        (
            "  subroutine use(x, y)\n    real(8), intent(in) :: x\n    real(8), intent(out) :: y\n    y = twice(two, x)\n  end subroutine use\n",
            "m.f90:20:",
            "`two` takes 2 argument(s) but the interface `sq` takes 1",
        ),
        (
            "  subroutine use(x, y)\n    real(8), intent(in) :: x\n    real(8), intent(out) :: y\n    real(8) :: v\n    procedure(v) :: g\n    y = x\n  end subroutine use\n",
            "m.f90:21:15",
            "`v` is neither an abstract interface nor a procedure with an explicit interface",
        ),
    ];
    for (unit, place, message) in cases {
        let src = format!("{module}{unit}end module m\n");
        let e = Engine::from_sources(&[("m.f90".into(), src)], Options::default())
            .err()
            .expect("refused");
        assert!(e.message.contains(place), "{}", e.message);
        assert!(e.message.contains(message), "{}", e.message);
    }
}

/// tests/corpus/derived_alloc_element_assign.f90 (`c = b(k)` and
/// `b(k) = c` with ALLOCATABLE components): with `b(i)%w = is`,
/// `b(i)%v(j) = st + ij` (`j = 0..i`) and `b(2)%m = [s, t, st, s + t]`,
/// `r = (6s^2 t + 12s, -2s + 3st^2 + 6t, s^2 t^2 + 4st, st^2, 2s^2 t + s,
/// st^2 + t + st)` and `q = t (s, t, st, s + t)`.
#[test]
fn structures_and_elements_with_allocatable_components_assign_deep() {
    let (s, t) = (-0.25, 2.0);
    let file = "derived_alloc_element_assign.f90";
    check(
        file,
        "swap",
        (s, t),
        "r",
        "s,t",
        &[
            12.0 * s * t + 12.0,
            6.0 * s * s,
            -2.0 + 3.0 * t * t,
            6.0 * s * t + 6.0,
            2.0 * s * t * t + 4.0 * t,
            2.0 * s * s * t + 4.0 * s,
            t * t,
            2.0 * s * t,
            4.0 * s * t + 1.0,
            2.0 * s * s,
            t * t + t,
            2.0 * s * t + 1.0 + s,
        ],
    );
    check(
        file,
        "swap",
        (s, t),
        "q",
        "s,t",
        &[t, s, 0.0, 2.0 * t, t * t, 2.0 * s * t, t, s + 2.0 * t],
    );
}

/// A subscript of `b(k)%u` outside the element's own bounds but inside the
/// storage shared by the elements (`b(1)%u(5)` is allocated, `b(2)%u` has
/// bounds 2:3) is a located error naming the component, in the primal on
/// the JIT and the interpreter and in the tangent and the adjoint; inside
/// them the program runs and its derivative is that of `y = 2x + 2x * (4
/// - i)`.
#[test]
fn subscripts_of_allocatable_components_of_arrays_of_structures_are_checked_per_element() {
    let dir = std::env::temp_dir().join(format!("adjit-ragged-oob-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("oob.f90");
    std::fs::write(
        &file,
        "subroutine s(x, i, y)\n  type :: t\n    real(8), allocatable :: u(:)\n  end type\n  \
         type(t) :: b(2)\n  real(8), intent(in) :: x\n  integer, intent(in) :: i\n  \
         real(8), intent(out) :: y\n  allocate(b(1)%u(5))\n  allocate(b(2)%u(2:3))\n  \
         b(1)%u = x\n  b(2)%u = 2*x\n  y = b(2)%u(i) + sum(b(2)%u(i:3))\nend subroutine\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let base = ["--entry", "s", "--set", "x=1.5"];
    for (i, dy) in [("i=2", 6.0), ("i=3", 4.0)] {
        let (code, out, err) = common::cli::adjit(
            &[
                &["grad", f, "--of", "y", "--wrt", "x", "--set", i][..],
                &base[..],
            ]
            .concat(),
        );
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(&format!("dy/dx = {dy:.16e}")), "{out}");
    }
    for i in ["i=1", "i=4", "i=0"] {
        let runs: [&[&str]; 4] = [
            &["run", f],
            &["run", f, "--interp"],
            &["grad", f, "--of", "y", "--wrt", "x", "--mode", "tangent"],
            &["grad", f, "--of", "y", "--wrt", "x", "--mode", "adjoint"],
        ];
        for run in runs {
            let (code, _, err) = common::cli::adjit(&[run, &base[..], &["--set", i]].concat());
            assert_eq!(code, 1, "{run:?} {i}: {err}");
            let first = err.lines().next().unwrap_or_default();
            assert!(
                first.starts_with(&format!("{f}:13:3: error: runtime error in `s`: array index out of bounds on `b(k)%u`: a subscript outside the bounds of the element's allocation")),
                "{run:?} {i}: {first}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
