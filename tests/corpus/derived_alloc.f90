! Derived types with ALLOCATABLE array components, as a finite-difference
! library writes them: a mesh type whose fields are allocated by an init
! routine (an INTENT(OUT) structure dummy, reached through another routine),
! a residual routine reading the fields of an INTENT(IN) structure, and
! whole-structure assignment (a deep copy), reallocation on assignment,
! structure constructors with arrays for the components, ALLOCATED, SIZE,
! LBOUND / UBOUND and DEALLOCATE of components.
! adjit-test: --entry fem --set n=4 --set a=1.5 --set c=0.5
! adjit-test: --entry fem --set n=6 --set a=-0.75 --set c=2
! adjit-test: --entry alloc_parts --set s=1.5 --set t=0.5
module derived_alloc_m
  implicit none
  type :: mesh
    integer :: n
    real(8) :: h
    real(8), allocatable :: x(:), u(:), k(:, :)
  end type mesh
  type :: field
    real(8), allocatable :: v(:)
    real(8), allocatable :: w(:)
  end type field
contains
  subroutine init_mesh(m, n, len)
    type(mesh), intent(out) :: m
    integer, intent(in) :: n
    real(8), intent(in) :: len
    integer :: i
    m%n = n
    m%h = len / (n + 1)
    allocate(m%x(0:n + 1), m%u(n))
    allocate(m%k(n, 3))
    do i = 0, n + 1
      m%x(i) = i * m%h
    end do
    m%u = 0
    m%k = 1
  end subroutine init_mesh

  subroutine setup(m, n, len)
    type(mesh), intent(inout) :: m
    integer, intent(in) :: n
    real(8), intent(in) :: len
    call init_mesh(m, n, len)
  end subroutine setup

  subroutine residual(m, c, r)
    type(mesh), intent(in) :: m
    real(8), intent(in) :: c
    real(8), intent(out) :: r(:)
    integer :: i
    real(8) :: ul, ur
    do i = 1, m%n
      ul = 0
      ur = 0
      if (i > 1) ul = m%u(i - 1)
      if (i < m%n) ur = m%u(i + 1)
      r(i) = (2 * m%u(i) - ul - ur) / m%h**2 + c * m%u(i)**3 * m%k(i, 2) - sin(m%x(i))
    end do
  end subroutine residual

  real(8) function energy(m)
    type(mesh), intent(in) :: m
    energy = 0.5d0 * m%h * sum(m%u**2 * m%k(:, 1))
  end function energy

  subroutine make(f, n, s)
    type(field), intent(out) :: f
    integer, intent(in) :: n
    real(8), intent(in) :: s
    integer :: i
    allocate(f%v(n))
    do i = 1, n
      f%v(i) = i * s
    end do
  end subroutine make

  subroutine scale(f, t)
    type(field), intent(inout) :: f
    real(8), intent(in) :: t
    f%v = f%v * t
  end subroutine scale
end module derived_alloc_m

subroutine fem(n, a, c, r, e, info)
  use derived_alloc_m
  implicit none
  integer, intent(in) :: n
  real(8), intent(in) :: a, c
  real(8), intent(out) :: r(n), e(2)
  integer, intent(out) :: info(5)
  type(mesh) :: m, m2
  integer :: i
  info(1) = merge(1, 0, allocated(m%u))
  call setup(m, n, 2.0d0)
  info(2) = lbound(m%x, 1) * 100 + ubound(m%x, 1)
  do i = 1, n
    m%u(i) = a * m%x(i) + a**2
  end do
  m%k(:, 2) = m%x(1:n)
  call residual(m, c, r)
  e(1) = energy(m)
  m2 = m
  m2%u = [m%u, a, 2 * a]
  m2%k(1, 1) = 3
  info(3) = size(m2%u) * 10 + size(m%u)
  e(2) = sum(m2%u) * m2%h + m2%k(1, 1) * m%k(1, 1)
  deallocate(m%k)
  info(4) = merge(1, 0, allocated(m%k)) * 10 + merge(1, 0, allocated(m2%k))
  call setup(m, n + 1, 1.0d0)
  info(5) = size(m%u) * 10 + size(m%k, 2)
end subroutine fem

subroutine alloc_parts(s, t, q)
  use derived_alloc_m
  implicit none
  real(8), intent(in) :: s, t
  real(8), intent(out) :: q(3)
  type(field) :: f, g, h
  call make(f, 3, s)
  f%w = [t, t * t]
  g = f
  g%v(2) = t
  call scale(g, t)
  g%v = [g%v, s * t]
  h = field([s, t], [1.0d0])
  q(1) = sum(f%v) + f%w(2)
  q(2) = sum(g%v)
  q(3) = size(g%v) * g%w(1) + sum(h%v) * h%w(1)
end subroutine alloc_parts
