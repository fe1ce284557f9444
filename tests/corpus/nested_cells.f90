! Structures nested as a finite-element library keeps its mesh: a mesh
! holds an ALLOCATABLE array of blocks whose weights are ALLOCATABLE
! arrays of their own size (`mesh%blocks(i)%w(j)`), a fixed array of
! cells each holding a state structure (`mesh%cells(k)%s%h(2)`). The cells are passed whole and as a
! section to assumed-shape and explicit-shape dummies, the whole
! component array summed (`sum(mesh%cells%q)`), the mesh copied whole
! (a deep copy: the blocks' weights go with it). Derivatives in the
! load and the stiffness run through every level.
! adjit-test: --entry energy --set n=3 --set load=0.5 --set stiff=2
! adjit-test: --entry energy --set n=1 --set load=-1.5 --set stiff=0.75
! adjit-test: --entry energy --set n=4 --set load=1.25 --set stiff=-0.5
module fe_mesh
  implicit none
  integer, parameter :: dp = kind(1.d0)
  type :: block
    real(dp), allocatable :: w(:)
    real(dp) :: b = 1.0_dp
  end type block
  type :: state
    real(dp) :: h(2)
    integer :: visits = 0
  end type state
  type :: cell
    type(state) :: s
    real(dp) :: q
  end type cell
  type :: mesh_t
    type(block), allocatable :: blocks(:)
    type(cell) :: cells(3)
    integer :: nb
  end type mesh_t
contains
  ! Gives `mesh` `n` blocks, block i with i weights.
  subroutine assemble(mesh, n, load, stiff)
    type(mesh_t), intent(out) :: mesh
    integer, intent(in) :: n
    real(dp), intent(in) :: load, stiff
    integer :: i, j
    mesh%nb = n
    allocate(mesh%blocks(n))
    do i = 1, n
      allocate(mesh%blocks(i)%w(i))
      do j = 1, i
        mesh%blocks(i)%w(j) = stiff * j + load
      end do
      mesh%blocks(i)%b = 0.5_dp * i
    end do
    do i = 1, size(mesh%cells)
      mesh%cells(i)%s%h = [load * i, stiff]
      mesh%cells(i)%q = load * load / i
    end do
  end subroutine assemble

  ! The weighted heights of the cells `cs`, counting the visits.
  real(dp) function heights(cs)
    type(cell), intent(inout) :: cs(:)
    integer :: i
    heights = 0.0_dp
    do i = 1, size(cs)
      heights = heights + cs(i)%s%h(1) * cs(i)%s%h(2)
      cs(i)%s%visits = cs(i)%s%visits + 1
    end do
  end function heights

  ! The charges of three cells.
  real(dp) function charges(cs)
    type(cell), intent(in) :: cs(3)
    charges = cs(1)%q - cs(2)%q + cs(3)%q
  end function charges

  subroutine energy(n, load, stiff, e, k)
    integer, intent(in) :: n
    real(dp), intent(in) :: load, stiff
    real(dp), intent(out) :: e
    integer, intent(out) :: k
    type(mesh_t) :: mesh, copy
    integer :: i
    call assemble(mesh, n, load, stiff)
    e = 0.0_dp
    do i = 1, mesh%nb
      e = e + mesh%blocks(i)%b * sum(mesh%blocks(i)%w ** 2)
    end do
    e = e + heights(mesh%cells) + heights(mesh%cells(2:3)) + charges(mesh%cells)
    e = e + sum(mesh%cells%q) * mesh%cells(2)%s%h(1)
    copy = mesh
    copy%blocks(n)%w(n) = 0.0_dp
    copy%cells(1)%s%h(2) = 3.0_dp
    e = e + mesh%blocks(n)%w(n) - copy%blocks(n)%w(n) + copy%cells(1)%s%h(2) * load
    k = 100 * mesh%cells(3)%s%visits + 10 * mesh%cells(1)%s%visits + size(copy%blocks(n)%w)
    print *, mesh%cells%s%visits, size(copy%blocks), ubound(copy%blocks(n)%w, 1)
  end subroutine energy
end module fe_mesh
