! FORALL and WHERE inside FORALL, with masks: each statement of the body
! (nested FORALLs and WHERE constructs counting as their statements) runs
! for every index tuple before the next one, so a statement may read what
! an earlier one assigned at other tuples.
! adjit-test: --entry forall_nested --set n=3 --set x=1.5,2,3
! adjit-test: --entry forall_nested --set n=4 --set x=0.5,-1.5,2,1.25
subroutine forall_nested(n, x, y, s)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision, intent(out) :: y(n), s
  double precision :: a(n, n), b(n, n), c(n, n)
  integer :: i, j
  a = 0
  b = 0
  c = 1
  forall (i = 1:n)
    forall (j = 1:n)
      a(i, j) = x(i) + 10 * x(j) * j
      b(i, j) = a(j, i) * j
    end forall
    forall (j = 1:n, j /= i .and. x(j) > 0)
      c(i, j) = a(i, j) * x(j)
    end forall
    where (x > 1)
      c(:, i) = c(:, i) + b(:, i) * x
      b(i, :) = 0.5d0 * b(i, :)
    elsewhere (x < 0)
      c(:, i) = -c(:, i)
    elsewhere
      c(:, i) = c(:, i) * 2
    end where
  end forall
  forall (i = 1:n, x(i) > 0)
    y(i) = sum(c(:, i)) * 0.1d0
    forall (j = i:n) a(j, i) = y(i) + x(j) ** 2
  end forall
  forall (i = 1:n, x(i) <= 0) y(i) = x(i)
  s = sum(a) + sum(b) * 0.1d0 + sum(c * c) * 0.01d0
end subroutine forall_nested
