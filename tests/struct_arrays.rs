//! Arrays of structures as modern libraries pass them around, against
//! closed-form gradients on the JIT and on the interpreter (with the
//! tangent / adjoint dot-product identity and central differences):
//! ALLOCATABLE arrays of structures whose type has ALLOCATABLE scalar
//! components, sections of such arrays as actual arguments (changed by
//! the callee and written back), sections of arrays of structures whose
//! type has ALLOCATABLE array components (allocated or grown by the
//! callee), array constructors of structures
//! mixing whole arrays, elements and scalars as actual arguments and
//! assigned, structures nested two deep (arrays of structures as
//! components) beside ALLOCATABLE arrays of named structures, and arrays
//! of structures as components of arrays of structures. The corpus programs `alloc_struct_scalar_comps.f90`,
//! `struct_section_alloc_comps.f90`, `struct_section_ragged_comps.f90` and
//! `struct_ctor_mixed.f90` check the
//! same constructs against gfortran.

mod common;

use adjit::engine::{Args, Backend, Engine};
use common::check::{against, three_ways, Rng};

/// `f(n, x, y)` of `source` at a random point of `n` values, on both
/// executors: the three-way check of dy/dx and the adjoint gradient
/// against `expected`. Returns the problems found.
fn gradient_problems(
    source: &str,
    seed: u64,
    n: usize,
    expected: &dyn Fn(&[f64]) -> Vec<f64>,
) -> Vec<String> {
    let x = Rng(seed).vec(n);
    let mut bad = Vec::new();
    for backend in [Backend::Jit, Backend::Interpreter] {
        let engine = common::engine_on(backend, "s.f90", source);
        let args = point(&engine, &x);
        let (adjoint, problems) = three_ways(&engine, Some("f"), &args, "y", "x", 1e-6);
        bad.extend(problems.into_iter().map(|p| format!("{backend:?}: {p}")));
        bad.extend(against(
            &format!("closed form ({backend:?})"),
            &adjoint,
            &expected(&x),
            1e-12,
        ));
    }
    bad
}

/// The arguments of `f(n, x, y)` with `x` set (and `n` its length).
fn point(engine: &Engine, x: &[f64]) -> Args {
    let mut args = engine.procedure(Some("f")).unwrap().args();
    args.set_scalar("n", x.len() as f64).unwrap();
    args.set_array("x", x).unwrap();
    args
}

/// An ALLOCATABLE array of bodies whose mass is an ALLOCATABLE scalar
/// component: `make` (INTENT(OUT)) gives the odd bodies a mass `x_i^2`,
/// the copy `c = b` is deep (it keeps each body's status after `b` is
/// released), `c(2)%m = 2 x_2` allocates the second body's mass on
/// assignment, and `scale` doubles the masses of the strided section
/// `c(1:n:2)` it is given (written back). `total` adds `m_i x_i` for a
/// body with a mass, `x_i` for one without: with n = 5,
/// y = 2 (x_1^3 + x_3^3 + x_5^3) + 2 x_2^2 + x_4.
const BODIES: &str = "
module bodies_m
  implicit none
  type :: body
    double precision :: x
    double precision, allocatable :: m
  end type
contains
  subroutine make(b, x)
    type(body), allocatable, intent(out) :: b(:)
    double precision, intent(in) :: x(:)
    integer :: i
    allocate(b(size(x)))
    do i = 1, size(x)
      b(i)%x = x(i)
      if (mod(i, 2) == 1) then
        allocate(b(i)%m)
        b(i)%m = x(i)**2
      end if
    end do
  end subroutine
  subroutine scale(b, s)
    type(body), intent(inout) :: b(:)
    double precision, intent(in) :: s
    integer :: i
    do i = 1, size(b)
      if (allocated(b(i)%m)) b(i)%m = s * b(i)%m
    end do
  end subroutine
  double precision function total(b)
    type(body), intent(in) :: b(:)
    integer :: i
    total = 0
    do i = 1, size(b)
      if (allocated(b(i)%m)) then
        total = total + b(i)%m * b(i)%x
      else
        total = total + b(i)%x
      end if
    end do
  end function
end module

subroutine f(n, x, y)
  use bodies_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(body), allocatable :: b(:), c(:)
  call make(b, x)
  c = b
  deallocate(b)
  c(2)%m = 2 * x(2)
  call scale(c(1:n:2), 2d0)
  y = total(c)
