! ALLOCATABLE components of arrays of structures, as a multi-block
! finite-difference library writes them: each block of a mesh has its own
! grid and field arrays, allocated by an init routine (an INTENT(OUT) array
! of structures) to sizes that differ per block; a residual and an energy
! routine pass each block's fields to explicit-shape and assumed-shape
! dummies. Whole-structure assignment of elements and of whole arrays
! (deep copies, also into narrower storage), DEALLOCATE, ALLOCATED, SIZE,
! LBOUND / UBOUND, reallocating assignment of a whole element,
! rank-2 and integer components, a 2-D array of structures and a module
! array of structures reallocated by a routine.
! adjit-test: --entry mesh --set nb=3 --set a=1.5 --set c=0.5
! adjit-test: --entry mesh --set nb=2 --set a=-0.75 --set c=2
! adjit-test: --entry patches --set s=1.5
! adjit-test: --entry patches --set s=-0.25
module blocks_m
  implicit none
  type :: block
    integer :: n
    real(8) :: h
    real(8), allocatable :: x(:), u(:)
  end type block
contains
  subroutine init_blocks(b, nb, len)
    integer, intent(in) :: nb
    type(block), intent(out) :: b(nb)
    real(8), intent(in) :: len
    integer :: k, i
    do k = 1, nb
      b(k)%n = 2 + k
      b(k)%h = len / (b(k)%n + 1)
      allocate(b(k)%x(0:b(k)%n + 1), b(k)%u(b(k)%n))
      do i = 0, b(k)%n + 1
        b(k)%x(i) = i * b(k)%h
      end do
      b(k)%u = 0
    end do
  end subroutine init_blocks

  subroutine lap(n, h, u, r)
    integer, intent(in) :: n
    real(8), intent(in) :: h, u(n)
    real(8), intent(out) :: r(n)
    integer :: i
    real(8) :: ul, ur
    do i = 1, n
      ul = 0
      ur = 0
      if (i > 1) ul = u(i - 1)
      if (i < n) ur = u(i + 1)
      r(i) = (2 * u(i) - ul - ur) / h**2
    end do
  end subroutine lap

  real(8) function block_energy(u, h)
    real(8), intent(in) :: u(:), h
    block_energy = 0.5d0 * h * sum(u**2)
  end function block_energy

  subroutine residual(b, nb, c, r)
    integer, intent(in) :: nb
    type(block), intent(in) :: b(nb)
    real(8), intent(in) :: c
    real(8), intent(out) :: r(:)
    integer :: k, i, off
    off = 0
    do k = 1, nb
      call lap(b(k)%n, b(k)%h, b(k)%u, r(off + 1:off + b(k)%n))
      do i = 1, b(k)%n
        r(off + i) = r(off + i) + c * b(k)%u(i)**3 - sin(b(k)%x(i))
      end do
      off = off + b(k)%n
    end do
  end subroutine residual

  real(8) function energy(b, nb)
    integer, intent(in) :: nb
    type(block), intent(in) :: b(nb)
    integer :: k
    energy = 0
    do k = 1, nb
      energy = energy + block_energy(b(k)%u, b(k)%h)
    end do
  end function energy
end module blocks_m

subroutine mesh(nb, a, c, r, e, info)
  use blocks_m
  implicit none
  integer, intent(in) :: nb
  real(8), intent(in) :: a, c
  real(8), intent(out) :: r(15), e(3)
  integer, intent(out) :: info(4)
  type(block) :: b(nb), b2(nb), w(2)
  integer :: k, i
  call init_blocks(b, nb, 2.0d0)
  do k = 1, nb
    do i = 1, b(k)%n
      b(k)%u(i) = a * b(k)%x(i) + a**2 / k
    end do
  end do
  r = 0
  call residual(b, nb, c, r)
  e(1) = energy(b, nb)
  b2 = b
  b2(1)%u = b(1)%u * a
  b2(2) = b(nb)
  e(2) = energy(b2, nb)
  deallocate(b2(1)%u)
  info(1) = merge(1, 0, allocated(b2(1)%u)) * 10 + merge(1, 0, allocated(b(1)%u))
  info(2) = size(b2(2)%u) * 100 + ubound(b2(2)%x, 1)
  b2(1)%u = [a, c]
  e(3) = sum(b2(1)%u) + sum(b2(2)%u(2:3)) * c
  info(3) = size(b2(1)%u)
  allocate(w(1)%u(1))
  w(1)%u = a
  w(1) = b(nb)
  w(2) = w(1)
  w(2)%u(1) = w(2)%u(1) * w(1)%u(2)
  e(3) = e(3) + sum(w(2)%u) - w(1)%u(1) + w(2)%h * size(w(2)%x)
  info(4) = size(w(1)%u) * 10 + lbound(w(2)%x, 1) + ubound(w(2)%x, 1)
end subroutine mesh

module patches_m
  implicit none
  type :: patch
    real(8), allocatable :: f(:, :)
    integer, allocatable :: id(:)
  end type patch
  type(patch) :: gp(2)
contains
  subroutine grow_patch(p, m, s)
    type(patch), intent(inout) :: p(:)
    integer, intent(in) :: m
    real(8), intent(in) :: s
    integer :: k, i, j
    do k = 1, size(p)
      if (allocated(p(k)%f)) deallocate(p(k)%f)
      allocate(p(k)%f(m + k, 2))
      do j = 1, 2
        do i = 1, m + k
          p(k)%f(i, j) = s * i + j * k
        end do
      end do
    end do
  end subroutine grow_patch
end module patches_m

subroutine patches(s, q, info)
  use patches_m
  implicit none
  real(8), intent(in) :: s
  real(8), intent(out) :: q(4)
  integer, intent(out) :: info(4)
  type(patch) :: p(2, 2)
  integer :: k
  allocate(p(2, 1)%f(3, 2))
  p(2, 1)%f = s
  p(2, 1)%f(2, :) = [1d0, 2d0]
  q(1) = sum(p(2, 1)%f)
  allocate(p(1, 2)%f(-1:1, 0:0))
  p(1, 2)%f(:, 0) = [s, s * s, 3 * s]
  info(1) = lbound(p(1, 2)%f, 1) * 100 + ubound(p(1, 2)%f, 2) * 10 + size(p(1, 2)%f)
  q(2) = sum(p(1, 2)%f(0:1, 0)) * p(2, 1)%f(1, 1)
  call grow_patch(gp, 2, s)
  q(3) = sum(gp(2)%f) + gp(1)%f(3, 2)
  call grow_patch(gp, 1, 2 * s)
  q(4) = sum(gp(1)%f) * s
  info(2) = size(gp(2)%f, 1) * 10 + size(gp(1)%f, 1)
  if (allocated(gp(1)%id)) deallocate(gp(1)%id)
  if (allocated(gp(2)%id)) deallocate(gp(2)%id)
  allocate(gp(1)%id(0))
  info(3) = size(gp(1)%id) + 10 * merge(1, 0, allocated(gp(2)%id))
  allocate(gp(2)%id(3))
  gp(2)%id = [4, 5, 6]
  info(4) = sum(gp(2)%id) + ubound(gp(1)%id, 1)
end subroutine patches
