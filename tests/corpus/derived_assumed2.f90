! Arrays of structures of assumed shape of rank 2 (`type(pt) :: p(:, :)`):
! elements and whole components of a rank-2 array of structures passed
! whole, SIZE / UBOUND of the array of structures, a row of a component.
! adjit-test: --entry assumed2 --set s=1.5 --set t=0.5
! adjit-test: --entry assumed2 --set s=-0.25 --set t=2
module derived_assumed2_m
  implicit none
  type :: pt
    real(8) :: x, y
    integer :: id
  end type
contains
  subroutine relax(p, t)
    type(pt), intent(inout) :: p(:, :)
    real(8), intent(in) :: t
    integer :: i, j
    do j = 1, size(p, 2)
      do i = 1, size(p, 1)
        p(i, j)%x = p(i, j)%x * t + p(i, j)%y * i
        p(i, j)%id = i * 10 + j
      end do
    end do
    p%y = p%y + 0.1d0 * p%x
  end subroutine
  real(8) function total(p)
    type(pt), intent(in) :: p(:, :)
    total = sum(p%x * p%y) + sum(p(2, :)%x) + size(p) + ubound(p, 2)
  end function
end module derived_assumed2_m

subroutine assumed2(s, t, r, ids)
  use derived_assumed2_m
  implicit none
  real(8), intent(in) :: s, t
  real(8), intent(out) :: r(2)
  integer, intent(out) :: ids(3)
  type(pt) :: g(3, 4)
  integer :: i, j
  do j = 1, 4
    do i = 1, 3
      g(i, j) = pt(s * i, t + j, 0)
    end do
  end do
  call relax(g, t)
  r(1) = total(g)
  call relax(g, s)
  r(2) = total(g) + g(3, 4)%y
  ids = [g(2, 3)%id, g(3, 1)%id, g(3, 4)%id]
end subroutine assumed2
