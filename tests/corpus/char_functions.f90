! Character-valued functions (module and internal, fixed length) in
! assignments, comparisons, TRIM / ADJUSTL / LEN_TRIM arguments, PRINT and
! as actual arguments of `character(len=*)` dummies; an OPTIONAL
! `character(len=*)` dummy with PRESENT. The status name steers the
! formula of the real result.
! adjit-test: --entry report --set code=0 --set x=1.5
! adjit-test: --entry report --set code=1 --set x=-0.5
! adjit-test: --entry report --set code=2 --set x=0.75
module status_codes
  implicit none
contains
  character(len=20) function status_name(i)
    integer, intent(in) :: i
    select case (i)
    case (0)
      status_name = 'converged'
    case (1)
      status_name = '  max iterations'
    case default
      status_name = 'failed'
    end select
  end function status_name
  real(8) function solve(x, method)
    real(8), intent(in) :: x
    character(len=*), intent(in), optional :: method
    solve = x
    if (present(method)) then
      if (trim(method) == 'square') then
        solve = x * x
      else if (len(method) > 3) then
        solve = cos(x) * len_trim(method)
      end if
    end if
  end function solve
end module status_codes

subroutine report(code, x, y, msg, k)
  use status_codes
  implicit none
  integer, intent(in) :: code
  real(8), intent(in) :: x
  real(8), intent(out) :: y
  character(len=24), intent(out) :: msg
  integer, intent(out) :: k
  msg = status_name(code)
  k = len_trim(status_name(code)) + 100 * len(label(code))
  if (trim(adjustl(status_name(code))) == 'max iterations') then
    y = x**2
  else if (status_name(code) == 'converged') then
    y = sin(x)
  else
    y = label_weight(label(code)) * x
  end if
  y = y + solve(x) + solve(x, 'square  ') + solve(2d0 * x, method=label(code)) + solve(x, status_name(code))
  print *, 'status: ', trim(status_name(code)), ' / ', label(code)
contains
  function label(c) result(s)
    integer, intent(in) :: c
    character(len=6) :: s
    if (c == 1) then
      s = 'one 1'
    else
      s = 'zz' // repeat('z', 2)
    end if
  end function label
  real(8) function label_weight(s)
    character(len=*), intent(in) :: s
    label_weight = len_trim(s) + index(s, '1')
  end function label_weight
end subroutine report
