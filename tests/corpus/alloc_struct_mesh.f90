! A mesh holding its cells in an ALLOCATABLE component that is an array
! of structures with array components (`mesh%cells(i)%q(k)`): ALLOCATE of
! the component with computed bounds, element and component access at
! depth, the mesh copied whole (a deep copy reallocating the target's
! cells), the cells passed to an assumed-shape dummy, DEALLOCATE.
! adjit-test: --entry f --set n=3 --set x=1,2,3
! adjit-test: --entry f --set n=5 --set x=0.5,-1,2.5,0.25,1.5
module mesh_m
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: cell
    real(dp) :: q(2)
    real(dp) :: area
  end type
  type :: mesh
    integer :: ncell
    type(cell), allocatable :: cells(:)
  end type
contains
  subroutine build(m, n, x)
    type(mesh), intent(inout) :: m
    integer, intent(in) :: n
    real(dp), intent(in) :: x(n)
    integer :: i
    m%ncell = n
    allocate(m%cells(n))
    do i = 1, n
      m%cells(i)%area = 1 + x(i)**2
      m%cells(i)%q(1) = x(i)
      m%cells(i)%q(2) = x(i) * i
    end do
  end subroutine

  subroutine smooth(c, w)
    type(cell), intent(inout) :: c(:)
    real(dp), intent(in) :: w
    integer :: i
    do i = 2, size(c)
      c(i)%q = (1 - w) * c(i)%q + w * c(i-1)%q * c(i-1)%area
    end do
  end subroutine

  real(dp) function total(m)
    type(mesh), intent(in) :: m
    total = sum(m%cells%area * m%cells%q(1)) + sum(m%cells%q(2)**2)
  end function
end module

subroutine f(n, x, y, flags)
  use mesh_m
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(n)
  real(dp), intent(out) :: y(3)
  integer, intent(out) :: flags(3)
  type(mesh) :: a, b
  call build(a, n, x)
  call smooth(a%cells, 0.25_dp)
  y(1) = total(a)
  b = a
  b%cells(1)%q = b%cells(n)%q * x(1)
  call smooth(b%cells, 0.5_dp)
  y(2) = total(b) - a%cells(2)%q(2)
  flags(1) = size(b%cells)
  deallocate(a%cells)
  flags(2) = merge(1, 0, allocated(a%cells))
  flags(3) = merge(1, 0, allocated(b%cells))
  y(3) = sum(b%cells(2:n)%q(1))
end subroutine
