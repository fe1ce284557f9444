! Vector subscripts mixed with triplets and scalar subscripts in every
! dimension: `a(1:n, [2, 1])` (columns swapped), `a(idx, j)` as a value
! and as an assignment target, a vector subscript computed by integer
! arithmetic (`x(n + 1 - idx)`), one from a section of an integer array
! (`a(rows(2:3), 1)`), a permutation applied twice, a WHERE over a
! gathered target, and the gathered values in SUM, PRODUCT and MINVAL.
! adjit-test: --entry mix --set x=0.5,-1,2,0.25 --set n=4
! adjit-test: --entry mix --set x=1.5,2,-0.75,3 --set n=4
module vector_subscripts_m
  implicit none
contains
  ! A 2x2 block (given as a gathered section, copied in) weighted by `s`.
  real(8) function weighted(b, s)
    real(8), intent(in) :: b(2, 2), s
    weighted = s * (b(1, 1) - b(2, 2)) + b(1, 2) * b(2, 1)
  end function weighted

  subroutine mix(x, n, a, y, t)
    integer, intent(in) :: n
    real(8), intent(in) :: x(n)
    real(8), intent(out) :: a(n, 3), y(n), t(6)
    integer :: idx(n), rows(3), j
    real(8) :: b(n, 2)
    idx = [(j, j = 1, n)]
    rows = [3, 1, 4]
    do j = 1, 3
      a(:, j) = x * j + x(n + 1 - idx)
    end do
    b = a(1:n, [2, 1])
    a(idx, 3) = b(:, 1) * b(:, 2)
    a(rows(2:3), 1) = a(rows(2:3), 1) + x(2)
    y = x(idx(n:1:-1))
    y(idx(n:1:-1)) = y * 2 + x
    where (x(n + 1 - idx) > 0.4d0) y(idx) = y(idx) - 1
    t(1) = sum(b([2, 2, 3], [1, 2]))
    t(2) = product(x([1, 3]) + 1)
    t(3) = minval(a(rows, [3, 1]))
    t(4) = weighted(a(rows(1:2), [3, 2]), x(1))
    t(5) = sum(x(idx) * x(n + 1 - idx))
    t(6) = sum(a(rows, 2) * x(rows))
  end subroutine mix
end module vector_subscripts_m
