! Sections of arrays of structures whose type has ALLOCATABLE array
! components as actual arguments, as a 1-D finite-volume code with a
! variable number of species per cell passes parts of its mesh around:
! `call smooth(cells(2:n-1), w)` changes the interior cells' species in
! place (written back), a strided section `cells(1:n:2)` and a reversed one
! `cells(n:1:-2)` go through copies, a routine allocates the species of the
! cells it is given that have none (more than any cell had: the storage
! grows) and another reallocates one, a column `grid(:, j)` and a row
! `grid(i, :)` of a 2-D array of structures, explicit-shape and
! assumed-shape dummies, and a section of a mesh whose cells have no
! species allocated yet.
! adjit-test: --entry run --set n=5 --set x=0.5,1.5,-1,2
! adjit-test: --entry run --set n=7 --set x=-0.25,0.75,1.25,0.5
module fv_species
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: cell
    real(dp) :: vol
    real(dp), allocatable :: c(:)
  end type
contains
  subroutine smooth(cs, w)
    type(cell), intent(inout) :: cs(:)
    real(dp), intent(in) :: w
    integer :: i, k
    do i = 1, size(cs)
      if (.not. allocated(cs(i)%c)) cycle
      do k = lbound(cs(i)%c, 1), ubound(cs(i)%c, 1)
        cs(i)%c(k) = cs(i)%c(k) + w * cs(i)%vol * sin(cs(i)%c(k))
      end do
      cs(i)%vol = cs(i)%vol * (1 + w * sum(cs(i)%c))
    end do
  end subroutine

  subroutine seed(m, cs, nspec, c0)
    integer, intent(in) :: m, nspec
    type(cell), intent(inout) :: cs(m)
    real(dp), intent(in) :: c0
    integer :: i, k
    do i = 1, m
      if (.not. allocated(cs(i)%c)) then
        allocate(cs(i)%c(0:nspec - 1))
        do k = 0, nspec - 1
          cs(i)%c(k) = c0 * (k + i) + cs(i)%vol
        end do
      end if
    end do
  end subroutine

  subroutine respecies(cs, j, extra)
    type(cell), intent(inout) :: cs(:)
    integer, intent(in) :: j
    real(dp), intent(in) :: extra
    real(dp) :: old
    old = 0
    if (allocated(cs(j)%c)) then
      old = sum(cs(j)%c)
      deallocate(cs(j)%c)
    end if
    cs(j)%c = [old, extra, old * extra]
  end subroutine

  real(dp) function mass(cs)
    type(cell), intent(in) :: cs(:)
    integer :: i
    mass = 0
    do i = 1, size(cs)
      if (allocated(cs(i)%c)) mass = mass + i * cs(i)%vol * sum(cs(i)%c**2)
    end do
  end function

  integer function nspecies(cs)
    type(cell), intent(in) :: cs(:)
    integer :: i
    nspecies = 0
    do i = 1, size(cs)
      if (allocated(cs(i)%c)) nspecies = nspecies + size(cs(i)%c)
    end do
  end function
end module

subroutine run(n, x, y, counts)
  use fv_species
  implicit none
  integer, intent(in) :: n
  real(dp), intent(in) :: x(4)
  real(dp), intent(out) :: y(6)
  integer, intent(out) :: counts(5)
  type(cell), allocatable :: cells(:)
  type(cell) :: grid(3, 3), fresh(4)
  integer :: i, j
  allocate(cells(n))
  do i = 1, n
    cells(i)%vol = 1 + x(mod(i, 4) + 1) / i
    if (mod(i, 3) /= 0) cells(i)%c = [x(1) * i, x(2) - i]
  end do
  y(1) = mass(cells(2:n - 1))
  call smooth(cells(2:n - 1), 0.25_dp)
  y(2) = mass(cells)
  call smooth(cells(1:n:2), x(3) / 8)
  counts(1) = nspecies(cells(1:n:2))
  call seed(2, cells(n - 2:n - 1), 4, x(4))
  counts(2) = nspecies(cells)
  call respecies(cells(n:1:-2), 2, x(1))
  y(3) = mass(cells(n:1:-2)) + mass(cells)
  do j = 1, 3
    do i = 1, 3
      grid(i, j)%vol = x(i) + j
      if (i /= j) grid(i, j)%c = [x(j), x(4) * i, x(i) * j]
    end do
  end do
  call seed(3, grid(:, 2), 5, x(2))
  call smooth(grid(2, :), x(1))
  y(4) = mass(grid(:, 2)) + mass(grid(2, :)) + mass(grid(3, :))
  counts(3) = nspecies(grid(:, 2)) + nspecies(grid(1, :))
  do i = 1, 4
    fresh(i)%vol = x(i)
  end do
  call seed(2, fresh(2:3), 2, x(3))
  call smooth(fresh(3:4), x(4) / 4)
  y(5) = mass(fresh)
  counts(4) = nspecies(fresh)
  cells(1) = fresh(2)
  cells(2) = fresh(3)
  y(6) = mass(cells)
  counts(5) = nspecies(cells(2:))
end subroutine
