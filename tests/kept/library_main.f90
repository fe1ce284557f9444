! A main program using the library as an optimizer would: setup, the
! objective at several points, finalize, and again with other data.
program kept_library
  implicit none
  real(8) :: x(2), f(8), s
  integer :: k
  call setup(8)
  do k = 1, 3
    x = [1.5d0 + 0.25d0 * k, -0.3d0 - 0.1d0 * k]
    call residual(x, 8, f)
    call sse(x, s)
    print *, k, s
    print *, f
  end do
  call finalize()
  call setup(5)
  x = [2d0, -0.5d0]
  call residual(x, 5, f(1:5))
  call sse(x, s)
  print *, s, f(1:5)
  call finalize()
end program kept_library
