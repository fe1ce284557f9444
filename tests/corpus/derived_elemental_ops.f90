! Operator interfaces naming ELEMENTAL functions of structures, and such
! functions referenced directly, applied to whole arrays of structures
! (rank 1 and 2, other lower bounds, a value reading its target).
! adjit-test: --entry elemental_ops --set s=1.5 --set t=0.5
! adjit-test: --entry elemental_ops --set s=-0.75 --set t=1.25
module derived_elemental_ops_m
  implicit none
  type :: vec
    real(8) :: x, y
  end type
  interface operator(+)
    module procedure add
  end interface
  interface operator(*)
    module procedure scal
  end interface
contains
  elemental function add(a, b) result(c)
    type(vec), intent(in) :: a, b
    type(vec) :: c
    c%x = a%x + b%x
    c%y = a%y * b%y
  end function add

  elemental function scal(s, a) result(c)
    real(8), intent(in) :: s
    type(vec), intent(in) :: a
    type(vec) :: c
    c%x = s * a%x
    c%y = s + a%y
  end function scal
end module derived_elemental_ops_m

subroutine elemental_ops(s, t, r)
  use derived_elemental_ops_m
  implicit none
  real(8), intent(in) :: s, t
  real(8), intent(out) :: r(4)
  type(vec) :: a(3), b(0:2), c(3), g(2, 2), h(2, 2)
  integer :: i, j
  do i = 1, 3
    a(i) = vec(s * i, t)
    b(i - 1) = vec(t + i, s * t)
  end do
  c = a + b
  c = t * c + a
  a = add(c, b)
  do j = 1, 2
    do i = 1, 2
      g(i, j) = vec(s + i, t * j)
      h(i, j) = vec(s * t, t + i * j)
    end do
  end do
  g = g + s * h
  r(1) = sum(c%x) + sum(c%y)
  r(2) = sum(a%x) + sum(a%y)
  r(3) = sum(g%x)
  r(4) = sum(g%y)
end subroutine elemental_ops
