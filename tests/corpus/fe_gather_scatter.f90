! Vector subscripts in a small finite-element assembly: an element
! connectivity array, the nodal values of each element gathered with
! `u(conn(:, e))` (into a local array, and as an INTENT(IN) actual
! argument of assumed shape), an element energy and residual, and the
! residual scattered into the global one with an explicit DO loop
! (`r(conn(a, e)) = r(conn(a, e)) + re(a)`). Then gathers with repeated
! indices (`sum(u([1, 1, 2]))`), DOT_PRODUCT and MAXVAL of gathered
! values, an index array built by an implied DO, and a scatter through a
! permutation (`v(perm) = u * k`).
! adjit-test: --entry assemble --set u=0.1,0.3,-0.2,0.5,0.7,-0.4 --set k=1.5
! adjit-test: --entry assemble --set u=1,-0.5,0.25,2,-1.5,0.75 --set k=0.5
module fe_gather_scatter_m
  implicit none
  integer, parameter :: nnode = 6, nelem = 4
contains
  ! The nodes of each (triangular) element, one column per element.
  subroutine connectivity(conn)
    integer, intent(out) :: conn(3, nelem)
    conn(:, 1) = [1, 2, 3]
    conn(:, 2) = [2, 4, 3]
    conn(:, 3) = [3, 4, 5]
    conn(:, 4) = [4, 6, 5]
  end subroutine connectivity

  ! A spring energy along the element's edges plus a quartic term.
  real(8) function element_energy(ue, k)
    real(8), intent(in) :: ue(:)
    real(8), intent(in) :: k
    element_energy = 0.5d0 * k * sum((ue - cshift(ue, 1))**2) + 0.25d0 * sum(ue**4)
  end function element_energy

  ! The gradient of `element_energy` with respect to the nodal values.
  subroutine element_residual(ue, k, re)
    real(8), intent(in) :: ue(3), k
    real(8), intent(out) :: re(3)
    re = k * (2 * ue - cshift(ue, 1) - cshift(ue, -1)) + ue**3
  end subroutine element_residual

  subroutine assemble(u, k, energy, r, g, v)
    real(8), intent(in) :: u(nnode), k
    real(8), intent(out) :: energy, r(nnode), g(4), v(nnode)
    integer :: conn(3, nelem), perm(nnode), e, a
    real(8) :: ue(3), re(3)
    call connectivity(conn)
    energy = 0
    r = 0
    do e = 1, nelem
      ue = u(conn(:, e))
      energy = energy + element_energy(u(conn(:, e)), k)
      call element_residual(ue, k, re)
      do a = 1, 3
        r(conn(a, e)) = r(conn(a, e)) + re(a)
      end do
    end do
    g(1) = sum(u([1, 1, 2]))
    g(2) = dot_product(u(1:3), u(conn(:, 2)))
    g(3) = maxval(u(conn(2, :)) * k)
    g(4) = sum(u([(a, a = nnode, 1, -2)])**2)
    perm = [(nnode + 1 - a, a = 1, nnode)]
    v(perm) = u * k
  end subroutine assemble
end module fe_gather_scatter_m
