! A library keeping its data in ALLOCATABLE module arrays between calls
! (setup, objective, finalize), used by an entry that calls it as an
! optimizer would: setup, the residual at two points, the sum of squares,
! finalize. The same library (tests/kept, its entry points outside a
! module) is called through the API by
! tests/kept_allocatable.rs.
! adjit-test: --entry kept_fit --set m=6 --set x=1.5,-0.4
! adjit-test: --entry kept_fit --set m=9 --set x=2.25,-0.75
! Data of a curve fit kept in a module between calls: loaded by
! `load_data`, read by the objective, released by `free_data`.
module fit_data
  implicit none
  private
  public :: tdata, ydata, wk, load_data, free_data
  real(8), allocatable :: tdata(:), ydata(:)
  ! Work array of the objective, allocated by its first call.
  real(8), allocatable :: wk(:)
contains
  subroutine load_data(m)
    integer, intent(in) :: m
    integer :: i
    allocate(tdata(m), ydata(m))
    do i = 1, m
      tdata(i) = 0.25d0 * (i - 1)
      ydata(i) = 2d0 * exp(-0.5d0 * tdata(i)) + 0.1d0 * sin(3d0 * tdata(i))
    end do
  end subroutine load_data

  subroutine free_data()
    deallocate(tdata, ydata)
    if (allocated(wk)) deallocate(wk)
  end subroutine free_data
end module fit_data
! The library's entry points: setup, the residual of the model
! x(1) * exp(x(2) * t) against the data, its sum of squares, and finalize.
! (in a module, so that their callers have their interfaces).
module fit_api
  implicit none
contains
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
end module fit_api

subroutine kept_fit(m, x, f, s)
  use fit_api
  implicit none
  integer, intent(in) :: m
  real(8), intent(in) :: x(2)
  real(8), intent(out) :: f(m), s
  real(8) :: g(m)
  call setup(m)
  call residual(x, m, f)
  call residual(x + 0.5d0, m, g)
  call sse(x, s)
  s = s + sum(g)
  call finalize()
end subroutine kept_fit
