! Array constructors of structures (variables, structure constructors,
! a reversed section of an array of structures with a lower bound of 0,
! an implied DO, the `(/ /)` form) and PACK of structures (a whole array
! and a section, masks from a component and from a real array) assigned
! to arrays and sections of structures whose type has an array component.
! adjit-test: --entry array_values --set s=1.5 --set t=0.5
! adjit-test: --entry array_values --set s=-0.75 --set t=1.25
module derived_array_values_m
  implicit none
  type :: pt
    real(8) :: x
    real(8) :: v(2)
  end type
end module derived_array_values_m

subroutine array_values(s, t, r)
  use derived_array_values_m
  implicit none
  real(8), intent(in) :: s, t
  real(8), intent(out) :: r(3)
  type(pt) :: a(5), b(0:3), c, sel(6)
  real(8) :: wt(5)
  integer :: i, m
  c = pt(s * t, [s, t])
  do i = 0, 3
    b(i) = pt(t + i, [s * i, 1d0])
  end do
  a = [c, b(3:1:-2), (pt(s * i, [t, s + i]), i = 1, 2)]
  wt = [(i * t, i = 1, 5)]
  m = count(a%x > 2 * t)
  do i = 1, 6
    sel(i) = pt(0d0, [0d0, 0d0])
  end do
  sel(2:m+1) = pack(a, a%x > 2 * t)
  r(1) = sum(a%x * a%v(2)) + sum(wt)
  r(2) = sum(sel%x) + sum(sel%v(1) * sel%v(2)) + m
  sel(1:2) = pack(a(2:5), wt(2:5) > 3 * t)
  sel(5:6) = (/ c, b(0) /)
  r(3) = sum(sel%x * sel%v(1))
end subroutine array_values
