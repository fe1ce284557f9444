! Array sections given to assumed-shape dummies: contiguous (`a(2:n)`,
! `m(:, 2)`, `m(:, 2:3)`), strided (`a(1:n:2)`), with a gap (`m(2, :)`,
! `m(2:3, 1:2)`), expressions of sections (`2*a(2:n) + 1`), and sections
! of an assumed-shape dummy passed on (`v(2:)`). The callee's SIZE,
! UBOUND and SHAPE see the section's extents; writes come back.
! adjit-test: --entry drive --set n=4 --set a=1,2,3,4 --set m=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
! adjit-test: --entry drive --set n=5 --set a=0.5,-1,2,0.25,3 --set m=1,-2,0.5,3,1.5,2,-1,0.75,4,-0.5,1,2,3,-3,0.25,1,2,1.25,-1.5,0.5,2,1,-2,0.5,3
module secmod
  implicit none
contains
  subroutine scale(v, s)
    double precision, intent(inout) :: v(:)
    double precision, intent(out) :: s
    integer :: i
    s = 0
    do i = 1, size(v)
      v(i) = v(i)*i
      s = s + v(i)**2
    end do
    s = s + size(v)
  end subroutine scale

  subroutine mat(m, s)
    double precision, intent(inout) :: m(:, :)
    double precision, intent(out) :: s
    integer :: i, j, sh(2)
    s = 0
    sh = shape(m)
    do j = 1, size(m, 2)
      do i = 1, sh(1)
        s = s + m(i, j)*(i + 10*j)
        m(i, j) = m(i, j)**2
      end do
    end do
    s = s + 100*ubound(m, 1) + 1000*ubound(m, 2)
  end subroutine mat

  double precision function wsum(v)
    double precision, intent(in) :: v(:)
    integer :: i
    wsum = 0
    do i = 1, size(v)
      wsum = wsum + i*v(i)**2
    end do
    wsum = wsum + 0.5d0*size(v)
  end function wsum

  ! Passes sections of its own assumed-shape dummy on.
  double precision function tail(v)
    double precision, intent(in) :: v(:)
    tail = wsum(v(2:)) - wsum(v(:size(v) - 1:2))
  end function tail

  subroutine drive(a, m, n, out)
    integer, intent(in) :: n
    double precision, intent(inout) :: a(n), m(n, n)
    double precision, intent(out) :: out(9)
    call scale(a(2:n), out(1))
    call scale(a(1:n:2), out(2))
    call scale(m(:, 2), out(3))
    call scale(m(2, :), out(4))
    call mat(m(2:3, 1:2), out(5))
    out(6) = wsum(2*a(2:n) + 1) + wsum(m(1:n:2, 3))
    call mat(m(:, 2:3), out(7))
    out(8) = tail(a) + 2*tail(m(n, :))
    out(9) = sum(a) + wsum(a(n:1:-1)*m(1, :))
  end subroutine drive
end module secmod
