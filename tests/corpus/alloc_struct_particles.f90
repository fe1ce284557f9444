! A small particle library on ALLOCATABLE arrays of structures whose type
! has fixed-size array components (`x(3)`, `v(3)`): ALLOCATE with computed
! bounds, ALLOCATED, SIZE, LBOUND, elements and components at any depth
! (`ps(i)%x(k)`, `ps(i)%x`, `ps%m`, `ps(2:n)%x(1)`), whole-array
! assignment reallocating the target, the array passed to explicit-shape
! and assumed-shape dummies, a module array and a SAVE work array.
! adjit-test: --entry f --set n=3 --set x=1,2,3
! adjit-test: --entry f --set n=5 --set x=0.5,-1,2.5,0.25,1.5
module particles_m
  implicit none
  integer, parameter :: dp = kind(1.d0)
  integer, parameter :: nd = 3
  type :: particle
    real(dp) :: x(nd), v(nd)
    real(dp) :: m
    integer :: id
  end type
  type(particle), allocatable :: history(:)
contains
  subroutine seed(ps, n, x)
    integer, intent(in) :: n
    type(particle), intent(inout) :: ps(n)
    real(dp), intent(in) :: x(n)
    integer :: i, k
    do i = 1, n
      do k = 1, nd
        ps(i)%x(k) = x(i) * k
        ps(i)%v(k) = 0.5_dp * x(i) - 0.1_dp * k
      end do
      ps(i)%m = 1.0_dp + x(i)**2
      ps(i)%id = i
    end do
  end subroutine

  subroutine step(ps, dt)
    type(particle), intent(inout) :: ps(:)
    real(dp), intent(in) :: dt
    integer :: i
    do i = 1, size(ps)
      ps(i)%v = ps(i)%v - dt * ps(i)%x / ps(i)%m
      ps(i)%x = ps(i)%x + dt * ps(i)%v
    end do
  end subroutine

  real(dp) function energy(ps)
    type(particle), intent(in) :: ps(:)
    integer :: i
    energy = 0
    do i = 1, size(ps)
      energy = energy + 0.5_dp * ps(i)%m * sum(ps(i)%v**2)
    end do
  end function

  subroutine record(ps)
    type(particle), intent(in) :: ps(:)
    if (allocated(history)) deallocate(history)
    allocate(history(0:size(ps)-1))
    history(0:size(ps)-1)%m = ps%m
    history(0)%x = ps(1)%x
  end subroutine
end module

subroutine f(n, x, y, flags)
  use particles_m
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(n)
  real(dp), intent(out) :: y(4)
  integer, intent(out) :: flags(5)
  type(particle), allocatable :: ps(:), qs(:)
  type(particle), allocatable, save :: work(:)
  integer :: it
  flags(1) = merge(1, 0, allocated(ps))
  allocate(ps(n))
  flags(2) = merge(1, 0, allocated(ps))
  call seed(ps, n, x)
  do it = 1, 3
    call step(ps, 0.1_dp)
  end do
  y(1) = energy(ps)
  qs = ps
  qs(1)%x(2) = qs(1)%x(2) * ps(n)%v(3)
  qs(2:n)%x(1) = ps(1:n-1)%x(1) + qs(2:n)%m
  y(2) = sum(qs%m * qs%x(2)) + sum(qs(2:n)%x(1))
  flags(3) = size(qs)
  if (.not. allocated(work)) allocate(work(2*n))
  work(1:n) = qs
  work(n+1:2*n) = ps
  call step(work, 0.05_dp)
  y(3) = energy(work) + work(2*n)%x(1)
  call record(work(n+1:2*n))
  y(4) = sum(history%m) + sum(history(0)%x)
  flags(4) = lbound(history, 1)
  flags(5) = sum(qs%id)
  deallocate(ps, qs)
  deallocate(work)
end subroutine
