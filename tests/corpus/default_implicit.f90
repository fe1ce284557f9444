! Default implicit typing in free form (no IMPLICIT statement, no
! declarations for most names): names starting with i-n are INTEGER, all
! others REAL (single precision), including dummy arguments.
! adjit-test: --entry implicit_sum --set n=4 --set x=0.1
! adjit-test: --entry implicit_sum --set n=9 --set x=1.25
subroutine implicit_sum(n, x, total, mean, last, kount)
  dimension vals(20)
  total = 0
  kount = 0
  do i = 1, n
    vals(i) = x*i + 0.1
    total = total + vals(i)
    kount = kount + i/2
  end do
  mean = total/n
  last = vals(n)
end subroutine implicit_sum
