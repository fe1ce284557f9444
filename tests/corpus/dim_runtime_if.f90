! A `dim=` that is not a constant in block IF and ELSE IF conditions: the
! condition is assigned to a LOGICAL temporary first (an ELSE IF's only
! when the arms before it fail), and that assignment is lowered once per
! possible dimension behind a branch on `dim`.
! adjit-test: --entry drive --set m=1,2,3,4,5,6 --set k=1
! adjit-test: --entry drive --set m=0.1,0.2,0.3,-0.4,0.5,0.1 --set k=2
! adjit-test: --entry drive --set m=0.1,-0.2,0.3,-0.4,0.5,-0.1 --set k=1
! adjit-test: --entry drive --set m=0.1,0.2,0.3,0.1,0.2,0.1 --set k=1
! adjit-test: --entry drive --set m=-1,-2,-3,4,5,6 --set k=2
subroutine drive(m, k, s, t)
  implicit none
  double precision, intent(in) :: m(3, 2)
  integer, intent(in) :: k
  double precision, intent(out) :: s, t(3)
  integer :: i
  t = 0
  if (maxval(sum(m, dim=k)) > 1d0) then
    s = sum(m * m) + product(maxval(m, dim=k))
  else if (any(minval(m, dim=k) < -0.3d0)) then
    s = -sum(m**3)
  else
    s = sum(sin(m))
  end if
  do i = 1, 3
    if (sum(m(i, :)) > 0 .and. minval(maxval(m, dim=k)) > -5) then
      t(i) = sum(m(i, :) * m(i, :))
    else
      t(i) = -m(i, 1)
    end if
  end do
end subroutine drive