end subroutine f
";

#[test]
fn allocatable_scalar_components_of_allocatable_structure_arrays_differentiate() {
    let expected = |x: &[f64]| {
        vec![
            6.0 * x[0] * x[0],
            4.0 * x[1],
            6.0 * x[2] * x[2],
            1.0,
            6.0 * x[4] * x[4],
        ]
    };
    let bad = gradient_problems(BODIES, 0x5ca1_ab1e, 5, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Array constructors of structures mixing a whole array, elements and a
/// scalar: `ring(i) = pt([x_i, i], x_i)`, `probe = pt([x_1, x_2], 1)`,
/// `total` weighs the k-th structure by k, so the order of the items
/// counts. `total([probe, ring])` = x1 x2 + 2 x1^2 + 6 x2^2 + 12 x3^2,
/// `total([ring(2), probe])` = 2 x2^2 + 2 x1 x2, and the same
/// constructors assigned to an array give the same values again:
/// y = 2 (3 x1 x2 + 2 x1^2 + 8 x2^2 + 12 x3^2).
const MIXED: &str = "
module mixed_m
  implicit none
  type :: pt
    double precision :: pos(2)
    double precision :: m
  end type
contains
  double precision function total(ps)
    type(pt), intent(in) :: ps(:)
    integer :: k
    total = 0
    do k = 1, size(ps)
      total = total + k * ps(k)%m * ps(k)%pos(1) * ps(k)%pos(2)
    end do
  end function
end module

subroutine f(n, x, y)
  use mixed_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(pt) :: probe, ring(3)
  type(pt), allocatable :: merged(:)
  integer :: i
  probe = pt([x(1), x(2)], 1d0)
  do i = 1, 3
    ring(i) = pt([x(i), dble(i)], x(i))
  end do
  y = total([probe, ring]) + total([ring(2), probe])
  merged = [probe, ring]
  y = y + total(merged)
  merged = [ring(2), probe]
  y = y + total(merged)
end subroutine f
";

#[test]
fn mixed_array_constructors_of_structures_differentiate() {
    let expected = |x: &[f64]| {
        vec![
            2.0 * (3.0 * x[1] + 4.0 * x[0]),
            2.0 * (3.0 * x[0] + 16.0 * x[1]),
            2.0 * 24.0 * x[2],
        ]
    };
    let bad = gradient_problems(MIXED, 0xc0_ffee, 3, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Sections of an array of cells whose type has an ALLOCATABLE array
/// component, given to procedures that change them: `cells(i)%w = i`,
/// the odd cells get `u = [x_i]`, `square` (assumed shape) squares the
/// values of the strided section `cells(1:n:2)` it is given and `seed`
/// (explicit shape) gives the cells of `cells(2:n:2)` without values two
/// of them, `u = [x_i, 3 x_i]` (wider than any cell had: the storage grows
/// on the way back). `total` adds `w_i sum(u_i)`: with n = 4,
/// y = x_1^2 + 3 x_3^2 + 8 x_2 + 16 x_4.
const RAGGED: &str = "
module ragged_m
  implicit none
  type :: cell
    double precision :: w
    double precision, allocatable :: u(:)
  end type
contains
  subroutine square(cs)
    type(cell), intent(inout) :: cs(:)
    integer :: i
    do i = 1, size(cs)
      if (allocated(cs(i)%u)) cs(i)%u = cs(i)%u**2
    end do
  end subroutine
  subroutine seed(m, cs, v)
    integer, intent(in) :: m
    type(cell), intent(inout) :: cs(m)
    double precision, intent(in) :: v(:)
    integer :: j
    do j = 1, m
      if (.not. allocated(cs(j)%u)) then
        allocate(cs(j)%u(2))
        cs(j)%u(1) = v(2 * j)
        cs(j)%u(2) = 3 * v(2 * j)
      end if
    end do
  end subroutine
  double precision function total(cs)
    type(cell), intent(in) :: cs(:)
    integer :: i
    total = 0
    do i = 1, size(cs)
      if (allocated(cs(i)%u)) total = total + cs(i)%w * sum(cs(i)%u)
    end do
  end function
end module

subroutine f(n, x, y)
  use ragged_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(cell) :: cells(n)
  integer :: i
  do i = 1, n
    cells(i)%w = i
    if (mod(i, 2) == 1) cells(i)%u = [x(i)]
  end do
  call square(cells(1:n:2))
  call seed(n / 2, cells(2:n:2), x)
  y = total(cells)
end subroutine f
";

#[test]
fn sections_with_allocatable_array_components_differentiate() {
    let expected = |x: &[f64]| vec![2.0 * x[0], 8.0, 6.0 * x[2], 16.0];
    let bad = gradient_problems(RAGGED, 0x007a_99ed, 4, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Structures nested two deep: a model holding a state structure, a
/// fixed-size array of layers (`type(layer) :: layers(3)`, weights
/// `[x_i, i]`, bias by default 0) and an ALLOCATABLE array of layers
/// (`m%extra(1)%w(1) = x_1 x_2`, `m%extra(2)%w(1) = x_3`), copied whole
/// (`c%layers(2)%w(1) = 5` changes the copy only), so
/// `m%s%h` = x1 + 2 x2 + 3 x3; beside it an ALLOCATABLE array of named
/// items (`character(len=8) :: name = 'none'`, `wt = 2`: the defaults
/// given at ALLOCATE), one renamed, copied whole and the copy's renamed
/// again, selected by name and by a substring of the name; a substring
/// of a fixed array's element's component assigned and compared adds x1:
/// y = (x1 + 2 x2 + 3 x3) x1 x2 + 5 x3 + 2 x1^2 + 2 x3^2 + 10 x2^2 + x1.
const NESTED: &str = "
module nest_m
  implicit none
  type :: layer
    double precision :: w(2)
    double precision :: b = 0d0
  end type
  type :: state
    double precision :: h
  end type
  type :: model
    type(state) :: s
    type(layer) :: layers(3)
    type(layer), allocatable :: extra(:)
  end type
  type :: item
    character(len=8) :: name = 'none'
    double precision :: v
    double precision :: wt = 2d0
  end type
  type :: tag
    character(len=4) :: t
  end type
contains
  subroutine build(m, x)
    type(model), intent(out) :: m
    double precision, intent(in) :: x(:)
    integer :: i
    do i = 1, 3
      m%layers(i)%w = [x(i), dble(i)]
    end do
    allocate(m%extra(2))
    m%extra(1)%w(1) = x(1) * x(2)
    m%extra(2)%w(1) = x(3)
  end subroutine
end module

subroutine f(n, x, y)
  use nest_m
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(model) :: m, c
  type(item), allocatable :: items(:), copy(:)
  type(tag) :: tags(2)
  integer :: i
  call build(m, x)
  c = m
  c%layers(2)%w(1) = 5d0
  m%s%h = 0d0
  do i = 1, size(m%layers)
    m%s%h = m%s%h + m%layers(i)%w(1) * m%layers(i)%w(2) + m%layers(i)%b
  end do
  allocate(items(n))
  do i = 1, n
    items(i)%v = x(i) ** 2
  end do
  items(2)%name = 'square'
  copy = items
  copy(2)%name = 'other'
  y = m%s%h * m%extra(1)%w(1) + c%layers(2)%w(1) * c%extra(2)%w(1)
  do i = 1, n
    if (copy(i)%name == 'none') y = y + copy(i)%wt * copy(i)%v
    if (items(i)%name(1:3) == 'squ') y = y + 10 * items(i)%v
  end do
  tags(2)%t = 'wxyz'
  tags(2)%t(4:4) = 'Z'
  if (tags(2)%t(2:4) == 'xyZ') y = y + x(1)
end subroutine f
";

#[test]
fn nested_structures_and_named_items_differentiate() {
    let expected = |x: &[f64]| {
        let (a, b, c) = (x[0], x[1], x[2]);
        vec![
            2.0 * a * b + 2.0 * b * b + 3.0 * b * c + 4.0 * a + 1.0,
            a * a + 4.0 * a * b + 3.0 * a * c + 20.0 * b,
            3.0 * a * b + 5.0 + 4.0 * c,
        ]
    };
    let bad = gradient_problems(NESTED, 0x0de9_7e57, 3, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Arrays of structures whose type holds arrays of structures
/// (`ms(i)%layers(j)%w(k)`, the leaf `ms%layers%w(k, j, i)`): an
/// assumed-shape dummy filled by `init`, a module array of them assigned
/// whole (`kept = ms`) and by element, an element passed to a scalar
/// structure dummy (`energy(ms(1))`) and a section of the inner component
/// summed (`sum(kept(1)%layers%b)`). With `ms(i)%layers(j)%w = [x_j i,
/// x_j^2]`, biases j and scales `x_i`, S = sum(x_j + x_j^2), T = sum(x_j):
/// y = x_1 S + x_2 (2 T + x_1^2 + x_2^2 + x_1 x_2) + 18.
const LAYERS: &str = "
module layers_m
  implicit none
  type :: layer
    double precision :: w(2)
    double precision :: b
  end type
  type :: model
    type(layer) :: layers(3)
    double precision :: scale
  end type
  type(model), save :: kept(2)
contains
  subroutine init(ms, x)
    type(model), intent(out) :: ms(:)
    double precision, intent(in) :: x(:)
    integer :: i, j
    do i = 1, size(ms)
      do j = 1, 3
        ms(i)%layers(j)%w(1) = x(j) * i
        ms(i)%layers(j)%w(2) = x(j) ** 2
        ms(i)%layers(j)%b = j
      end do
      ms(i)%scale = x(i)
    end do
  end subroutine
  double precision function energy(m)
    type(model), intent(in) :: m
    integer :: j
    energy = 0
    do j = 1, 3
      energy = energy + m%scale * (m%layers(j)%w(1) + m%layers(j)%w(2)) + m%layers(j)%b
    end do
  end function
end module
subroutine f(n, x, y)
  use layers_m
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y
  type(model) :: ms(2)
  call init(ms, x)
  kept = ms
  kept(2)%layers(3)%w(2) = x(1) * x(2)
  y = energy(ms(1)) + energy(kept(2)) + sum(kept(1)%layers%b)
end subroutine f
";

#[test]
fn arrays_of_structures_inside_arrays_of_structures_differentiate() {
    let expected = |x: &[f64]| {
        let (a, b, c) = (x[0], x[1], x[2]);
        let s: f64 = x.iter().map(|v| v + v * v).sum();
        let t: f64 = x.iter().sum();
        vec![
            s + a * (1.0 + 2.0 * a) + b * (2.0 + 2.0 * a + b),
            a * (1.0 + 2.0 * b) + (2.0 * t + a * a + b * b + a * b) + b * (2.0 + 2.0 * b + a),
            a * (1.0 + 2.0 * c) + 2.0 * b,
        ]
    };
    let bad = gradient_problems(LAYERS, 0x1a7e_5eed, 3, &expected);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// What stays out is a located compile-time error naming the construct:
/// a whole array of structures of
/// run-time shape with an array component among other items of an array
/// constructor given as an actual argument, and an
/// ALLOCATABLE array of structures as a component of an array of
/// structures.
#[test]
fn what_stays_out_is_located() {
    let module = "module m
  type :: pt
    double precision :: pos(2)
    double precision, allocatable :: u(:)
  end type
  type :: q
    double precision :: pos(2)
  end type
contains
  subroutine show(ps)
    type(pt), intent(in) :: ps(:)
  end subroutine
  subroutine see(ps)
    type(q), intent(in) :: ps(:)
  end subroutine
end module
";
    let runtime_shape = format!(
        "{module}subroutine f(r)\n  use m\n  type(q) :: r(:), p\n  call see([p, r])\nend subroutine\n"
    );
    let depth_two = "subroutine f(y)
  type :: node
    double precision :: x
  end type
  type :: cell
    type(node), allocatable :: nodes(:)
  end type
  type(cell), allocatable :: cells(:)
  double precision :: y
  y = 1
end subroutine
";
    common::assert_compile_errors(
        "e.f90",
        &[
            (
                runtime_shape.as_str(),
                "e.f90:20:16",
                "the component `r%pos` of run-time extent in an array constructor of structures",
            ),
            (
                depth_two,
                "e.f90:8:15",
                "ALLOCATABLE array of structures `cells` of type `cell`, whose component `nodes` is a CHARACTER array, a deferred-length string, an array of structures or an ALLOCATABLE structure",
            ),
        ],
    );
}
