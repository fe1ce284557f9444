! Array intrinsics of arrays of structures of numeric scalar components: a
! grid of cells transposed and shifted along its second dimension, one
! column spread across the grid, RESHAPE with PAD= and ORDER=, PACK with
! VECTOR= (the live cells first, then the reserve), UNPACK of cells into
! a field of cells, and a section assigned a broadcast cell.
! adjit-test: --entry grid_moves --set s=1.5 --set t=0.5 --set n=3
! adjit-test: --entry grid_moves --set s=-0.75 --set t=1.25 --set n=4
module derived_grid_moves_m
  implicit none
  type :: cell
    real(8) :: u
    real(8) :: p
    integer :: tag
  end type
contains
  ! The flux of a grid against its neighbours along dimension 2.
  subroutine column_flux(g, n1, n2, f)
    integer, intent(in) :: n1, n2
    type(cell), intent(in) :: g(n1, n2)
    real(8), intent(out) :: f
    type(cell) :: east(n1, n2)
    east = cshift(g, shift=1, dim=2)
    f = sum(g%u * east%p) + sum(east%tag * g%p)
  end subroutine column_flux

end module derived_grid_moves_m

subroutine grid_moves(s, t, n, r)
  use derived_grid_moves_m
  implicit none
  real(8), intent(in) :: s, t
  integer, intent(in) :: n
  real(8), intent(out) :: r(10)
  type(cell) :: g(n, 3), gt(3, n), col(n, 3), flat(2, 6), reserve(n * 3), live(n * 3)
  type(cell) :: field(n, 3), spare
  logical :: keep(n, 3)
  integer :: i, j
  do j = 1, 3
    do i = 1, n
      g(i, j) = cell(s * i + t * j, t * i - s * j * j, i + 10 * j)
    end do
  end do
  call column_flux(g, n, 3, r(1))
  gt = transpose(g)
  r(2) = gt(3, 1)%u * gt(2, n)%p + gt(1, 2)%tag
  col = spread(g(:, 2), 2, 3)
  r(3) = sum(col%u * col%p) + col(n, 3)%tag
  spare = cell(t, -s, 7)
  flat = reshape(gt(:, 1:2), [2, 6], pad=[spare, cell(s, t, 9)], order=[2, 1])
  r(4) = flat(1, 2)%u * flat(2, 5)%p + flat(2, 6)%tag + flat(1, 6)%u
  keep = g%u > g%p
  reserve = cell(-t, s * s, -1)
  live = pack(g, keep, reserve)
  r(5) = sum(live%u) * live(1)%p + live(n * 3)%p + count(keep)
  field = spare
  field(2:n, 2) = cell(s * t, 1d0, 5)
  field = unpack(live, .not. keep, field)
  r(6) = sum(field%u * field%p) + sum(field%tag)
  g = cshift(g, -1, 1)
  r(7) = g(1, 1)%u * g(2, 3)%p + g(1, 2)%tag
  g(:, 2:3) = eoshift(g(:, 1:2), 1, spare, 2)
  r(8) = sum(g%u) * g(n, 3)%p + g(1, 3)%tag
  call column_flux(gt, 3, n, r(9))
  r(10) = sum(flat%p * flat%u)
end subroutine grid_moves
