! Sections of arrays of structures whose type has ALLOCATABLE scalar
! components as actual arguments, as a 1-D finite-volume code passes its
! interior cells to a smoother: `call smooth(cells(2:n-1), w)` changes the
! states and conductivities of the interior in place (written back), a
! strided section `cells(1:n:2)` goes through a copy in and out, a reversed
! one `cells(n:1:-2)` to a function, explicit-shape and assumed-shape
! dummies, cells with and without a conductivity (per-cell ALLOCATE), and
! a routine that allocates the conductivity of the cells it is given.
! adjit-test: --entry run --set n=5 --set x=0.5,1.5,-1,2
! adjit-test: --entry run --set n=6 --set x=-0.25,0.75,1.25,0.5
module fv_smooth
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: cell
    real(dp) :: u
    real(dp), allocatable :: kappa
    real(dp) :: flux(2)
  end type
contains
  subroutine smooth(cs, w)
    type(cell), intent(inout) :: cs(:)
    real(dp), intent(in) :: w
    integer :: i
    real(dp) :: k
    do i = 1, size(cs)
      k = 1
      if (allocated(cs(i)%kappa)) then
        k = cs(i)%kappa
        cs(i)%kappa = cs(i)%kappa * (1 + w * cs(i)%u)
      end if
      cs(i)%u = cs(i)%u + w * k * (cs(i)%flux(2) - cs(i)%flux(1))
      cs(i)%flux = cs(i)%flux * (1 - w)
    end do
  end subroutine

  subroutine conduct(m, cs, k0)
    integer, intent(in) :: m
    type(cell), intent(inout) :: cs(m)
    real(dp), intent(in) :: k0
    integer :: i
    do i = 1, m
      if (.not. allocated(cs(i)%kappa)) then
        allocate(cs(i)%kappa)
        cs(i)%kappa = k0 * i
      end if
    end do
  end subroutine

  real(dp) function heat(cs)
    type(cell), intent(in) :: cs(:)
    integer :: i
    heat = 0
    do i = 1, size(cs)
      heat = heat + i * cs(i)%u**2
      if (allocated(cs(i)%kappa)) heat = heat + cs(i)%kappa * sum(cs(i)%flux)
    end do
  end function

  integer function conducting(cs)
    type(cell), intent(in) :: cs(:)
    integer :: i
    conducting = 0
    do i = 1, size(cs)
      if (allocated(cs(i)%kappa)) conducting = conducting + 1
    end do
  end function
end module

subroutine run(n, x, y, flags)
  use fv_smooth
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(4)
  real(dp), intent(out) :: y(5)
  integer, intent(out) :: flags(4)
  type(cell), allocatable :: cells(:)
  type(cell) :: fixed(6)
  integer :: i
  allocate(cells(n))
  do i = 1, n
    cells(i)%u = x(mod(i, 4) + 1) * i
    cells(i)%flux = [x(1) + i, x(2) - i]
    if (mod(i, 3) /= 0) cells(i)%kappa = 0.5_dp + x(3)**2 / i
  end do
  y(1) = heat(cells(2:n - 1))
  call smooth(cells(2:n - 1), 0.25_dp)
  y(2) = heat(cells)
  call smooth(cells(1:n:2), 0.125_dp)
  flags(1) = conducting(cells(1:n:2))
  call conduct(2, cells(n - 2:n - 1), x(4))
  flags(2) = conducting(cells)
  y(3) = heat(cells(n:1:-2)) + heat(cells)
  fixed = cells(1)
  do i = 2, 6
    fixed(i)%u = x(mod(i, 4) + 1) - i
  end do
  call conduct(3, fixed(2:6:2), x(1))
  call smooth(fixed(3:), x(2) / 8)
  y(4) = heat(fixed)
  flags(3) = conducting(fixed)
  cells(1:3) = fixed(4:6)
  flags(4) = conducting(cells)
  y(5) = heat(cells(1:3))
end subroutine
