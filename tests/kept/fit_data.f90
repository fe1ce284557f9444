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
