! ALLOCATABLE arrays of structures whose type has ALLOCATABLE array
! components, as a finite-volume library keeps its cells: a `make` routine
! (an INTENT(OUT) ALLOCATABLE dummy) allocates the array, then each cell's
! own state and gradient arrays to sizes and bounds that differ per cell;
! a relaxation routine reallocates each cell's state on assignment, an
! energy routine reads them through an assumed-shape dummy. Whole-array
! assignment (a deep copy allocating the target), DEALLOCATE of the array
! (releasing every cell's components) and a fresh ALLOCATE whose cells
! start unallocated, SIZE, LBOUND / UBOUND and ALLOCATED of components.
! adjit-test: --entry run --set n=3 --set x=0.5,1.5,-1,2
! adjit-test: --entry run --set n=4 --set x=-0.25,0.75,1.25,0.5
module fv_cells
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: cell
    integer :: m
    real(dp) :: h
    real(dp), allocatable :: u(:)
    real(dp), allocatable :: g(:, :)
  end type
contains
  subroutine make_cells(cells, n, x)
    type(cell), allocatable, intent(out) :: cells(:)
    integer, intent(in) :: n
    real(dp), intent(in) :: x(:)
    integer :: i, j
    allocate(cells(n))
    do i = 1, n
      cells(i)%m = i + 1
      cells(i)%h = 1.0_dp / i
      allocate(cells(i)%u(0:i))
      do j = 0, i
        cells(i)%u(j) = x(mod(i + j, size(x)) + 1) * (j + 1)
      end do
      allocate(cells(i)%g(2, i))
      cells(i)%g = cells(i)%h * x(1)
      cells(i)%g(1, 1) = cells(i)%g(1, 1) + x(2)**2
    end do
  end subroutine

  subroutine relax(cells, w)
    type(cell), intent(inout) :: cells(:)
    real(dp), intent(in) :: w
    integer :: i
    do i = 1, size(cells)
      cells(i)%u = (1 - w) * cells(i)%u + w * cells(i)%u**2 * cells(i)%h
    end do
  end subroutine

  real(dp) function energy(cells)
    type(cell), intent(in) :: cells(:)
    integer :: i
    energy = 0
    do i = 1, size(cells)
      if (allocated(cells(i)%u)) energy = energy + cells(i)%h * sum(cells(i)%u**2)
      if (allocated(cells(i)%g)) energy = energy + cells(i)%m * sum(cells(i)%g)
    end do
  end function
end module

subroutine run(n, x, y, flags)
  use fv_cells
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(4)
  real(dp), intent(out) :: y(3)
  integer, intent(out) :: flags(6)
  type(cell), allocatable :: cells(:), copy(:)
  integer :: i
  call make_cells(cells, n, x)
  call relax(cells, 0.25_dp)
  y(1) = energy(cells)
  copy = cells
  deallocate(copy(2)%u)
  allocate(copy(2)%u(5))
  do i = 1, 5
    copy(2)%u(i) = x(2) * i
  end do
  y(2) = energy(copy) - cells(1)%u(1)
  flags(1) = size(cells)
  flags(2) = lbound(cells(n)%u, 1)
  flags(3) = ubound(cells(n)%u, 1)
  deallocate(cells)
  flags(4) = merge(1, 0, allocated(cells))
  allocate(cells(n + 1))
  cells%h = 2
  cells%m = 1
  flags(5) = merge(1, 0, allocated(cells(1)%u))
  allocate(cells(n + 1)%u(2))
  cells(n + 1)%u = copy(1)%u(0:1) * x(3)
  y(3) = energy(cells) + sum(copy(n)%g)
  flags(6) = size(cells(n + 1)%u)
end subroutine
