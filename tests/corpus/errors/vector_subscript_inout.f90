! adjit-error: 18:15: array section `w` with a vector subscript is incompatible with the intent(out) or intent(inout) dummy argument `v`
! A section with a vector subscript may not be defined through the dummy
! it is passed for (gfortran rejects it the same way).
module vsub_inout_m
  implicit none
contains
  subroutine bump(v)
    real(8), intent(inout) :: v(:)
    v = v + 1
  end subroutine bump

  subroutine top(x, w)
    real(8), intent(in) :: x
    real(8), intent(inout) :: w(4)
    integer :: idx(2)
    idx = [4, 1]
    w = x
    call bump(w(idx))
  end subroutine top
end module vsub_inout_m
