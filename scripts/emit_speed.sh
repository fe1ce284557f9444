#!/usr/bin/env bash
# Speed of the emitted Fortran adjoints (adjit emit --format fortran) of
# Griewank's function and the Bratu problem, compiled by gfortran -O2,
# against adjit's JIT adjoint (`adjit bench`) and the hand-written
# adjoints of benches/peers/ (Griewank's gradient, Bratu's
# vector-Jacobian product).
#
#   scripts/emit_speed.sh            n = 1,000 and 1,000,000
#
# Environment: ADJIT (default target/release/adjit, built with cargo),
# GFORTRAN (default gfortran), CARGO_TARGET_DIR as for cargo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gfortran=${GFORTRAN:-gfortran}
if [ -z "${ADJIT:-}" ]; then
  (cd "$root" && cargo build -q --release --bin adjit)
  ADJIT="${CARGO_TARGET_DIR:-$root/target}/release/adjit"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$ADJIT" emit "$root/examples/griewank.f90" --mode adjoint --of c --wrt a \
  --format fortran -o griewank_b.f90
"$ADJIT" emit "$root/examples/bratu.f" --mode adjoint --of f --wrt x,prm \
  --format fortran -o bratu_b.f90

# Both files start with module adjit_support: one program links it once.
sed -i '/^module adjit_support/,/^end module adjit_support/d' bratu_b.f90

cat > timing.f90 <<'F90'
! Median time per call of the emitted adjoints, the primals and the
! hand-written adjoints, over 15 runs of a batch of calls.
module emit_timing
  implicit none
contains
  real(8) function now()
    integer(8) :: c, r
    call system_clock(c, r)
    now = real(c, 8) / real(r, 8)
  end function now

  real(8) function median(t)
    real(8), intent(inout) :: t(:)
    integer :: i, j
    real(8) :: x
    do i = 2, size(t)
      x = t(i)
      j = i - 1
      do while (j >= 1)
        if (t(j) <= x) exit
        t(j + 1) = t(j)
        j = j - 1
      end do
      t(j + 1) = x
    end do
    median = t((size(t) + 1) / 2)
  end function median

  ! Prints the medians of 15 batches of calls of the primal, the emitted
  ! adjoint and the hand-written adjoint, each timed by per_call(1..3).
  subroutine report(name, n, per_call)
    character(*), intent(in) :: name
    integer, intent(in) :: n
    interface
      real(8) function per_call(which)
        integer, intent(in) :: which
      end function per_call
    end interface
    real(8) :: t(15, 3)
    integer :: r, which
    do r = 1, 15
      do which = 1, 3
        t(r, which) = per_call(which)
      end do
    end do
    write (*, '(a, i8, 3(a, es10.3))') name // ' n =', n, '  primal', median(t(:, 1)), &
      '  emitted adjoint', median(t(:, 2)), '  hand-written', median(t(:, 3))
  end subroutine report

  subroutine time_griewank(n)
    integer, intent(in) :: n
    real(8), allocatable :: a(:), a_b(:), g(:)
    real(8) :: c, c_b, ignored
    integer :: reps
    external :: griewank, griewank_b, griewank_grad
    allocate(a(n), a_b(n), g(n))
    a = 1
    reps = max(1, 2000000 / n)
    ignored = per_call(2)
    ignored = per_call(3)
    if (maxval(abs(a_b - g)) > 1d-12 * max(1d0, maxval(abs(g)))) stop 'griewank_b /= hand-written'
    call report('griewank', n, per_call)
  contains
    ! Seconds per call of the primal (1), the emitted adjoint (2) or the
    ! hand-written gradient (3), over a batch of reps calls.
    real(8) function per_call(which)
      integer, intent(in) :: which
      real(8) :: t0
      integer :: i
      t0 = now()
      do i = 1, reps
        select case (which)
        case (1)
          call griewank(n, a, c)
        case (2)
          a_b = 0
          c_b = 1
          call griewank_b(n, a, a_b, c, c_b)
        case default
          call griewank_grad(n, a, c, g)
        end select
      end do
      per_call = (now() - t0) / reps
    end function per_call
  end subroutine time_griewank

  subroutine time_bratu(n)
    integer, intent(in) :: n
    real(8), allocatable :: x(:), x_b(:), f(:), f_b(:), xh(:)
    real(8) :: prm(2), prm_b(2), prmh(2), ignored
    integer :: reps, i
    external :: bratu, bratu_b, bratu_vjp
    allocate(x(n), x_b(n), f(n), f_b(n), xh(n))
    do i = 1, n
      x(i) = 1 + sin(real(i, 8))
    end do
    prm = [1.3d0, 0.245828d0]
    reps = max(1, 2000000 / n)
    ignored = per_call(2)
    ignored = per_call(3)
    if (maxval(abs(x_b - xh)) > 1d-10 * max(1d0, maxval(abs(xh)))) stop 'bratu_b /= hand-written'
    call report('bratu   ', n, per_call)
  contains
    ! Seconds per call of the primal (1), the emitted vector-Jacobian
    ! product (2) or the hand-written one (3), over a batch of reps calls.
    real(8) function per_call(which)
      integer, intent(in) :: which
      real(8) :: t0
      integer :: k
      t0 = now()
      do k = 1, reps
        select case (which)
        case (1)
          call bratu(n, 2, x, prm, f)
        case (2)
          x_b = 0
          prm_b = 0
          f_b = 1
          call bratu_b(n, 2, x, x_b, prm, prm_b, f, f_b)
        case default
          xh = 0
          prmh = 0
          f_b = 1
          call bratu_vjp(n, 2, x, prm, f, f_b, xh, prmh)
        end select
      end do
      per_call = (now() - t0) / reps
    end function per_call
  end subroutine time_bratu
end module emit_timing

program emit_speed
  use emit_timing
  implicit none
  integer :: sizes(2), k
  sizes = [1000, 1000000]
  do k = 1, 2
    call time_griewank(sizes(k))
    call time_bratu(sizes(k))
  end do
end program emit_speed
F90

"$gfortran" -O2 -c griewank_b.f90 bratu_b.f90
"$gfortran" -O2 timing.f90 griewank_b.o bratu_b.o "$root/examples/griewank.f90" \
  "$root/examples/bratu.f" "$root/benches/peers/griewank_grad.f90" \
  "$root/benches/peers/bratu_vjp.f" -o timing
echo "== gfortran -O2 (seconds per call, median of 15)"
./timing
echo "== adjit JIT (adjit bench)"
"$ADJIT" bench "$root/examples/griewank.f90" --of c --wrt a --set a=1 --size s=1000,1000000 \
  | cut -c1-60
"$ADJIT" bench "$root/examples/bratu.f" --of "f(1)" --wrt x,prm --set parmax=2 --set x=1 \
  --set prm=1.3,0.245828 --size dim=1000,1000000 | cut -c1-60
