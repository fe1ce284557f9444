! FUNCTION forms: the entry is a function with a typed prefix; it calls a
! function with RESULT(...), a recursive-free helper with an implicit result
! variable, and an integer function.
! adjit-test: --entry softplus_sum --set n=4 --set x=-2,-0.5,0.5,3
! adjit-test: --entry softplus_sum --set n=1 --set x=20
double precision function softplus_sum(n, x)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  double precision :: softplus
  integer :: count_pos, i
  external softplus, count_pos
  softplus_sum = 0
  do i = 1, n
    softplus_sum = softplus_sum + softplus(x(i))
  end do
  softplus_sum = softplus_sum + count_pos(n, x)
end function softplus_sum

function softplus(x) result(y)
  implicit none
  double precision, intent(in) :: x
  double precision :: y
  if (x > 0) then
    y = x + log(1 + exp(-x))
  else
    y = log(1 + exp(x))
  end if
end function softplus

integer function count_pos(n, x)
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  integer :: i
  count_pos = 0
  do i = 1, n
    if (x(i) > 0) count_pos = count_pos + 1
  end do
end function count_pos
