! Naumann & Riehme's syntax-directed adjoint example (seed 000, section 4).
! adjit grad examples/naumann.f90 --of x --wrt x,y --set x=-5 --set y=-0.5
subroutine f(x, y)
  double precision x, y
  if (x < y) then
    x = x*y
    do while (y < x)
      x = sin(x*y)
    end do
  end if
end subroutine
