! A `dim=` that is not a constant: reductions (SUM, PRODUCT, MAXVAL with
! MASK, ANY, COUNT), SPREAD and CSHIFT, with the dimension read from an
! argument and computed in a loop.
! adjit-test: --entry drive --set k=1 --set m=1,2,3,4,5,6 --set v=0.5,-1,2
! adjit-test: --entry drive --set k=2 --set m=0.5,-1,2,1.5,-2.5,0.25 --set v=1,2,3
module dimrt
  implicit none
contains
  subroutine drive(m, v, k, r, c, s)
    integer, intent(in) :: k
    double precision, intent(in) :: m(2, 3), v(3)
    double precision, intent(out) :: r(3), c(2, 3), s(6)
    integer :: d
    r = 0
    if (k == 1) then
      r = sum(m, dim=k)
    else
      r(1:2) = product(m, k)
    end if
    s(1) = sum(maxval(m, dim=k, mask=m > 0))
    s(2) = count(any(m > 1, k))
    c = cshift(m, 1, k)*m
    s(3) = sum(spread(v(1:2), k, 3)**2)
    s(4) = 0
    do d = 1, 2
      s(4) = s(4) + sum(sum(m*m, dim=d))*d
    end do
    s(5) = sum(m(:, 1:2)*spread(v(1:2), 3 - k, 2))
    s(6) = sum(matmul(m, v)) + sum(spread(v, k, 2))
  end subroutine drive
end module dimrt
