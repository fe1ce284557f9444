! The library's entry points: setup, the residual of the model
! x(1) * exp(x(2) * t) against the data, its sum of squares, and finalize.
subroutine setup(m)
  use fit_data, only: load_data
  implicit none
  integer, intent(in) :: m
  call load_data(m)
end subroutine setup

subroutine residual(x, m, f)
  use fit_data
  implicit none
  integer, intent(in) :: m
  real(8), intent(in) :: x(2)
  real(8), intent(out) :: f(m)
  if (.not. allocated(wk)) allocate(wk(size(tdata)))
  wk = exp(x(2) * tdata)
  f = x(1) * wk - ydata
end subroutine residual

subroutine sse(x, s)
  use fit_data
  implicit none
  real(8), intent(in) :: x(2)
  real(8), intent(out) :: s
  s = sum((x(1) * exp(x(2) * tdata) - ydata)**2)
end subroutine sse

subroutine finalize()
  use fit_data, only: free_data
  implicit none
  call free_data()
end subroutine finalize
