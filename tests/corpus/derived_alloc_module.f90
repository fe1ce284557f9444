! A module structure with an ALLOCATABLE component: the entry allocates
! it, a module procedure reads it, and the entry releases it
! before returning (adjit does not keep module allocations between calls
! made through the API, so an entry returning it allocated is a runtime
! error).
! adjit-test: --entry moddata --set n=3 --set x=0.5
! adjit-test: --entry moddata --set n=5 --set x=-1.25
module moddata_m
  implicit none
  type :: series
    integer :: terms = 0
    real(8), allocatable :: u(:)
  end type
  type(series) :: g
contains
  subroutine total(y)
    real(8), intent(out) :: y
    y = sum(sin(g%u)) + g%terms * g%u(g%terms)**2
  end subroutine total
end module moddata_m

subroutine moddata(n, x, y)
  use moddata_m
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  integer :: i
  allocate(g%u(n))
  g%terms = n
  do i = 1, n
    g%u(i) = x * i
  end do
  call total(y)
  deallocate(g%u)
end subroutine moddata

