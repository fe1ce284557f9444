! A small finite-element code: a mesh derived type with ALLOCATABLE
! node and connectivity arrays, element stiffness and load of linear
! elements for -(k u')' + c u = f, global assembly into a banded (tridiagonal)
! matrix held in ALLOCATABLE work arrays, Dirichlet conditions, a Thomas
! solve; the discrete energy is differentiated with respect to the
! conductivity, the reaction coefficient and the boundary values.
! adjit-test: --entry fem_energy --set kcond=1.5 --set react=0.4 --set ub=0.0,1.0
! adjit-test: --entry fem_energy --set kcond=0.7 --set react=2.0 --set ub=0.5,-0.25
module fem1d
  implicit none
  private
  public :: fem_energy
  integer, parameter :: dp = kind(1.0d0)

  type :: mesh_t
    integer :: nnode = 0
    integer :: nelem = 0
    real(dp), allocatable :: xnode(:)
    integer, allocatable :: conn(:, :)
  end type mesh_t

  type :: material_t
    real(dp) :: k = 1.0_dp
    real(dp) :: c = 0.0_dp
  end type material_t

contains

  subroutine make_mesh(mesh, nelem, a, b)
    type(mesh_t), intent(inout) :: mesh
    integer, intent(in) :: nelem
    real(dp), intent(in) :: a, b
    integer :: e, i
    mesh%nelem = nelem
    mesh%nnode = nelem + 1
    allocate(mesh%xnode(mesh%nnode), mesh%conn(2, nelem))
    do i = 1, mesh%nnode
      mesh%xnode(i) = a + (b - a)*real(i - 1, dp)/real(nelem, dp)
    end do
    do e = 1, nelem
      mesh%conn(:, e) = [e, e + 1]
    end do
  end subroutine make_mesh

  pure function source(x) result(f)
    real(dp), intent(in) :: x
    real(dp) :: f
    f = 1.0_dp + x*(1.0_dp - x)
  end function source

  subroutine element(mat, x1, x2, ke, fe)
    type(material_t), intent(in) :: mat
    real(dp), intent(in) :: x1, x2
    real(dp), intent(out) :: ke(2, 2), fe(2)
    real(dp) :: h, xm
    h = x2 - x1
    xm = 0.5_dp*(x1 + x2)
    ke = mat%k/h*reshape([1.0_dp, -1.0_dp, -1.0_dp, 1.0_dp], [2, 2])
    ke = ke + mat%c*h/6.0_dp*reshape([2.0_dp, 1.0_dp, 1.0_dp, 2.0_dp], [2, 2])
    fe = 0.5_dp*h*source(xm)
  end subroutine element

  subroutine thomas(lo, di, up, rhs, n)
    integer, intent(in) :: n
    real(dp), intent(inout) :: lo(n), di(n), up(n), rhs(n)
    integer :: i
    real(dp) :: m
    do i = 2, n
      m = lo(i)/di(i-1)
      di(i) = di(i) - m*up(i-1)
      rhs(i) = rhs(i) - m*rhs(i-1)
    end do
    rhs(n) = rhs(n)/di(n)
    do i = n - 1, 1, -1
      rhs(i) = (rhs(i) - up(i)*rhs(i+1))/di(i)
    end do
  end subroutine thomas

  subroutine fem_energy(kcond, react, ub, energy, umid)
    real(dp), intent(in) :: kcond, react
    real(dp), intent(in) :: ub(2)
    real(dp), intent(out) :: energy, umid
    type(mesh_t) :: mesh
    type(material_t) :: mat
    real(dp), allocatable :: lo(:), di(:), up(:), rhs(:), u(:)
    real(dp) :: ke(2, 2), fe(2)
    integer :: e, n, i, j
    call make_mesh(mesh, 8, 0.0_dp, 1.0_dp)
    mat = material_t(k=kcond, c=react)
    n = mesh%nnode
    allocate(lo(n), di(n), up(n), rhs(n))
    lo = 0.0_dp; di = 0.0_dp; up = 0.0_dp; rhs = 0.0_dp
    do e = 1, mesh%nelem
      i = mesh%conn(1, e)
      j = mesh%conn(2, e)
      call element(mat, mesh%xnode(i), mesh%xnode(j), ke, fe)
      di(i) = di(i) + ke(1, 1)
      di(j) = di(j) + ke(2, 2)
      up(i) = up(i) + ke(1, 2)
      lo(j) = lo(j) + ke(2, 1)
      rhs(i) = rhs(i) + fe(1)
      rhs(j) = rhs(j) + fe(2)
    end do
    ! Dirichlet rows at both ends, eliminated from their neighbours.
    rhs(2) = rhs(2) - lo(2)*ub(1)
    rhs(n-1) = rhs(n-1) - up(n-1)*ub(2)
    lo(2) = 0.0_dp
    up(n-1) = 0.0_dp
    di(1) = 1.0_dp; up(1) = 0.0_dp; rhs(1) = ub(1)
    di(n) = 1.0_dp; lo(n) = 0.0_dp; rhs(n) = ub(2)
    call thomas(lo, di, up, rhs, n)
    u = rhs
    energy = 0.0_dp
    do e = 1, mesh%nelem
      i = mesh%conn(1, e)
      j = mesh%conn(2, e)
      call element(mat, mesh%xnode(i), mesh%xnode(j), ke, fe)
      energy = energy + 0.5_dp*dot_product(u([i, j]), matmul(ke, u([i, j]))) &
               - dot_product(fe, u([i, j]))
    end do
    umid = u((n + 1)/2)
  end subroutine fem_energy
end module fem1d
