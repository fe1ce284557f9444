! ELEMENTAL functions of structures, referenced directly and through an
! operator interface, given sections of arrays of structures (bounds from
! a dummy, strided, reversed, rows and columns of a rank-2 array) and
! assigned to sections of arrays of structures and to arrays and sections
! of reals (an ELEMENTAL function of a structure returning a real).
! adjit-test: --entry elemental_sections --set s=1.5 --set t=0.5 --set n=6
! adjit-test: --entry elemental_sections --set s=-0.75 --set t=1.25 --set n=5
module derived_elemental_sections_m
  implicit none
  type :: cell
    real(8) :: u, w
  end type
  interface operator(*)
    module procedure scal
  end interface
contains
  elemental function relax(c) result(d)
    type(cell), intent(in) :: c
    type(cell) :: d
    d%u = 0.5d0 * c%u + c%w
    d%w = c%w * c%u
  end function relax

  elemental function scal(k, c) result(d)
    real(8), intent(in) :: k
    type(cell), intent(in) :: c
    type(cell) :: d
    d%u = k * c%u
    d%w = k + c%w
  end function scal

  elemental function energy(c) result(e)
    type(cell), intent(in) :: c
    real(8) :: e
    e = c%u**2 + c%w
  end function energy
end module derived_elemental_sections_m

subroutine elemental_sections(s, t, n, r)
  use derived_elemental_sections_m
  implicit none
  real(8), intent(in) :: s, t
  integer, intent(in) :: n
  real(8), intent(out) :: r(5)
  type(cell) :: cells(n), b(0:7), g(3, 4)
  real(8) :: e(8), x(3)
  integer :: i, j
  do i = 1, n
    cells(i) = cell(s * i, t + i)
  end do
  do i = 0, 7
    b(i) = cell(t * i, s)
  end do
  do j = 1, 4
    do i = 1, 3
      g(i, j) = cell(s + i * j, t * j)
    end do
  end do
  cells(2:n-1) = relax(cells(2:n-1))
  b(1:5:2) = t * cells(n:n-4:-2)
  b(4:7) = relax(g(2, :))
  e(1:n-1) = energy(cells(2:))
  x = energy(g(:, 3))
  g(:, 2) = s * g(:, 2)
  r(1) = sum(cells%u) + sum(cells%w)
  r(2) = sum(b%u) + sum(b%w)
  r(3) = sum(e(1:n-1))
  r(4) = sum(x)
  r(5) = sum(g%u * g%w)
end subroutine elemental_sections
