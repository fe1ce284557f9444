! Arrays of derived type as assumed-size dummies (`c(2, *)`, `c(*)`),
! with scalar and array components, given whole arrays of structures and
! elements (sequence association).
! adjit-test: --entry grid --set s=1.5 --set t=0.5
! adjit-test: --entry grid --set s=-2 --set t=0.25
module grid_m
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  type :: cell
    real(dp) :: u
    real(dp) :: v(2)
    integer :: id
  end type cell
contains
  subroutine relax(c, m, h)
    integer, intent(in) :: m
    type(cell), intent(inout) :: c(2, *)
    real(dp), intent(in) :: h
    integer :: i, j
    do j = 1, m
      do i = 1, 2
        c(i, j)%u = c(i, j)%u*h + c(i, j)%v(2)
        c(i, j)%v(1) = c(i, j)%v(1) + i*j*h
      end do
    end do
  end subroutine relax

  real(dp) function total(c, n)
    integer, intent(in) :: n
    type(cell), intent(in) :: c(*)
    integer :: i
    total = 0
    do i = 1, n
      total = total + c(i)%u*c(i)%v(1) + c(i)%id
    end do
  end function total
end module grid_m

subroutine grid(s, t, r, q)
  use grid_m
  implicit none
  real(dp), intent(in) :: s, t
  real(dp), intent(out) :: r, q(3)
  type(cell) :: g(2, 3), line(4)
  integer :: i, j
  do j = 1, 3
    do i = 1, 2
      g(i, j) = cell(s*i + t*j, [s, t*i], i + 10*j)
    end do
  end do
  call relax(g, 3, t)
  do i = 1, 4
    line(i) = cell(s/i, [t + i, s*t], i)
  end do
  r = total(line, 3) + total(g, 4) + total(line(2), 2)
  q(1) = sum(g%u)
  q(2) = g(2, 3)%v(1)
  q(3) = sum(g(1, :)%v(2))
end subroutine grid
