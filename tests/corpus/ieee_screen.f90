! IEEE_ARITHMETIC in a validating library: `use, intrinsic ::
! ieee_arithmetic` (whole and with ONLY:), ieee_is_finite screening the
! inputs (a NaN made by ieee_value for a rejected sample, counted by
! ieee_is_nan), ieee_is_negative elemental in WHERE and COUNT,
! ieee_copy_sign steering the sign of a term (derivative: the sign flip),
! ieee_value(x, ieee_positive_inf) as the start of a minimum; and the
! ISO_FORTRAN_ENV constants real64, int32, output_unit, iostat_end.
! adjit-test: --entry screened_energy --set n=4 --set x=1.5,-0.5,2,-3 --set scale=2
! adjit-test: --entry screened_energy --set n=3 --set x=0.25,0.75,-1.25 --set scale=-1.5
! adjit-test: --entry screened_energy --set n=5 --set x=1e300,2,-1,0.5,1e300 --set scale=0.5
module screening
  use, intrinsic :: ieee_arithmetic
  use, intrinsic :: iso_fortran_env, only: real64, int32
  implicit none
  private
  public :: screen, signed_energy
contains
  ! Copies the finite samples of x into kept (squared ones overflowing
  ! are rejected too); rejected ones become NaN in marked.
  subroutine screen(n, x, marked, nbad)
    integer, intent(in) :: n
    real(real64), intent(in) :: x(n)
    real(real64), intent(out) :: marked(n)
    integer(int32), intent(out) :: nbad
    integer :: i
    do i = 1, n
      if (ieee_is_finite(x(i)**2)) then
        marked(i) = x(i)
      else
        marked(i) = ieee_value(marked(i), ieee_quiet_nan)
      end if
    end do
    nbad = count(ieee_is_nan(marked))
  end subroutine screen

  real(real64) function signed_energy(n, v, scale) result(e)
    use, intrinsic :: ieee_arithmetic, only: ieee_is_nan, ieee_copy_sign, ieee_value, &
        ieee_positive_inf
    integer, intent(in) :: n
    real(real64), intent(in) :: v(n), scale
    real(real64) :: smallest
    integer :: i
    e = 0
    smallest = ieee_value(smallest, ieee_positive_inf)
    do i = 1, n
      if (ieee_is_nan(v(i))) cycle
      e = e + ieee_copy_sign(v(i)**2, scale) + ieee_copy_sign(scale, v(i))*v(i)
      smallest = min(smallest, abs(v(i)))
    end do
    e = e + smallest
  end function signed_energy
end module screening

subroutine screened_energy(n, x, scale, e, nbad, nneg)
  use screening
  use, intrinsic :: ieee_arithmetic, only: ieee_is_negative
  use, intrinsic :: iso_fortran_env, only: output_unit, iostat_end
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: x(n), scale
  real(8), intent(out) :: e
  integer, intent(out) :: nbad, nneg
  real(8) :: marked(n), mag(n)
  call screen(n, x, marked, nbad)
  mag = marked
  where (ieee_is_negative(marked)) mag = -marked
  nneg = count(ieee_is_negative(x))
  e = signed_energy(n, marked, scale) + 0.5d0*sum(mag, mask=mag == mag)
  write(output_unit, '(a,i0,a,i0,a,i0)') 'rejected ', nbad, ', negative ', nneg, &
      ', iostat_end ', iostat_end
end subroutine screened_energy
