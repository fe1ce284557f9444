! Deferred-length CHARACTER and ALLOCATABLE array components of a
! solver's options type (`character(len=:), allocatable :: method`,
! `real(8), allocatable :: w(:)`): a structure constructor sets them, a
! structure assignment copies them deeply (the copy's method is changed
! afterwards, the original's is not), a procedure taking the options reads
! the method through its dummy. The method held in the structure picks
! how the real-valued result is computed: Newton steps towards sqrt(a), a
! polynomial with the weights of the options, or a plain scaling.
! adjit-test: --entry run_solver --set method=newton --set a=2.0
! adjit-test: --entry run_solver --set method=poly --set a=0.5
! adjit-test: --entry run_solver --set method=Scale --set a=1.5
module solver_options
  implicit none
  type :: opts
    character(len=:), allocatable :: method
    real(8) :: damping = 1.0d0
    integer :: steps = 30
    real(8), allocatable :: w(:)
  end type opts
contains
  ! The method of `o` with its upper-case letters lower-cased.
  subroutine normalise(o)
    type(opts), intent(inout) :: o
    integer :: i, c
    do i = 1, len(o%method)
      c = ichar(o%method(i:i))
      if (c >= 65 .and. c <= 90) o%method(i:i) = char(c + 32)
    end do
  end subroutine normalise

  ! What `o` computes at `a`.
  real(8) function apply(o, a) result(y)
    type(opts), intent(in) :: o
    real(8), intent(in) :: a
    integer :: i
    select case (o%method)
    case ('newton')
      y = a
      do i = 1, o%steps
        y = y - o%damping * (y * y - a) / (2.0d0 * y)
      end do
    case ('poly')
      y = 0.0d0
      do i = size(o%w), 1, -1
        y = y * a + o%w(i)
      end do
    case default
      y = a * len(o%method)
    end select
  end function apply

  subroutine run_solver(method, a, y, n)
    character(len=*), intent(in) :: method
    real(8), intent(in) :: a
    real(8), intent(out) :: y
    integer, intent(out) :: n
    type(opts) :: o, copy
    integer :: k
    o = opts(trim(method), 1.0d0, 30, [(1.0d0 / k, k = 1, 4)])
    call normalise(o)
    copy = o
    copy%method = copy%method // '-copy'
    copy%w(1) = 100.0d0
    y = apply(o, a)
    if (copy%method(1:len(o%method)) == o%method) y = y + o%w(1) * a
    n = len(copy%method) + 100 * len(o%method) + int(copy%w(1)) * 1000
    print *, 'method=', o%method, ' copy=', copy%method, ' w1=', o%w(1)
  end subroutine run_solver
end module solver_options
