! Syntax-directed adjoint example, seed 000 section 4 (REFERENCE_CASES.md section 1).
! adjit-test: --entry f --set x=-5.0 --set y=-0.5
! adjit-test: --entry f --set x=0.25 --set y=3.0
! adjit-test: --entry f --set x=2.0 --set y=1.0
subroutine f(x, y)
  double precision x, y
  if (x < y) then
    x = x*y
    do while (y < x)
      x = sin(x*y)
    end do
  end if
end subroutine
