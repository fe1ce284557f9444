! Assumed-shape dummies a(:) in module procedures (explicit interface via
! the module), SIZE of them, and an entry with assumed-shape arguments that
! passes them on.
! adjit-test: --entry normalize --set v=3,4,12 --set w=1,1,1
! adjit-test: --entry normalize --set v=0.5,-0.5 --set w=2,0.25
module vecops
  implicit none
contains
  double precision function norm2w(v, w)
    double precision, intent(in) :: v(:), w(:)
    integer :: i
    norm2w = 0
    do i = 1, size(v)
      norm2w = norm2w + w(i)*v(i)**2
    end do
    norm2w = sqrt(norm2w)
  end function norm2w

  subroutine normalize(v, w, nrm, n)
    double precision, intent(inout) :: v(:)
    double precision, intent(in) :: w(:)
    double precision, intent(out) :: nrm
    integer, intent(out) :: n
    integer :: i
    n = size(v)
    nrm = norm2w(v, w)
    do i = 1, n
      v(i) = v(i)/nrm
    end do
  end subroutine normalize
end module vecops
