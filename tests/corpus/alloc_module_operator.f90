! A module ALLOCATABLE array read by the specific of an operator
! interface (`a + b` of a derived type) used in a procedure that does not
! use the array itself.
! adjit-test: --entry op_data2 --set p=0.3
! adjit-test: --entry op_data2 --set p=-1.5
module od2_data
  implicit none
  real(8), allocatable :: w(:)
end module od2_data

module od2_ops
  use od2_data
  implicit none
  type pt
    real(8) :: x
  end type pt
  interface operator(+)
    module procedure addw
  end interface
contains
  function addw(a, b) result(c)
    type(pt), intent(in) :: a, b
    type(pt) :: c
    c%x = a%x + b%x * w(1)
  end function addw
end module od2_ops

subroutine accumulate2(p, s)
  use od2_ops
  implicit none
  real(8), intent(in) :: p
  real(8), intent(out) :: s
  type(pt) :: a, b, c
  a%x = p
  b%x = 2 * p
  c = a + b
  s = c%x
end subroutine accumulate2

subroutine op_data2(p, s)
  use od2_data
  implicit none
  real(8), intent(in) :: p
  real(8), intent(out) :: s
  allocate(w(2))
  w = 3 * p
  call accumulate2(p, s)
  deallocate(w)
end subroutine op_data2
