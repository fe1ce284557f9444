! ALLOCATABLE module variables: work arrays of rank 1 and 2 and a LOGICAL
! mask allocated by an init routine with sizes computed from n, used by a
! function of another module through USE (ONLY and rename), reallocated
! on assignment and by MOVE_ALLOC, deallocated and allocated again with
! other bounds, used by a procedure called through a generic interface;
! SIZE, LBOUND and UBOUND of each. Everything is released before the entry
! returns, as the entry is called
! through the API, where returning one allocated is an error.
! adjit-test: --entry alloc_module --set n=4 --set x=1.5
! adjit-test: --entry alloc_module --set n=6 --set x=-0.75
module alloc_module_data
  implicit none
  double precision, allocatable :: w(:), a(:, :)
  logical, allocatable :: mask(:)
  integer :: grown = 0
end module alloc_module_data

module alloc_module_ops
  use alloc_module_data, only: w, a, mask
  implicit none
contains
  subroutine init(n, x)
    integer, intent(in) :: n
    double precision, intent(in) :: x
    integer :: i, j
    allocate(w(0:n - 1))
    allocate(a(n, 2 * n), mask(n))
    do i = 0, n - 1
      w(i) = sin(x * (i + 1)) + x * x
      mask(i + 1) = mod(i, 2) == 0
    end do
    do j = 1, 2 * n
      do i = 1, n
        a(i, j) = cos(x * i) * j + x / (i + j)
      end do
    end do
  end subroutine init

  subroutine grow(x)
    use alloc_module_data, only: grown
    double precision, intent(in) :: x
    double precision, allocatable :: t(:)
    w = [w, x * w(lbound(w, 1))]
    allocate(t(size(w) + 1))
    t(1:size(w)) = w
    t(size(w) + 1) = exp(x)
    call move_alloc(t, w)
    grown = grown + 1
  end subroutine grow
end module alloc_module_ops

module alloc_module_energy
  use alloc_module_data, only: work => w, a
  implicit none
  interface measure
    module procedure energy
  end interface measure
contains
  double precision function energy(x)
    double precision, intent(in) :: x
    integer :: i, j
    energy = 0
    do i = lbound(work, 1), ubound(work, 1)
      energy = energy + work(i) ** 2 * x
    end do
    do j = lbound(a, 2), ubound(a, 2)
      do i = lbound(a, 1), ubound(a, 1)
        energy = energy + a(i, j) * work(lbound(work, 1) + mod(abs(i + j), size(work)))
      end do
    end do
  end function energy
end module alloc_module_energy

subroutine alloc_module(n, x, y, info)
  use alloc_module_data
  use alloc_module_ops
  use alloc_module_energy
  implicit none
  integer, intent(in) :: n
  double precision, intent(in) :: x
  double precision, intent(out) :: y(4)
  integer, intent(out) :: info(8)
  call init(n, x)
  y(1) = measure(x)
  info(1) = size(w)
  info(2) = lbound(w, 1)
  info(3) = count(mask)
  call grow(x)
  y(2) = energy(x)
  info(4) = size(w)
  info(5) = lbound(w, 1)
  info(6) = grown
  y(3) = sum(w, mask=w > 0)
  deallocate(a)
  allocate(a(-1:1, 3))
  a = x
  y(4) = energy(2 * x) + sum(a)
  info(7) = lbound(a, 1) + 10 * size(a, 2)
  info(8) = ubound(a, 1) + 10 * size(a, 1)
  deallocate(w, a, mask)
end subroutine alloc_module
