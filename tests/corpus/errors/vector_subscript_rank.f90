! adjit-error: 9:17: array `m` of rank 2 in an expression of rank 1
! A vector subscript is a rank-one integer array.
subroutine top(x, w, y)
  real(8), intent(in) :: x
  real(8), intent(in) :: w(4)
  real(8), intent(out) :: y
  integer :: m(2, 2)
  m = reshape([1, 2, 3, 4], [2, 2])
  y = x * sum(w(m))
end subroutine top
